# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The phase sources: which requests a round costs, and that every answer is what one GET per job gives."""

from __future__ import annotations

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.waiting import observer, waiter
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.job.validation import SchemaValidationError
from ansible_collections.modelarts.training.plugins.module_utils.waiting.wait_options import WaitSettings

ACTED = ("Completed", "Failed", "Abnormal", "Terminated")


class Service(object):
    """Jobs and their phases, answering searches by id and GETs, and counting both."""

    def __init__(self, phases, hidden=(), search_error=None, broken=()):
        self.phases = dict(phases)
        self.hidden = set(hidden)  # jobs the search leaves out
        self.broken = set(broken)  # jobs whose search document breaks the schema
        self.search_error = search_error
        self.searches = []
        self.gets = []

    def search(self, ids, deadline=None):
        assert len(ids) <= 10
        self.searches.append(list(ids))
        if self.search_error is not None:
            raise self.search_error
        return dict((key, {"id": key, "phase": self.phases[key], "from": "search"}) for key in ids if key in self.phases and key not in self.hidden)

    def build(self, document, key):
        if key in self.broken:
            raise SchemaValidationError(key, [{"path": "$.status", "message": "bad"}], "v2", item={"id": key, "phase": document["phase"]})
        return {"id": key, "phase": document["phase"], "from": document["from"]}

    def fetch(self, keys, deadline=None):
        self.gets.extend(keys)
        return dict((key, {"id": key, "phase": self.phases[key], "from": "get"} if key in self.phases else ModelArtsError("gone", status=404)) for key in keys)

    def source(self, keys, acted=ACTED):
        return observer.phase_source(keys, self.fetch, self.search, self.build, acted)


def ids(count):
    return ["job-%03d" % index for index in range(count)]


def test_a_round_over_200_jobs_costs_20_searches_and_no_get():
    keys = ids(200)
    service = Service(dict((key, "Running") for key in keys))
    source = service.source(keys)
    answers = source.observe(keys)
    assert len(service.searches) == 20 and service.gets == []
    assert sorted(sum(service.searches, [])) == keys
    assert list(answers) == keys and all(answers[key] == {"id": key, "phase": "Running", "from": "search"} for key in keys)


def test_acted_phases_missing_jobs_and_bad_documents_are_read_by_get():
    keys = ids(12)
    phases = dict((key, "Running") for key in keys)
    phases.update({"job-001": "Completed", "job-002": "Failed"})
    service = Service(phases, hidden={"job-003"}, broken={"job-004"})
    answers = service.source(keys).observe(keys)
    assert len(service.searches) == 2
    assert sorted(service.gets) == ["job-001", "job-002", "job-003", "job-004"]
    assert answers["job-001"]["from"] == "get" and answers["job-002"]["phase"] == "Failed"
    assert answers["job-003"]["from"] == "get" and answers["job-004"]["from"] == "get"
    assert answers["job-000"]["from"] == "search"


def test_a_job_gone_for_good_gets_the_get_error():
    keys = ids(3)
    service = Service({"job-000": "Running", "job-001": "Running"})
    answers = service.source(keys).observe(keys)
    assert service.gets == ["job-002"] and isinstance(answers["job-002"], ModelArtsError) and answers["job-002"].not_found


def test_a_throttled_search_is_each_jobs_error_and_no_get_is_sent():
    keys = ids(15)
    throttled = ModelArtsError("throttled", status=429, error_code="APIG.0308", transient=True)
    service = Service(dict((key, "Running") for key in keys), search_error=throttled)
    source = service.source(keys)
    answers = source.observe(keys)
    assert service.gets == [] and all(answers[key] is throttled for key in keys)
    assert source.disabled is None  # the next round searches again


def test_a_search_refused_for_good_turns_into_gets_for_the_rest_of_the_call():
    keys = ids(15)
    refused = ModelArtsError("no permission trainJob:list", status=403, error_code="ModelArts.0204")
    service = Service(dict((key, "Running") for key in keys), search_error=refused)
    source = service.source(keys)
    assert source.batch == 10
    first = source.observe(keys)
    assert source.batch == 1  # the event source stops filling batches: every job is a GET now
    assert sorted(service.gets) == keys and all(first[key]["from"] == "get" for key in keys)
    service.gets = []
    source.observe(keys)
    assert len(service.searches) == 2 and sorted(service.gets) == keys  # no search after the refusal


def test_complete_reads_every_job_last_seen_through_a_search_once():
    keys = ids(5)
    service = Service(dict((key, "Running") for key in keys))
    source = service.source(keys)
    source.observe(keys)
    service.phases["job-000"] = "Completed"
    source.observe(["job-000"])  # now read by GET: nothing to complete for it
    completed = source.complete()
    assert sorted(completed) == keys[1:] and sorted(service.gets) == keys
    assert source.complete() == {}


def test_v1_jobs_are_always_read_by_get():
    keys = ids(3) + [("v1", 7, 1)]
    service = Service(dict((key, "Running") for key in keys))
    answers = service.source(keys).observe(keys)
    assert service.gets == [("v1", 7, 1)] and answers[("v1", 7, 1)]["from"] == "get"


@pytest.mark.parametrize(
    "keys, kind", [(["one"], observer.GetPhases), ([("v1", 1, 1), ("v1", 1, 2), "one"], observer.GetPhases), (["a", "b"], observer.SearchPhases)]
)
def test_one_job_keeps_the_plain_get(keys, kind):
    assert isinstance(Service({}).source(keys), kind)


def test_the_get_source_is_one_get_per_job_and_nothing_to_complete():
    service = Service({"one": "Running"})
    source = service.source(["one"])
    assert source.observe(["one"]) == {"one": {"id": "one", "phase": "Running", "from": "get"}}
    assert source.complete() == {} and service.searches == []


class Clock(object):
    def __init__(self):
        self.now = 0.0
        self.naps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.naps.append(seconds)
        self.now += seconds


def test_rounds_slow_down_after_the_service_throttled():
    clock = Clock()
    answers = iter(["Running"] * 4 + ["Completed"])
    throttles = iter([False, True, False, False])

    def poll(keys, deadline):
        phase = next(answers)
        return dict((key, {"phase": phase}) for key in keys)

    result = waiter.wait_for_jobs(
        ["a"], poll, WaitSettings(True, ["Completed"], ["Failed"], 1000, 2, 60), clock=clock, sleeper=clock.sleep, throttled=lambda: next(throttles)
    )
    assert result.ok
    # 2, then 3 (x1.5) doubled to 6 for the throttled round, then 9, 13.5: never faster after throttling.
    assert clock.naps == [2, 6, 9, 13.5]


def test_complete_replaces_the_last_items_and_records_a_phase_change():
    result = waiter.WaitResult(["a", "b"], ["Completed"], ["Failed"], 10)
    result.observe("a", {"phase": "Running", "from": "search"}, 1.0, "2026-01-01T00:00:00Z", (waiter.JOB_WAITING, None))
    result.observe("b", {"phase": "Running", "from": "search"}, 1.0, "2026-01-01T00:00:00Z", (waiter.JOB_WAITING, None))
    result.complete({"a": {"phase": "Running", "from": "get"}, "b": ModelArtsError("timed out", transient=True)})
    assert result.items["a"]["from"] == "get" and result.items["b"]["from"] == "search"
    assert [entry["phase"] for entry in result.phase_history["a"]] == ["Running"]


def test_a_search_past_the_deadline_is_not_sent_and_each_job_says_so_by_its_own_name():
    keys = ids(12)
    service = Service(dict((key, "Running") for key in keys))
    clock = Clock()
    clock.now = 50.0
    source = observer.phase_source(keys, service.fetch, service.search, service.build, ACTED, clock=clock)
    answers = source.observe(keys, deadline=10.0)
    assert service.searches == [] and service.gets == []
    assert all(answers[key].not_sent and key in str(answers[key]) for key in keys)


# -- settled jobs: done by the search's word, confirmed by GET within a round's room ------------------------------------


def test_round_budget_is_the_searches_of_every_job_and_a_quarter_more():
    assert observer.round_budget(200) == 25 and observer.round_budget(1000) == 125
    assert observer.round_budget(2) == 2 and observer.round_budget(11) == 3 and observer.round_budget(0) == 1


def settled_source(service, keys):
    return observer.phase_source(keys, service.fetch, service.search, service.build, ACTED, settled=("Completed",))


def test_jobs_the_search_shows_settled_beyond_the_rounds_room_are_done_and_confirmed_in_later_rounds():
    keys = ids(200)
    service = Service(dict((key, "Running") for key in keys))
    source = settled_source(service, keys)
    for key in keys[:12]:
        service.phases[key] = "Completed"
    answers = source.observe(keys)
    # 20 searches and the 5 GETs the room of 25 leaves: the 5 jobs seen settled first get their own document now.
    assert len(service.searches) == 20 and service.gets == keys[:5]
    assert all(answers[key]["from"] == "get" for key in keys[:5])
    assert all(answers[key] == {"id": key, "phase": "Completed", "from": "search"} for key in keys[5:12])
    assert list(source.unconfirmed) == keys[5:12]
    # The next round asks only about the jobs still running (the waiter's pending): 19 searches, 6 GETs, and the
    # answers of the unconfirmed jobs come along beyond the keys asked.
    service.searches, service.gets = [], []
    answers = source.observe(keys[12:])
    assert len(service.searches) == 19 and service.gets == keys[5:11]
    assert list(answers)[-6:] == keys[5:11] and all(answers[key]["from"] == "get" for key in keys[5:11])
    assert list(source.unconfirmed) == keys[11:12]
    completed = source.complete()  # the last one, and the running jobs last seen through the search
    assert sorted(completed) == keys[11:] and all(item["from"] == "get" for item in completed.values())
    assert not source.unconfirmed and not source.partial


def test_gets_that_cannot_wait_are_sent_whatever_the_room():
    keys = ids(20)
    service = Service(dict((key, "Failed" if key < "job-010" else "Running") for key in keys), hidden={"job-019"})
    source = settled_source(service, keys)
    answers = source.observe(keys)
    # Budget 3 for 20 jobs: 2 searches, yet all ten failed jobs and the one the search left out are read now.
    assert len(service.searches) == 2 and sorted(service.gets) == keys[:10] + ["job-019"]
    assert all(answers[key]["from"] == "get" for key in keys[:10] + ["job-019"])


def test_a_job_asked_about_while_unconfirmed_is_read_by_get_not_searched_again():
    keys = ids(30)
    service = Service(dict((key, "Completed") for key in keys))
    source = settled_source(service, keys)
    source.observe(keys)  # budget 4: 3 searches and one GET
    assert len(source.unconfirmed) == 29
    service.searches, service.gets = [], []
    answers = source.observe(keys[5:8])
    assert service.searches == [] and service.gets[:3] == keys[5:8]
    assert all(answers[key]["from"] == "get" for key in keys[5:8]) and not set(keys[5:8]) & set(source.unconfirmed)


def test_a_failed_confirmation_leaves_the_job_unconfirmed_and_partial():
    keys = ids(2)
    service = Service({"job-000": "Completed", "job-001": "Running"})
    source = settled_source(service, keys)
    source._fetch = lambda some, deadline=None: dict((key, ModelArtsError("busy", status=503, transient=True)) for key in some)
    answers = source.observe(keys)
    assert isinstance(answers["job-000"], ModelArtsError)  # the GET's answer is the round's answer
    assert "job-000" in source.unconfirmed and "job-000" in source.partial


def test_items_of_a_name_search_are_adopted_as_search_items():
    service = Service({"only": "Completed"})
    source = settled_source(service, ["only"])
    assert isinstance(source, observer.GetPhases)
    source.adopt({"only": {"id": "only", "phase": "Completed", "from": "search"}, ("search", 1): ValueError("no id")})
    assert list(source.unconfirmed) == ["only"] and source.partial == {"only"}
    assert source.observe(["only"]) == {"only": {"id": "only", "phase": "Completed", "from": "get"}}
    assert not source.unconfirmed and not source.partial


@pytest.mark.parametrize("count", [1, 3], ids=["get-phases", "search-phases"])
def test_a_name_search_in_an_acted_phase_is_left_to_the_jobs_get(count):
    # Issue 28: the first round's search items follow the rule of every later round.
    keys = ids(count)
    service = Service(dict((key, "Pending") for key in keys))
    source = observer.phase_source(keys, service.fetch, service.search, service.build, ("Running", "Failed", "Completed"), settled=("Completed",))
    found = dict((key, {"id": key, "phase": phase, "from": "search"}) for key, phase in zip(keys, ["Running", "Failed", "Completed"]))
    found[("search", 9)] = ValueError("no id")
    kept = source.adopt(found)
    # Running (a non-final wait_for phase) and Failed (fail_on) are not an answer; Completed (settled) is, unconfirmed.
    assert list(kept) == keys[2:] + [("search", 9)] and list(source.unconfirmed) == keys[2:]
    answers = source.observe(keys[:2])
    assert service.searches == [] and service.gets[: len(keys[:2])] == keys[:2]
    assert all(answers[key] == {"id": key, "phase": "Pending", "from": "get"} for key in keys[:2])
    assert not source.due
    source.observe(keys[:2])  # the next round searches them again (two jobs or more)
    assert service.searches == ([keys[:2]] if count > 1 else [])


def run_wait(poll, unconfirmed, keys=("a", "b"), timeout=100):
    clock = Clock()
    result = waiter.wait_for_jobs(
        list(keys), poll, WaitSettings(True, ["Completed"], ["Failed"], timeout, 5, 5), clock=clock, sleeper=clock.sleep, grace=3, unconfirmed=unconfirmed
    )
    return result, clock


def test_a_wait_done_by_the_search_alone_reads_the_jobs_at_once_before_it_is_satisfied():
    doubtful = {"a": None, "b": None}
    calls = []

    def poll(keys, deadline):
        calls.append((list(keys), deadline))
        if len(calls) == 1:
            return dict((key, {"phase": "Completed", "from": "search"}) for key in keys)
        doubtful.clear()
        return dict((key, {"phase": "Completed", "from": "get"}) for key in keys)

    result, clock = run_wait(poll, lambda: doubtful)
    assert result.ok and clock.naps == [], "the confirming round follows at once"
    assert calls == [(["a", "b"], 100), (["a", "b"], 103)], "within the grace, like a last round"
    assert all(item["from"] == "get" for item in result.items.values()) and result.polls == {"a": 2, "b": 2}


def test_a_confirmation_that_denies_the_search_fails_the_wait():
    doubtful = {"a": None}

    def poll(keys, deadline):
        if "a" in doubtful and keys == ["a"]:
            doubtful.clear()
            return {"a": {"phase": "Failed", "failure_reason": "OOM"}}
        return dict((key, {"phase": "Completed"}) for key in keys)

    result, _clock = run_wait(poll, lambda: doubtful)
    assert not result.ok and result.outcome == waiter.OUTCOME_FAILED and "reached phase Failed: OOM" in result.message()


def test_a_confirmation_answered_beyond_the_keys_asked_is_judged_again():
    """A job done already comes back into the round's keys when its confirming GET fails (transient), and is
    satisfied only once a GET read it."""
    doubtful = {}
    rounds = []

    def poll(keys, deadline):
        rounds.append(list(keys))
        if len(rounds) == 1:
            doubtful["a"] = None
            return {"a": {"phase": "Completed", "from": "search"}, "b": {"phase": "Running"}}
        if len(rounds) == 2:  # b still running; a's confirmation, beyond the keys asked, fails
            return {"b": {"phase": "Running"}, "a": ModelArtsError("busy", status=503, transient=True)}
        doubtful.clear()
        return dict((key, {"phase": "Completed", "from": "get"}) for key in keys)

    result, _clock = run_wait(poll, lambda: doubtful)
    assert rounds == [["a", "b"], ["b"], ["a", "b"]]
    assert result.ok and result.items["a"]["from"] == "get" and result.polls["a"] == 3


def test_a_source_that_never_confirms_never_opens_the_gate():
    result, clock = run_wait(lambda keys, deadline: dict((key, {"phase": "Completed"}) for key in keys), lambda: {"a": None}, timeout=30)
    assert result.outcome == waiter.OUTCOME_TIMEOUT and clock.now <= 30


# -- jobs selected by a name: one search of the name a round while it costs fewer requests than by id -------------------


class NamedService(Service):
    """A service whose jobs share a name; ``pages`` is what a search of the name costs (requests)."""

    def __init__(self, phases, pages, error=None, **kwargs):
        super().__init__(phases, **kwargs)
        self.pages = pages
        self.error = error
        self.named_calls = 0

    def named(self, deadline, pages):
        self.named_calls += 1
        pages.append(self.pages)
        if self.error is not None:
            raise self.error
        return dict((key, {"id": key, "phase": phase, "from": "name"}) for key, phase in self.phases.items() if key not in self.hidden)

    def source(self, keys, acted=ACTED, name_pages=None):
        return observer.phase_source(keys, self.fetch, self.search, self.build, acted, ("Completed",), named=self.named, name_pages=name_pages)


def test_200_jobs_of_one_name_cost_the_names_4_pages_a_round_not_20_searches():
    keys = ids(200)
    service = NamedService(dict((key, "Running") for key in keys), pages=4)
    source = service.source(keys, name_pages=4)
    answers = source.observe(keys)
    assert service.named_calls == 1 and service.searches == [] and service.gets == []
    assert all(answers[key]["from"] == "name" for key in keys)


def test_the_name_gives_way_to_ids_once_the_jobs_still_watched_take_fewer_requests():
    keys = ids(200)
    service = NamedService(dict((key, "Running") for key in keys), pages=4)
    source = service.source(keys, name_pages=4)
    source.observe(keys[:40])  # 4 searches by id cost what the name costs: by id
    assert service.named_calls == 0 and len(service.searches) == 4
    source.observe(keys[:41])  # 5 searches by id: the name is cheaper
    assert service.named_calls == 1 and len(service.searches) == 4


def test_without_the_names_cost_known_the_search_is_by_id():
    keys = ids(30)
    service = NamedService(dict((key, "Running") for key in keys), pages=1)
    service.source(keys).observe(keys)
    assert service.named_calls == 0 and len(service.searches) == 3


def test_the_names_cost_is_learnt_from_each_search_of_it():
    keys = ids(30)
    service = NamedService(dict((key, "Running") for key in keys), pages=1)
    source = service.source(keys, name_pages=1)
    service.pages = 5  # many more jobs took the name meanwhile
    source.observe(keys)
    assert service.named_calls == 1 and source.name_pages == 5
    source.observe(keys)
    assert service.named_calls == 1 and len(service.searches) == 3


def test_a_watched_job_the_name_search_lacks_is_read_by_get_and_settled_ones_wait_for_room():
    keys = ids(30)
    phases = dict((key, "Running") for key in keys)
    phases.update({"job-000": "Completed", "job-001": "Completed", "job-002": "Failed"})
    service = NamedService(phases, pages=1, hidden={"job-003"})
    answers = service.source(keys, name_pages=1).observe(keys)
    # Budget 4: 1 page, the failed job and the missing one (GETs that cannot wait), one settled job with the room left.
    assert sorted(service.gets) == ["job-000", "job-002", "job-003"]
    assert answers["job-001"]["from"] == "name" and answers["job-002"]["from"] == "get" and answers["job-003"]["from"] == "get"


@pytest.mark.parametrize("transient", [True, False])
def test_a_failed_search_of_the_name_is_each_jobs_error_or_turns_the_search_off(transient):
    keys = ids(30)
    error = ModelArtsError("refused", status=503 if transient else 403, transient=transient)
    service = NamedService(dict((key, "Running") for key in keys), pages=1, error=error)
    source = service.source(keys, name_pages=1)
    answers = source.observe(keys)
    if transient:
        assert all(answers[key] is error for key in keys) and service.gets == [] and source.disabled is None
    else:
        assert source.disabled is error and sorted(service.gets) == keys and all(answers[key]["from"] == "get" for key in keys)
