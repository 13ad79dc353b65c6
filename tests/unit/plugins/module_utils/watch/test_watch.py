# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watch (module_utils/watch.py, watch_state.py) without ansible-rulebook: startup, state_file, event_id.

The door is real (no request is sent: the tests call the watcher's decisions with items, as the rounds would).
"""

from __future__ import annotations

import json
import os
import stat
import uuid

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.watch import source as watch, events as watch_events
from ansible_collections.modelarts.training.plugins.module_utils.watch.state import StateFile, StateFileError, event_id

CONNECTION = {
    "region": "cn-north-4",
    "project_id": "0123456789abcdef0123456789abcdef",
    "endpoint": "https://127.0.0.1:9",
    "access_key": "AK-UNIT",
    "secret_key": "Unit-Secret",
}
A, B = "a1000000-0000-4000-8000-000000000001", "b2000000-0000-4000-8000-000000000002"


def item(key, phase, create_time="2026-01-01T00:00:00Z"):
    terminal = phase in ("Completed", "Failed", "Terminated", "Abnormal")
    return {"id": key, "name": "job-" + key, "phase": phase, "terminal": terminal, "schema_errors": [], "create_time": create_time}


def built(tmp_path=None, **args):
    arguments = dict(CONNECTION, training_job_ids=[A, B], interval=2)
    arguments.update(args)
    watcher, query = watch.build_watcher(arguments, environ={})
    query.close()
    if watcher.state is not None:
        watcher.state.check_project(CONNECTION["project_id"])
    return watcher


def phases(events):
    return [(e["modelarts"]["training_job"]["id"], e["modelarts"]["previous_phase"], e["modelarts"]["phase"]) for e in events]


def test_event_id_is_the_same_for_the_same_job_and_transition_in_every_run():
    first = built().observe(A, item(A, "Running"))
    again = built().observe(A, item(A, "Running"))
    assert first["modelarts"]["event_id"] == again["modelarts"]["event_id"] == event_id(A, None, "Running")
    w = built()
    w.observe(A, item(A, "Running"))
    done = w.observe(A, item(A, "Completed"))["modelarts"]["event_id"]
    assert done == event_id(A, "Running", "Completed") and done != first["modelarts"]["event_id"]
    assert event_id(B, "Running", "Completed") != done
    assert uuid.UUID(done).version == 5


def test_startup_changes_takes_the_first_observations_as_the_starting_point():
    w = built(startup="changes")
    assert w.observe(A, item(A, "Completed")) is None and A in w.finished
    assert w.observe(B, item(B, "Running")) is None and B in w.jobs
    assert phases([w.observe(B, item(B, "Completed"))]) == [(B, "Running", "Completed")]


def test_a_search_watch_with_startup_changes_reports_jobs_that_appear_later():
    w = built(training_job_ids=None, tags={"team": "x"}, startup="changes")
    assert w.searched([A], {A: item(A, "Completed")}) == [] and A in w.finished
    w.lister.over()  # the first round is over: a job that appears now is new
    assert phases(w.searched([B], {B: item(B, "Completed")})) == [(B, None, "Completed")]


def test_the_state_file_is_written_after_delivery_with_mode_0600_and_read_at_the_next_start(tmp_path):
    path = str(tmp_path / "state.json")
    w = built(state_file=path)
    events = [w.observe(A, item(A, "Running")), w.observe(B, item(B, "Completed"))]
    assert not os.path.exists(path), "nothing is written before the events are handed over"
    w.delivered(events)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    data = json.loads(open(path).read())
    assert data["jobs"] == {A: "Running", B: "Completed"}
    assert os.path.getsize(path) < 400 * 2 + 400
    # A restart: the recorded phases give nothing; a change while down gives one event from the recorded phase.
    again = built(state_file=path)
    assert again.observe(B, item(B, "Completed")) is None and B in again.finished
    assert phases([again.observe(A, item(A, "Completed"))]) == [(A, "Running", "Completed")]
    assert A in again.finished


def test_a_kill_before_delivery_repeats_the_event_with_the_same_id(tmp_path):
    path = str(tmp_path / "state.json")
    w = built(state_file=path)
    w.delivered([w.observe(A, item(A, "Running"))])
    in_flight = w.observe(A, item(A, "Completed"))  # made, put on the queue, then the process is killed: never delivered()
    again = built(state_file=path)
    repeat = again.observe(A, item(A, "Completed"))
    assert repeat["modelarts"]["event_id"] == in_flight["modelarts"]["event_id"]


@pytest.mark.parametrize(
    "change, words",
    [
        # Ids added or removed keep the file (test_ids_added_or_removed_keep_what_the_file_knows...); a search is another watch.
        ({"training_job_ids": None, "tags": {"team": "x"}}, "training_job_ids is none here, %s, %s in the file" % (A, B)),
        ({"endpoint": "https://127.0.0.1:10"}, "endpoint is https://127.0.0.1:10 here, https://127.0.0.1:9 in the file"),
    ],
)
def test_a_file_for_another_selection_stops_the_source_and_is_left_as_it_was(tmp_path, change, words):
    path = str(tmp_path / "state.json")
    w = built(state_file=path)
    w.delivered([w.observe(A, item(A, "Running"))])
    before = open(path, "rb").read()
    with pytest.raises(watch.SourceConfigError) as caught:
        built(state_file=path, **change)
    text = str(caught.value)
    assert path in text and "another selection" in text and words in text and "Traceback" not in text
    assert open(path, "rb").read() == before


def test_a_file_for_another_project_stops_the_source_once_the_project_is_known(tmp_path):
    path = str(tmp_path / "state.json")
    w = built(state_file=path)
    w.delivered([w.observe(A, item(A, "Running"))])
    state = StateFile(path, built().arguments.selection("https://127.0.0.1:9"))
    with pytest.raises(StateFileError, match="project_id is ffff here, %s in the file" % CONNECTION["project_id"]):
        state.check_project("ffff")


@pytest.mark.parametrize("content", [b"{not json", b"[]", b'{"version": 1, "selection": {}, "jobs": []}', b"\xff\xfe"])
def test_a_corrupt_file_stops_the_source_naming_it(tmp_path, content):
    path = tmp_path / "state.json"
    path.write_bytes(content)
    with pytest.raises(watch.SourceConfigError) as caught:
        built(state_file=str(path))
    assert str(path) in str(caught.value) and "cannot be read" in str(caught.value)
    assert path.read_bytes() == content


def test_a_directory_others_can_write_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(watch.SourceConfigError, match="can be written by other users"):
        built(state_file=str(shared / "state.json"))
    # A directory that does not exist yet is made, for this user only.
    built(state_file=str(tmp_path / "missing" / "deeper" / "state.json"))
    assert stat.S_IMODE(os.stat(tmp_path / "missing" / "deeper").st_mode) == 0o700
    (tmp_path / "file").write_text("")
    with pytest.raises(watch.SourceConfigError, match="its directory cannot be made"):
        built(state_file=str(tmp_path / "file" / "sub" / "state.json"))


def first_round(w, unfinished, every=None, newest=None):
    """Give ``w`` a first round: ``unfinished`` (a dict of items) for the search with a phase filter, ``every`` (a list of
    dicts, a page each) for the search of every job (startup: all), ``newest`` (a dict of items) for the search of what
    is new (startup: changes); no confirming GET.  Returns the searches asked for, as ``(kind, search)``."""
    asked = []

    def search_pages(search, pages=None, resume_on=()):
        asked.append(("pages", search))
        chosen = [unfinished] if search.phases else (every or [])
        return iter([(list(page), dict(page), None, index == len(chosen) - 1) for index, page in enumerate(chosen)])

    def search(search, deadline=None, pages=None, created_since=None, newest_=None):
        asked.append(("search", search))
        times = [watch_events.created_ms(entry["create_time"]) for entry in (newest or {}).values()]
        if newest_ is not None and times:
            newest_.append(max(times))
        return list(newest or {}), dict(newest or {})

    class Unchanged(object):
        """The watched jobs read by id: still Running."""

        batch = 10

        def observe(self, keys, deadline=None):
            asked.append(("by id", keys))
            return dict((key, item(key, "Running")) for key in keys)

    w.query.search_pages = search_pages
    w.query.search = search
    w.query.settle = lambda found, deadline=None: {}
    w.query.phase_source = lambda keys, acted=None, workspace_id=None: Unchanged()
    return asked


def until_listed(w, rounds=6):
    events = []
    for _round in range(rounds):
        events += w.round(w.clock())
        if w.listed:
            return events
    raise AssertionError("the first round did not end")


def test_the_state_keeps_no_job_the_search_no_longer_returns(tmp_path):
    path = str(tmp_path / "state.json")
    w = built(training_job_ids=None, tags={"team": "x"}, state_file=path)
    w.delivered(w.searched([A, B], {A: item(A, "Completed"), B: item(B, "Running")}))
    assert set(json.loads(open(path).read())["jobs"]) == {A, B}
    again = built(training_job_ids=None, tags={"team": "x"}, state_file=path)
    # The first round of the next run no longer returns A (untagged, deleted): the file forgets it.
    first_round(again, {B: item(B, "Running")}, every=[{B: item(B, "Running")}])
    assert until_listed(again) == []
    again.delivered([])
    assert json.loads(open(path).read())["jobs"] == {B: "Running"}


def test_startup_changes_lists_no_finished_job_and_confirms_none_by_get(tmp_path):
    """startup: changes follows the unfinished jobs from its first round (the search with a phase filter) and asks for
    the newest job alone: no finished job is listed one by one, and no GET confirms a starting point."""
    w = built(training_job_ids=None, tags={"team": "x"}, startup="changes")
    asked = first_round(w, {A: item(A, "Running")}, newest={"f00": item("f00", "Completed", create_time="2026-01-02T00:00:00Z")})
    settled = []
    w.query.settle = lambda found, deadline=None: settled.append(dict(found)) or {}
    assert until_listed(w) == []
    assert [kind for kind, _search in asked if kind != "by id"] == ["pages", "search", "search"]
    searches = [search for _kind, search in asked]
    assert searches[0].phases and searches[1].latest and not searches[2].latest, "the unfinished jobs, the newest alone, what is new since"
    assert not any(search.phases is None and not search.latest for search in searches[:2])
    assert settled == [{}, {}, {}], "no GET for a starting point"
    assert list(w.jobs) == [A] and list(w.finished) == ["f00"]
    assert w.newest == 1767312000000


def test_a_job_created_since_the_state_was_saved_is_new_whatever_startup_says(tmp_path):
    path = str(tmp_path / "state.json")
    w = built(training_job_ids=None, tags={"team": "x"}, startup="changes", state_file=path)
    w.lister.newest = 1767225600000  # 2026-01-01T00:00:00Z
    w.lister.over()  # the first round is over: the file covers what it listed
    w.delivered(w.searched([A], {A: item(A, "Running")}))
    again = built(training_job_ids=None, tags={"team": "x"}, startup="changes", state_file=path)
    late = item(B, "Completed", create_time="2026-01-01T01:00:00Z")
    old = item("c", "Completed", create_time="2025-12-01T00:00:00Z")
    events = again.searched([A, B, "c"], {A: item(A, "Completed"), B: late, "c": old})
    assert phases(events) == [(A, "Running", "Completed"), (B, None, "Completed")]


def test_a_failed_page_of_the_first_listing_is_asked_again_not_the_listing_from_its_first_page(tmp_path):
    """10,001 matching jobs under load: a search request that fails half-way through the first listing costs that page
    again after the backoff, not every page before it (the listing keeps its place)."""
    from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
    from ansible_collections.modelarts.training.plugins.module_utils.service.search import PageFailed

    w = built(training_job_ids=None, tags={"team": "x"}, startup="changes")
    first = dict(("u%02d" % index, item("u%02d" % index, "Running")) for index in range(50))
    second = {A: item(A, "Running")}
    calls = []

    def search_pages(search, pages=None, resume_on=()):
        calls.append(resume_on)
        yield list(first), first, None, False
        yield PageFailed(ModelArtsError("search training jobs (offset 1): the deadline passed before the request could be sent", transient=True))
        yield list(second), second, None, True

    first_round(w, {})
    w.query.search_pages = search_pages
    assert w.round(w.clock()) == [] and not w.listed
    assert w.round(w.clock()) == [] and not w.listed and w.search_state.failures == 1
    assert w.next_due() > w.clock(), "the failed page waits for the backoff"
    assert w.round(w.next_due()) == [] and w.search_state.failures == 0
    until_listed(w)
    assert len(calls) == 1 and ModelArtsError in calls[0], "one listing, resumed: the first page is not asked again"
    assert sorted(w.jobs) == sorted(list(first) + [A])
