# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Events and task logs (logs.py): what the SDK interop tests do not pin down."""

import pytest

from modelarts_emulator import logs

FAILED = "a1000000-0000-4000-8000-000000000002"
LOST = "a1000000-0000-4000-8000-000000000007"  # phase-abnormal-lost: its node stopped responding (a Warning), then lost
POLLED = "a1000000-0000-4000-8000-000000000010"  # polls-to-completed: each GET of the job is one poll


def path(client, job, rest):
    return "/v2/%s/training-jobs/%s/%s" % (client.project_id, job, rest)


def test_events_filter_by_level_and_page_by_page_index(client):
    everything = client.request("GET", path(client, LOST, "events"), query=[("limit", "100")]).json()
    levels = [event["level"] for event in everything["events"]]
    assert set(levels) == {"Info", "Warning", "Error"} and everything["order"] == "desc"
    warnings = client.request("GET", path(client, LOST, "events"), query=[("level", "Warning")]).json()
    assert [event["level"] for event in warnings["events"]] == ["Warning"]
    second = client.request("GET", path(client, LOST, "events"), query=[("limit", "2"), ("offset", "1")]).json()
    assert second["events"] == everything["events"][2:4]
    oldest_first = client.request("GET", path(client, LOST, "events"), query=[("order", "asc"), ("limit", "100")]).json()
    assert oldest_first["events"] == list(reversed(everything["events"]))
    assert client.request("GET", path(client, LOST, "events"), query=[("level", "Debug")]).status_code == 400


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


# -- one story per failure kind (failures.py) -----------------------------------------------------------------


def story(client, emu, job_id, task="worker-0", **spec):
    """(events oldest first, the end of ``task``'s log or None) of a job added with ``spec``."""
    emu.add_job(id=job_id, name="story", **spec)
    for _poll in range(len(spec.get("timeline") or ())):
        client.job(job_id)  # a timeline driven by polls: to its end
    events = client.request("GET", path(client, job_id, "events"), query=[("order", "asc"), ("limit", "100")]).json()["events"]
    answer = client.request("GET", path(client, job_id, "logs/" + task), query=[("lines", "500"), ("order", "asc")])
    return [(event["level"], event["message"]) for event in events], (answer.json()["content"].split("\n") if answer.status_code == 200 else None)


def test_a_default_failed_job_tells_one_story_a_loss_that_diverged(client, emu):
    events, log = story(client, emu, "e1090000-0000-4000-8000-000000000011", phase="Failed")
    assert ("Error", "[worker-0] Training process exited with code 1: RuntimeError: training diverged: loss is NaN") in events
    assert not [level for level, _message in events if level == "Warning"], "nothing was seen coming"
    text = "\n".join(log)
    assert "CUDA" not in text and "OutOfMemoryError" not in text and text.count("exited with code") == 0
    assert log[-3:] == [
        "    raise RuntimeError('training diverged: loss is NaN')",
        "RuntimeError: training diverged: loss is NaN",
        "[ModelArts Service Log]Training end with return code: 1",
    ]


def test_an_import_error_ends_at_the_import_not_in_a_forward_pass(client, emu):
    failure = {"task": "worker-1", "exit_code": 2, "message": "ModuleNotFoundError: No module named 'torchvision'"}
    events, log = story(client, emu, "e1090000-0000-4000-8000-000000000012", task="worker-1", phase="Failed", node_count=2, failure=failure)
    assert log[-4:] == [
        '  File "/home/ma-user/modelarts/user-job-dir/code/train.py", line 141, in evaluate',
        "    import torchvision",
        "ModuleNotFoundError: No module named 'torchvision'",
        "[ModelArts Service Log]Training end with return code: 2",
    ]
    assert not [line for line in log if "torch/nn" in line or "forward" in line or "CUDA" in line]
    assert [level for level, _message in events if level != "Info"] == ["Error", "Error"]
    failure["message"] = "ImportError: cannot import name 'nms' from 'torchvision.ops'"
    _events, log = story(client, emu, "e1090000-0000-4000-8000-000000000013", task="worker-1", phase="Failed", node_count=2, failure=failure)
    assert log[-3] == "    from torchvision.ops import nms"


def test_a_container_killed_for_memory_prints_no_traceback(client, emu):
    failure = {"task": "worker-0", "exit_code": 137, "message": "Container killed: out of memory (OOMKilled) while loading batch 1412"}
    events, log = story(client, emu, "e1090000-0000-4000-8000-000000000014", phase="Failed", failure=failure)
    assert "Traceback (most recent call last):" not in log and not [line for line in log if "CUDA" in line or line.startswith("ERROR")]
    assert log[-2].endswith(
        " Killed                  python /home/ma-user/modelarts/user-job-dir/code/train.py --data_url=/home/ma-user/modelarts/inputs/data_url_0"
    )
    assert log[-1] == "[ModelArts Service Log]Training end with return code: 137"
    assert [message for level, message in events if level == "Warning"] == ["[worker-0] Memory usage above 95% of the container's limit for 60 seconds."]
    assert [message for _level, message in events].count("[worker-0] Training process exited with code 137: %s" % failure["message"]) == 1


def test_a_cuda_out_of_memory_error_is_the_one_raised_in_the_forward_pass(client, emu):
    failure = {"exit_code": 1, "message": "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"}
    events, log = story(client, emu, "e1090000-0000-4000-8000-000000000015", phase="Failed", failure=failure)
    assert log[-4:] == [
        '  File "/home/ma-user/anaconda3/lib/python3.9/site-packages/torch/nn/modules/conv.py", line 463, in forward',
        "    return self._conv_forward(input, self.weight, self.bias)",
        failure["message"],
        "[ModelArts Service Log]Training end with return code: 1",
    ]
    assert [message for level, message in events if level == "Warning"] == ["[worker-0] GPU memory usage above 95% for 60 seconds."]


def test_a_segfault_a_lost_node_and_a_job_that_never_ran(client, emu):
    _events, log = story(
        client, emu, "e1090000-0000-4000-8000-000000000016", phase="Failed", failure={"exit_code": 139, "message": "Segmentation fault (core dumped)"}
    )
    assert " Segmentation fault (core dumped) " in log[-2] and log[-1].endswith("return code: 139") and "Traceback (most recent call last):" not in log
    failure = {"exit_code": 137, "message": "Node lost while running"}
    events, log = story(client, emu, "e1090000-0000-4000-8000-000000000017", timeline=["Creating", "Running", "Abnormal"], failure=failure)
    assert log[-1].startswith("INFO: epoch ") and "Training end" not in log[-1], "the log stops where the node went"
    assert [message for _level, message in events][-3:] == [
        "[worker-0] The node running this task stopped responding.",
        "[worker-0] Task lost with its node (exit code 137): Node lost while running",
        "Failed to run the training job.",
    ]
    assert [message for _level, message in events][:3] == ["Training job created.", "The training job starts to run.", "[worker-0] Training code downloaded."]
    events, log = story(client, emu, "e1090000-0000-4000-8000-000000000018", phase="Abnormal")
    assert log is None
    assert [message for level, message in events if level != "Info"] == [
        "[worker-0] Failed to create pod worker-0: insufficient resources in the resource pool",
        "Failed to run the training job.",
    ]
