# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Event source ``modelarts.training.training_job_phase``: one event per observed phase change of ModelArts training jobs.

A thin shell over the collection's one door (``module_utils.door.query.Query``): the source checks its own
arguments, hands every other one to the door, polls on its own schedule in a worker thread (so the
event loop never blocks), and turns what the door and the waiter's ``judge`` say into events, retries
and log lines.  See DOCUMENTATION below and docs/event_source.md.
"""

from __future__ import annotations

import asyncio
import collections
import importlib.util
import json
import logging
import os
import sys

DOCUMENTATION = r"""
---
short_description: Events on the phase changes of Huawei Cloud ModelArts training jobs.
description:
  - An ansible-rulebook event source plugin that polls ModelArts training jobs and puts one event on the queue for every
    phase change it observes, the first observation included.
  - 'Each event is C({"modelarts": {"training_job": <item>, "previous_phase": <phase or null>, "phase": <phase>,
    "event_id": <uuid>}}): the item has the shape of the items of M(modelarts.training.modelarts_training_job_info), with the
    access tokens of the job''s endpoints masked unless O(include_endpoint_tokens) is set.'
  - C(event_id) is a UUID that is the same for the same job and transition (C(previous_phase), C(phase)) in every run, so a
    rule or playbook can drop a repeat. An event into a final phase (C(Completed), C(Failed), C(Terminated), C(Abnormal))
    takes its id from the job and that phase alone - a job enters a final phase once - so a restart that first sees the job
    finished (C(None -> Completed)) repeats the id of the C(Running -> Completed) reported before.
  - With two or more O(training_job_ids), phases are polled through the search API, one request per 10 jobs, spread over
    the O(interval); a job the search shows in a final phase (C(Completed), C(Failed), C(Terminated), C(Abnormal)) or a
    O(fail_on) phase, or does not return, is read with one GET, so its event - the one a rule acts on - carries the job's
    own document and phase, never the search's word alone (with O(name) too). The other events carry the document the
    search returned for the job, validated and normalised like a GET's; where the service's list answers leave fields
    out, the item's C(details) lacks them too.
    After a round the service throttled (HTTP 429), those jobs are polled one O(interval) later.
  - The event of a v2 job reaching a O(fail_on) phase carries, in the item's C(diagnostics), the job's error events and the
    last O(log_lines) lines of each task's log (read once, when the event is made; see O(diagnostics)); other events carry
    C(diagnostics=null).
  - A job is no longer polled once the waiter's verdict on it is final - a terminal phase (C(Completed), C(Failed),
    C(Terminated), C(Abnormal)) or a O(fail_on) phase - or once it cannot be read for good.
  - 'Under O(validate=strict) a job document that breaks the JSON schema never gives a phase-change event: the source logs one
    warning naming the job and the JSON paths, and puts one event C({"modelarts": {"training_job": <item>,
    "previous_phase": <last valid phase or null>, "phase": null, "schema_errors": [{path, message}, ...]}}) on the queue per
    change of the document''s phase or errors; the job stays watched.'
options:
  training_job_ids:
    description:
      - v2 training job ids to watch, as a list or as one string with ids separated by commas (what C(--env-vars) gives).
      - Exactly one of O(training_job_ids), or O(name) and/or O(tags), is required.
    type: list
    elements: str
  name:
    description:
      - Watch every v2 training job whose name is exactly this (with O(tags), that also carries them). The search runs every
        O(interval), so jobs created later with that name are picked up; the source never ends by itself.
      - The first round asks for the selection's unfinished jobs first (a request per 50), so a job that completes just
        after a start gives its event within an O(interval) however many finished jobs match. Then, with O(startup=all),
        it reads every matching job a page (50) at a time, with no cap on their number, each page's GETs O(max_concurrency)
        at a time, the jobs already listed polled by id meanwhile; with O(startup=changes), only what is new. Each later round
        asks the search only for the jobs created since the newest one seen (one request while fewer than 50 are new) and
        for the selection's unfinished jobs (so a job tagged, moved or renamed into the selection while it runs is picked
        up), and reads the jobs still watched by id, 10 a request - so a round's cost follows the unfinished jobs, not every
        finished job the search matches.
    type: str
  interval:
    description:
      - Seconds between polls, greater than 0. An event reaches the queue at most about one interval after the change.
    type: float
    default: 10
  stop_when_done:
    description:
      - With O(training_job_ids), end the source once no job is left to watch. Left V(false), the source idles, which is
        what an EDA controller activation wants (a restarted activation would observe the finished jobs again).
      - A boolean, or one of Ansible's boolean words; anything else is an error.
    type: bool
    default: false
  startup:
    description:
      - What the first round reports (see docs/event_source.md, "Restarts").
      - V(all) - the first observation of each job is an event (C(previous_phase) null), finished jobs included.
      - V(changes) - the jobs the first round finds are the starting point - a finished one gives no event and is not read
        again (a tag or name watch never lists its finished jobs; it asks for the unfinished ones and what is new); an unfinished
        one gives its first event when its phase changes. A job that appears later is new and gives its first observation.
      - A job the O(state_file) knows is not a first observation - it gives an event only when its phase changed since it
        was reported.
      - With O(training_job_ids), only the jobs read at their first attempt are the starting point; a job whose first reads
        failed gives its first observation when it is read (it may have finished meanwhile).
    type: str
    choices: [all, changes]
    default: all
  state_file:
    description:
      - A path where the source keeps what it has reported (each job's last reported phase, and how far its search's
        listing has covered), written atomically with mode 0600 after the events left ansible-rulebook's queue (or, with
        C(feedback=true) and persistence, were acknowledged by ansible-rulebook). Its directory must belong to the user
        running the source and be writable by nobody else; one that does not exist is made (itself mode 0700).
      - Read at start - a job whose phase is the recorded one gives no event, one whose phase changed while the source was
        down gives one event from the recorded phase, a job created since the listing the file covers is new, and another
        job follows O(startup).
      - With O(training_job_ids), ids may be added and removed between starts - the ids still watched keep what the file
        knows, new ids follow O(startup), removed ones are dropped.
      - A file written for another selection (ids for a search, name, tags, workspace, project, endpoint), one that cannot be
        read (not this source's JSON, a symbolic link) or a directory that cannot be written (read-only, full) stops the
        source at start, before any request, with a message naming the file and what is wrong, and no event; the file is
        left as it is.
      - The file holds no job the selection no longer returns (about 50 bytes a job).
      - Unset, nothing is kept - every start follows O(startup). The shipped rulebook C(deploy_on_completed) keeps one, by
        default in C(~/.local/state/modelarts.training/deploy_on_completed.json).
    type: path
  stall:
    description:
      - Report a C(Running) job that stopped making progress (a collective that never returns, a dead data loader), as
        M(modelarts.training.modelarts_training_job_info) judges it with its C(stall) option - idle accelerators, a
        silent log, the service's own hang verdict (see docs/event_source.md, "A job that stopped making progress").
      - 'A C(Running) job that stalls gives one event C({"modelarts": {"training_job": <item>, "previous_phase": "Running",
        "phase": "Running", "stalled": true, "progress": {stalled, since, signals, problems}, "event_id": <uuid>}}), once
        per stall: again only after the job made progress and stalled anew. Its C(event_id) comes from the job and the
        stall''s start (C(since)), so a repeat has the same id; the stall reported is kept in O(state_file) like any
        reported event, and a restart does not report it again.'
      - With O(stall) every event carries C(stalled) (V(false) for a phase change) and its item C(progress) (null unless
        C(Running)). A rule on C(Running) that is not about stalls adds C(event.modelarts.stalled == false).
      - Progress is read for the C(Running) jobs of each round only, at most one request per task and signal, within
        O(max_concurrency) and one O(request_timeout). The source never stops or restarts a job, it reports.
      - Checked before any request; a wrong key or value ends the source with a message naming C(stall.<key>).
    type: dict
    suboptions:
      idle_minutes:
        description:
          - Accelerators idle - on every task, the newest O(stall.idle_minutes) one-minute averages of C(gpuUtil) (or
            C(npuUtil)) are all at or below O(stall.idle_below). 1 to 1440.
        type: int
      idle_below:
        description:
          - Percent at or below which an accelerator counts as idle.
        type: float
        default: 1
      quiet_minutes:
        description:
          - Log silent - no task's log grew across this many minutes of polling. 1 to 1440.
        type: int
      service:
        description:
          - The service's own hang verdict (a C(JobHanged) event, or a recover record with C(fault_scenario=job_hanged))
            newer than the job's last start stalls a job on its own.
        type: bool
        default: true
      grace_minutes:
        description:
          - No signal counts until the job has been C(Running) this long since its last start. 1 to 1440.
        type: int
        default: 10
      require:
        description:
          - Over O(stall.idle_minutes) and O(stall.quiet_minutes), those given - V(all) each must hold, V(any) one is enough.
        type: str
        choices: [all, any]
        default: all
  fail_on:
    description:
      - Phases that set the item's C(failed) flag and end the watch of that job.
      - Any phase, C(Completed) included; the source has no O(wait_for) and follows every job to a final phase.
    type: list
    elements: str
    choices: [Creating, Pending, Running, Failed, Completed, Terminating, Terminated, Abnormal]
    default: [Failed, Abnormal, Terminated]
extends_documentation_fragment:
  - modelarts.training.connection
  - modelarts.training.query
  - modelarts.training.search.plugins
  - modelarts.training.metrics
notes:
  - Arguments win over the HUAWEICLOUD_* environment variables option by option, and credentials are taken as a whole
    from the arguments when they name any credential option.
  - An unknown argument, a value of the wrong type (C(interval=soon), C(stop_when_done=perhaps)) or missing, incomplete or
    conflicting credentials end the source before any request, with a message naming the argument or variable (and, for
    an unknown argument, the closest known one, as in C(unknown argument intervall (did you mean interval?))).
  - Throttling, server errors, connection errors and a job not found during its first polls are retried with backoff; a job
    that cannot be read for good is dropped with an error; credentials or a project the service refuses end the source.
  - No secret (secret key, security token, password, IAM token, proxy credentials, endpoint access tokens) reaches an event
    or a log line.
requirements:
  - requests
  - jsonschema (unless O(validate=off))
"""

EXAMPLES = r"""
- modelarts.training.training_job_phase:
    training_job_ids:
      - 3f2b8c1e-5d4a-4e1b-9c7f-2a6d8e0b1c4d
    interval: 30

- modelarts.training.training_job_phase:
    name: resnet50-nightly
    interval: 60
    region: cn-north-4

- modelarts.training.training_job_phase:
    tags:
      release: "2.4.0"
    workspace_id: 0f1e2d3c4b5a69788796a5b4c3d2e1f0
    interval: 60

- modelarts.training.training_job_phase:
    training_job_ids: "{{ training_job_ids }}"
    stop_when_done: true
    validate: warn

# Fit to ship: an event into Completed carries metrics and metrics_ok (val_accuracy at least 0.9, and no worse than the
# model in production, the newest Completed job tagged stage=production); a rule deploys on metrics_ok true only.
- modelarts.training.training_job_phase:
    tags:
      stage: candidate
    metrics:
      - name: val_accuracy
        regex: 'val_accuracy=([0-9.]+)'
        min: 0.9
        min_improvement: 0
    baseline:
      tags:
        stage: production

# Hung jobs: a Running job whose accelerators idled for 30 minutes and whose log stayed silent as long gives one event
# with stalled: true (once per stall); a rule can notify on event.modelarts.stalled == true.
- modelarts.training.training_job_phase:
    tags:
      pipeline: nightly
    stall:
      idle_minutes: 30
      quiet_minutes: 30
    state_file: /var/lib/modelarts-eda/nightly-stalls.json

# Restartable: what was reported is kept on disk; a restart reports only what changed meanwhile.
- modelarts.training.training_job_phase:
    tags:
      pipeline: nightly
    startup: changes
    state_file: /var/lib/modelarts-eda/nightly.json
    interval: 60
"""


def _collection_parent(path):
    """The directory holding ``ansible_collections`` when ``path`` is this file inside an installed collection, else None."""
    parts = os.path.abspath(path).split(os.sep)
    # .../ansible_collections/modelarts/training/extensions/eda/plugins/event_source/training_job_phase.py
    if len(parts) > 8 and parts[-8] == "ansible_collections":
        return os.sep.join(parts[:-8]) or os.sep
    return None


def _collection_importable():
    try:
        return importlib.util.find_spec("ansible_collections.modelarts.training") is not None
    except ImportError:
        return False


# Why a sys.path entry: ansible-rulebook (1.3.2: engine.start_source) finds the file through
# `ansible-galaxy collection list` and runs it with runpy.run_path(); it puts nothing on sys.path and
# does not install ansible-core's collection loader, so `ansible_collections.*` imports resolve only
# where the directory holding the collection tree is already importable (ansible-test, PYTHONPATH,
# a site-packages install).  Only when it is not, the tree this very file lives in is appended, so
# the shared code is the copy installed next to this source.  Nothing is changed otherwise.
if not _collection_importable():
    _PARENT = _collection_parent(__file__)
    if _PARENT and _PARENT not in sys.path:
        sys.path.append(_PARENT)

# pylint: disable=wrong-import-position
from ansible_collections.modelarts.training.plugins.module_utils.text import printable  # noqa: E402
from ansible_collections.modelarts.training.plugins.module_utils.watch.events import START_LOGGER  # noqa: E402

# The watch's names the source answers to (its tests and debugging read them from the source).
from ansible_collections.modelarts.training.plugins.module_utils.watch.source import (  # noqa: E402,F401  # pylint: disable=unused-import
    DEFAULT_INTERVAL,
    DOOR_ARGUMENTS,
    NAME,
    SOURCE_ARGUMENTS,
    Arguments,
    SourceConfigError,
    SourceError,
    Watcher,
    build_watcher,
    describe,
)

# pylint: enable=wrong-import-position

logger = logging.getLogger(NAME)


class OneLine(logging.Filter):
    """Every record of the source leaves on one line: job names, ids, phases and the service's messages are the
    service's text, and a newline, a carriage return or an ANSI escape in them must not forge a log line (or
    rewrite one on a terminal).  The whole message is written out with :func:`text.printable` (``\\n``, ``\\x1b``)."""

    one_line = True

    def filter(self, record):
        message = record.getMessage()
        escaped = printable(message)
        if escaped != message or record.args:
            record.msg, record.args = escaped, None
        return True


# ansible-rulebook loads this file again for each source (runpy): one filter on each logger is enough.  A logger's
# filters see only its own records: the start line's logger (watch_events.START_LOGGER) has its own.
for _logger in (logger, logging.getLogger(START_LOGGER)):
    if not any(getattr(existing, "one_line", False) for existing in _logger.filters):
        _logger.addFilter(OneLine())


# -- the loop ------------------------------------------------------------------------------------


async def run(watcher, queue, feedback=None):
    """Poll on the watcher's schedule (each round in a worker thread, so the event loop never blocks) until it is done;
    put every event on ``queue`` and then tell the watcher which were handed over (its state file is saved then).

    ``feedback``: ansible-rulebook's feedback queue (``feedback: true`` with persistence), which gives back each event
    once the rules engine took it: the events count as handed over only when acknowledged there.  Without it, an event
    counts as handed over once it was seen leaving ansible-rulebook's queue (:class:`Departures`)."""
    while True:
        retry = await asyncio.to_thread(watcher.prepare)
        if retry is None:
            break
        await asyncio.sleep(max(0.0, retry - watcher.clock()))
    # Only a state file needs to know the events were taken: without one, nothing waits for ansible-rulebook.
    departures = Departures(queue) if feedback is None and watcher.state is not None else None
    while not watcher.done():
        wait = watcher.next_due() - watcher.clock()
        if wait > 0:
            await asyncio.sleep(wait)
        events = await asyncio.to_thread(watcher.round, watcher.clock())
        handed = []
        for event in events:
            if departures is not None:
                await departures.put(event)
            else:
                await queue.put(event)
                if feedback is None or await acknowledged(feedback, event, watcher.arguments.interval):
                    handed.append(event)
        if departures is not None:
            handed = await departures.left(max(5.0, watcher.arguments.interval))
        await asyncio.to_thread(watcher.delivered, handed)
    if departures is not None:
        await asyncio.to_thread(watcher.delivered, await departures.left(max(5.0, watcher.arguments.interval)))
    watcher.finish()
    if not watcher.arguments.stop_when_done:
        logger.info("nothing left to watch; idling until ansible-rulebook stops (stop_when_done is false)")
        await asyncio.Event().wait()


class Departures(object):
    """The events put on ansible-rulebook's queue that were not yet seen leaving it.

    ansible-rulebook 1.3 hands a source a ``FilteredQueue`` whose ``queue`` is the ``asyncio.Queue`` (of size 1) that the
    rule set reads, shared by every source of the rule set: that it is empty says nothing of this source's events when
    another source keeps it busy.  So each event is followed itself: the object the put left at the queue's tail (what
    the source's event filters made of the event) is looked for in the queue, and the event has left when it is no longer
    there (an event the filters dropped left nothing there, and has nothing to wait for).  A queue that cannot be looked
    into counts an event as left only once the queue is empty; one with no way to tell (a plain consumer, as in the
    standalone debugging mode) counts it as left at once."""

    def __init__(self, queue, clock=None):
        inner = getattr(queue, "queue", None)
        self.queue = queue
        self.inner = inner if callable(getattr(inner, "empty", None)) else queue
        self.clock = clock or asyncio.get_running_loop().time
        self.pending = []  # [event, what stands for it in the queue, when it was put, whether its stay was warned about]

    def _items(self):
        items = getattr(self.inner, "_queue", None)
        return items if isinstance(items, collections.deque) else None

    async def put(self, event):
        """Put ``event`` on the queue and remember what stands for it there."""
        items = self._items()
        before = items[-1] if items else None
        await self.queue.put(event)
        # An unbounded put, or the end of a put that waited for room, returns to this coroutine without yielding: what
        # the put appended is still at the tail.  The same tail as before: the event filters dropped the event.
        after = items[-1] if items else None
        self.pending.append([event, None if after is before else after, self.clock(), False])

    def _gone(self, marker):
        items = self._items()
        if items is not None:
            return marker is None or not any(item is marker for item in items)
        empty = getattr(self.inner, "empty", None)
        return empty() if callable(empty) else True

    async def left(self, limit):
        """The pending events seen leaving the queue, in order, waiting for each at most ``limit`` seconds after it was put;
        a warning names each one still there after that (it stays pending: recorded once it is seen leaving, reported
        again after a restart before)."""
        while self.pending and not self._gone(self.pending[0][1]) and self.clock() < self.pending[0][2] + limit:
            await asyncio.sleep(0.05)
        gone = []
        while self.pending and self._gone(self.pending[0][1]):
            gone.append(self.pending.pop(0)[0])
        for entry in self.pending:
            if not entry[3] and self.clock() >= entry[2] + limit:
                entry[3] = True
                body = entry[0]["modelarts"]
                logger.warning(
                    "event %s (training job %s: %s -> %s) is still on ansible-rulebook's queue after %.0f s (another source of the rule set may "
                    "keep it busy): it is not recorded as reported until it leaves, and a restart before then reports it again with the same event_id",
                    body["event_id"],
                    body["training_job"].get("id"),
                    body.get("previous_phase"),
                    body.get("phase"),
                    limit,
                )
        return gone


async def acknowledged(feedback, event, interval):
    """Whether ansible-rulebook gave ``event`` back on its ``feedback`` queue (the rules engine took it) in time.

    An event not acknowledged is not recorded as reported: a restart reports it again, with the same ``event_id``."""
    wanted = event["modelarts"]["event_id"]
    limit = max(30.0, 3 * interval)
    while True:
        try:
            data = await asyncio.wait_for(feedback.get(), limit)
        except asyncio.TimeoutError:
            logger.warning("ansible-rulebook did not acknowledge event %s within %.0fs: it is reported again after a restart", wanted, limit)
            return False
        body = data.get("modelarts") if isinstance(data, dict) else None
        if isinstance(body, dict) and body.get("event_id") == wanted:
            return True


async def main(queue, args):
    """ansible-rulebook entry point: watch the jobs ``args`` select and put phase-change events on ``queue``."""
    args = dict(args or {})
    watcher, query = build_watcher(args)
    # The door as a context: when the source leaves by an exception - ansible-rulebook cancelling it at shutdown
    # (asyncio.CancelledError) above all - the requests a worker thread still has in flight are abandoned (their sockets
    # shut, no retry), so neither that thread nor the executor's shutdown at the end of asyncio.run waits for them.
    with query:
        for warning in query.warnings:
            logger.warning("%s", warning)
        arguments = watcher.arguments
        what = (
            "training jobs %s" % arguments.search.describe()
            if arguments.search is not None
            else "training job(s) %s" % ", ".join(describe(key) for key in watcher.jobs)
        )
        logger.info("watching %s every %ss at %s", what, arguments.interval, query.client.endpoint)
        await run(watcher, queue, args.get("eda_feedback_queue"))


if __name__ == "__main__":
    # Standalone debugging, like other EDA sources:
    #   python training_job_phase.py '{"training_job_ids": ["<id>"], "interval": 5}'
    # with HUAWEICLOUD_* variables for the connection; events are printed as JSON lines.

    class MockQueue(object):
        """Prints what the source would hand to ansible-rulebook."""

        async def put(self, event):
            """Print one event."""
            print(json.dumps(event, sort_keys=True), flush=True)

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    asyncio.run(main(MockQueue(), json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}))
