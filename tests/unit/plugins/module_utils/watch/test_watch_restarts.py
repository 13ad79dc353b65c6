# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 47, the fourth review's restart holes, at the level of the watch (module_utils/watch.py, watch_state.py) and the
source's queue handling: event ids of final phases, what the state file covers, starting points, odd and linked state
files, id lists that change, a directory that cannot be written, events that stay on ansible-rulebook's queue.

The door is real (no request is sent: the tests call the watcher's decisions with items, as its rounds would).  The same
holes are shown in the user's shape, against the emulator, in tests/system/test_review_47_restarts.py.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import uuid

import pytest

from ansible_collections.modelarts.training.extensions.eda.plugins.event_source import training_job_phase as source
from ansible_collections.modelarts.training.plugins.module_utils.watch import source as watch, state as watch_state
from ansible_collections.modelarts.training.plugins.module_utils.watch.state import event_id

CONNECTION = {
    "region": "cn-north-4",
    "project_id": "0123456789abcdef0123456789abcdef",
    "endpoint": "https://127.0.0.1:9",
    "access_key": "AK-UNIT",
    "secret_key": "Unit-Secret",
}
A, B, C = "a1000000-0000-4000-8000-000000000001", "b2000000-0000-4000-8000-000000000002", "c3000000-0000-4000-8000-000000000003"
JAN_1 = 1767225600000  # 2026-01-01T00:00:00Z in epoch ms


def item(key, phase, create_time="2026-01-01T00:00:00Z"):
    terminal = phase in ("Completed", "Failed", "Terminated", "Abnormal")
    return {"id": key, "name": "job-" + key, "phase": phase, "terminal": terminal, "schema_errors": [], "create_time": create_time}


def built(**args):
    arguments = dict(CONNECTION, training_job_ids=[A, B], interval=2)
    arguments.update(args)
    watcher, query = watch.build_watcher(arguments, environ={})
    query.close()
    if watcher.state is not None:
        watcher.state.check_project(CONNECTION["project_id"])
    return watcher


def phases(events):
    return [(e["modelarts"]["training_job"]["id"], e["modelarts"]["previous_phase"], e["modelarts"]["phase"]) for e in events]


def listing(w, unfinished, new=None):
    """Give ``w`` (startup: changes) a first round: ``unfinished`` for the search with a phase filter, ``new`` for the
    search of what is new; no confirming GET fails."""
    w.query.search_pages = lambda search, pages_=None, resume_on=(): iter([(list(unfinished), dict(unfinished), None, True)])
    w.query.search = lambda search, deadline=None, pages=None, created_since=None, newest=None: (list(new or {}), dict(new or {}))
    w.query.settle = lambda found, deadline=None: {}


def until_listed(w, rounds=6):
    events = []
    for _round in range(rounds):
        events += w.round(w.clock())
        if w.listed:
            return events
    raise AssertionError("the first round did not end")


# -- 1. the id of an event into a final phase ---------------------------------------------------------------------


@pytest.mark.parametrize("phase", ["Completed", "Failed", "Terminated", "Abnormal"])
def test_an_event_into_a_final_phase_takes_its_id_from_the_job_and_the_phase_alone(phase):
    first_run = built().observe(A, item(A, "Running"))
    w = built()
    w.observe(A, item(A, "Running"))
    seen_change = w.observe(A, item(A, phase))["modelarts"]["event_id"]
    restarted = built().observe(A, item(A, phase))["modelarts"]["event_id"]  # no state file: None -> phase
    assert seen_change == restarted == event_id(A, "Pending", phase) == event_id(A, None, phase)
    assert event_id(B, None, phase) != restarted
    # The id 1.0.0 gave None -> phase: a restart after an upgrade repeats it.
    namespace = uuid.UUID("7fc7da57-cd81-41d9-b345-f1b5a4ecf6ff")
    assert restarted == str(uuid.uuid5(namespace, "\x1f".join(["training-job", A, "", phase])))
    # Transitions between phases that are not final keep their own ids.
    assert first_run["modelarts"]["event_id"] == event_id(A, None, "Running") != event_id(A, "Pending", "Running")


# -- 3. what the state file covers --------------------------------------------------------------------------------


def test_an_empty_first_listing_records_what_it_covered_so_a_job_created_while_down_is_new(tmp_path):
    path = str(tmp_path / "state.json")
    w = built(training_job_ids=None, tags={"team": "x"}, startup="changes", state_file=path)
    w.lister.wall = lambda: JAN_1 / 1000.0
    listing(w, {})
    assert until_listed(w) == []
    w.delivered([])
    # When the listing started, less 15 minutes for a host clock ahead of the service's.
    assert json.loads(open(path).read())["covered"] == JAN_1 - 15 * 60 * 1000
    again = built(training_job_ids=None, tags={"team": "x"}, startup="changes", state_file=path)
    created_while_down = item(A, "Completed", create_time="2026-01-01T00:05:00Z")
    older = item(B, "Completed", create_time="2025-12-01T00:00:00Z")
    # What is new since the file's cover: A (and B, within the search's margin of an hour, but older than the cover).
    listing(again, {}, new={A: created_while_down, B: older})
    assert phases(until_listed(again)) == [(A, None, "Completed")]


def test_covered_does_not_move_past_a_job_whose_event_or_confirming_get_did_not_go_through(tmp_path):
    path = str(tmp_path / "state.json")
    w = built(training_job_ids=None, tags={"team": "x"}, startup="changes", state_file=path)
    w.lister.newest, w.lister.started = JAN_1 + 3 * 3600 * 1000, JAN_1
    w.lister.over()  # after the first round: these jobs are new, each read by its GET
    failing = item(A, "Completed", create_time="2026-01-01T01:00:00Z")
    delivered = item(B, "Completed", create_time="2026-01-01T02:00:00Z")
    undelivered = item(C, "Completed", create_time="2026-01-01T03:00:00Z")
    w.ledger.listed([A, B, C], {A: failing, B: delivered, C: undelivered})
    events = w.searched([A, B, C], {A: watch.ModelArtsError("get training job: HTTP 503", transient=True), B: delivered, C: undelivered})
    assert phases(events) == [(B, None, "Completed"), (C, None, "Completed")]
    w.delivered([events[0]])  # C's event is still on its way
    saved = json.loads(open(path).read())
    assert saved["covered"] == JAN_1 + 3600 * 1000 - 1, "not past A, whose GET failed"
    assert saved["jobs"] == {B: "Completed"}
    # A kill now, then a restart: A and C are not starting points (created after what was covered), B is known.
    again = built(training_job_ids=None, tags={"team": "x"}, startup="changes", state_file=path)
    listing(again, {}, new={C: undelivered, B: delivered, A: failing})
    assert sorted(phases(until_listed(again))) == sorted([(A, None, "Completed"), (C, None, "Completed")])


def test_a_kill_during_the_first_listing_leaves_covered_where_it_was(tmp_path):
    path = str(tmp_path / "state.json")
    w = built(training_job_ids=None, tags={"team": "x"}, startup="changes", state_file=path)
    listing(w, {A: item(A, "Running")})
    assert w.round(w.clock()) == [] and not w.listed
    w.delivered([])
    saved = json.loads(open(path).read())
    assert saved["jobs"] == {A: "Running"} and saved["covered"] is None, "the pages not listed yet are not covered"


# -- 4. starting points of training_job_ids ---------------------------------------------------------------------


def test_a_job_whose_first_reads_failed_gives_its_first_observation_with_startup_changes():
    w = built(startup="changes")
    for _attempt in range(4):
        assert w.record_error(A, watch.ModelArtsError("get training job: HTTP 503", transient=True)) is None
    assert phases([w.observe(A, item(A, "Completed"))]) == [(A, None, "Completed")]
    assert w.observe(B, item(B, "Completed")) is None, "a job read at its first attempt is a starting point"


# -- 8, 9. state files the source did not write -------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, words",
    [
        ("[" * 100000 + "]" * 100000, "nests deeper"),
        ('{"version": 1, "selection": {}, "covered": NaN, "jobs": {}}', "'NaN' is not a number"),
        ('{"version": 1, "selection": {}, "covered": Infinity, "jobs": {}}', "'Infinity' is not a number"),
        ('{"version": 1, "selection": {}, "covered": -Infinity, "jobs": {}}', "'-Infinity' is not a number"),
        ('{"version": 1, "selection": {}, "covered": 1e999, "jobs": {}}', "'covered' is not a time"),
        ('{"version": 1, "selection": {}, "covered": -5, "jobs": {}}', "'covered' is not a time"),
        ('{"version": 1, "selection": {}, "covered": null, "jobs": {"%s": "Finished"}}' % A, "'Finished', which is not a phase"),
        ('{"version": 1, "selection": {}, "covered": null, "jobs": {"%s": "completed"}}' % A, "'completed', which is not a phase"),
        ('{"version": 1, "selection": {}, "covered": null, "jobs": {"../etc": "Completed"}}', "'../etc', which is not a training job id"),
    ],
)
def test_an_odd_state_file_cannot_be_read_naming_the_file(tmp_path, content, words):
    path = tmp_path / "state.json"
    path.write_text(content)
    with pytest.raises(watch.SourceConfigError) as caught:
        built(state_file=str(path))
    text = str(caught.value)
    assert str(path) in text and "cannot be read" in text and words in text and "Traceback" not in text
    assert path.read_text() == content


def test_a_link_at_state_file_is_refused_and_its_target_left_alone(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    forged = elsewhere / "forged.json"
    w = built(state_file=str(mine / "real.json"))
    w.delivered([w.observe(A, item(A, "Completed")), w.observe(B, item(B, "Completed"))])
    forged.write_text((mine / "real.json").read_text())
    link = mine / "state.json"
    os.symlink(str(forged), str(link))
    with pytest.raises(watch.SourceConfigError) as caught:
        built(state_file=str(link))
    assert "is a symbolic link" in str(caught.value) and str(link) in str(caught.value)
    assert os.path.islink(str(link)) and forged.read_text() == (mine / "real.json").read_text()


# -- 10. ids added and removed ------------------------------------------------------------------------------------


def test_ids_added_or_removed_keep_what_the_file_knows_of_the_ids_still_watched(tmp_path):
    path = str(tmp_path / "state.json")
    w = built(state_file=path, training_job_ids=[A, B])
    w.delivered([w.observe(A, item(A, "Running")), w.observe(B, item(B, "Completed"))])
    # A completed while the source was down; B is no longer watched; C is new and follows startup (changes: a starting point).
    again = built(state_file=path, training_job_ids=[A, C], startup="changes")
    assert phases([again.observe(A, item(A, "Completed"))]) == [(A, "Running", "Completed")]
    assert again.observe(C, item(C, "Running")) is None
    again.delivered([])
    saved = json.loads(open(path).read())
    assert saved["jobs"] == {A: "Running", C: "Running"} and saved["selection"]["training_job_ids"] == sorted([A, C])
    # With startup: all, a new id gives its first observation.
    third = built(state_file=path, training_job_ids=[A, C, B])
    assert phases([third.observe(B, item(B, "Completed"))]) == [(B, None, "Completed")]


# -- 6. a directory the source cannot write -----------------------------------------------------------------------


def test_a_directory_that_cannot_be_written_stops_the_source_at_start(tmp_path, monkeypatch):
    """The real thing (a full tmpfs, a read-only mount) is in the system tests; here, the probe's error is the message."""
    path = tmp_path / "state.json"

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(watch_state.tempfile, "mkstemp", full)
    with pytest.raises(watch.SourceConfigError) as caught:
        built(state_file=str(path))
    assert "cannot be written: No space left on device" in str(caught.value) and str(path) in str(caught.value)
    assert not path.exists()


# -- 5. events that stay on ansible-rulebook's queue ----------------------------------------------------------------


class _Rulebook(object):
    """ansible-rulebook 1.3's shape: the source gets a FilteredQueue over the rule set's asyncio.Queue(1), shared with
    another source; an event filter makes a new dict of each event (as insert_meta_info may)."""

    def __init__(self):
        self.queue = asyncio.Queue(1)

    async def put(self, data):
        await self.queue.put(dict(data, meta={"source": "modelarts"}))


def _event(key, phase):
    return watch.make_event(item(key, phase), "Running", key)


def test_an_event_not_seen_leaving_the_queue_is_not_recorded_and_is_named(caplog):
    async def scenario():
        rulebook = _Rulebook()
        departures = source.Departures(rulebook)
        await rulebook.queue.put({"other": "source"})  # another source's event fills the queue
        ours = _event(A, "Completed")
        putting = asyncio.ensure_future(departures.put(ours))
        await asyncio.sleep(0.05)
        assert rulebook.queue.get_nowait() == {"other": "source"}  # the engine takes the other one...
        await putting
        with caplog.at_level(logging.WARNING):
            left = await departures.left(0.3)  # ...and then stalls: ours stays on the queue
        assert left == [] and ours["modelarts"]["event_id"] in caplog.text and "still on ansible-rulebook's queue" in caplog.text
        # Another source keeps the queue busy, but ours left: it is handed over (the queue is not empty meanwhile).
        taken = rulebook.queue.get_nowait()
        assert taken["modelarts"]["event_id"] == ours["modelarts"]["event_id"]
        await rulebook.queue.put({"other": "source again"})
        assert await departures.left(0.3) == [ours]
        return True

    assert asyncio.run(scenario())


def test_a_queue_that_cannot_be_looked_into_counts_an_event_as_left_only_once_it_is_empty():
    class Opaque(object):
        def __init__(self):
            self.items = collections.deque()

        async def put(self, data):
            self.items.append(data)

        def empty(self):
            return not self.items

    async def scenario():
        opaque = Opaque()
        departures = source.Departures(opaque)
        ours = _event(A, "Completed")
        await departures.put(ours)
        assert await departures.left(0.2) == []
        opaque.items.popleft()
        return await departures.left(0.2)

    assert asyncio.run(scenario()) == [_event(A, "Completed")]


def test_an_event_the_filters_dropped_is_not_waited_for_and_an_overdue_one_does_not_hold_every_round():
    class Dropping(object):
        """ansible-rulebook's FilteredQueue with an event filter that drops every event of this source."""

        def __init__(self):
            self.queue = asyncio.Queue()

        async def put(self, data):
            return None

    async def scenario():
        dropping = Dropping()
        await dropping.queue.put({"other": "source"})
        departures = source.Departures(dropping)
        ours = _event(A, "Completed")
        await departures.put(ours)
        assert await departures.left(30) == [ours], "nothing of it reached the queue: nothing to wait for"
        # An event that stays on the queue is waited for once, up to its limit after it was put; a later round does not
        # wait for it again (a clock that moves one second at each reading: the first call reads it until the limit).
        readings = []

        def clock():
            readings.append(len(readings))
            return float(readings[-1])

        rulebook = _Rulebook()
        stuck = source.Departures(rulebook, clock=clock)
        await stuck.put(_event(B, "Completed"))
        assert await stuck.left(5) == [] and len(readings) >= 6
        before = len(readings)
        assert await stuck.left(5) == []
        return len(readings) - before

    assert asyncio.run(scenario()) <= 3, "the overdue event is not waited for again"
