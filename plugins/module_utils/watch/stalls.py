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

Once per stall: a stall is the job's stall until the job made progress (a judgement that found it not stalled and
named no problem - a signal that could not be read is no progress) and stalled anew, with a start later than the one
reported (by more than :data:`SINCE_SLACK_SECONDS`: a stall's start is read to the minute).  What was reported is the
ledger's: saved in the ``state_file`` with the events handed over, so a restart does not report the same stall again;
after a restart a stall whose start differs from the recorded one is a new stall (the job made progress meanwhile).
"""

from __future__ import annotations

from ansible_collections.modelarts.training.plugins.module_utils.query import describe
from ansible_collections.modelarts.training.plugins.module_utils.text import label
from ansible_collections.modelarts.training.plugins.module_utils.waiting.stall import RUNNING, event_seconds, stall_identity
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


def progress_reader(query, settings):
    """The read the stall room calls each round: the progress room (``waiting.progress.Progress``, the module's and the
    lookup's, which keeps each job's log-size history between rounds) over the door's client, ``max_concurrency`` at a
    time, within one ``request_timeout``; given ``{key: item}``, it sets each item's ``progress`` (and forgets the jobs
    not in ``watched``).  The room is made at the first read."""
    rooms = []

    def read(items, watched=()):
        if not rooms:
            from ansible_collections.modelarts.training.plugins.module_utils.waiting.progress import Progress

            rooms.append(Progress(query.client, settings, query.settings.max_concurrency, query.clock))
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
        self.sent = {}  # key -> the start (ISO) of the stall last reported in this run (handed over or not)
        self.progressed = set()  # the jobs judged making progress since their stall was last reported

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
        for key, item in running.items():
            progress = item.get("progress")
            if made_progress(progress):
                self.progressed.add(key)
            elif isinstance(progress, dict) and progress.get("stalled") and self.is_new(key, progress):
                self.sent[key] = progress.get("since")
                self.progressed.discard(key)
                logger.warning("training job %s (%s) stopped making progress (since %s)", describe(key), label(item.get("name")), progress.get("since"))
                stalled.append(self.redact(make_stall_event(item, key, progress)))
        return events + stalled

    def is_new(self, key, progress):
        """Whether ``progress`` (stalled) is a stall not reported yet: none was (in this run or the state file), or the job
        made progress since the last one was reported in this run and this one began later; after a restart, one whose
        start differs from the recorded one.  A stall the state file recorded and seen again is remembered as reported."""
        since = progress.get("since")
        if key in self.sent:
            return key in self.progressed and _later(since, self.sent[key])
        recorded = self.ledger.stalls.get(key)
        if recorded is None or _later(since, recorded):
            return True
        self.sent[key] = recorded
        return False
