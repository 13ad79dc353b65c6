# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rooms of the watch, each on its own (issue 49): the schedule, the ledger, the lister and the judge, with fakes
for what they call (no request is sent).  How they work together is tested through ``Watcher`` in test_watch.py,
test_watch_restarts.py and tests/unit/plugins/event_source, and against the emulator in tests/system."""

from __future__ import annotations

import json

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.service.search import PageFailed
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import Search
from ansible_collections.modelarts.training.plugins.module_utils.watch.events import JobState, SourceError, make_event
from ansible_collections.modelarts.training.plugins.module_utils.watch.judge import Judge
from ansible_collections.modelarts.training.plugins.module_utils.watch.ledger import EMPTY_LISTING_MARGIN_MS, Ledger
from ansible_collections.modelarts.training.plugins.module_utils.watch.lister import Lister
from ansible_collections.modelarts.training.plugins.module_utils.watch.schedule import Schedule
from ansible_collections.modelarts.training.plugins.module_utils.watch.state import StateFile

A, B, C = "a1000000-0000-4000-8000-000000000001", "b2000000-0000-4000-8000-000000000002", "c3000000-0000-4000-8000-000000000003"
JAN_1 = 1767225600000


class Clock(object):
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def item(key, phase, create_time="2026-01-01T00:00:00Z"):
    return {"id": key, "name": "job-" + key, "phase": phase, "terminal": phase in ("Completed", "Failed"), "schema_errors": [], "create_time": create_time}


# -- the schedule ---------------------------------------------------------------------------------------------------


def test_the_schedule_spreads_first_polls_a_batch_at_a_time_and_fills_the_last_batch():
    clock = Clock()
    schedule = Schedule(10.0, 60.0, clock, lambda: 0, str)
    jobs = dict(("j%02d" % n, JobState(clock())) for n in range(25))
    schedule.spread(jobs, 10, clock())
    assert sorted({state.due - 100.0 for state in jobs.values()}) == pytest.approx([0.0, 10.0 / 3, 20.0 / 3])
    due = schedule.due_keys(jobs, clock(), 10)
    assert len(due) == 10 and due == ["j%02d" % n for n in range(10)]
    jobs["j03"].due = 150.0
    filled = schedule.due_keys(jobs, clock(), 10)
    assert len(filled) == 10 and "j03" not in filled and "j10" in filled, "the soonest due of the others fill the batch"


def test_the_schedule_polls_one_round_trip_early_and_an_interval_later_after_throttling():
    clock = Clock()
    throttled = [0]
    schedule = Schedule(10.0, 60.0, clock, lambda: throttled[0], str)
    jobs = {A: JobState(clock())}
    clock.now = 102.0  # the round took 2 s
    schedule.polled(jobs, [A], 100.0)
    assert jobs[A].due == pytest.approx(108.0)
    throttled[0] = 1
    clock.now = 115.0  # this round took 5 s
    schedule.polled(jobs, [A], 110.0)
    assert jobs[A].due == pytest.approx(110.0 + 10.0 - 5.0 + 10.0), "half an interval early at most, one interval more"


def test_the_schedule_backs_off_after_tolerated_errors():
    clock = Clock()
    schedule = Schedule(2.0, 5.0, clock, lambda: 0, str)
    state = JobState(clock())
    delays = [schedule.retry(state, "failed") - clock() for _attempt in range(5)]
    assert delays == pytest.approx([2.0, 3.0, 4.5, 5.0, 5.0])
    assert schedule.next_due({A: state}) == state.due and schedule.next_due({}, search_state=state) == state.due


# -- the ledger -------------------------------------------------------------------------------------------------------


class Lister_(object):
    def __init__(self, listed=False, newest=None, started=None):
        self.listed, self.newest, self.started = listed, newest, started


def state_file(tmp_path, jobs=None, covered=None):
    path = tmp_path / "state.json"
    selection = {"training_job_ids": None, "name": None, "tags": [["team", ["x"]]], "workspace_id": None, "endpoint": "e", "project_id": None}
    if jobs is not None:
        path.write_text(json.dumps({"version": 1, "selection": selection, "covered": covered, "jobs": jobs}))
    return StateFile(str(path), selection)


def test_the_ledger_takes_only_first_attempt_reads_of_ids_as_starting_points():
    ledger = Ledger("changes", False, None, Clock())
    first, retried = JobState(0), JobState(0)
    first.polls, retried.polls = 1, 3
    assert ledger.is_starting_point(A, item(A, "Completed"), first)
    assert not ledger.is_starting_point(A, item(A, "Completed"), retried)
    assert not Ledger("all", False, None, Clock()).is_starting_point(A, item(A, "Completed"), first)


def test_the_ledger_takes_a_search_s_first_round_as_the_starting_point_but_not_what_is_new(tmp_path):
    ledger = Ledger("changes", True, state_file(tmp_path, {}, covered=JAN_1), Clock())
    ledger.lister = Lister_()
    assert ledger.is_starting_point(A, item(A, "Completed", "2025-12-31T00:00:00Z"), None)
    assert not ledger.is_starting_point(B, item(B, "Completed", "2026-01-01T00:00:30Z"), None), "within the margin: new"
    ledger.lister.listed = True
    assert not ledger.is_starting_point(C, item(C, "Completed", "2025-01-01T00:00:00Z"), None), "after the first round: new"


def test_the_ledger_covers_only_what_was_taken_care_of(tmp_path):
    ledger = Ledger("all", True, state_file(tmp_path, {}, covered=None), Clock())
    ledger.lister = Lister_(listed=False, started=JAN_1)
    ledger.listed([A, B], {A: item(A, "Completed", "2026-01-01T01:00:00Z"), B: item(B, "Completed", "2026-01-01T02:00:00Z")})
    assert ledger.covered() == JAN_1 + 3600 * 1000 - 1, "the first round is not over: below A, which is not recorded yet"
    ledger.lister.listed, ledger.lister.newest = True, JAN_1 + 2 * 3600 * 1000
    assert ledger.covered() == JAN_1 + 3600 * 1000 - 1
    ledger.record(A, "Completed")
    assert ledger.covered() == JAN_1 + 2 * 3600 * 1000 - 1
    ledger.record(B, "Completed")
    assert ledger.covered() == JAN_1 + 2 * 3600 * 1000
    empty = Ledger("changes", True, state_file(tmp_path, None), Clock())
    empty.lister = Lister_(listed=True, started=JAN_1)
    assert empty.covered() == JAN_1 - EMPTY_LISTING_MARGIN_MS


def test_the_ledger_saves_only_what_was_delivered_and_drops_what_the_first_round_did_not_list(tmp_path):
    state = state_file(tmp_path, {A: "Running", B: "Completed", C: "Running"}, covered=JAN_1)
    ledger = Ledger("changes", True, state, Clock())
    ledger.lister = Lister_(listed=True, newest=JAN_1)
    ledger.first_round_over({A}, complete=False)
    assert ledger.recorded == {A: "Running", C: "Running"}, "a finished job not listed goes; an unfinished one is read by id"
    ledger.delivered([make_event(item(A, "Completed"), "Running", A)])
    assert json.loads(open(state.path).read())["jobs"] == {A: "Completed", C: "Running"}
    ledger.first_round_over({A}, complete=True)
    assert ledger.recorded == {A: "Completed"}


def test_the_ledger_names_a_state_file_it_cannot_write(tmp_path, monkeypatch):
    state = state_file(tmp_path, {})
    ledger = Ledger("all", False, state, Clock())

    def full():
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(state, "save", full)
    with pytest.raises(SourceError, match="cannot be written: No space left on device"):
        ledger.delivered([make_event(item(A, "Completed"), None, A)])


# -- the lister -------------------------------------------------------------------------------------------------------


class Door(object):
    """The door's searches, answered from a table: ``pages[phases?]`` for search_pages, ``whole`` for search."""

    def __init__(self, unfinished, every=(), whole=None, newest=None):
        self.unfinished, self.every, self.whole, self.newest = unfinished, list(every), whole or {}, newest
        self.asked = []

    def redact(self, text):
        return text

    def search_pages(self, search, pages=None, resume_on=()):
        self.asked.append(("pages", bool(search.phases)))
        for page in [self.unfinished] if search.phases else self.every:
            if isinstance(page, PageFailed):
                yield page
                continue
            yield list(page), dict(page), None, False

    def search(self, search, deadline=None, pages=None, created_since=None, newest=None):
        self.asked.append(("latest" if search.latest else "since %s" % created_since, bool(search.phases)))
        if newest is not None and self.newest is not None:
            newest.append(self.newest)
        return list(self.whole), dict(self.whole)


def pages_of(lister):
    found = []
    while True:
        page = lister.next_page()
        if page is None:
            return found
        found.append(page if isinstance(page, PageFailed) else sorted(page[0]))


def test_the_lister_for_startup_all_asks_for_the_unfinished_jobs_after_four_pages_then_lists_the_rest():
    pages = [{"j%d" % number: item("j%d" % number, "Completed")} for number in range(7)]
    door = Door({A: item(A, "Running")}, every=pages)
    lister = Lister(Search(tags=[("team", ["x"])]), door, "all", None, Clock(), lambda: JAN_1 / 1000.0)
    assert pages_of(lister) == [["j0"], ["j1"], ["j2"], ["j3"], [A], ["j4"], ["j5"], ["j6"]]
    assert door.asked == [("pages", False), ("pages", True)] and lister.complete and lister.started == JAN_1
    assert lister.listed_keys == {A} | set(key for page in pages for key in page)


def test_the_lister_for_startup_all_lists_a_short_selection_without_the_unfinished_search():
    door = Door({A: item(A, "Running")}, every=[{B: item(B, "Completed")}, {C: item(C, "Completed")}])
    lister = Lister(Search(tags=[("team", ["x"])]), door, "all", None, Clock(), lambda: JAN_1 / 1000.0)
    assert pages_of(lister) == [[B], [C]]
    assert door.asked == [("pages", False)] and lister.complete and lister.listed_keys == {B, C}


def test_the_lister_for_startup_changes_never_lists_the_finished_jobs():
    door = Door({A: item(A, "Running")}, every=[{B: item(B, "Completed")}], whole={C: item(C, "Completed")}, newest=JAN_1)
    lister = Lister(Search(tags=[("team", ["x"])]), door, "changes", None, Clock(), lambda: JAN_1 / 1000.0)
    assert pages_of(lister) == [[A], [C], [C]]
    assert door.asked == [("pages", True), ("latest", False), ("since %d" % (JAN_1 - 60000), False)]
    assert not lister.complete and lister.newest == JAN_1
    covered = Lister(Search(tags=[("team", ["x"])]), Door({}, whole={}), "changes", JAN_1, Clock(), lambda: 0.0)
    assert pages_of(covered) == [[], []] and covered.query.asked[-1] == ("since %d" % (JAN_1 - 60000), False)


def test_the_lister_lists_every_job_when_the_service_refuses_the_phase_filter(caplog):
    refused = PageFailed(ModelArtsError("HTTP 400 ModelArts.0101: unsupported filter key 'phase'", transient=False))
    door = Door(refused, every=[{B: item(B, "Completed")}])
    lister = Lister(Search(tags=[("team", ["x"])]), door, "changes", None, Clock(), lambda: 0.0)
    assert pages_of(lister) == [[B]] and lister.unfinished_off and lister.complete
    assert "was refused" in caplog.text


def test_the_lister_hands_a_failed_page_over_and_keeps_its_place():
    failed = PageFailed(ModelArtsError("HTTP 503", transient=True))
    door = Door({A: item(A, "Running")}, every=[{B: item(B, "Completed")}, failed, {C: item(C, "Completed")}])
    lister = Lister(Search(tags=[("team", ["x"])]), door, "all", None, Clock(), lambda: 0.0)
    assert pages_of(lister) == [[B], failed, [C]]


def test_a_later_round_asks_what_is_new_and_what_is_unfinished_together():
    door = Door({}, whole={B: item(B, "Completed")})
    lister = Lister(Search(tags=[("team", ["x"])]), door, "all", None, Clock(), lambda: 0.0)
    keys, found, complete, joined = lister.later()
    assert keys == [B] and complete and joined == [] and door.asked == [("since None", False)], "nothing seen yet: every job"
    lister.newest = JAN_1
    door.whole = {}
    door.search = lambda search, deadline=None, pages=None, created_since=None, newest=None: (
        ([A], {A: item(A, "Running")}) if search.phases else ([B], {B: item(B, "Completed")})
    )
    keys, found, complete, joined = lister.later()
    assert sorted(keys) == [A, B] and not complete and joined == [A]


# -- the judge ----------------------------------------------------------------------------------------------------------


class Query_(object):
    """The door's verdicts, as the waiter gives them; its redaction; its diagnostics (recorded)."""

    def __init__(self):
        self.diagnosed = []

    def judge(self, observation, poll_number):
        if isinstance(observation, dict):
            return ("done", "") if observation.get("terminal") else ("pending", "")
        if getattr(observation, "status", None) == 401:
            return "fatal", ""
        return ("tolerated", "") if getattr(observation, "transient", False) else ("fatal", "")

    def redact(self, text):
        return text.replace("s3cr3t", "********")

    def redact_value(self, value):
        return json.loads(self.redact(json.dumps(value)))

    def diagnose(self, items):
        self.diagnosed.extend(items)


def judge(startup="all"):
    clock = Clock()
    ledger = Ledger(startup, False, None, clock)
    return Judge(Query_(), ledger, Schedule(2.0, 5.0, clock, lambda: 0, str), "strict", clock)


def test_the_judge_gives_one_event_per_change_and_ends_the_watch_of_a_finished_job():
    j = judge()
    events = [j.observe(A, item(A, "Running")), j.observe(A, item(A, "Running")), j.observe(A, item(A, "Completed"))]
    assert [e and (e["modelarts"]["previous_phase"], e["modelarts"]["phase"]) for e in events] == [(None, "Running"), None, ("Running", "Completed")]
    assert A in j.finished and A not in j.jobs and j.done_with(A)


def test_the_judge_masks_secrets_in_events_and_retries_tolerated_errors():
    j = judge()
    event = j.observe(A, dict(item(A, "Running"), name="job s3cr3t"))
    assert "s3cr3t" not in json.dumps(event)
    assert j.record_error(B, ModelArtsError("HTTP 503", transient=True)) is None and j.jobs[B].failures == 1
    j.record_error(C, ModelArtsError("HTTP 403 ModelArts.2771", transient=False))
    assert C in j.dropped
    error = ModelArtsError("HTTP 401", transient=False)
    error.status = 401
    with pytest.raises(SourceError):
        j.record_error(A, error)


def test_the_judge_asks_for_diagnostics_only_for_trusted_phases():
    j = judge()
    events = [j.observe(A, item(A, "Failed"))]
    j.diagnosed(events + [{"modelarts": {"training_job": {"id": B}, "phase": None}}])
    assert [entry["id"] for entry in j.query.diagnosed] == [A]


# -- what a job produced (issue 48): the coordinator hands the round's events into Completed to the door once -----------


class MetricsDoor(object):
    """A door with ``metrics``: ``read_metrics`` records each call and marks the items it was given."""

    def __init__(self, metrics=True):
        self.metrics = object() if metrics else None
        self.calls = []

    def read_metrics(self, items, deadline=None, candidates=None):
        from ansible_collections.modelarts.training.plugins.module_utils.results.metrics import Measured  # pylint: disable=import-outside-toplevel

        self.calls.append([item["id"] for item in items])
        for item in items:
            item["metrics"], item["metrics_ok"] = {"acc": {"value": 0.9}}, True
        return Measured(warnings=["baseline: none found"])


def measured_events(door, events):
    from ansible_collections.modelarts.training.plugins.module_utils.watch.source import Watcher  # pylint: disable=import-outside-toplevel

    watcher = Watcher.__new__(Watcher)
    watcher.query = door
    return watcher.measured(events)


def test_events_into_completed_carry_metrics_read_in_one_call_and_others_carry_null(caplog):
    door = MetricsDoor()
    events = [make_event(item(A, "Running"), None), make_event(item(B, "Completed"), "Running"), make_event(item(C, "Completed"), None)]
    measured_events(door, events)
    assert door.calls == [[B, C]], "one call for the round's jobs into Completed"
    running, completed = events[0]["modelarts"]["training_job"], events[1]["modelarts"]["training_job"]
    assert running["metrics"] is None and running["metrics_ok"] is None and completed["metrics_ok"] is True
    assert "baseline: none found" in caplog.text
    quiet = MetricsDoor()
    measured_events(quiet, [make_event(item(A, "Running"), None)])
    assert quiet.calls == [], "no read (and no baseline read) in a round without a completion"
    plain = [make_event(item(B, "Completed"), "Running")]
    measured_events(MetricsDoor(metrics=False), plain)
    assert "metrics" not in plain[0]["modelarts"]["training_job"]


@pytest.mark.parametrize(
    "error",
    [
        ModelArtsError("HTTP 401 APIG.0301: Incorrect IAM authentication information", status=401, error_code="APIG.0301"),
        ModelArtsError("HTTP 403 ModelArts.0204: the token lacks a permission", status=403, error_code="ModelArts.0204"),
    ],
)
def test_a_refusal_of_the_credentials_or_permissions_is_no_fallback_but_the_watch_s_error(caplog, error):
    """Issue 60, item 4: a 401/403 from the search for the unfinished jobs is every search's: the page fails (the watcher
    stops on it) - no warning that the first round lists every job, no such listing."""
    door = Door(PageFailed(error), every=[{B: item(B, "Completed")}])
    lister = Lister(Search(name="churn-model"), door, "changes", None, Clock(), lambda: 0.0)
    page = lister.next_page()
    assert isinstance(page, PageFailed) and page.error is error and not lister.unfinished_off
    assert "was refused" not in caplog.text and door.asked == [("pages", True)]
    # A later round: the unfinished jobs' search refused so raises the refusal, as the search for new jobs would.
    lister.newest = JAN_1
    door.search = lambda search, deadline=None, pages=None, created_since=None, newest=None: _raise(error) if search.phases else ([], {})
    with pytest.raises(ModelArtsError) as raised:
        lister.later()
    assert raised.value is error and "was refused" not in caplog.text


def _raise(error):
    raise error
