# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watch's stall room (argument ``stall``, issue 59): a ``Running`` job that stopped making progress gives one
event, once per stall.

Each round the judge hands over the ``Running`` items it read (:meth:`Judge.stalled`); the progress room
(``waiting/progress.py``, the module's and the lookup's) reads their progress - at most one request per task, within
the round's deadline and ``max_concurrency`` - and sets each item's ``progress``.  A stalled job gives
``{"modelarts": {"training_job": <item>, "previous_phase": "Running", "phase": "Running", "stalled": true, "progress":
{...}, "event_id": ...}}``, its ``event_id`` from the job and the stall's start (``stall.stall_identity``); the other
events of a watch with ``stall`` carry ``stalled: false`` and their item's ``progress`` (null unless ``Running``).

Once per stall: a stall reported (in this run, or recorded in the ``state_file``) stays the job's stall until this run
sees the job make real progress (:func:`shows_progress`: its log seen growing across polls, an accelerator busy in an
average newer than the stall's start, or a new start of the job) - "not stalled yet" or "not enough data" is no
progress - and the job stalls anew, with a start later than the one reported (by more than
:data:`SINCE_SLACK_SECONDS`: a stall's start is read to the minute).  What was reported is the ledger's: saved in the
``state_file`` with the events handed over, so a restart does not report the same stall again.  After a restart the
log-size history starts anew, so a quiet log's ``since`` is the restart's first rounds, not evidence of anything: a
stall whose start is the quiet signal's is the recorded stall until this run sees progress.  A start read from the
service's own history (the idle run of the one-minute averages, the service's hang verdict) that is later than the
recorded one is a new stall: the job's accelerators left the idle run (or the job started again) meanwhile.
"""

from __future__ import annotations

from ansible_collections.modelarts.training.plugins.module_utils.door.query import describe
from ansible_collections.modelarts.training.plugins.module_utils.text import label
from ansible_collections.modelarts.training.plugins.module_utils.waiting.progress import service_now
from ansible_collections.modelarts.training.plugins.module_utils.waiting.stall import RUNNING, event_seconds, last_start, stall_identity
from ansible_collections.modelarts.training.plugins.module_utils.waiting.wait_options import DEFAULT_STALL_IDLE_BELOW
from ansible_collections.modelarts.training.plugins.module_utils.watch.events import event_item, logger
from ansible_collections.modelarts.training.plugins.module_utils.watch.state import event_id

# Two starts of a stall this close are the same stall: the idle run's start is read to the whole minute.
SINCE_SLACK_SECONDS = 60


def make_stall_event(item, key, progress):
    """The event of a stalled ``Running`` job: ``stalled: true`` and its ``progress``, its ``event_id`` from the job and
    the stall's start (the same in every run for the same stall)."""
    ref = key if isinstance(key, str) else "%s:%s" % (item.get("id"), key)
    identity = event_id(ref, RUNNING, RUNNING, extra=stall_identity(ref, progress))
    body = {"training_job": event_item(item), "previous_phase": RUNNING, "phase": RUNNING, "stalled": True, "progress": progress, "event_id": identity}
    return {"modelarts": body}


def progress_reader(query, settings, max_concurrency):
    """The read the stall room calls each round: the progress room (``waiting.progress.Progress``, the module's and the
    lookup's, which keeps each job's log-size history between rounds) over the door's client, ``max_concurrency`` (the door's, given by the source) at a
    time, within one ``request_timeout``; given ``{key: item}``, it sets each item's ``progress`` (and forgets the jobs
    not in ``watched``).  The room is made at the first read."""
    rooms = []

    def read(items, watched=()):
        if not rooms:
            from ansible_collections.modelarts.training.plugins.module_utils.waiting.progress import Progress

            rooms.append(Progress(query.client, settings, max_concurrency, query.clock))
        progress = rooms[0]
        progress.read(list(items.values()))
        # A job no longer watched keeps no history.
        for job_id in [job_id for job_id in progress.histories if job_id not in watched and job_id not in items]:
            progress.histories.pop(job_id, None)
            progress.moments.pop(job_id, None)
            progress.last.pop(job_id, None)

    read.rooms = rooms  # the progress room once made (its tests look at it)
    return read


def made_progress(progress):
    """Whether a judgement shows the job making progress: not stalled, and no signal that could not be read."""
    return isinstance(progress, dict) and progress.get("stalled") is False and not progress.get("problems")


def _signal_read(progress, name):
    """Whether ``progress`` read the signal ``name`` whole: no problems line of it, nor one of the job as a whole."""
    for problem in progress.get("problems") or ():
        head = problem.split(":", 1)[0] if isinstance(problem, str) else ""
        if head == name or head not in ("idle", "quiet", "service"):
            return False
    return True


def shows_progress(progress, item, start, idle_below=DEFAULT_STALL_IDLE_BELOW):
    """Whether the judgement ``progress`` of ``item`` shows real progress after the stall that began at ``start`` (ISO):
    a new start of the job (its last start later than the stall's), the log seen growing across polls (the quiet
    signal measured and not held: ``stall._quiet`` gives a ``since`` without holding only when it saw growth), or an
    accelerator above ``idle_below`` in an average newer than ``start`` (the newest sample of a task, or its peak when
    the window of averages begins after ``start``).  A signal with a problems line is no evidence; nor is "not
    stalled": a window too short, a log seen in too few polls, the grace."""
    start = event_seconds(start)
    if not isinstance(progress, dict) or start is None:
        return False
    details = item.get("details") if isinstance(item, dict) else None
    status = details.get("status") if isinstance(details, dict) and isinstance(details.get("status"), dict) else None
    began = last_start(status) if status is not None else None
    if began is not None and began > start + SINCE_SLACK_SECONDS:
        return True
    signals = progress.get("signals") or {}
    quiet = signals.get("quiet")
    if isinstance(quiet, dict) and not quiet.get("held") and quiet.get("since") and _signal_read(progress, "quiet"):
        grew = event_seconds(quiet["since"])
        if grew is not None and grew > start:
            return True
    idle = signals.get("idle")
    if isinstance(idle, dict) and _signal_read(progress, "idle"):
        now = service_now(item, lambda: None) if status is not None else None
        window = idle.get("minutes") if isinstance(idle.get("minutes"), int) else None
        for entry in (idle.get("tasks") or {}).values():
            if not isinstance(entry, dict):
                continue
            last, peak = entry.get("last"), entry.get("peak")
            if isinstance(last, (int, float)) and last > idle_below:
                return True  # the newest average is busy: newer than the stall's idle ones
            if isinstance(peak, (int, float)) and peak > idle_below and now is not None and window is not None and now - (window + 1) * 60 >= start:
                return True
    return False


def _set_by_quiet(progress):
    """Whether the stall's start is the quiet signal's (the log-size history this run keeps, which a restart empties)."""
    quiet = (progress.get("signals") or {}).get("quiet")
    return isinstance(quiet, dict) and quiet.get("held") and quiet.get("since") == progress.get("since")


def _later(since, last):
    """Whether the stall that began at ``since`` (ISO) began after ``last`` (ISO), by more than the slack."""
    since, last = event_seconds(since), event_seconds(last)
    return since is not None and (last is None or since > last + SINCE_SLACK_SECONDS)


class Stalls(object):
    """The stall check of one watch.

    ``settings``: the checked ``StallSettings``; ``read``: a callable given ``{key: item}`` (the round's ``Running`` items)
    and the keys still watched, that sets each item's ``progress`` (:func:`progress_reader`); ``ledger``: the ``watch_ledger.Ledger`` (its
    ``stalls``: the stall starts reported and saved); ``redact``: the door's ``redact_value``."""

    def __init__(self, settings, read, ledger, redact):
        self.settings = settings
        self.read = read
        self.ledger = ledger
        self.redact = redact
        self.sent = {}  # key -> the start (ISO) of the stall last reported (in this run, or recorded and seen again)
        self.progressed = set()  # the jobs this run saw make real progress since their stall was reported

    def round(self, events, running, watched=()):
        """The round's ``events`` with progress set (``stalled`` and the item's ``progress``), then one event per stall
        new among ``running`` (``{key: item}``: the Running items read this round, still watched).  ``watched``: the keys
        still watched (what the room remembers of the others is dropped)."""
        if running:
            self.read(running, watched)
        for key in [key for key in self.sent if key not in watched]:
            del self.sent[key]
            self.progressed.discard(key)
        for event in events:
            body = event.get("modelarts") if isinstance(event, dict) else None
            item = body.get("training_job") if isinstance(body, dict) else None
            if isinstance(item, dict):
                body.setdefault("stalled", False)
                read = running.get(item.get("id")) if body.get("phase") == RUNNING else None
                item["progress"] = self.redact(read.get("progress")) if isinstance(read, dict) else None
        stalled = []
        idle_below = getattr(self.settings, "idle_below", None)
        idle_below = DEFAULT_STALL_IDLE_BELOW if idle_below is None else idle_below
        for key, item in running.items():
            progress = item.get("progress")
            reported = self.sent.get(key, self.ledger.stalls.get(key))
            if reported is not None and key not in self.progressed and shows_progress(progress, item, reported, idle_below):
                self.progressed.add(key)
                self.sent.setdefault(key, reported)  # a later stall is new; this one (the same start) is not
                if not progress.get("stalled"):
                    self.ledger.stalls.pop(key, None)  # the state file forgets it with the next save
            if isinstance(progress, dict) and progress.get("stalled") and self.is_new(key, progress):
                self.sent[key] = progress.get("since")
                self.progressed.discard(key)
                logger.warning("training job %s (%s) stopped making progress (since %s)", describe(key), label(item.get("name")), progress.get("since"))
                stalled.append(self.redact(make_stall_event(item, key, progress)))
        return events + stalled

    def is_new(self, key, progress):
        """Whether ``progress`` (stalled) is a stall not reported yet: none was (in this run or the state file), or this
        run saw the job make real progress since the last one was reported and this one began later.  After a restart,
        a stall recorded in the state file is also new when its start, read from the service's history (not the quiet
        signal's, whose history began with this run), is later than the recorded one.  A recorded stall seen again is
        remembered as reported."""
        since = progress.get("since")
        if key in self.sent:
            return key in self.progressed and _later(since, self.sent[key])
        recorded = self.ledger.stalls.get(key)
        if recorded is None or (_later(since, recorded) and (key in self.progressed or not _set_by_quiet(progress))):
            return True
        self.sent[key] = recorded
        return False
