# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phase timelines by polls and by time, not-yet-visible jobs, and consistent secondary data."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from modelarts_emulator.lifecycle import Lifecycle, TimelineError, parse_timeline, static_timeline

from .helpers import SignedClient

POLLS = "a1000000-0000-4000-8000-000000000010"


def _phases(client, job_id, polls):
    return [client.job(job_id).json()["status"]["phase"] for _attempt in range(polls)]


def test_lifecycle_by_polls(client):
    assert _phases(client, POLLS, 6) == ["Creating", "Pending", "Running", "Running", "Completed", "Completed"]
    doc = client.job(POLLS).json()["status"]
    assert doc["start_time"] > 0 and doc["running_records"][0]["end_reason"] == "job completed"
    assert doc["node_count_metrics"][1] == [doc["start_time"], 1]


def test_secondary_phases_and_duration_move_with_phases(client):
    seen = []
    for _attempt in range(5):
        status = client.job(POLLS).json()["status"]
        seen.append((status["phase"], status["secondary_phase"], status["duration"]))
    assert [s[1] for s in seen] == ["Creating", "Queuing", "Running", "Running", "Completed"]
    durations = [s[2] for s in seen]
    assert durations[:2] == [0, 0]
    assert durations == sorted(durations)


def test_failed_by_polls_carries_exit_code(client):
    job = "a1000000-0000-4000-8000-000000000011"
    assert _phases(client, job, 4) == ["Creating", "Pending", "Running", "Failed"]
    status = client.job(job).json()["status"]
    assert status["task_statuses"] == [{"task": "worker-0", "exit_code": 1, "message": "RuntimeError: CUDA error: device-side assert triggered"}]
    assert status["running_records"][0]["end_reason"] == "exit with 1"


def test_terminated_and_abnormal_by_polls(client):
    assert _phases(client, "a1000000-0000-4000-8000-000000000012", 4) == ["Creating", "Running", "Terminating", "Terminated"]
    assert _phases(client, "a1000000-0000-4000-8000-000000000013", 3) == ["Creating", "Pending", "Abnormal"]
    status = client.job("a1000000-0000-4000-8000-000000000013").json()["status"]
    assert status["secondary_phase"] == "CreateFailed" and status["start_time"] == 0
    assert status["running_records"] == []
    assert status["task_statuses"][0]["message"].startswith("Failed to create pod worker-0")


def test_not_found_for_the_first_polls(client):
    job = "a1000000-0000-4000-8000-000000000014"
    first, second = client.job(job), client.job(job)
    assert (first.status_code, second.status_code) == (400, 400)
    assert first.json()["error_code"] == "ModelArts.2775"
    assert _phases(client, job, 3) == ["Creating", "Running", "Completed"]


def test_restart_creates_a_second_running_record(client):
    job = "a1000000-0000-4000-8000-000000000015"
    _phases(client, job, 5)
    records = client.job(job).json()["status"]["running_records"]
    assert [r["start_type"] for r in records] == ["init_or_rescheduled", "restarted"]
    assert records[0]["end_recover"] == "proc_restart" and records[1]["end_reason"] == "job completed"
    assert records[0]["end_at"] <= records[1]["start_at"]


def test_v1_twin_polls_count_towards_the_same_job(client):
    job = "a1000000-0000-4000-8000-000000000016"
    assert client.job(job).json()["status"]["phase"] == "Creating"
    assert client.v1_job(2002, 3).json()["status"] == 7  # Pending
    assert client.job(job).json()["status"]["phase"] == "Running"
    assert client.v1_job(2002, 3).json()["status"] == 10  # Completed


def test_v1_legacy_lifecycle(client):
    assert [client.v1_job(1003, 2).json()["status"] for _attempt in range(4)] == [1, 7, 8, 10]
    assert [client.v1_job(1004, 1).json()["status"] for _attempt in range(2)] == [1, 3]


def test_lifecycle_by_time(emu, client):
    # Steps of 100 s, moved by the emulator's clock: the real seconds the test takes (under 50, however loaded the
    # machine) never take the job to another step, so each GET sees the step the clock was moved to.
    job = "77777777-0000-4000-8000-000000000020"
    steps = [{"phase": "Creating", "seconds": 100}, {"phase": "Pending", "seconds": 100}, {"phase": "Running", "seconds": 100}, "Completed"]
    emu.add_jobs([{"id": job, "name": "seconds-by-the-clock", "timeline": steps}])
    assert client.job(job).json()["status"]["phase"] == "Creating"
    emu.control("POST", "/clock/advance", {"seconds": 150})
    assert client.job(job).json()["status"]["phase"] == "Pending"
    emu.control("POST", "/clock/advance", {"seconds": 100})
    running = client.job(job).json()
    assert running["status"]["phase"] == "Running"
    assert running["status"]["start_time"] == running["metadata"]["create_time"] + 200000
    emu.control("POST", "/clock/advance", {"seconds": 100})
    done = client.job(job).json()["status"]
    assert done["phase"] == "Completed" and done["duration"] == 100000
    assert done["running_records"][0]["end_at"] - done["running_records"][0]["start_at"] == 100


def test_time_lifecycle_visible_in_search_without_polls(emu, client):
    emu.control("POST", "/clock/advance", {"seconds": 10})
    body = client.search({"filters": [{"key": "name", "operator": "in", "value": ["seconds-to-failed"]}]}).json()
    assert body["items"][0]["status"]["phase"] == "Failed"
    assert body["items"][0]["status"]["task_statuses"][0]["exit_code"] == 139


def test_search_does_not_count_as_poll_unless_asked(emu, client):
    name = [{"key": "name", "operator": "in", "value": ["polls-to-completed"]}]
    for _attempt in range(3):
        assert client.search({"filters": name}).json()["items"][0]["status"]["phase"] == "Creating"
    emu.settings(search_counts_as_poll=True)
    phases = [client.search({"filters": name}).json()["items"][0]["status"]["phase"] for _attempt in range(3)]
    assert phases == ["Creating", "Pending", "Running"]


def test_a_search_that_counts_as_a_poll_is_read_again_by_the_get_right_after_it(emu, client):
    """Like a search by id: the GET that follows reads the step the search showed, and the next GET moves on."""
    name = [{"key": "name", "operator": "in", "value": ["polls-to-completed"]}]
    emu.settings(search_counts_as_poll=True)
    job = client.search({"filters": name}).json()["items"][0]
    assert job["status"]["phase"] == "Creating"
    assert _phases(client, job["metadata"]["id"], 2) == ["Creating", "Pending"]


def test_jobs_added_at_run_time(emu, client):
    emu.add_jobs([{"id": "77777777-0000-4000-8000-000000000001", "name": "added-later", "timeline": [{"phase": "Pending", "polls": 1}, "Completed"]}])
    assert _phases(client, "77777777-0000-4000-8000-000000000001", 2) == ["Pending", "Completed"]


def test_parse_timeline_rules():
    mode, steps = parse_timeline(["Creating", {"phase": "Running", "polls": 3}, "Completed"])
    assert mode == "polls" and [s.length for s in steps] == [1, 3, None]
    mode, steps = parse_timeline(["Creating", "Completed"], clock="seconds", default_step=2.5)
    assert mode == "seconds" and steps[0].length == 2.5
    for bad in (
        [],
        ["Sleeping"],
        [{"phase": "Creating", "polls": 1}, {"phase": "Running", "seconds": 1}, "Completed"],
        [{"phase": "Creating", "polls": 0}, "Completed"],
        [{"phase": "Creating", "polls": "x"}, "Completed"],
        [42],
    ):
        with pytest.raises(TimelineError):
            parse_timeline(bad)


def test_static_timelines_end_in_the_past():
    for phase in ("Completed", "Failed", "Terminated", "Abnormal", "Running", "Pending", "Creating"):
        steps, past = static_timeline(phase)
        lifecycle = Lifecycle("seconds", steps, 1000.0 - past)
        snapshot = lifecycle.poll(1000.0)
        assert snapshot.phase == phase
        assert snapshot.created_ms < 1000000


def test_poll_lifecycle_stamps_transitions_between_polls():
    _mode, steps = parse_timeline(["Creating", "Running", "Completed"])
    lifecycle = Lifecycle("polls", steps, 100.0, not_found_polls=1)
    assert lifecycle.poll(101.0) is None
    assert lifecycle.poll(102.0).phase == "Creating"
    running = lifecycle.poll(110.0)
    assert running.history[-1][1] == 106000  # halfway between the polls at 102 and 110
    done = lifecycle.poll(150.0)
    assert [entered for _step, entered in done.history] == [100000, 106000, 130000]
    assert lifecycle.peek(999.0).phase == "Completed"


def test_concurrent_polls_are_counted_exactly(emu):
    job = "77777777-0000-4000-8000-000000000002"
    emu.add_jobs([{"id": job, "name": "hammered", "timeline": [{"phase": "Running", "polls": 60}, "Completed"]}])

    def poll_ten(_worker):
        with SignedClient(emu.url, emu.ak, emu.sk, emu.project_id) as client:
            return [client.job(job).json()["status"]["phase"] for _attempt in range(10)]

    with ThreadPoolExecutor(8) as pool:
        phases = [p for batch in pool.map(poll_ten, range(8)) for p in batch]
    assert phases.count("Running") == 60 and phases.count("Completed") == 20
    summary = [j for j in emu.control("GET", "/jobs")["jobs"] if j["id"] == job][0]
    assert summary["polls"] == 80


def test_search_by_id_is_one_poll_and_the_get_after_it_reads_the_same_step(emu, client):
    job = "a1000000-0000-4000-8000-000000000010"  # polls-to-completed: Creating, Pending, Running x2, Completed
    by_id = {"filters": [{"key": "id", "operator": "in", "value": [job]}]}
    seen = []
    for _round in range(5):
        searched = client.search(by_id).json()["items"][0]["status"]["phase"]
        got = client.job(job).json()["status"]["phase"]
        seen.append((searched, got))
    assert seen == [("Creating", "Creating"), ("Pending", "Pending"), ("Running", "Running"), ("Running", "Running"), ("Completed", "Completed")]
    # A GET not preceded by a search counts as a poll of its own, as before.
    assert emu.jobs()  # the control API still answers
