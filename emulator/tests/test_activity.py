# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a job makes progress (activity.py): task metrics, a log that grows or falls silent, the service's hang verdict."""

import pytest

BUSY = "e1590000-0000-4000-8000-000000000001"
JOB = "e1590000-0000-4000-8000-000000000002"
FAILED = "a1000000-0000-4000-8000-000000000002"  # integration scenario: phase-failed, two tasks


def path(client, job, rest):
    return "/v2/%s/training-jobs/%s/%s" % (client.project_id, job, rest)


def metrics(client, job, task="worker-0"):
    response = client.request("GET", path(client, job, "metrics/" + task))
    assert response.status_code == 200, response.text
    return {entry["metric"]: entry["value"] for entry in response.json()["metrics"]}


def end_line(client, job, task="worker-0"):
    return int(client.request("GET", path(client, job, "logs/" + task), query=[("lines", "1")]).json()["end_line"])


def full_size(client, job, task="worker-0"):
    return client.request("GET", path(client, job, "tasks/%s/logs/preview" % task)).json()["full_size"]


def running(emu, job_id, **job):
    """A job Running from now on (its first start is now), with what else ``job`` says."""
    job.setdefault("timeline", [{"phase": "Running", "seconds": 86400}, "Completed"])
    job.setdefault("created_ago", 0)
    emu.add_job(id=job_id, name=job.pop("name", "activity"), **job)


# -- the metrics route ----------------------------------------------------------------------------------------


def test_a_busy_gpu_job_has_one_average_a_minute_in_the_sdks_shape(client, emu):
    running(emu, BUSY, node_count=2, activity={})
    emu.advance_clock(600)
    answer = client.request("GET", path(client, BUSY, "metrics/worker-0")).json()
    assert list(answer) == ["metrics"]
    assert [entry["metric"] for entry in answer["metrics"]] == ["cpuUsage", "memUsage", "gpuUtil", "gpuMemUsage"]
    assert all(set(entry) == {"metric", "value"} and len(entry["value"]) == 10 for entry in answer["metrics"])
    series = metrics(client, BUSY)
    assert all(86.0 <= value <= 98.9 for value in series["gpuUtil"])
    assert series == metrics(client, BUSY), "the same averages at every read of the same minute"
    emu.advance_clock(120)
    later = metrics(client, BUSY)
    assert len(later["gpuUtil"]) == 12 and later["gpuUtil"][:10] == series["gpuUtil"], "oldest first: new minutes are appended"
    assert metrics(client, BUSY, "worker-1")["gpuUtil"] != later["gpuUtil"], "each task has its own averages"


def test_a_job_without_activity_is_busy_and_its_log_stays_as_it_was(client, emu):
    running(emu, BUSY)
    emu.advance_clock(300)
    lines, size = end_line(client, BUSY), full_size(client, BUSY)
    assert len(metrics(client, BUSY)["gpuUtil"]) == 5 and min(metrics(client, BUSY)["gpuUtil"]) > 80
    emu.advance_clock(600)
    assert (end_line(client, BUSY), full_size(client, BUSY)) == (lines, size)


def test_only_whole_minutes_and_nothing_before_the_job_runs(client, emu):
    running(emu, JOB, timeline=[{"phase": "Pending", "seconds": 600}, "Running"], activity={})
    assert metrics(client, JOB) == {"cpuUsage": [], "memUsage": [], "gpuUtil": [], "gpuMemUsage": []}
    emu.advance_clock(600 + 59)
    assert metrics(client, JOB)["gpuUtil"] == [], "the minute in progress is not averaged yet"
    emu.advance_clock(2)
    assert len(metrics(client, JOB)["gpuUtil"]) == 1


def test_a_finished_jobs_averages_end_with_its_run(client, emu):
    running(emu, JOB, timeline=[{"phase": "Running", "seconds": 330}, "Completed"], activity={})
    emu.advance_clock(3600)
    assert len(metrics(client, JOB)["gpuUtil"]) == 6, "five whole minutes and the last part of one"


@pytest.mark.parametrize(
    "flavor, names",
    [("cpu", ["cpuUsage", "memUsage"]), ("npu", ["cpuUsage", "memUsage", "npuUtil", "npuMemUsage"])],
)
def test_the_flavour_decides_the_series(client, emu, flavor, names):
    running(emu, JOB, flavor=flavor, activity={})
    emu.advance_clock(180)
    answer = client.request("GET", path(client, JOB, "metrics/worker-0")).json()
    assert [entry["metric"] for entry in answer["metrics"]] == names
    if flavor == "npu":
        assert min(metrics(client, JOB)["npuUtil"]) > 80


def test_samples_none_gives_only_minus_one_and_gaps_some(client, emu):
    running(emu, JOB, activity={"samples": "none"})
    running(emu, BUSY, activity={"samples": "gaps"})
    emu.advance_clock(600)
    assert all(values == [-1] * 10 for values in metrics(client, JOB).values())
    gaps = metrics(client, BUSY)["gpuUtil"]
    assert [index for index, value in enumerate(gaps) if value == -1] == [1, 4, 7]


def test_a_fixed_utilisation(client, emu):
    running(emu, JOB, activity={"util": 5})
    emu.advance_clock(300)
    assert metrics(client, JOB)["gpuUtil"] == [5.0] * 5


def test_the_metrics_call_is_signed_and_scoped_like_every_other(client, emu):
    running(emu, JOB, activity={})
    emu.advance_clock(120)
    anonymous = client.unsigned("GET", path(client, JOB, "metrics/worker-0"))
    assert anonymous.status_code == 401 and anonymous.json()["error_code"] == "APIG.0301"
    other_project = client.request("GET", "/v2/%s/training-jobs/%s/metrics/worker-0" % ("f" * 32, JOB))
    assert other_project.status_code == 404 and other_project.json()["error_code"] == "ModelArts.2786"
    unknown_job = client.request("GET", path(client, "00000000-0000-4000-8000-000000000000", "metrics/worker-0"))
    assert unknown_job.status_code == 400 and unknown_job.json()["error_code"] == "ModelArts.2775", "as the details call answers"
    unknown_task = client.request("GET", path(client, JOB, "metrics/worker-9"))
    assert unknown_task.status_code == 404 and unknown_task.json()["error_code"] == "ModelArts.2778"
    assert client.request("POST", path(client, JOB, "metrics/worker-0")).json()["error_code"] == "APIG.0101"


def test_a_forbidden_metrics_call(client, emu):
    running(emu, JOB, activity={"fault": "forbidden"})
    answer = client.request("GET", path(client, JOB, "metrics/worker-0"))
    assert answer.status_code == 403 and answer.json()["error_code"] == "ModelArts.2771"
    assert client.request("GET", path(client, JOB, "logs/worker-0")).status_code == 200, "only the metrics call"


def test_reading_metrics_is_not_a_poll(client, emu):
    polled = "a1000000-0000-4000-8000-000000000010"  # integration: polls-to-completed
    for _read in range(3):
        assert client.request("GET", path(client, polled, "metrics/worker-0")).status_code == 200
    assert client.job(polled).json()["status"]["phase"] == "Creating"


# -- the log follows the clock -----------------------------------------------------------------------------------


def test_a_busy_jobs_log_grows_with_the_clock(client, emu):
    running(emu, BUSY, activity={"log_per_minute": 6})
    emu.advance_clock(60)
    first = end_line(client, BUSY), full_size(client, BUSY)
    emu.advance_clock(60)
    second = end_line(client, BUSY), full_size(client, BUSY)
    assert second[0] == first[0] + 6 and second[1] > first[1]
    newest = client.request("GET", path(client, BUSY, "logs/worker-0"), query=[("lines", "1")]).json()["content"]
    assert newest.startswith("INFO: epoch 1 step 00011 ")


def test_a_hung_job_goes_idle_and_silent_from_its_minute(client, emu):
    running(emu, JOB, activity={"hang_at": "5m"})
    emu.advance_clock(180)
    before = end_line(client, JOB), full_size(client, JOB)
    emu.advance_clock(180)
    at_hang = end_line(client, JOB), full_size(client, JOB)
    assert at_hang[0] > before[0] and at_hang[1] > before[1]
    emu.advance_clock(600)
    assert (end_line(client, JOB), full_size(client, JOB)) == at_hang, "no line from minute 5 on"
    util = metrics(client, JOB)["gpuUtil"]
    assert len(util) == 16 and min(util[:5]) > 80 and max(util[5:]) <= 0.3
    assert min(metrics(client, JOB)["gpuMemUsage"][5:]) > 60, "a hung collective keeps its memory"
    assert client.job(JOB).json()["status"]["phase"] == "Running", "the service still says Running"


def test_a_preprocessing_job_has_idle_accelerators_and_a_growing_log(client, emu):
    running(emu, JOB, activity={"util": "idle"})
    emu.advance_clock(300)
    lines = end_line(client, JOB)
    emu.advance_clock(300)
    assert end_line(client, JOB) > lines
    assert max(metrics(client, JOB)["gpuUtil"]) <= 0.5


def test_a_silent_but_busy_job(client, emu):
    running(emu, JOB, activity={"log_per_minute": 0})
    emu.advance_clock(120)
    lines = end_line(client, JOB)
    emu.advance_clock(600)
    assert end_line(client, JOB) == lines and min(metrics(client, JOB)["gpuUtil"]) > 80


# -- the service's own verdict -----------------------------------------------------------------------------------


def hang_events(client, job):
    events = client.request("GET", path(client, job, "events"), query=[("limit", "100"), ("order", "asc")]).json()["events"]
    return [event for event in events if "JobHanged" in event["message"]]


def test_a_job_hanged_event_and_recover_record_then_a_restart(client, emu):
    running(
        emu,
        JOB,
        timeline=[{"phase": "Running", "seconds": 2400}, {"phase": "Running", "restart": True, "seconds": 86400}, "Completed"],
        activity={"hang_at": "10m", "service_hang": {"at": "35m"}},
    )
    emu.advance_clock(30 * 60)
    assert hang_events(client, JOB) == []
    assert "recover_records" not in client.job(JOB).json()["status"]["running_records"][0]
    emu.advance_clock(7 * 60)
    (event,) = hang_events(client, JOB)
    assert (event["level"], event["source"]) == ("Warning", "Job") and event["time"].endswith("+08:00")
    assert set(event) == {"time", "level", "message", "source"}
    (record,) = client.job(JOB).json()["status"]["running_records"]
    (recover,) = record["recover_records"]
    assert recover["fault_scenario"] == "job_hanged" and recover["recover_result"] == "recovering"
    assert recover["recover_start_at"] == record["start_at"] + 35 * 60 and "recover_end_at" not in recover
    emu.advance_clock(8 * 60)
    first, second = client.job(JOB).json()["status"]["running_records"]
    assert first["recover_records"][0]["recover_result"] == "success"
    assert first["recover_records"][0]["recover_end_at"] == second["start_at"] == first["end_at"]
    assert first["end_reason"] == "job hanged" and second["start_type"] == "restarted" and "recover_records" not in second
    assert len(hang_events(client, JOB)) == 1
    # After the restart the job makes progress again: busy accelerators and a growing log.
    util = metrics(client, JOB)["gpuUtil"]
    assert max(util[10:40]) <= 0.3 and min(util[40:]) > 80
    lines = end_line(client, JOB)
    emu.advance_clock(60)
    assert end_line(client, JOB) > lines


def test_an_error_level_verdict_and_two_of_them(client, emu):
    running(emu, JOB, activity={"service_hang": [{"at": "3m", "level": "Error"}, {"at": "1m"}]})
    emu.advance_clock(240)
    assert [event["level"] for event in hang_events(client, JOB)] == ["Warning", "Error"]
    errors = client.request("GET", path(client, JOB, "events"), query=[("level", "Error")]).json()["events"]
    assert [event["message"] for event in errors] == [hang_events(client, JOB)[1]["message"]]
    records = client.job(JOB).json()["status"]["running_records"][0]["recover_records"]
    assert [record["recover_start_at"] for record in records] == sorted(record["recover_start_at"] for record in records)


@pytest.mark.parametrize("shows, events, records", [({"event": False}, 0, 1), ({"record": False}, 1, 0)])
def test_the_verdict_shows_as_an_event_or_a_record(client, emu, shows, events, records):
    running(emu, JOB, activity={"service_hang": dict({"at": "2m"}, **shows)})
    emu.advance_clock(180)
    assert len(hang_events(client, JOB)) == events
    assert len(client.job(JOB).json()["status"]["running_records"][0].get("recover_records", [])) == records


@pytest.mark.parametrize(
    "activity, message",
    [
        ({"colour": "red"}, "unknown keys colour"),
        ({"util": "busyish"}, "activity.util"),
        ({"util": 101}, "activity.util"),
        ({"hang_at": "soon"}, "activity.hang_at"),
        ({"log_per_minute": -1}, "activity.log_per_minute"),
        ({"samples": "some"}, "activity.samples"),
        ({"fault": "sometimes"}, "activity.fault"),
        ({"service_hang": {"event": True}}, "service_hang"),
        ({"service_hang": {"at": "1m", "task": "worker-7"}}, "worker-7"),
        ({"service_hang": [{"at": "1m", "level": "Debug"}]}, "level"),
        ("busy", "activity must be a mapping"),
    ],
)
def test_a_bad_activity_is_refused_naming_the_job(emu, activity, message):
    with pytest.raises(Exception, match="bad-activity.*" + message):
        emu.add_job(id="e1590000-0000-4000-8000-000000000009", name="bad-activity", activity=activity)
