# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 28, item 3: a search never decides a wait.

The search API's answers may lag behind the jobs' own documents (an index updated later) or disagree with them.
A job a search shows in a phase the wait acts on - a ``wait_for`` phase, final or not, or a ``fail_on`` phase - is
judged on its own GET, in the first round of a wait by ``name`` (whose search found the jobs) as in every later
round - and the event source's events in a final or ``fail_on`` phase carry the job's own GET too (a rulebook that
deploys on ``Completed`` is a gate).  The emulator's ``stale`` fault makes every search answer report one phase while each job's GET tells the
truth: before the fix, a name search saying ``Running`` satisfied ``wait_for: [Running]`` for a job whose GET
said ``Pending``, and one saying ``Failed`` failed the wait of a job whose GET said ``Completed``.
"""

import asyncio

import pytest

from conftest import emulator_connection
from eda_helpers import connection_args, load_source, source_events, unique_id


def add_jobs(emulator, prefix, count, phase):
    name = unique_id(prefix)
    ids = [unique_id("%s-%d" % (prefix, index)) for index in range(count)]
    emulator.add_jobs([{"id": job, "name": name, "phase": phase} for job in ids])
    return name, ids


def wait(emulator, run_info_task, selector, **options):
    """The registered result of a task that waits on the jobs ``selector`` names (at -vvv)."""
    task = dict(emulator_connection(emulator), wait=True, wait_sleep=0.2, wait_sleep_max=0.2, wait_timeout=2, **selector)
    task.update(options)
    return run_info_task(task)[0]


@pytest.mark.parametrize("count", [1, 3], ids=["one-job", "three-jobs"])
def test_a_name_search_saying_running_does_not_satisfy_wait_for_running_while_the_jobs_get_says_pending(emulator, run_info_task, stale_search, count):
    name, ids = add_jobs(emulator, "r28-stale-running", count, "Pending")
    stale_search("Running")
    result = wait(emulator, run_info_task, {"name": name}, wait_for=["Running"])
    assert result.get("failed") is True, "the search's Running opened the gate: %s" % result.get("msg")
    assert "timed out" in result["msg"] and "last phase seen Pending" in result["msg"], result["msg"]
    assert sorted(job["id"] for job in result["training_jobs"]) == sorted(ids)
    assert all(job["phase"] == "Pending" for job in result["training_jobs"])
    # The search's word never reached the history either: every job was only ever seen Pending.
    assert all([entry["phase"] for entry in job["phase_history"]] == ["Pending"] for job in result["training_jobs"])


@pytest.mark.parametrize("count", [1, 3], ids=["one-job", "three-jobs"])
def test_a_name_search_saying_failed_does_not_fail_a_wait_whose_jobs_get_says_completed(emulator, run_info_task, stale_search, count):
    name, ids = add_jobs(emulator, "r28-stale-failed", count, "Completed")
    stale_search("Failed")
    result = wait(emulator, run_info_task, {"name": name})  # wait_for [Completed], fail_on [Failed, Abnormal, Terminated]
    assert not result.get("failed"), result.get("msg")
    assert sorted(job["id"] for job in result["training_jobs"]) == sorted(ids)
    assert all(job["phase"] == "Completed" and job["failed"] is False for job in result["training_jobs"])


@pytest.mark.parametrize(
    "searched, actual, wait_for, satisfied",
    [
        ("Running", "Pending", ["Running"], False),  # a non-final wait_for phase
        ("Completed", "Pending", ["Completed"], False),  # a final one: done, unconfirmed until the GET
        ("Failed", "Completed", ["Completed"], True),  # a fail_on phase
    ],
    ids=["running", "completed", "failed"],
)
def test_searches_by_id_never_decide_a_wait_either(emulator, run_info_task, stale_search, searched, actual, wait_for, satisfied):
    _name, ids = add_jobs(emulator, "r28-stale-ids", 3, actual)
    stale_search(searched)
    emulator.clear_requests()
    result = wait(emulator, run_info_task, {"training_job_ids": ids}, wait_for=wait_for)
    assert bool(result.get("failed")) is not satisfied, result.get("msg")
    assert all(job["phase"] == actual for job in result["training_jobs"])
    searches = [entry for entry in emulator.requests(path="/training-job-searches") if entry["method"] == "POST"]
    assert searches, "the wait read its phases through the search (so the stale answers were met)"


@pytest.fixture(scope="module")
def src(collection_root):
    """The event source's globals, loaded as ansible-rulebook loads it."""
    return load_source(collection_root)


@pytest.mark.parametrize("searched", ["Failed", "Completed"])
@pytest.mark.parametrize("selector", ["name", "ids"])
def test_the_event_source_never_reports_a_final_phase_on_a_searchs_word(emulator, src, stale_search, selector, searched):
    name, ids = add_jobs(emulator, "r28-stale-eda", 3, "Running")
    stale_search(searched)
    args = dict(connection_args(emulator), interval=0.1)
    args.update(name=name) if selector == "name" else args.update(training_job_ids=ids)
    events = asyncio.run(asyncio.wait_for(source_events(src, args, lambda events: len(events) >= len(ids)), 120))
    seen = sorted((event["modelarts"]["training_job"]["id"], event["modelarts"]["phase"]) for event in events)
    assert seen == sorted((job, "Running") for job in ids), "events on the search's word: %s" % seen
