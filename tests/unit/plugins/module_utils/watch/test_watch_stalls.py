# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 59, the event source's ``stall`` (watch/stalls.py, the judge's and the ledger's part): a ``Running`` job that
stops making progress gives one event, once per stall, kept in the state file.  The door is real (no request is sent):
the progress room's read is a fake that sets each item's ``progress`` as a script says; the phase source is a fake too.
Against the emulator, in the user's shape: tests/system/test_issue_59_stall_event_source.py."""

from __future__ import annotations

import json
import sys

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.watch import source as watch
from ansible_collections.modelarts.training.plugins.module_utils.watch.events import SourceConfigError
from ansible_collections.modelarts.training.plugins.module_utils.watch.ledger import Ledger
from ansible_collections.modelarts.training.plugins.module_utils.waiting.stall import event_seconds
from ansible_collections.modelarts.training.plugins.module_utils.watch.stalls import (
    SINCE_SLACK_SECONDS,
    Stalls,
    made_progress,
    make_stall_event,
    shows_progress,
)
from ansible_collections.modelarts.training.plugins.module_utils.watch.state import StateFile, StateFileError, event_id

CONNECTION = {
    "region": "cn-north-4",
    "project_id": "0123456789abcdef0123456789abcdef",
    "endpoint": "https://127.0.0.1:9",
    "access_key": "AK-UNIT",
    "secret_key": "Unit-Secret",
}
A, B = "a1000000-0000-4000-8000-000000000001", "b2000000-0000-4000-8000-000000000002"
STALL = {"idle_minutes": 30}
SINCE = "2026-11-25T02:00:00Z"
LATER = "2026-11-25T04:00:00Z"


def item(key, phase):
    terminal = phase in ("Completed", "Failed", "Terminated", "Abnormal")
    return {"id": key, "name": "job-" + key, "phase": phase, "terminal": terminal, "schema_errors": [], "create_time": "2026-01-01T00:00:00Z"}


def progress(stalled, since=None, problems=()):
    idle = {"held": stalled, "minutes": 30, "tasks": {"worker-0": {"metric": "gpuUtil", "last": 0.2 if stalled else 93.0, "peak": 0.3 if stalled else 97.0}}}
    return {"stalled": stalled, "since": since if stalled else None, "signals": {"idle": idle, "quiet": None, "service": None}, "problems": list(problems)}


class Script(object):
    """The phase source and the progress room's read, as fakes: each round answers ``phases[key]`` and sets
    ``progress[key]`` on the Running items; ``reads`` counts the items read per round."""

    batch = 1

    def __init__(self):
        self.phases = {}
        self.progress = {}
        self.reads = []

    def observe(self, keys, deadline=None):
        return dict((key, item(key, self.phases[key])) for key in keys)

    def read(self, items, watched=()):
        self.reads.append(sorted(items))
        for key, found in items.items():
            found["progress"] = self.progress.get(key)


class Clock(object):
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def built(script, **args):
    arguments = dict(CONNECTION, training_job_ids=[A], interval=2, stall=STALL)
    arguments.update(args)
    clock = Clock()
    watcher, query = watch.build_watcher(arguments, environ={}, clock=clock)
    query.close()
    if watcher.state is not None:
        watcher.state.check_project(CONNECTION["project_id"])
    watcher.source = script
    if watcher.judge.stalls is not None:
        watcher.judge.stalls.read = script.read
    return watcher


def rounds(w, count=1):
    """``count`` rounds, each an interval after the last."""
    events = []
    for _round in range(count):
        w.clock.now += 10.0
        events += w.round(w.clock())
    return events


def described(events):
    return [(e["modelarts"]["training_job"]["id"], e["modelarts"]["previous_phase"], e["modelarts"]["phase"], e["modelarts"].get("stalled")) for e in events]


# -- the argument ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "stall, words",
    [
        ({"idle_minutes": 0}, r"stall\.idle_minutes must be a whole number of minutes from 1 to 1440, got 0"),
        ({"idle_minute": 30}, r"stall: unknown key idle_minute \(did you mean idle_minutes\?\)"),
        ({"service": False}, r"stall asks for no signal"),
        ({"quiet_minutes": 5, "require": "most"}, r"stall\.require must be all or any"),
        ("yes", r"stall must be a dict"),
    ],
)
def test_the_stall_argument_is_checked_before_the_door_and_any_request(stall, words):
    assert "stall" in watch.DOOR_ARGUMENTS
    with pytest.raises(SourceConfigError, match=r"^modelarts\.training\.training_job_phase: " + words):
        watch.Arguments(dict(CONNECTION, training_job_ids=[A], stall=stall))


def test_without_stall_there_is_no_stall_room_and_events_are_as_before():
    script = Script()
    script.phases[A] = "Running"
    w = built(script, stall=None)
    assert w.judge.stalls is None and w.arguments.stall is None
    (event,) = rounds(w)
    assert "stalled" not in event["modelarts"] and "progress" not in event["modelarts"]["training_job"]
    assert w.judge.running == {}, "nothing is kept for a stall room that is not there"


# -- once per stall ------------------------------------------------------------------------------------------------


def test_a_running_job_that_stalls_gives_one_event_with_its_progress_and_an_id_from_the_job_and_the_stalls_start():
    script = Script()
    script.phases[A] = "Running"
    script.progress[A] = progress(False)
    w = built(script)
    (first,) = rounds(w)
    assert described([first]) == [(A, None, "Running", False)]
    assert first["modelarts"]["training_job"]["progress"] == progress(False), "a Running item carries its progress"
    script.progress[A] = progress(True, SINCE)
    (stalled,) = rounds(w)
    body = stalled["modelarts"]
    assert described([stalled]) == [(A, "Running", "Running", True)]
    assert body["progress"] == body["training_job"]["progress"] == progress(True, SINCE)
    assert body["event_id"] == event_id(A, "Running", "Running", extra="stall:%s:%s" % (A, SINCE))
    assert body["training_job"]["diagnostics"] is None
    assert rounds(w, 3) == [], "once per stall: the job stays stalled"
    assert script.reads == [[A]] * 5, "one read per Running job and round"


def test_a_stall_read_a_minute_apart_is_the_same_stall_and_a_read_that_failed_is_no_progress():
    script = Script()
    script.phases[A] = "Running"
    script.progress[A] = progress(True, SINCE)
    w = built(script)
    assert [e["modelarts"].get("stalled") for e in rounds(w)] == [False, True]
    # The idle run's start is read to the minute: one minute later is the same stall.
    script.progress[A] = progress(True, "2026-11-25T02:01:00Z")
    assert rounds(w) == []
    # A signal that could not be read is no progress: a later start after it is still this stall.
    script.progress[A] = progress(False, problems=["idle: task worker-0: its metrics could not be read (HTTP 403: refused)"])
    assert rounds(w) == []
    script.progress[A] = progress(True, LATER)
    assert rounds(w) == []


def test_a_job_that_made_progress_and_stalled_anew_gives_a_new_event_with_a_new_id():
    script = Script()
    script.phases[A] = "Running"
    script.progress[A] = progress(True, SINCE)
    w = built(script)
    first = [e for e in rounds(w) if e["modelarts"].get("stalled")]
    script.progress[A] = progress(False)
    assert rounds(w) == []
    script.progress[A] = progress(True, LATER)
    (again,) = rounds(w)
    assert again["modelarts"]["stalled"] is True and again["modelarts"]["progress"]["since"] == LATER
    assert again["modelarts"]["event_id"] != first[0]["modelarts"]["event_id"]


def test_a_job_that_completes_after_its_stall_gives_its_completed_event_and_no_more_reads():
    script = Script()
    script.phases[A] = "Running"
    script.progress[A] = progress(True, SINCE)
    w = built(script)
    rounds(w)
    script.phases[A] = "Completed"
    (done,) = rounds(w)
    assert described([done]) == [(A, "Running", "Completed", False)]
    assert done["modelarts"]["training_job"]["progress"] is None
    assert done["modelarts"]["event_id"] == event_id(A, None, "Completed")
    assert script.reads == [[A]], "a job that is not Running is not read"
    assert w.judge.stalls.sent == {}, "nothing is kept of a job no longer watched"


# -- the state file ----------------------------------------------------------------------------------------------------


def test_a_stall_reported_is_saved_and_a_restart_with_the_state_file_does_not_report_it_again(tmp_path):
    path = str(tmp_path / "state.json")
    script = Script()
    script.phases[A] = "Running"
    script.progress[A] = progress(True, SINCE)
    w = built(script, state_file=path)
    events = rounds(w)
    assert [e["modelarts"].get("stalled") for e in events] == [False, True]
    w.delivered(events)
    saved = json.loads(open(path).read())
    assert saved["jobs"] == {A: "Running"} and saved["stalls"] == {A: SINCE}
    # Restarted: the same stall (read a minute later) gives no event; nor does the Running the file recorded.
    script.progress[A] = progress(True, "2026-11-25T02:01:00Z")
    again = built(script, state_file=path)
    assert rounds(again, 2) == []
    # The job made progress while the source was down and stalled anew: a new stall.
    later = built(script, state_file=path)
    script.progress[A] = progress(True, LATER)
    (anew,) = rounds(later)
    assert anew["modelarts"]["stalled"] is True and anew["modelarts"]["progress"]["since"] == LATER
    later.delivered([anew])
    assert json.loads(open(path).read())["stalls"] == {A: LATER}
    # Completed: the file keeps no stall of a finished job.
    script.phases[A] = "Completed"
    done = rounds(later)
    assert described(done) == [(A, "Running", "Completed", False)]
    later.delivered(done)
    saved = json.loads(open(path).read())
    assert saved["jobs"] == {A: "Completed"} and "stalls" not in saved


def test_a_stall_event_not_handed_over_is_reported_again_after_a_restart_with_the_same_id(tmp_path):
    path = str(tmp_path / "state.json")
    script = Script()
    script.phases[A] = "Running"
    script.progress[A] = progress(True, SINCE)
    w = built(script, state_file=path)
    phase_event, stall_event = rounds(w)
    w.delivered([phase_event])  # killed before the stall event left the queue
    assert "stalls" not in json.loads(open(path).read())
    (again,) = rounds(built(script, state_file=path))
    assert again["modelarts"]["stalled"] is True and again["modelarts"]["event_id"] == stall_event["modelarts"]["event_id"]


def test_a_state_file_without_stalls_is_written_as_before_and_a_malformed_one_is_refused(tmp_path):
    path = str(tmp_path / "state.json")
    state = StateFile(path, {"training_job_ids": [A]})
    state.jobs = {A: "Running"}
    state.save()
    assert set(json.loads(open(path).read())) == {"version", "selection", "covered", "jobs"}
    state.stalls = {A: SINCE}
    state.save()
    assert StateFile(path, {"training_job_ids": [A]}).stalls == {A: SINCE}
    assert StateFile(path, {"training_job_ids": [A, B]}).stalls == {A: SINCE}
    for stalls, words in (([SINCE], "its 'stalls' is not an object"), ({A: "yesterday"}, "its 'stalls' holds a time")):
        data = json.loads(open(path).read())
        data["stalls"] = stalls
        with open(path, "w") as handle:
            json.dump(data, handle)
        with pytest.raises(StateFileError, match=words):
            StateFile(path, {"training_job_ids": [A]})


# -- the room on its own -----------------------------------------------------------------------------------------------


def test_the_stall_room_on_its_own():
    ledger = Ledger("all", False, None, lambda: 0.0)
    reads = []
    room = Stalls(None, lambda items, watched: reads.append(sorted(items)), ledger, lambda value: value)
    running = {A: dict(item(A, "Running"), progress=progress(True, SINCE))}
    phase_event = {"modelarts": {"training_job": item(B, "Pending"), "previous_phase": None, "phase": "Pending", "event_id": "x"}}
    events = room.round([phase_event], running, watched={A: None, B: None})
    assert [e["modelarts"]["stalled"] for e in events] == [False, True] and events[0]["modelarts"]["training_job"]["progress"] is None
    assert reads == [[A]]
    assert room.round([], {}, watched={}) == [] and room.sent == {}
    assert made_progress(progress(False)) and not made_progress(progress(False, problems=["x"])) and not made_progress(None)
    assert SINCE_SLACK_SECONDS == 60
    event = make_stall_event(item(A, "Running"), A, progress(True, SINCE))
    assert event["modelarts"]["event_id"] == event_id(A, "Running", "Running", extra="stall:%s:%s" % (A, SINCE))


def test_the_read_is_the_progress_rooms_made_at_the_first_read_and_forgets_jobs_no_longer_watched(monkeypatch):
    made = []

    class Progress(object):
        def __init__(self, client, settings, max_concurrency, clock):
            made.append((client, settings, max_concurrency, clock))
            self.histories, self.moments, self.last = {}, {}, {}

        def read(self, items, deadline=None):
            for found in items:
                found["progress"] = progress(False)
                self.histories[found["id"]] = self.moments[found["id"]] = self.last[found["id"]] = "kept"

    fake = type(sys)("progress")
    fake.Progress = Progress
    monkeypatch.setitem(sys.modules, "ansible_collections.modelarts.training.plugins.module_utils.waiting.progress", fake)
    script = Script()
    script.phases.update({A: "Running", B: "Running"})
    arguments = dict(CONNECTION, training_job_ids=[A, B], interval=2, stall=STALL, max_concurrency=7)
    w, query = watch.build_watcher(arguments, environ={}, clock=Clock())
    query.close()
    w.source = script
    assert made == [], "nothing is made before the first read"
    events = rounds(w)
    assert [e["modelarts"]["training_job"]["progress"] for e in events] == [progress(False)] * 2
    ((client, settings, concurrency, clock),) = made
    assert client is w.query.client and settings == w.arguments.stall and concurrency == 7 and clock is w.clock
    room = w.judge.stalls
    del w.jobs[B]  # no longer watched (a search that no longer returns it)
    room.read({A: item(A, "Running")}, watched=w.jobs)
    rooms = room.read.rooms
    assert set(rooms[0].histories) == set(rooms[0].moments) == set(rooms[0].last) == {A} and len(made) == 1


# -- review of issue 59, finding 1: only real progress ends a stall ------------------------------------------------------

QUIET_STALL = {"idle_minutes": 30, "quiet_minutes": 20, "require": "all"}
RESTARTED = "2026-11-25T02:40:00Z"  # the restart's first round, when the emptied log history began again


def quiet_progress(stalled, since=None, quiet=None, quiet_held=None, last=0.2, problems=()):
    """A judgement with idle and quiet (``require: all``): ``quiet`` is the quiet signal's since, ``quiet_held`` whether it
    holds (default: as ``stalled``)."""
    held = stalled if quiet_held is None else quiet_held
    idle = {"held": stalled, "minutes": 30, "tasks": {"worker-0": {"metric": "gpuUtil", "last": last, "peak": max(last, 0.3)}}}
    signals = {"idle": idle, "quiet": {"held": held, "since": quiet}, "service": None}
    return {"stalled": stalled, "since": since if stalled else None, "signals": signals, "problems": list(problems)}


def test_a_restart_does_not_report_again_a_stall_whose_start_moved_to_the_restart_with_the_quiet_log(tmp_path):
    path = str(tmp_path / "state.json")
    script = Script()
    script.phases[A] = "Running"
    script.progress[A] = quiet_progress(True, SINCE, quiet=SINCE)
    w = built(script, state_file=path, stall=QUIET_STALL)
    events = rounds(w)
    w.delivered(events)
    assert json.loads(open(path).read())["stalls"] == {A: SINCE}
    # Restarted: the log is seen too few polls (no since, a problems line), then silent from the restart's first round:
    # the stall's start (the later of idle's and quiet's) is the restart - still the recorded stall.
    again = built(script, state_file=path, stall=QUIET_STALL)
    line = "quiet: the log was seen across 0 of the 20 minutes needed; it is measured across polls"
    script.progress[A] = quiet_progress(False, quiet=None, problems=[line])
    assert rounds(again) == []
    script.progress[A] = quiet_progress(True, RESTARTED, quiet=RESTARTED)
    assert rounds(again, 3) == []
    # Real progress - the log seen growing across polls - then a new stall: reported.
    script.progress[A] = quiet_progress(False, quiet="2026-11-25T03:00:00Z", quiet_held=False)
    assert rounds(again) == []
    script.progress[A] = quiet_progress(True, LATER, quiet=LATER)
    (anew,) = rounds(again)
    assert anew["modelarts"]["progress"]["since"] == LATER
    assert anew["modelarts"]["event_id"] != events[-1]["modelarts"]["event_id"]


def test_not_stalled_yet_or_not_enough_data_is_no_progress_only_evidence_is():
    script = Script()
    script.phases[A] = "Running"
    script.progress[A] = quiet_progress(True, SINCE, quiet=SINCE)
    w = built(script, stall=QUIET_STALL)
    assert [e["modelarts"].get("stalled") for e in rounds(w)] == [False, True]
    # Not stalled and no problem, but no evidence: accelerators still idle, quiet not measured or still held.
    script.progress[A] = quiet_progress(False, quiet=SINCE, quiet_held=True)
    assert rounds(w) == []
    script.progress[A] = quiet_progress(True, LATER, quiet=LATER)
    assert rounds(w) == [], "the same stall: nothing showed the job make progress"
    # A busy newest average is evidence: the next stall is new.
    script.progress[A] = quiet_progress(False, quiet=SINCE, quiet_held=True, last=88.0)
    assert rounds(w) == []
    script.progress[A] = quiet_progress(True, "2026-11-25T05:00:00Z", quiet="2026-11-25T05:00:00Z")
    (anew,) = rounds(w)
    assert anew["modelarts"]["progress"]["since"] == "2026-11-25T05:00:00Z"


def test_what_counts_as_progress_after_a_stall():
    def running(start=None, now=None):
        status = {"phase": "Running"}
        if start is not None:
            status.update(start_time=int(start * 1000), duration=int((now - start) * 1000))
        return {"id": A, "phase": "Running", "details": {"status": status}}

    since = event_seconds(SINCE)
    idle = quiet_progress(False, quiet=None)
    assert not shows_progress(idle, running(), SINCE) and not shows_progress(None, running(), SINCE)
    # The log seen growing after the stall's start; not with a quiet problems line, nor a growth before the start.
    grew = quiet_progress(False, quiet=LATER, quiet_held=False)
    assert shows_progress(grew, running(), SINCE)
    assert not shows_progress(dict(grew, problems=["quiet: task worker-0: its log could not be read (HTTP 403: no)"]), running(), SINCE)
    assert not shows_progress(dict(grew, problems=["the job's start time is not known: no signal can count until it is"]), running(), SINCE)
    assert not shows_progress(quiet_progress(False, quiet="2026-11-25T01:00:00Z", quiet_held=False), running(), SINCE)
    # A busy peak counts only when the window of averages began after the stall's start.
    peaked = quiet_progress(False, quiet=None, last=0.2)
    peaked["signals"]["idle"]["tasks"]["worker-0"]["peak"] = 70.0
    assert not shows_progress(peaked, running(since - 3 * 3600, since + 10 * 60), SINCE)
    assert shows_progress(peaked, running(since - 3 * 3600, since + 40 * 60), SINCE)
    assert not shows_progress(peaked, running(), SINCE), "no clock of the service: the peak proves nothing"
    # A new start of the job (the service restarted it) after the stall's start.
    assert shows_progress(idle, running(since + 600, since + 700), SINCE)
    assert not shows_progress(idle, running(since - 600, since + 700), SINCE)
