# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bulk polling as users meet it: a playbook waiting on many jobs, and the event source watching many, against the
HTTPS emulator - the requests counted in the emulator's request log, with and without throttling (429 every tenth call).

The jobs' lifecycles are driven by polls (a search by id that returns a job is one poll of it, and the GET that
follows such a search reads the same step), so every count below is exact whatever the machine's speed.
"""

import asyncio
import json
import math

import pytest

from conftest import emulator_connection
from eda_helpers import connection_args, load_source, source_events, unique_id

JOBS = 30
# Job i: Pending for one poll, Running for 1 + i % 4 polls, then Completed: it is done at poll 3 + i % 4.
RUNNING = [1 + index % 4 for index in range(JOBS)]


def add_jobs(emulator, prefix, count, last=lambda index: "Completed", **extra):
    ids = [unique_id("%s-%02d" % (prefix, index)) for index in range(count)]
    emulator.add_jobs(
        [
            dict(extra, id=job, name=prefix, timeline=[{"phase": "Pending", "polls": 1}, {"phase": "Running", "polls": RUNNING[index]}, last(index)])
            for index, job in enumerate(ids)
        ]
    )
    return ids


def expected_polls(count, budget):
    """Requests per job of a wait on the first ``count`` jobs (all Completed in the end) whose rounds spend at most
    ``budget`` calls: a round searches the jobs not yet seen Completed (10 a search), then GETs the jobs seen Completed,
    oldest first, with the room left; a job read in the round that saw it Completed counts that round's request, one
    read in a later round (or in the round that confirms what is left once every job is done) one more."""
    done_at = [RUNNING[index] + 2 for index in range(count)]
    polls, queue, round_number = list(done_at), [], 0
    while any(at > round_number for at in done_at) or queue:
        round_number += 1
        watched = [index for index in range(count) if done_at[index] >= round_number]
        seen = [index for index in watched if done_at[index] == round_number]
        queue += seen
        room = budget - math.ceil(len(watched) / 10) if watched else len(queue)  # the confirming round: no search
        for index in queue[: max(0, room)]:
            polls[index] += 0 if index in seen else 1
        queue = queue[max(0, room) :]
    return polls


def requests_for(emulator, ids):
    """``(searches by id, GETs, 429 answers)`` of the log about ``ids``: searches as lists of ids, GETs as ids."""
    wanted = set(ids)
    searches, gets, throttled = [], [], 0
    for entry in emulator.requests(path="/training-job"):
        if entry["method"] == "POST" and entry["path"].endswith("/training-job-searches"):
            filters = (entry.get("body") or {}).get("filters") or []
            asked = [value for spec in filters if spec.get("key") == "id" for value in spec.get("value")]
            if not wanted & set(asked):
                continue
            throttled += entry["status"] == 429
            if entry["status"] == 200:
                searches.append(asked)
        elif entry["method"] == "GET" and entry["path"].rsplit("/", 1)[-1] in wanted:
            throttled += entry["status"] == 429
            if entry["status"] == 200:
                gets.append(entry["path"].rsplit("/", 1)[-1])
    return searches, gets, throttled


def wait_on(emulator, run_playbook, tmp_path, ids, ignore_errors=False):
    """A playbook whose one task waits on ``ids`` (polling fast); the registered result, as the task left it."""
    task = dict(emulator_connection(emulator), training_job_ids=ids, wait=True, wait_sleep=0.05, wait_sleep_max=0.05, wait_timeout=120)
    wait = {"modelarts.training.modelarts_training_job_info": task, "register": "result"}
    if ignore_errors:
        wait["ignore_errors"] = True
    playbook = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [wait, {"ansible.builtin.copy": {"content": "{{ result | to_json }}", "dest": "result.json"}}],
        }
    ]
    process = run_playbook(playbook)
    assert process.returncode == 0, process.stdout + process.stderr
    return json.loads((tmp_path / "result.json").read_text())


@pytest.fixture
def throttling(request, emulator):
    """With ``True``: the emulator answers every tenth ModelArts call with 429 APIG.0308 (Retry-After 0) for the test."""
    fault = emulator.add_fault(type="throttle", every=10, retry_after=0) if request.param else None
    emulator.clear_requests()
    yield request.param
    if fault is not None:
        emulator.control("DELETE", "/faults/%s" % fault)


@pytest.mark.parametrize("throttling", [False, True], ids=["steady", "throttled"], indirect=True)
def test_a_playbook_waiting_on_30_jobs_costs_a_search_per_10_jobs_a_round_and_one_get_per_job(emulator, run_playbook, throttling):
    ids = add_jobs(emulator, "bulk-wait", JOBS)
    playbook = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "modelarts.training.modelarts_training_job_info": dict(
                        emulator_connection(emulator), training_job_ids=ids, wait=True, wait_sleep=0.05, wait_sleep_max=0.05, wait_timeout=120
                    ),
                    "register": "result",
                },
                {"ansible.builtin.copy": {"content": "{{ result | to_json }}", "dest": "result.json"}},
            ],
        }
    ]
    process = run_playbook(playbook)
    assert process.returncode == 0, process.stdout + process.stderr
    searches, gets, throttled = requests_for(emulator, ids)
    # Round n polls the jobs not done before it: job i is done at round 3 + i % 4, and each round's jobs go 10 to a search.
    rounds = max(RUNNING) + 2
    expected = [math.ceil(sum(1 for running in RUNNING if running + 2 >= n) / 10) for n in range(1, rounds + 1)]
    assert len(searches) == sum(expected) and all(len(asked) <= 10 for asked in searches)
    # One GET per job, when its search showed Completed: the item's document is the job's own.
    assert sorted(gets) == sorted(ids)
    assert (throttled > 0) == throttling
    per_round = (len(searches) + len(gets)) / rounds
    assert per_round <= 25 and len(searches) + len(gets) < JOBS * rounds / 2


@pytest.mark.parametrize("throttling", [False, True], ids=["steady", "throttled"], indirect=True)
def test_the_waits_items_are_as_complete_as_one_get_per_job_gives(emulator, run_playbook, tmp_path, throttling):
    ids = add_jobs(emulator, "bulk-items", 12)
    items = wait_on(emulator, run_playbook, tmp_path, ids)["training_jobs"]
    assert [item["id"] for item in items] == ids
    for index, item in enumerate(items):
        assert item["phase"] == "Completed" and item["completed"] and item["polls"] == expected_polls(12, 3)[index]
        assert [entry["phase"] for entry in item["phase_history"]] == ["Pending", "Running", "Completed"]
        # The document is the GET's: what a GET of the finished job answers now, the endpoint tokens masked.
        assert item["details"]["status"]["phase"] == "Completed" and item["details"]["metadata"]["id"] == ids[index]
        assert {"kind", "metadata", "status", "algorithm", "spec", "endpoints"} <= set(item["details"])
        assert item["details"]["endpoints"]["jupyter_lab"]["token"] == "********"


@pytest.mark.parametrize("throttling", [False, True], ids=["steady", "throttled"], indirect=True)
def test_a_wait_that_ends_on_a_failure_completes_every_item_with_a_get(emulator, run_playbook, tmp_path, throttling):
    ids = add_jobs(emulator, "bulk-fail", 12, last=lambda index: "Failed" if index == 0 else "Completed")
    result = wait_on(emulator, run_playbook, tmp_path, ids, ignore_errors=True)
    assert result["failed"] and ids[0] in result["msg"] and "Failed" in result["msg"]
    searches, gets, _throttled = requests_for(emulator, ids)
    # Job 0 fails at round 3: the jobs done by then were read by GET when done, every other job once at the end.
    assert sorted(gets) == sorted(ids) and len(searches) == 3 * 2
    items = dict((item["id"], item) for item in result["training_jobs"])
    assert items[ids[0]]["phase"] == "Failed" and items[ids[0]]["failure_reason"]
    assert all(items[job]["details"]["metadata"]["id"] == job for job in ids)


@pytest.mark.parametrize("throttling", [False, True], ids=["steady", "throttled"], indirect=True)
def test_a_wait_by_name_searches_the_name_while_that_costs_fewer_requests_than_ids(emulator, run_playbook, tmp_path, throttling):
    name = unique_id("bulk-name")
    ids = add_jobs(emulator, name, JOBS, search_counts_as_poll=True)  # a search of the name is a poll of each job
    task = dict(emulator_connection(emulator), name=name, wait=True, wait_sleep=0.05, wait_sleep_max=0.05, wait_timeout=120)
    playbook = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {"modelarts.training.modelarts_training_job_info": task, "register": "result"},
                {"ansible.builtin.copy": {"content": "{{ result | to_json }}", "dest": "result.json"}},
            ],
        }
    ]
    process = run_playbook(playbook)
    assert process.returncode == 0, process.stdout + process.stderr
    items = json.loads((tmp_path / "result.json").read_text())["training_jobs"]
    assert sorted(item["id"] for item in items) == sorted(ids) and all(item["phase"] == "Completed" for item in items)
    assert all(item["details"]["metadata"]["id"] == item["id"] for item in items)
    by_name = [
        entry
        for entry in emulator.requests(path="/training-job-searches")
        if entry["status"] == 200 and {"key": "name", "operator": "like", "value": [name]} in ((entry.get("body") or {}).get("filters") or [])
    ]
    by_id, gets, _throttled = requests_for(emulator, ids)
    # Round 1 is the search that found the 30 jobs (one page).  Round n > 1 watches the jobs not done before it (job i
    # is done at round 3 + i % 4) and searches the name (1 page) while the searches by id would take more requests.
    watched = [sum(1 for running in RUNNING if running + 2 >= n) for n in range(2, max(RUNNING) + 3)]
    assert len(by_name) == 1 + sum(1 for count in watched if math.ceil(count / 10) > 1)
    assert len(by_id) == sum(math.ceil(count / 10) for count in watched if math.ceil(count / 10) <= 1)
    assert sorted(gets) == sorted(ids), "every job's own document, once"


@pytest.fixture(scope="module")
def src(collection_root):
    return load_source(collection_root)


@pytest.mark.parametrize("throttling", [False, True], ids=["steady", "throttled"], indirect=True)
def test_the_event_source_watching_30_jobs_searches_in_batches_and_gets_each_job_once_at_its_end(emulator, src, throttling):
    ids = add_jobs(emulator, "bulk-eda", JOBS, last=lambda index: "Failed" if index % 10 == 3 else "Completed")
    final = dict((job, "Failed" if index % 10 == 3 else "Completed") for index, job in enumerate(ids))

    def finished(events):
        return sum(1 for event in events if event["modelarts"]["phase"] == final.get(event["modelarts"]["training_job"]["id"])) == JOBS

    args = dict(connection_args(emulator), training_job_ids=ids, interval=0.1)
    events = asyncio.run(asyncio.wait_for(source_events(src, args, finished), 120))
    for job in ids:
        seen = [(event["modelarts"]["previous_phase"], event["modelarts"]["phase"]) for event in events if event["modelarts"]["training_job"]["id"] == job]
        assert seen == [(None, "Pending"), ("Pending", "Running"), ("Running", final[job])], job
    failed = [event["modelarts"]["training_job"] for event in events if event["modelarts"]["phase"] == "Failed"]
    assert len(failed) == 3 and all(item["failure_reason"] and item["failed"] for item in failed)
    searches, gets, throttled = requests_for(emulator, ids)
    # A GET only for each job reaching a final phase (Completed, or Failed: a fail_on phase), so that its last event is the
    # job's own document and never a search's word alone (issue 28): every other answer came 10 jobs to a search.
    assert sorted(gets) == sorted(ids)
    assert all(len(asked) <= 10 for asked in searches)
    observations = sum(len(asked) for asked in searches)
    assert len(searches) <= math.ceil(observations / 10) + 5  # batches kept full but for the last few rounds
    assert len(searches) <= 0.2 * sum(RUNNING[index] + 2 for index in range(JOBS))
    assert (throttled > 0) == throttling


@pytest.mark.parametrize("throttling", [False], ids=["steady"], indirect=True)
def test_a_search_the_service_refuses_turns_the_wait_into_gets_and_the_answer_is_the_same(emulator, run_playbook, tmp_path, throttling):
    ids = add_jobs(emulator, "bulk-refused", 12)
    # Every search is refused with a 403 page (as for an IAM user without modelarts:trainJob:list).
    fault = emulator.add_fault(type="echo", status=403, target="search", count=-1, headers=["Content-Type"])
    try:
        items = wait_on(emulator, run_playbook, tmp_path, ids)["training_jobs"]
    finally:
        emulator.control("DELETE", "/faults/%s" % fault)
    assert [(item["id"], item["phase"], item["polls"]) for item in items] == [(job, "Completed", RUNNING[index] + 2) for index, job in enumerate(ids)]
    refused = [entry for entry in emulator.requests(path="/training-job-searches") if entry["status"] == 403]
    assert len(refused) == 2  # the first round's two searches (12 jobs) only: the rest of the call is one GET per job
    _searches, gets, _throttled = requests_for(emulator, ids)
    assert len(gets) == sum(RUNNING[index] + 2 for index in range(12))
