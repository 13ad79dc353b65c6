# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Option ``stall`` (issue 59): its checks (wait_options.check_stall) and the judgement over an injected clock
(waiting/stall.py): evidence, never guesses."""

from __future__ import annotations

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.waiting.stall import (
    event_seconds,
    iso,
    judge_progress,
    last_start,
    record_log_size,
    stall_identity,
    stall_message,
    stall_words,
)
from ansible_collections.modelarts.training.plugins.module_utils.door.stall_checks import check_stall

NOW = 1800000000.0  # 2027-01-15T08:00:00Z
HOUR = 3600
TASKS = ("worker-0", "worker-1")


def stall(**given):
    return check_stall(given)


def document(start=NOW - 2 * HOUR, phase="Running", tasks=TASKS, records=None):
    status = {"phase": phase, "start_time": int(start * 1000), "tasks": list(tasks)}
    if records is not None:
        status["running_records"] = records
    return {"kind": "job", "metadata": {"id": "job-1", "name": "resnet"}, "status": status}


def item(doc):
    return {"id": "job-1", "name": "resnet", "api_version": "v2", "phase": doc["status"]["phase"], "details": doc}


def answer(values, metric="gpuUtil"):
    """A metrics answer as the SDK's ShowTrainingJobMetrics has it, with the CPU and memory series beside."""
    return {
        "metrics": [
            {"metric": "cpuUsage", "value": [55.0] * len(values)},
            {"metric": metric, "value": list(values)},
            {"metric": "memUsage", "value": [30.0] * len(values)},
        ]
    }


def idle_answers(values=(0.2,) * 50, metric="gpuUtil", tasks=TASKS):
    return dict((task, answer(values, metric)) for task in tasks)


def silent_logs(minutes, tasks=TASKS, size=4096):
    """Histories in which each task's log last grew ``minutes`` ago and was read at every poll since."""
    logs = {}
    for task in tasks:
        history = record_log_size([], NOW - minutes * 60 - 30, size - 100)
        for when in range(int(NOW - minutes * 60), int(NOW) + 1, 20):
            history = record_log_size(history, float(when), size)
        logs[task] = history
    return logs


def growing_logs(tasks=TASKS):
    logs = {}
    for task in tasks:
        history = []
        for step, when in enumerate(range(int(NOW - HOUR), int(NOW) + 1, 30)):
            history = record_log_size(history, float(when), 1000 + step * 10)
        logs[task] = history
    return logs


# -- the option's checks -----------------------------------------------------------------------------------------


# -- the verdict: stalled, and not ------------------------------------------------------------------------------


def test_a_hung_job_is_stalled_by_idle_accelerators_and_a_silent_log_and_each_signal_is_reported():
    settings = stall(idle_minutes=30, quiet_minutes=30)
    metrics = {"worker-0": answer([40.0] * 10 + [0.1] * 38 + [0.4, 0.0]), "worker-1": answer([0.2] * 50)}
    progress = judge_progress(settings, item(document()), NOW, metrics=metrics, logs=silent_logs(42))
    assert progress["problems"] == []
    assert progress["stalled"] is True
    idle = progress["signals"]["idle"]
    assert idle == {
        "held": True,
        "minutes": 30,
        "tasks": {"worker-0": {"metric": "gpuUtil", "last": 0.0, "peak": 0.4}, "worker-1": {"metric": "gpuUtil", "last": 0.2, "peak": 0.2}},
    }
    assert progress["signals"]["quiet"] == {"held": True, "since": iso(NOW - 42 * 60)}
    assert progress["signals"]["service"] == {"held": False, "hangs": 0, "last": None}
    # all: the latest of the two - worker-0 idle for its 40 newest minutes, the log silent for 42.
    assert progress["since"] == iso(NOW - 40 * 60)
    words = stall_words(progress, NOW)
    assert (
        words
        == "gpuUtil at most 0.4%% on every task for 30 minutes; no log line for 42 minutes of polling (same size since %s); the service still reports Running"
        % iso(NOW - 42 * 60)
    )
    assert stall_message("job-1", item(document()), NOW).startswith("training job job-1 (resnet) stopped making progress: ")


def test_the_message_of_a_stalled_item_names_the_job_and_its_signals():
    job = item(document())
    job["progress"] = judge_progress(stall(idle_minutes=30), job, NOW, metrics=idle_answers())
    assert (
        stall_message("job-1", job, NOW)
        == "training job job-1 (resnet) stopped making progress: gpuUtil at most 0.2% on every task for 30 minutes; the service still reports Running"
    )


def test_a_busy_job_is_not_stalled():
    settings = stall(idle_minutes=30, quiet_minutes=30, require="any")
    progress = judge_progress(settings, document(), NOW, metrics=idle_answers([85.0, 90.0, -1] * 20), logs=growing_logs())
    assert progress["stalled"] is False and progress["since"] is None
    assert progress["signals"]["idle"]["held"] is False
    assert progress["signals"]["idle"]["tasks"]["worker-0"] == {"metric": "gpuUtil", "last": 90.0, "peak": 90.0}
    assert progress["signals"]["quiet"]["held"] is False
    assert progress["problems"] == []  # busy is evidence: the -1 beside it are no problem


def test_one_busy_task_keeps_the_job_from_idling():
    metrics = {"worker-0": answer([0.0] * 40), "worker-1": answer([0.0] * 39 + [5.0])}
    progress = judge_progress(stall(idle_minutes=30), document(), NOW, metrics=metrics)
    assert progress["stalled"] is False and progress["signals"]["idle"]["held"] is False


def test_idle_below_is_the_bound_at_or_under_which_a_minute_is_idle():
    metrics = idle_answers([3.0] * 40)
    assert judge_progress(stall(idle_minutes=30), document(), NOW, metrics=metrics)["stalled"] is False
    assert judge_progress(stall(idle_minutes=30, idle_below=3), document(), NOW, metrics=metrics)["stalled"] is True


@pytest.mark.parametrize("require, stalled", [("all", False), ("any", True)])
def test_preprocessing_idle_accelerators_with_a_growing_log_stall_only_with_require_any(require, stalled):
    settings = stall(idle_minutes=30, quiet_minutes=30, require=require)
    progress = judge_progress(settings, document(), NOW, metrics=idle_answers([0.0] * 60), logs=growing_logs())
    assert progress["signals"]["idle"]["held"] is True
    assert progress["signals"]["quiet"]["held"] is False
    assert progress["stalled"] is stalled
    assert progress["since"] == (iso(NOW - 60 * 60) if stalled else None)
    assert progress["problems"] == []


def test_with_require_any_the_stall_began_at_the_earliest_signal_held_and_with_all_at_the_latest():
    metrics = idle_answers([50.0] * 20 + [0.0] * 35)
    logs = silent_logs(50)
    anyone = judge_progress(stall(idle_minutes=30, quiet_minutes=30, require="any"), document(), NOW, metrics=metrics, logs=logs)
    every = judge_progress(stall(idle_minutes=30, quiet_minutes=30), document(), NOW, metrics=metrics, logs=logs)
    assert anyone["since"] == iso(NOW - 50 * 60)
    assert every["since"] == iso(NOW - 35 * 60)


def test_a_job_inside_its_grace_never_stalls():
    settings = stall(idle_minutes=1, quiet_minutes=1, grace_minutes=10)
    job = document(start=NOW - 9 * 60)
    progress = judge_progress(settings, job, NOW, metrics=idle_answers([0.0] * 5), logs=silent_logs(8))
    assert progress["stalled"] is False
    assert progress["signals"]["idle"]["held"] is False and progress["signals"]["quiet"]["held"] is False
    later = judge_progress(settings, document(start=NOW - 11 * 60), NOW, metrics=idle_answers([0.0] * 5), logs=silent_logs(8))
    assert later["stalled"] is True


def test_a_job_inside_its_grace_says_so_in_its_problems_until_when():
    settings = stall(idle_minutes=1, quiet_minutes=1, grace_minutes=10)
    progress = judge_progress(settings, document(start=NOW - 9 * 60), NOW, metrics=idle_answers([0.0] * 5), logs=silent_logs(8))
    assert progress["stalled"] is False
    assert progress["problems"] == [
        "inside its grace until %s (grace_minutes after its last start, %s): no signal counts yet" % (iso(NOW + 60), iso(NOW - 9 * 60))
    ]
    # Restarted by the service: the grace runs from the newest start.
    records = [{"start_at": int(NOW - 2 * HOUR), "end_at": int(NOW - 5 * 60)}, {"start_at": int(NOW - 5 * 60)}]
    restarted = judge_progress(stall(idle_minutes=3, grace_minutes=10), document(records=records), NOW, metrics=idle_answers())
    assert restarted["problems"] == [
        "inside its grace until %s (grace_minutes after its last start, %s): no signal counts yet" % (iso(NOW + 5 * 60), iso(NOW - 5 * 60))
    ]
    # Past the grace, no such line.
    later = judge_progress(settings, document(start=NOW - 11 * 60), NOW, metrics=idle_answers([0.0] * 5), logs=silent_logs(8))
    assert later["stalled"] is True and not any(line.startswith("inside its grace") for line in later["problems"])


def test_a_job_restarted_by_fault_tolerance_starts_its_grace_again_from_its_newest_running_record():
    records = [{"start_at": int(NOW - 2 * HOUR), "end_at": int(NOW - 5 * 60), "end_recover": "job_reschedule"}, {"start_at": int(NOW - 5 * 60)}]
    settings = stall(idle_minutes=3, grace_minutes=10)
    assert last_start(document(records=records)["status"]) == NOW - 5 * 60
    assert judge_progress(settings, document(records=records), NOW, metrics=idle_answers())["stalled"] is False
    assert judge_progress(settings, document(records=records[:1]), NOW, metrics=idle_answers())["stalled"] is True


def test_windows_are_cut_at_the_last_start():
    # Restarted 20 minutes ago: the log last grew before that, yet it has been silent only 20 minutes of this run.
    records = [{"start_at": int(NOW - 20 * 60)}]
    progress = judge_progress(stall(quiet_minutes=30), document(records=records), NOW, logs=silent_logs(60))
    assert progress["signals"]["quiet"] == {"held": False, "since": iso(NOW - 20 * 60)}
    assert progress["stalled"] is False
    idle = judge_progress(stall(idle_minutes=30), document(records=records), NOW, metrics=idle_answers([0.0] * 60))
    assert idle["signals"]["idle"]["held"] is False and idle["stalled"] is False and idle["problems"] == []
    assert judge_progress(stall(idle_minutes=15), document(records=records), NOW, metrics=idle_answers([0.0] * 60))["since"] == iso(NOW - 20 * 60)


def test_the_same_idle_run_keeps_its_since_across_polls_when_the_start_is_not_on_a_whole_minute():
    # Started 30 s past a minute: the one-minute averages end on the job's grid (hh:mm:30), not on whole minutes.  The
    # idle run began with the 111th average (origin + 110 minutes = NOW - 570 s) whenever the job is polled.
    start = NOW - 2 * HOUR + 30
    doc = document(start=start)

    def since_at(now):
        averages = int((now - start) // 60)  # whole minutes since the start, as the service averages them
        values = [50.0] * 110 + [0.1] * (averages - 110)
        return judge_progress(stall(idle_minutes=5), doc, now, metrics=idle_answers(values))["since"]

    polls = [NOW + 35, NOW + 65, NOW + 95, NOW + 125, NOW + 30 * 60 + 1]
    assert [since_at(now) for now in polls] == [iso(NOW - 570)] * len(polls)
    assert stall_identity("job-1", judge_progress(stall(idle_minutes=5), doc, NOW + 35, metrics=idle_answers([50.0] * 110 + [0.1] * 10))) == (
        "stall:job-1:%s" % iso(NOW - 570)
    )


def test_a_job_restarted_after_an_old_job_hanged_verdict_is_not_stalled():
    records = [
        {
            "start_at": int(NOW - 2 * HOUR),
            "end_at": int(NOW - HOUR),
            "recover_records": [{"recover_start_at": int(NOW - HOUR - 60), "recover_end_at": int(NOW - HOUR), "fault_scenario": "job_hanged"}],
        },
        {"start_at": int(NOW - HOUR), "start_type": "restarted"},
    ]
    events = {
        "events": [{"time": iso(NOW - HOUR - 30), "level": "Warning", "message": "[JobHanged] The system detects that your training job may be suspended."}]
    }
    progress = judge_progress(check_stall({}), document(records=records), NOW, events=events)
    assert progress["signals"]["service"] == {"held": False, "hangs": 0, "last": None}
    assert progress["stalled"] is False


def test_a_finished_recovery_inside_the_running_record_is_a_restart_too():
    records = [
        {
            "start_at": int(NOW - 2 * HOUR),
            "recover_records": [{"recover_start_at": int(NOW - HOUR - 60), "recover_end_at": int(NOW - HOUR), "fault_scenario": "job_hanged"}],
        }
    ]
    assert last_start(document(records=records)["status"]) == NOW - HOUR
    assert judge_progress(check_stall({}), document(records=records), NOW)["stalled"] is False
    del records[0]["recover_records"][0]["recover_end_at"]  # the service is still recovering: its verdict stands
    assert judge_progress(check_stall({}), document(records=records), NOW)["stalled"] is True


def test_the_services_verdict_stalls_a_job_on_its_own_whatever_require_says():
    settings = stall(idle_minutes=30, quiet_minutes=30, require="all")
    events = [{"time": "2027-01-15T15:40:00+08:00", "level": "Warning", "message": "[JobHanged] training job hung"}]
    progress = judge_progress(settings, document(), NOW, metrics=idle_answers([80.0] * 40), logs=growing_logs(), events=events)
    assert progress["signals"]["service"] == {"held": True, "hangs": 1, "last": iso(NOW - 20 * 60)}
    assert progress["stalled"] is True and progress["since"] == iso(NOW - 20 * 60)
    assert stall_words(progress, NOW) == "the service itself found the job hung at %s; the service still reports Running" % iso(NOW - 20 * 60)
    # service: false - the verdict is reported by no signal and stalls nothing.
    off = judge_progress(stall(idle_minutes=30, service=False), document(), NOW, metrics=idle_answers([80.0] * 40), events=events)
    assert off["signals"]["service"] is None and off["stalled"] is False


def test_a_hang_in_a_recover_record_and_its_event_are_one_hang_and_the_first_one_dates_the_stall():
    records = [
        {
            "start_at": int(NOW - 2 * HOUR),
            "recover_records": [
                {"recover_start_at": int(NOW - 30 * 60), "fault_scenario": "job_hanged", "recover": "proc_restart"},
                {"recover_start_at": int(NOW - 90 * 60), "fault_scenario": "chip_fault"},
            ],
        }
    ]
    events = [
        {"time": int((NOW - 29 * 60) * 1000), "level": "Warning", "message": "The system detects that your training job may be suspended."},
        {"time": iso(NOW - 10 * 60), "level": "Warning", "message": "other", "reason": "JobHanged"},
        {"time": iso(NOW - 5 * 60), "level": "Info", "message": "The training job starts to run."},
    ]
    progress = judge_progress(check_stall({}), document(records=records), NOW, events=events)
    assert progress["signals"]["service"] == {"held": True, "hangs": 2, "last": iso(NOW - 10 * 60)}
    assert progress["since"] == iso(NOW - 30 * 60)
    assert "(2 hangs since its last start)" in stall_words(progress, NOW)


def hung_events(*events):
    """Each event dated ten minutes ago (after the document's start), Warning of the Job unless it says otherwise."""
    return [dict({"time": iso(NOW - 10 * 60), "level": "Warning", "source": "Job"}, **event) for event in events]


@pytest.mark.parametrize(
    "event",
    [
        {"level": "Info", "message": "Job JobHanged-repro started."},
        {"message": "Job JobHanged-repro started."},
        {"message": "The training job was restarted by fault tolerance (JobHanged) and resumed."},
        {"message": "Your account is in arrears; resources may be suspended."},
        {"source": "Task", "message": "[worker-0] this process may be suspended while checkpointing"},
        {"message": "this process may be suspended while checkpointing"},
        {"message": "job_hanged"},
        {"name": "JobHanged-repro"},
        {"reason": "NotJobHanged"},
        {"level": "Info", "message": "[JobHanged] The system detects that your training job may be suspended."},
        {"level": "Info", "reason": "JobHanged"},
        {"level": None, "message": "[JobHanged] The system detects that your training job may be suspended."},
        {"source": "Task", "message": "[JobHanged] The system detects that your training job may be suspended."},
        {"source": "Task", "reason": "JobHanged"},
        {"message": "Note: The system detects that your training job may be suspended."},
    ],
)
def test_an_event_that_merely_mentions_a_hang_is_never_the_services_verdict(event):
    progress = judge_progress(check_stall({}), document(), NOW, events=hung_events(event))
    assert progress["signals"]["service"] == {"held": False, "hangs": 0, "last": None}
    assert progress["stalled"] is False and progress["problems"] == []


@pytest.mark.parametrize(
    "event",
    [
        {"message": "[JobHanged] The system detects that your training job may be suspended. Go to the job details page to view the cause and handle it."},
        {"level": "Error", "message": "[jobhanged] training job hung"},
        {"message": "The system detects that your training job may be suspended"},
        {"message": "The system detects that your training job may be suspended. Go to the job details page."},
        {"level": "warning", "message": "other", "reason": "JobHanged"},
        {"message": "other", "type": "jobhanged"},
        {"message": "other", "event_type": "JobHanged"},
        {"message": "other", "name": " JobHanged "},
        {"source": None, "message": "[JobHanged] hung"},
    ],
)
def test_the_services_own_forms_of_its_hang_verdict_stall_a_job(event):
    events = hung_events(event)
    if event.get("source", "Job") is None:
        del events[0]["source"]
    progress = judge_progress(check_stall({}), document(), NOW, events=events)
    assert progress["signals"]["service"] == {"held": True, "hangs": 1, "last": iso(NOW - 10 * 60)}
    assert progress["stalled"] is True


# -- evidence, never guesses -------------------------------------------------------------------------------------


def test_only_no_sample_averages_are_a_problem_never_a_stall():
    progress = judge_progress(stall(idle_minutes=30), document(), NOW, metrics=idle_answers([-1] * 60))
    assert progress["stalled"] is False
    assert progress["signals"]["idle"]["tasks"]["worker-0"] == {"metric": "gpuUtil", "last": None, "peak": None}
    assert progress["problems"] == [
        "idle: task worker-0: 30 of the newest 30 averages of gpuUtil have no sample (-1)",
        "idle: task worker-1: 30 of the newest 30 averages of gpuUtil have no sample (-1)",
    ]


def test_a_gap_in_an_otherwise_idle_window_is_a_problem():
    progress = judge_progress(stall(idle_minutes=30), document(), NOW, metrics=idle_answers([0.0] * 50 + [-1] + [0.0] * 9))
    assert progress["stalled"] is False
    assert progress["problems"][0] == "idle: task worker-0: 1 of the newest 30 averages of gpuUtil have no sample (-1)"
    # Before the window, a minute with no sample ends the idle run: it is no evidence of idling.
    older_gap = judge_progress(stall(idle_minutes=30), document(), NOW, metrics=idle_answers([0.0] * 20 + [-1] + [0.0] * 35))
    assert older_gap["stalled"] is True and older_gap["since"] == iso(NOW - 35 * 60)


def test_up_to_two_trailing_minutes_not_yet_averaged_are_skipped_and_the_run_is_dated_from_the_newest_real_sample():
    # The service has not averaged the newest minute or two yet (-1): the window ends at the newest real sample.
    def at(now, idle, gaps):
        values = [50.0] * 80 + [0.1] * idle + [-1] * gaps
        return judge_progress(stall(idle_minutes=30), document(), now, metrics=idle_answers(values))

    progress = at(NOW, 38, 2)
    assert progress["stalled"] is True and progress["problems"] == []
    assert progress["since"] == iso(NOW - 40 * 60)
    assert progress["signals"]["idle"]["tasks"]["worker-0"] == {"metric": "gpuUtil", "last": 0.1, "peak": 0.1}
    # The same run seen as the -1 get averaged, and a minute later: the same since (and so the same event_id).
    polls = ((NOW, 39, 1), (NOW, 40, 0), (NOW + 60, 39, 2), (NOW + 90, 40, 1))
    assert [at(now, idle, gaps)["since"] for now, idle, gaps in polls] == [iso(NOW - 40 * 60)] * 4
    # A third trailing -1 is not skipped: it is in the window, a problem and never a stall.
    three = at(NOW, 37, 3)
    assert three["stalled"] is False
    assert three["problems"][0] == "idle: task worker-0: 1 of the newest 30 averages of gpuUtil have no sample (-1)"
    # A busy minute before the skipped ones is still busy.
    busy = judge_progress(stall(idle_minutes=30), document(), NOW, metrics=idle_answers([0.1] * 117 + [60.0, -1, -1]))
    assert busy["stalled"] is False and busy["signals"]["idle"]["held"] is False and busy["problems"] == []


def test_a_cpu_flavour_has_no_accelerator_metric_a_problem_never_a_stall():
    cpu = {"metrics": [{"metric": "cpuUsage", "value": [0.0] * 60}, {"metric": "memUsage", "value": [1.0] * 60}]}
    progress = judge_progress(stall(idle_minutes=30), document(tasks=["worker-0"]), NOW, metrics={"worker-0": cpu})
    assert progress["stalled"] is False
    assert progress["signals"]["idle"]["tasks"] == {}
    assert progress["problems"] == ["idle: task worker-0 reports no gpuUtil or npuUtil (a CPU flavour?): its accelerators cannot be judged"]


def test_fewer_averages_than_idle_minutes_is_a_problem_never_a_stall():
    progress = judge_progress(stall(idle_minutes=30), document(), NOW, metrics=idle_answers([0.0] * 12))
    assert progress["stalled"] is False
    assert "idle: task worker-0 has 12 one-minute averages of gpuUtil, idle_minutes needs 30" in progress["problems"]
    # A run younger than the window: not yet, and no problem (the service has only the averages since the start).
    young = judge_progress(stall(idle_minutes=30, grace_minutes=5), document(start=NOW - 12 * 60), NOW, metrics=idle_answers([-1] * 48 + [0.0] * 12))
    assert young["stalled"] is False and young["problems"] == []


def test_an_npu_job_is_judged_by_npu_util():
    metrics = idle_answers([0.3] * 40, metric="npuUtil")
    progress = judge_progress(stall(idle_minutes=30), document(), NOW, metrics=metrics)
    assert progress["stalled"] is True
    assert progress["signals"]["idle"]["tasks"]["worker-1"] == {"metric": "npuUtil", "last": 0.3, "peak": 0.3}
    assert stall_words(progress, NOW).startswith("npuUtil at most 0.3% on every task for 30 minutes")
    # A gpuUtil series of -1 beside the npuUtil one: the series with samples is the one judged.
    both = {"worker-0": {"metrics": [{"metric": "gpuUtil", "value": [-1] * 40}, {"metric": "npuUtil", "value": [0.3] * 40}]}}
    assert judge_progress(stall(idle_minutes=30), document(tasks=["worker-0"]), NOW, metrics=both)["stalled"] is True


def test_a_refused_read_on_one_task_is_a_problem_never_a_stall():
    refused = ModelArtsError("Forbidden: modelarts:trainJob:get not allowed", operation="read metrics", status=403)
    metrics = {"worker-0": answer([0.0] * 40), "worker-1": refused}
    progress = judge_progress(stall(idle_minutes=30), document(), NOW, metrics=metrics)
    assert progress["stalled"] is False
    assert progress["signals"]["idle"]["held"] is False
    assert list(progress["signals"]["idle"]["tasks"]) == ["worker-0"]
    assert len(progress["problems"]) == 1
    assert progress["problems"][0].startswith("idle: task worker-1: its metrics could not be read (")
    assert "403" in progress["problems"][0]


def test_a_task_whose_metrics_were_not_read_is_a_problem():
    progress = judge_progress(stall(idle_minutes=30), document(), NOW, metrics={"worker-0": answer([0.0] * 40)})
    assert progress["stalled"] is False
    assert progress["problems"] == ["idle: task worker-1: its metrics were not read"]


def test_a_log_not_ready_or_not_read_is_a_problem_never_a_stall():
    logs = silent_logs(60)
    progress = judge_progress(stall(quiet_minutes=30), document(), NOW, logs=logs, log_errors={"worker-1": "the log is not ready (HTTP 204)"})
    assert progress["stalled"] is False
    assert progress["problems"] == ["quiet: task worker-1: its log could not be read (the log is not ready (HTTP 204))"]
    del logs["worker-1"]
    progress = judge_progress(stall(quiet_minutes=30), document(), NOW, logs=logs)
    assert progress["stalled"] is False and progress["problems"] == ["quiet: task worker-1: no size of its log was read yet"]


def test_quiet_is_measured_to_the_newest_observation_not_to_now():
    logs = silent_logs(20)  # read until NOW, silent for 20 minutes
    assert judge_progress(stall(quiet_minutes=30), document(), NOW + 15 * 60, logs=logs)["stalled"] is False
    assert judge_progress(stall(quiet_minutes=30), document(), NOW + 15 * 60, logs=silent_logs(31))["stalled"] is True


def test_quiet_is_unmeasured_until_the_polls_span_quiet_minutes_or_the_log_grows():
    # One read (the lookup, the module without wait): nothing says whether the log grew - a problems line, since null,
    # never held and never read as progress (review of issue 59, finding 3: it read {held: false, since: <now>}).
    once = dict((task, record_log_size([], NOW, 4096)) for task in TASKS)
    progress = judge_progress(stall(quiet_minutes=30), document(), NOW, logs=once)
    assert progress["signals"]["quiet"] == {"held": False, "since": None} and progress["stalled"] is False
    assert progress["problems"] == ["quiet: the log was seen across 0 of the 30 minutes needed; it is measured across polls"]
    # Polls spanning 12 minutes with the same size: still unmeasured.
    polled = {}
    for task in TASKS:
        history = []
        for when in range(int(NOW - 12 * 60), int(NOW) + 1, 60):
            history = record_log_size(history, float(when), 4096)
        polled[task] = history
    progress = judge_progress(stall(quiet_minutes=30), document(), NOW, logs=polled)
    assert progress["signals"]["quiet"] == {"held": False, "since": None}
    assert progress["problems"] == ["quiet: the log was seen across 12 of the 30 minutes needed; it is measured across polls"]
    # Once they span quiet_minutes, quiet holds from the first observation.
    progress = judge_progress(stall(quiet_minutes=10), document(), NOW, logs=polled)
    assert progress["signals"]["quiet"] == {"held": True, "since": iso(NOW - 12 * 60)} and progress["problems"] == []
    # Growth seen across polls is measured at once: not quiet, since the growth, no problem.
    grown = dict((task, record_log_size(record_log_size([], NOW - 60, 4000), NOW, 4096)) for task in TASKS)
    progress = judge_progress(stall(quiet_minutes=30), document(), NOW, logs=grown)
    assert progress["signals"]["quiet"] == {"held": False, "since": iso(NOW)} and progress["problems"] == []


def test_one_growing_task_log_is_progress():
    logs = silent_logs(60)
    logs["worker-1"] = growing_logs()["worker-1"]
    progress = judge_progress(stall(quiet_minutes=30), document(), NOW, logs=logs)
    assert progress["signals"]["quiet"]["held"] is False and progress["stalled"] is False


def test_a_start_time_not_known_is_a_problem_and_never_a_stall():
    doc = document()
    del doc["status"]["start_time"]
    progress = judge_progress(check_stall({"idle_minutes": 5}), doc, NOW, metrics=idle_answers())
    assert progress["stalled"] is False
    assert progress["problems"] == ["the job's start time is not known: no signal can count until it is"]


def test_events_that_cannot_be_read_or_dated_are_problems():
    refused = ModelArtsError("Forbidden", status=403)
    progress = judge_progress(check_stall({}), document(), NOW, events=refused)
    assert progress["stalled"] is False and progress["problems"][0].startswith("service: the job's events could not be read (")
    undated = judge_progress(check_stall({}), document(), NOW, events=[{"time": "2027-01-15 08:00:00", "level": "Warning", "message": "[JobHanged] hung"}])
    assert undated["stalled"] is False
    assert undated["problems"] == ["service: a JobHanged event has no readable time: it was left out"]


def test_no_progress_for_a_job_that_is_not_running_or_without_stall():
    for phase in ("Pending", "Completed", "Failed"):
        assert judge_progress(stall(idle_minutes=5), document(phase=phase), NOW, metrics=idle_answers()) is None
    assert judge_progress(None, document(), NOW, metrics=idle_answers()) is None
    v1 = {"id": "1", "api_version": "v1", "phase": "Running", "details": {"status": 8}}
    progress = judge_progress(stall(idle_minutes=5), v1, NOW)
    assert progress["stalled"] is False and progress["problems"] == ["a v1 job's progress cannot be read: stall judges v2 jobs"]


# -- what the caller keeps, and the stall's identity ---------------------------------------------------------


def test_the_log_history_stays_bounded_and_keeps_the_last_growth():
    history = []
    for when in range(0, 100000, 5):
        history = record_log_size(history, float(when), 10 if when < 500 else 20)
        assert len(history) <= 3
    assert history == [(495.0, 10), (500.0, 20), (99995.0, 20)]
    assert record_log_size(history, 99990.0, 30) == history  # not newer: left as it is
    assert record_log_size(history, 100000.0, None) == history  # a log not ready
    assert record_log_size(history, 100000.0, 5) == [(99995.0, 20), (100000.0, 5)]  # shrank: a change too


def test_the_stalls_identity_is_stable_while_it_lasts_and_new_after_progress():
    settings = stall(quiet_minutes=30)
    logs = silent_logs(40)
    first = judge_progress(settings, document(), NOW, logs=logs)
    logs = dict((task, record_log_size(history, NOW + 45, 4096)) for task, history in logs.items())
    second = judge_progress(settings, document(), NOW + 45, logs=logs)
    assert stall_identity("job-1", first) == stall_identity("job-1", second) == "stall:job-1:%s" % iso(NOW - 40 * 60)
    grown = dict((task, record_log_size(history, NOW + 60, 9999)) for task, history in logs.items())
    for minute in range(2, 40):
        grown = dict((task, record_log_size(history, NOW + minute * 60, 9999)) for task, history in grown.items())
        progress = judge_progress(settings, document(), NOW + minute * 60, logs=grown)
        assert progress["stalled"] is (minute >= 31), minute
        assert stall_identity("job-1", progress) == ("stall:job-1:%s" % iso(NOW + 60) if minute >= 31 else None)
    assert stall_identity("job-1", None) is None


def test_event_times_are_read_in_their_zone_or_not_at_all():
    assert event_seconds("2027-01-15T16:00:00+08:00") == NOW
    assert event_seconds("2027-01-15T08:00:00Z") == NOW
    assert event_seconds("2027-01-15T08:00:00.250+0000") == NOW + 0.25
    assert event_seconds(int(NOW * 1000)) == NOW
    assert event_seconds(str(int(NOW * 1000))) == NOW
    for unreadable in ("2027-01-15T08:00:00", "yesterday", True, None, {}, -5):
        assert event_seconds(unreadable) is None
