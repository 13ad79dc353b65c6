# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading whether ``Running`` jobs make progress (option ``stall``, issue 59): the requests, the log-size histories
kept between polls, and the verdict (``stall.judge_progress``) set as each item's ``progress``.

* :class:`Progress` belongs to one call (the module's or the lookup's).  :meth:`Progress.read` sets ``progress`` on every
  item it is given: None unless the item is a ``Running`` job, else the judgement of what was read - per task its
  metrics (``idle_minutes``) and the size of its log (``quiet_minutes``: the AOM call asked for one line, whose
  ``end_line`` moves when the log grows), once per job its events of every level (``service``), and the job's own
  running records (in its document) every poll.  A read that fails (a ``403``, a log not ready, the deadline) is a
  ``problems`` line of that item, never a stall.
* At most one request per task per poll, the job's events included (:meth:`Progress._plan`: with both signals a task
  reads the one it needs, and the events take a task's turn every other poll, when it is not urgent), only for ``Running`` jobs, all of them
  through ``fanout.fetch_concurrently`` (``max_concurrency`` at a time) within the poll's deadline.  A signal not read
  this poll is judged on the last evidence read for it (the log's history up to its newest observation; a metrics
  answer only while its window lies after the job's last start, and a stall only on one at most two polls old).
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
from ansible_collections.modelarts.training.plugins.module_utils.waiting.stall import (
    RUNNING,
    TRAILING_GAPS,
    judge_progress,
    last_start,
    record_log_size,
    stall_words,
)

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
        # Per job: how many polls read it; per (job, task): the kind it read last; per job the last evidence read of
        # each signal: {"metrics": {task: (when, answer, poll)}, "log_errors": {task: error}, "events": answer}.
        self.polls = {}
        self.reads = {}  # (job id, task) -> the kind it read last
        self.events_due = {}  # job id -> the first of its polls that may read its events again
        self.kept = {}

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

    def _plan(self, item):
        """This poll's reads of ``item`` (a ``Running`` v2 job): at most one per task, the job's events included.

        Per task ONE read, chosen by need (:meth:`_need`).  With ``service``, the events (once per job) take the place
        of one task's read every other poll of the job - of a task whose read is not urgent this poll (the first such
        one, from a task that rotates), else on the next poll that has one - so the job's total stays at most its
        number of tasks, and a job of one task still reads its signals on the other polls.  The running records'
        verdict is in the job's document (free) every poll.  Advances the counters: call it once per poll."""
        job_id = item.get("id")
        tasks = _tasks(item)
        poll = self.polls.get(job_id, 0)
        self.polls[job_id] = poll + 1
        needs = [(task, self._need(item, task)) for task in tasks]
        keys = []
        skipped = None
        if self.settings.service and poll >= self.events_due.get(job_id, 1):
            if not tasks:
                skipped = ()
            else:
                turn = (poll // 2) % len(tasks)
                for task, (_kind, urgent) in needs[turn:] + needs[:turn]:
                    if not urgent:
                        skipped = task
                        break
            if skipped is not None:
                keys.append((EVENTS, job_id, None))
                self.events_due[job_id] = poll + 2
        for task, (kind, _urgent) in needs:
            if task != skipped:
                keys.append((kind, job_id, task))
        return keys

    def _need(self, item, task):
        """``(kind, urgent)``: which signal ``task`` reads this poll, and whether leaving it for the events would cost
        evidence.  Only ``idle_minutes`` asked: its metrics; only ``quiet_minutes``: its log.  Both: first its metrics
        (one call gives the whole window of averages: idle is judged from the first poll), then its log; after that,
        with ``require: any``, the two in turn (either stalls the job alone: both stay at most two polls old); with
        ``all``, the log while quiet does not hold on its history (quiet is measured across polls: each read keeps the
        last growth exact) - but the metrics on the poll before the one at which quiet would hold (the same interval
        ahead as the last), so that the poll that confirms the silence judges fresh averages - and, once quiet holds on
        what was seen, the two in turn.  Urgent: a signal never read, the read that confirms quiet, the metrics before
        it."""
        settings = self.settings
        job_id = item["id"]
        idle, quiet = settings.idle_minutes is not None, settings.quiet_minutes is not None
        has_metrics = task in self.kept.get(job_id, {}).get("metrics", {})
        entries = self.histories.get(job_id, {}).get(task) or []
        if idle and not has_metrics:
            return METRICS, True
        last = self.reads.get((job_id, task))
        if quiet and not entries:
            # No size read yet; after a log read that failed (a 403, not ready), the metrics in between.
            return (METRICS, False) if idle and last == LOG else (LOG, True)
        if not quiet:
            return METRICS, False
        size = entries[-1][1]
        first = len(entries) - 1
        while first > 0 and entries[first - 1][1] == size:
            first -= 1
        window = settings.quiet_minutes * 60
        held = entries[-1][0] - entries[first][0] >= window
        now = service_now(item, self.wall)
        due = not held and now - entries[first][0] >= window
        if not idle:
            return LOG, due
        if settings.require == "any" or held:
            return (LOG if last == METRICS else METRICS), False
        if due:
            return LOG, True
        previous = self.moments.get(job_id)
        if previous is not None and previous < now and now + (now - previous) - entries[first][0] >= window:
            return METRICS, True
        return LOG, False

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
        plans = [(item, self._plan(item)) for item in running]
        keys = [key for _item, plan in plans for key in plan]
        answers = fetch_concurrently(keys, self._fetch_one, max_concurrency=self.max_concurrency, deadline=deadline, clock=self.clock)
        for item, plan in plans:
            self._judge(item, plan, answers)

    def _judge(self, item, plan, answers):
        """Judge ``item`` on what this poll read (``plan``) and, for a signal not read this poll, on the last evidence
        read for it: the log-size history (measured up to its newest observation), the task's last metrics answer while
        it is still usable (see :meth:`_kept_metrics`), the last events answer; a read that failed stays a problem
        until the next read of that signal."""
        job_id = item["id"]
        now = service_now(item, self.wall)
        self.moments[job_id] = now
        history = self.histories.setdefault(job_id, {})
        kept = self.kept.setdefault(job_id, {"metrics": {}, "log_errors": {}, "events": None})
        for kind, _job, task in plan:
            answer = answers.get((kind, job_id, task))
            if task is not None:
                self.reads[(job_id, task)] = kind
            if kind == METRICS:
                kept["metrics"][task] = (now, answer, self.polls[job_id])
            elif kind == LOG:
                if isinstance(answer, BaseException):
                    kept["log_errors"][task] = answer
                else:
                    kept["log_errors"].pop(task, None)
                    history[task] = record_log_size(history.get(task), now, answer)
            else:
                kept["events"] = answer
        metrics = self._kept_metrics(item, kept["metrics"], now) if self.settings.idle_minutes is not None else {}
        judged = judge_progress(self.settings, item, now, metrics=metrics, logs=history, events=kept["events"], log_errors=dict(kept["log_errors"]))
        poll = self.polls[job_id]
        fresh = dict((task, answer) for task, answer in metrics.items() if kept["metrics"][task][2] >= poll - 2)
        if judged is not None and judged["stalled"] and len(fresh) < len(metrics):
            # A stall never counts on averages more than two polls old (a task's previous read, or the one before the
            # events took its turn): judged again without them (they read as not read), they are read next poll.
            judged = judge_progress(self.settings, item, now, metrics=fresh, logs=history, events=kept["events"], log_errors=dict(kept["log_errors"]))
            for task in metrics:
                if task not in fresh:
                    self.reads[(job_id, task)] = LOG
        item["progress"] = judged
        self.last[job_id] = item["progress"]

    def _kept_metrics(self, item, kept, now):
        """``{task: answer}`` of the metrics answers that may be judged at ``now``: one read this poll (the judgement
        checks its window against the last start), or one read earlier whose window of ``idle_minutes`` (and the minutes
        not averaged yet) lay wholly after the job's last start - never an answer about an earlier run.  An earlier
        answer is dated as if read now, which only makes its idle run start later (a later ``since``), never sooner.
        An answer left out reads as not read (a problem line)."""
        details = item.get("details") if isinstance(item.get("details"), dict) else {}
        status = details.get("status") if isinstance(details.get("status"), dict) else {}
        start = last_start(status)
        usable = {}
        for task, (when, answer, _poll) in kept.items():
            if when == now or (start is not None and when - (self.settings.idle_minutes + TRAILING_GAPS) * 60 >= start):
                usable[task] = answer
        return usable

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
