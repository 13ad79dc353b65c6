# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading whether ``Running`` jobs make progress (option ``stall``, issue 59): the requests, the log-size histories
kept between polls, and the verdict (``stall.judge_progress``) set as each item's ``progress``.

* :class:`Progress` belongs to one call (the module's or the lookup's).  :meth:`Progress.read` sets ``progress`` on every
  item it is given: None unless the item is a ``Running`` job, else the judgement of what was read this poll - per task
  its metrics (``idle_minutes``) and the size of its log (``quiet_minutes``: the AOM call asked for one line, whose
  ``end_line`` moves when the log grows), and once per job its events of every level (``service``).  A read that fails
  (a ``403``, a log not ready, the deadline) is a ``problems`` line of that item, never a stall.
* At most one request per task and signal per poll, only for ``Running`` jobs, all of them through
  ``fanout.fetch_concurrently`` (``max_concurrency`` at a time) within the poll's deadline.
* Times are the service's: the job's ``status.start_time`` plus its ``status.duration`` (both in milliseconds) is the
  service's clock at the read, which is what the job's start, its events and its metrics' minutes are measured on; this
  machine's clock only when the document does not give them.
* :meth:`Progress.watching` wraps a wait's phase source so that every round reads the progress of the ``Running`` jobs
  it saw; :meth:`Progress.stalled` is the wait's verdict on one item (the reason it ends the wait, or None).
"""

from __future__ import annotations

import time

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.service.fanout import DEFAULT_MAX_CONCURRENCY, fetch_concurrently
from ansible_collections.modelarts.training.plugins.module_utils.waiting.stall import RUNNING, judge_progress, record_log_size, stall_words

# The metrics answer holds at most a day of one-minute averages of a few series: well under this.
METRICS_MAX_BYTES = 1024 * 1024
# One line of a log (the AOM call asked for one), with its envelope.
LOG_MAX_BYTES = 256 * 1024
EVENTS_MAX_BYTES = 512 * 1024
# The newest events read per job and poll: a hang verdict is recent by nature.
EVENTS_LIMIT = 50
# ModelArts answers this code (or HTTP 204 with no body) while a task has no log yet.
NOT_READY_CODES = frozenset(("ModelArts.2776",))

METRICS, LOG, EVENTS = "metrics", "log", "events"


class LogNotReady(Exception):
    """The task has no log yet (HTTP 204, or ``ModelArts.2776``)."""

    def __init__(self, detail="HTTP 204 with no body"):
        super().__init__("the log is not ready yet (%s)" % detail)


def _whole(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def service_now(item, fallback=time.time):
    """The service's clock when ``item`` was read, in epoch seconds: its ``status.start_time`` plus ``status.duration``
    (milliseconds) while it runs; ``fallback()`` (this machine's clock) when the document does not give them."""
    details = item.get("details") if isinstance(item, dict) else None
    status = details.get("status") if isinstance(details, dict) else None
    if isinstance(status, dict):
        start, duration = _whole(status.get("start_time")), status.get("duration")
        if start is not None and isinstance(duration, int) and not isinstance(duration, bool) and duration >= 0:
            return (start + duration) / 1000.0
    return fallback()


def _tasks(item):
    details = item.get("details") if isinstance(item.get("details"), dict) else {}
    status = details.get("status") if isinstance(details.get("status"), dict) else {}
    tasks = status.get("tasks")
    return [task for task in tasks if isinstance(task, str)] if isinstance(tasks, list) else []


def _log_size(response):
    """The AOM answer's ``end_line`` as a whole number (its last line's position: it moves when the log grows)."""
    if response.status == 204 or response.data is None:
        raise LogNotReady()
    data = response.data if isinstance(response.data, dict) else {}
    value = data.get("end_line")
    if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("the AOM answer gave no end_line")
    return value


class Progress(object):
    """The progress reads of one call: ``client`` (``ModelArtsClient``), the checked ``settings``
    (``wait_options.StallSettings``), ``max_concurrency`` and the call's monotonic ``clock`` (for deadlines)."""

    def __init__(self, client, settings, max_concurrency=DEFAULT_MAX_CONCURRENCY, clock=time.monotonic, wall=time.time):
        self.client = client
        self.settings = settings
        self.max_concurrency = max_concurrency
        self.clock = clock
        self.wall = wall
        # Per job id, {task: [(when, size)]} as stall.record_log_size keeps it; and the service's clock at the last read.
        self.histories = {}
        self.moments = {}
        self.last = {}  # job id -> the progress last judged

    def _fetch_one(self, key, deadline):
        kind, job_id, task = key
        if kind == METRICS:
            return self.client.get_task_metrics(job_id, task, deadline=deadline, max_bytes=METRICS_MAX_BYTES).data
        if kind == LOG:
            try:
                return _log_size(self.client.get_task_log_lines(job_id, task, 1, deadline=deadline, max_bytes=LOG_MAX_BYTES))
            except ModelArtsError as error:
                if error.error_code in NOT_READY_CODES:
                    raise LogNotReady(error.error_code) from None
                raise
        return self.client.list_training_job_events(job_id, limit=EVENTS_LIMIT, deadline=deadline, max_bytes=EVENTS_MAX_BYTES).data

    def _requests(self, item):
        settings = self.settings
        job_id = item.get("id")
        keys = []
        for task in _tasks(item):
            if settings.idle_minutes is not None:
                keys.append((METRICS, job_id, task))
            if settings.quiet_minutes is not None:
                keys.append((LOG, job_id, task))
        if settings.service:
            keys.append((EVENTS, job_id, None))
        return keys

    def read(self, items, deadline=None):
        """Set ``progress`` on each of ``items`` (dicts; other values are left alone), reading what the ``Running`` v2
        ones need - concurrently, within ``deadline`` (a reading of the call's clock; default one ``request_timeout``
        from now).  Never raises for the service's answers."""
        items = [item for item in items if isinstance(item, dict)]
        running = []
        for item in items:
            item["progress"] = None
            if self.settings is not None and item.get("phase") == RUNNING:
                if item.get("api_version") == "v2" and isinstance(item.get("id"), str):
                    running.append(item)
                else:
                    item["progress"] = judge_progress(self.settings, item, self.wall())
        if not running:
            return
        if deadline is None:
            deadline = self.clock() + float(self.client.service.request_timeout)
        keys = [key for item in running for key in self._requests(item)]
        answers = fetch_concurrently(keys, self._fetch_one, max_concurrency=self.max_concurrency, deadline=deadline, clock=self.clock)
        for item in running:
            self._judge(item, answers)

    def _judge(self, item, answers):
        job_id = item["id"]
        now = service_now(item, self.wall)
        self.moments[job_id] = now
        metrics, log_errors, events = {}, {}, None
        history = self.histories.setdefault(job_id, {})
        for kind, _job, task in self._requests(item):
            answer = answers.get((kind, job_id, task))
            if kind == METRICS:
                metrics[task] = answer
            elif kind == LOG:
                if isinstance(answer, BaseException):
                    log_errors[task] = answer
                else:
                    history[task] = record_log_size(history.get(task), now, answer)
            else:
                events = answer
        item["progress"] = judge_progress(self.settings, item, now, metrics=metrics, logs=history, events=events, log_errors=log_errors)
        self.last[job_id] = item["progress"]

    def watching(self, poll):
        """``poll(keys, deadline)`` (a phase source's ``observe``) that also reads the progress of the ``Running`` items
        it answers with, within the same deadline."""

        def observe(keys, deadline=None):
            answers = poll(keys, deadline)
            self.read(list(answers.values()), deadline)
            return answers

        return observe

    def stalled(self, item):
        """Why ``item`` ends the wait - ``stopped making progress: <the signals in words>`` - or None when it did not stall."""
        progress = item.get("progress") if isinstance(item, dict) else None
        if not isinstance(progress, dict) or not progress.get("stalled"):
            return None
        return "stopped making progress: %s" % stall_words(progress, self.moments.get(item.get("id"), self.wall()))

    def carry(self, results):
        """``results`` (``{key: item or exception}`` of the GETs that complete a wait's items) with the ``progress`` last
        read for each job still ``Running`` (a GET at the end is not a poll: nothing more is read)."""
        for value in (results or {}).values():
            if isinstance(value, dict) and value.get("phase") == RUNNING and value.get("id") in self.last:
                value["progress"] = self.last[value.get("id")]
        return results
