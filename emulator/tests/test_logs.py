# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Events and task logs (logs.py): what the SDK interop tests do not pin down."""

import pytest

from modelarts_emulator import logs

FAILED = "a1000000-0000-4000-8000-000000000002"
POLLED = "a1000000-0000-4000-8000-000000000010"  # polls-to-completed: each GET of the job is one poll


def path(client, job, rest):
    return "/v2/%s/training-jobs/%s/%s" % (client.project_id, job, rest)


def test_events_filter_by_level_and_page_by_page_index(client):
    everything = client.request("GET", path(client, FAILED, "events"), query=[("limit", "100")]).json()
    levels = [event["level"] for event in everything["events"]]
    assert set(levels) == {"Info", "Warning", "Error"} and everything["order"] == "desc"
    warnings = client.request("GET", path(client, FAILED, "events"), query=[("level", "Warning")]).json()
    assert [event["level"] for event in warnings["events"]] == ["Warning"]
    second = client.request("GET", path(client, FAILED, "events"), query=[("limit", "2"), ("offset", "1")]).json()
    assert second["events"] == everything["events"][2:4]
    oldest_first = client.request("GET", path(client, FAILED, "events"), query=[("order", "asc"), ("limit", "100")]).json()
    assert oldest_first["events"] == list(reversed(everything["events"]))
    assert client.request("GET", path(client, FAILED, "events"), query=[("level", "Debug")]).status_code == 400


def test_aom_reads_forward_from_a_base_line(client):
    answer = client.request("GET", path(client, FAILED, "logs/worker-1"), query=[("lines", "3"), ("order", "asc"), ("base_line", "0")]).json()
    assert (answer["start_line"], answer["end_line"], answer["lines"]) == ("1", "3", 3)
    assert answer["content"].split("\n")[0].startswith("[ModelArts Service Log]Trainer start at ")


def test_an_unknown_task_is_not_found(client):
    response = client.request("GET", path(client, FAILED, "logs/worker-9"), query=[("lines", "3")])
    assert response.status_code == 404 and response.json()["error_code"] == "ModelArts.2778"


def test_reading_events_and_logs_is_not_a_poll(client, emu):
    for _read in range(3):
        assert client.request("GET", path(client, POLLED, "events")).status_code == 200
        client.request("GET", path(client, POLLED, "logs/worker-0"), query=[("lines", "5")])
    assert client.job(POLLED).json()["status"]["phase"] == "Creating", "still the first step of a poll-driven timeline"


def test_aom_forbidden_leaves_the_preview_readable(client, emu):
    job = "e1090000-0000-4000-8000-000000000001"
    emu.add_job(id=job, name="aom-denied", phase="Failed", log={"fault": "aom_forbidden"})
    assert client.request("GET", path(client, job, "logs/worker-0"), query=[("lines", "5")]).status_code == 403
    preview = client.request("GET", path(client, job, "tasks/worker-0/logs/preview")).json()
    assert preview["content"].endswith("[ModelArts Service Log]Training end with return code: 1\n")


@pytest.mark.parametrize("log", [{"colour": "red"}, {"fault": "sometimes"}, {"events_fault": "always"}, {"append": "one line"}])
def test_a_bad_log_mapping_is_refused_naming_the_job(log, emu):
    with pytest.raises(ValueError, match="^log"):
        logs.check_log_spec(log)
    with pytest.raises(Exception, match="bad-log.*log"):
        emu.add_job(id="e1090000-0000-4000-8000-000000000002", name="bad-log", log=log)


# -- what a job produced --------------------------------------------------------------------------


def test_metric_lines_are_written_through_the_training_lines_of_their_task():
    from modelarts_emulator import produced  # pylint: disable=import-outside-toplevel

    assert produced.interleave(["t1", "t2", "t3", "t4"], ["m1", "m2"]) == ["t1", "t2", "m1", "t3", "t4", "m2"]
    assert produced.interleave(["t1"], ["m1", "m2", "m3"]) == ["m1", "t1", "m2", "m3"]
    assert produced.interleave([], ["m1"]) == ["m1"]
    assert produced.interleave(["t1"], []) == ["t1"]
    assert produced.check_metric_lines(["a"], ["worker-0", "worker-1"]) == {"worker-0": ["a"]}
    assert produced.check_metric_lines({"worker-1": [1.5]}, ["worker-0", "worker-1"]) == {"worker-1": ["1.5"]}


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"metric_lines": {"worker-3": ["x"]}}, "metric_lines: task 'worker-3' does not exist"),
        ({"metric_lines": "x"}, "metric_lines must be a list of lines"),
        ({"ft_metrics": [{"group": "training"}]}, "ft_metrics[0] must be a mapping with a name_en"),
        ({"ft_metrics": [{"name_en": "a", "colour": "red"}]}, "ft_metrics[0]: unknown keys colour"),
        ({"ft_metrics": [{"name_en": "a", "tags": "x"}]}, "ft_metrics[0].tags must be a list of strings"),
        ({"ft_metrics": {"fault": "gone"}}, "ft_metrics.fault must be one of forbidden"),
        ({"ft_metrics": "x"}, "ft_metrics must be a list of series"),
    ],
)
def test_what_a_job_produced_is_checked_when_the_scenario_loads(spec, message):
    from modelarts_emulator.scenario import ScenarioError  # pylint: disable=import-outside-toplevel
    from modelarts_emulator.state import EmulatorState  # pylint: disable=import-outside-toplevel

    with pytest.raises(ScenarioError) as raised:
        EmulatorState({"jobs": [dict({"name": "j", "phase": "Completed"}, **spec)]})
    assert message in str(raised.value)


def test_ft_metrics_are_empty_before_the_job_ran_and_for_a_job_without_them(client, emu):
    emu.add_job(id="f7000000-0000-4000-8000-000000000002", name="queued", phase="Pending", ft_metrics=[{"name_en": "a", "data": [1]}])
    emu.add_job(id="f7000000-0000-4000-8000-000000000003", name="plain", phase="Completed")
    for job_id in ("f7000000-0000-4000-8000-000000000002", "f7000000-0000-4000-8000-000000000003"):
        response = client.request("GET", path(client, job_id, "ft-metrics"))
        assert response.status_code == 200 and response.json()["data"]["metrics"] == []
