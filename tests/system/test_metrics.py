# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 48: a gate on what a job produced, against the model in production - in the user's shape.

``ansible-playbook`` against the emulator, the module both ways (in the controller's process and as a module through
AnsiballZ: ``modelarts_training_in_process``), and the lookup: the three sources as the API gives them, the bounds
and the baseline, every fail-closed case, the options checked before any request, and a catastrophic regex that cannot
hold a task past its deadline or its ``timeout:``.
"""

import json
import uuid

import pytest

from conftest import emulator_connection
from plays import ACC, epochs, new_id, play, info, save, run

WAYS = pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])


def requests_since(emulator, seq, fragment=""):
    return [entry for entry in emulator.requests(since=seq) if fragment in entry["path"]]


def last_seq(emulator):
    """A mark: the requests sent after it, none sent before (also none an earlier test still had in flight)."""
    return emulator.mark()


# -- the gate, champion against challengers ------------------------------------------------------------


def champion_and_challengers(emulator):
    stage = "production-%s" % uuid.uuid4().hex[:8]
    prod, better, worse, running = new_id(), new_id(), new_id(), new_id()
    emulator.add_jobs(
        [
            {"id": prod, "name": "resnet-prod", "phase": "Completed", "created_ago": "2d", "tags": {"stage": stage}, "metric_lines": epochs(0.8, 0.88)},
            {"id": better, "name": "resnet-better", "phase": "Completed", "metric_lines": epochs(0.7, 0.91)},
            {"id": worse, "name": "resnet-worse", "phase": "Completed", "metric_lines": epochs(0.9, 0.85)},
            {"id": running, "name": "resnet-running", "phase": "Running", "metric_lines": epochs(0.99)},
        ]
    )
    return stage, prod, better, worse, running


@WAYS
def test_a_better_model_opens_the_gate_and_a_worse_one_fails_it_naming_each_broken_bound(emulator, run_playbook, tmp_path, in_process):
    stage, prod, better, worse, running = champion_and_challengers(emulator)
    metrics = [{"name": "val_accuracy", "regex": ACC, "min": 0.86, "min_improvement": 0.01}, {"name": "best", "regex": ACC, "pick": "max"}]
    baseline = {"tags": {"stage": stage}}
    tasks = [
        info("better", "better", training_job_id=better, wait=True, metrics=metrics, baseline=baseline),
        info("worse", "worse", training_job_ids=[better, worse], wait=True, metrics=metrics, baseline=baseline),
        info("report only", "report", training_job_ids=[worse, running], metrics=metrics, baseline=baseline),
        save(tmp_path, "better", "worse", "report"),
    ]
    seq = last_seq(emulator)
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks), in_process)
    fit = results["better"]
    assert not fit["failed"] and fit["training_job"]["metrics_ok"] is True
    assert fit["training_job"]["metrics"]["val_accuracy"] == {
        "value": 0.91,
        "source": "log",
        "ok": True,
        "problems": [],
        "baseline_value": 0.88,
        "improvement": 0.03,
    }
    assert fit["baseline_job"]["id"] == prod and fit["baseline_job"]["metrics"]["val_accuracy"]["value"] == 0.88
    unfit = results["worse"]
    assert unfit["failed"]
    who = "training job %s (resnet-worse)" % worse
    assert unfit["job_messages"] == [
        "%s: val_accuracy is 0.85, below min 0.86 (the baseline's is 0.88)" % who,
        "%s: val_accuracy is 0.85, improving on the baseline's 0.88 by -0.03 (-3.409%%), less than min_improvement 0.01 (goal max)" % who,
    ]
    assert unfit["msg"].startswith("1 Completed training job did not meet its metric bounds (baseline training job %s (resnet-prod)): %s" % (prod, who))
    by_id = dict((item["id"], item) for item in unfit["training_jobs"])
    assert by_id[better]["metrics_ok"] is True and by_id[worse]["metrics"]["best"]["value"] == 0.9
    # Without wait the items only report; a job that is not Completed is never read.
    report = results["report"]
    assert not report["failed"] and [item["metrics_ok"] for item in report["training_jobs"]] == [False, None]
    assert report["training_jobs"][1]["metrics"] is None
    assert requests_since(emulator, seq, running + "/logs") == []
    # Each job's log once per call: the metrics of one task share one scan.
    assert len(requests_since(emulator, seq, worse + "/logs")) == 2


# -- the three sources --------------------------------------------------------------------------------------

V1_METRICS = '{"total_metric": {"total_metric_values": {"accuracy": 0.93, "recall": 0.91}}}'
SERIES = [
    {"name_en": "train_loss", "group": "training", "data": [[1, 2.0], [2, 1.1], [3, 0.7]]},
    {"name_en": "val_accuracy", "group": "validation", "data": [0.6, 0.8, 0.75]},
    {"name_en": "eval_loss", "group": "validation", "data": {"step": [1, 2], "value": [1.3, 0.9]}},
]


@WAYS
def test_each_source_is_read_the_way_the_api_gives_it(emulator, run_playbook, tmp_path, in_process):
    v1_job, ft_job, log_job = 48000 + uuid.uuid4().int % 1000, new_id(), new_id()
    emulator.add_jobs(
        [
            {"name": "legacy-metrics", "api": "v1", "job_id": v1_job, "version_id": 1, "phase": "Completed", "model_metric_list": V1_METRICS},
            {"id": ft_job, "name": "finetune", "phase": "Completed", "ft_metrics": SERIES},
            # 3,000 training lines, a metric line every 300: the 1,200 newest lines hold the last four (0.87-0.90).
            {"id": log_job, "name": "long-log", "phase": "Completed", "log": {"lines": 3000}, "metric_lines": epochs(*[0.81 + 0.01 * n for n in range(10)])},
        ]
    )
    tasks = [
        info("v1", "v1", job_id=v1_job, version_id=1, wait=True, metrics=[{"name": "accuracy", "min": 0.9}, {"name": "recall"}]),
        info(
            "ft",
            "ft",
            training_job_id=ft_job,
            wait=True,
            metrics=[
                {"name": "train_loss", "goal": "min", "max": 0.8},
                {"name": "val_accuracy", "pick": "max", "min": 0.8},
                {"name": "eval_loss", "source": "ft_metrics", "group": "validation", "goal": "min"},
            ],
        ),
        info(
            "log",
            "log",
            training_job_id=log_job,
            metrics=[{"name": "worst_recent", "regex": ACC, "pick": "min", "lines": 1200}, {"name": "last", "regex": ACC}],
        ),
        save(tmp_path, "v1", "ft", "log"),
    ]
    seq = last_seq(emulator)
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks), in_process)
    v1 = results["v1"]["training_job"]["metrics"]
    assert (v1["accuracy"]["value"], v1["accuracy"]["source"], v1["accuracy"]["ok"], v1["recall"]["value"]) == (0.93, "v1", True, 0.91)
    ft = results["ft"]["training_job"]["metrics"]
    assert [ft[name]["value"] for name in ("train_loss", "val_accuracy", "eval_loss")] == [0.7, 0.8, 0.9]
    assert results["ft"]["training_job"]["metrics_ok"] is True and ft["train_loss"]["source"] == "ft_metrics"
    log = results["log"]["training_job"]["metrics"]
    assert (log["worst_recent"]["value"], log["last"]["value"]) == (pytest.approx(0.87), pytest.approx(0.9))
    # One ft-metrics call; the log paged newest first, 500 lines a call, by base_line.
    assert len(requests_since(emulator, seq, ft_job + "/ft-metrics")) == 1
    pages = requests_since(emulator, seq, log_job + "/logs/worker-0")
    assert [entry["query"] for entry in pages][0].startswith("lines=500&order=desc") and len(pages) == 3
    assert "base_line=" in pages[1]["query"] and "lines=200&" in pages[2]["query"]


# -- fail closed --------------------------------------------------------------------------------------------

FAIL_CLOSED = [
    # (case, job spec, metric, the problem's words)
    (
        "no match",
        {"metric_lines": ["nothing here"]},
        {"regex": ACC, "lines": 50},
        "no line matched regex 'val_accuracy=([0-9.]+)' in the 50 newest lines scanned",
    ),
    ("no match within lines", {"metric_lines": epochs(0.9), "log": {"append": ["later"] * 30}}, {"regex": ACC, "lines": 20}, "in the 20 newest lines"),
    ("not a number", {"metric_lines": ["val_accuracy=1.2.3"]}, {"regex": ACC}, "captured '1.2.3' is not a number"),
    ("nan in a log", {"metric_lines": ["val_accuracy=nan"]}, {"regex": r"val_accuracy=(\S+)"}, "captured 'nan' is NaN or infinite"),
    ("nan in a series", {"ft_metrics": [{"name_en": "m", "data": [0.5, float("nan")]}]}, {}, "point 1 of 2 is NaN or infinite"),
    ("no such series", {"ft_metrics": [{"name_en": "other", "data": [1]}]}, {}, "ft-metrics: no series m (the job has other)"),
    ("ft-metrics refused", {"ft_metrics": {"metrics": [{"name_en": "m", "data": [1]}], "fault": "forbidden"}}, {}, "ft-metrics: HTTP 403 ModelArts.2771"),
    (
        "log refused",
        {"metric_lines": epochs(0.9), "log": {"fault": "forbidden"}},
        {"regex": ACC},
        "(the credentials need the IAM permission modelarts:trainJob:getLogs)",
    ),
    ("log not ready", {"log": {"fault": "not_ready"}}, {"regex": ACC}, "the log is not ready yet"),
    ("a series of another shape", {"ft_metrics": [{"name_en": "m", "data": [{"step": 1, "value": 0.9}, 0.8]}]}, {}, "data mixes shapes: number/object"),
]


@WAYS
def test_a_bounded_metric_with_no_value_fails_the_gate_closed_naming_the_source_and_why(emulator, run_playbook, tmp_path, in_process):
    ids = []
    for case, spec, _metric, _words in FAIL_CLOSED:
        ids.append(new_id())
        emulator.add_job(id=ids[-1], name=case.replace(" ", "-"), phase="Completed", **spec)
    tasks = [
        info(case, "r%d" % index, training_job_id=ids[index], wait=True, metrics=[dict(metric, name="m", min=0.1)])
        for index, (case, _spec, metric, _w) in enumerate(FAIL_CLOSED)
    ]
    tasks.append(save(tmp_path, *["r%d" % index for index in range(len(FAIL_CLOSED))]))
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks), in_process)
    for index, (case, _spec, _metric, words) in enumerate(FAIL_CLOSED):
        result = results["r%d" % index]
        entry = result["training_job"]["metrics"]["m"]
        assert result["failed"] and result["training_job"]["metrics_ok"] is False and entry["value"] is None and entry["ok"] is False, case
        assert any(words in problem for problem in entry["problems"]), (case, entry["problems"])
        assert "m has no value, so its bounds fail: " in result["msg"] and words in result["msg"], (case, result["msg"])


@WAYS
def test_a_missing_baseline_fails_closed_unless_it_is_not_required(emulator, run_playbook, tmp_path, in_process):
    candidate, mute = new_id(), new_id()
    name = "no-such-prod-%s" % uuid.uuid4().hex[:8]
    emulator.add_jobs(
        [
            {"id": candidate, "name": "candidate", "phase": "Completed", "metric_lines": epochs(0.9)},
            {"id": mute, "name": name + "-mute", "phase": "Completed", "metric_lines": ["no metric"]},
        ]
    )
    metrics = [{"name": "val_accuracy", "regex": ACC, "min_improvement": 0}]
    tasks = [
        info("required", "required", training_job_id=candidate, wait=True, metrics=metrics, baseline={"name": name}),
        info("first deployment", "first", training_job_id=candidate, wait=True, metrics=metrics, baseline={"name": name, "required": False}),
        info("baseline without the value", "mute", training_job_id=candidate, wait=True, metrics=metrics, baseline={"training_job_id": mute}),
        save(tmp_path, "required", "first", "mute"),
    ]
    results, output = run(run_playbook, tmp_path, play(emulator, tasks), in_process)
    assert results["required"]["failed"] and results["required"]["baseline_job"] is None
    assert "there is no baseline to compare with for min_improvement: no Completed training job named '%s' was found" % name in results["required"]["msg"]
    first = results["first"]
    assert not first["failed"] and first["training_job"]["metrics_ok"] is None and first["training_job"]["metrics"]["val_accuracy"]["value"] == 0.9
    assert "the improvement bounds were skipped (baseline.required is false)" in " ".join(first["warnings"])
    assert "[WARNING]: baseline: no Completed training job named '%s' was found" % name in output
    assert (
        results["mute"]["failed"]
        and "but the baseline's value could not be read for min_improvement: log of task worker-0: no line matched" in results["mute"]["msg"]
    )


# -- the options, before any request ---------------------------------------------------------------------------

REFUSED = [
    ({"metrics": [{"min": 0.9}]}, "missing required arguments: name found in metrics"),
    ({"metrics": [{"name": "acc", "source": "log"}]}, "metrics[0] (acc): source log needs regex"),
    ({"metrics": [{"name": "acc", "regex": "acc=[0-9.]+"}]}, "metrics[0] (acc): regex 'acc=[0-9.]+' has 0 groups: it needs exactly one"),
    ({"metrics": [{"name": "acc", "regex": "acc=(\\d+)(\\d)"}]}, "has 2 groups: it needs exactly one"),
    ({"metrics": [{"name": "acc", "regex": "acc=([0-9.]+"}]}, "metrics[0] (acc): regex 'acc=([0-9.]+' does not compile: missing ), unterminated subpattern"),
    (
        {"metrics": [{"name": "acc", "regx": "acc=(.*)"}]},
        "Unsupported parameters for (modelarts.training.modelarts_training_job_info) module: metrics.regx (did you mean regex?)",
    ),
    ({"metrics": [{"name": "acc", "min": "high"}]}, "argument 'min' is of type str found in 'metrics'. and we were unable to convert to float"),
    ({"metrics": [{"name": "acc", "min": float("nan")}]}, "metrics[0] (acc): min must be a finite number, got nan"),
    ({"metrics": [{"name": "acc", "min": 0.9, "max": 0.5}]}, "min 0.9 is above max 0.5"),
    ({"metrics": [{"name": "acc", "min_improvement": 0}]}, "min_improvement compares with a baseline job: set baseline"),
    ({"metrics": [{"name": "acc"}], "baseline": {"nmae": "prod"}}, "module: baseline.nmae (did you mean name?)"),
    ({"metrics": [{"name": "acc"}], "baseline": {"required": False}}, "baseline selects no job: give baseline.training_job_id"),
    ({"metrics": [{"name": "acc"}], "baseline": {"tags": {"k": {"a": 1}}}}, "baseline.tags.k: a tag value must be a string"),
    ({"metrics": [{"name": "acc"}], "baseline": {"workspace_id": "0"}}, "baseline.workspace_id refines a search"),
]


@WAYS
def test_metrics_and_baseline_are_checked_before_any_request(emulator, run_playbook, tmp_path, in_process):
    job = new_id()
    tasks = [info("refused %d" % index, "r%d" % index, training_job_id=job, **options) for index, (options, _words) in enumerate(REFUSED)]
    tasks.append(save(tmp_path, *["r%d" % index for index in range(len(REFUSED))]))
    seq = last_seq(emulator)
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks), in_process)
    for index, (options, words) in enumerate(REFUSED):
        result = results["r%d" % index]
        assert result["failed"] and words in result["msg"], (options, result["msg"])
    assert requests_since(emulator, seq) == [], "an option the service cannot answer sends no request"


# -- the lookup -----------------------------------------------------------------------------------------------


def test_the_lookup_reads_metrics_gives_a_field_and_fails_an_unfit_wait(emulator, run_playbook, tmp_path):
    stage, prod, better, worse, _running = champion_and_challengers(emulator)
    connection = emulator_connection(emulator)
    metrics = [{"name": "val_accuracy", "regex": ACC, "min_improvement": 0}]
    baseline = {"tags": {"stage": stage}}
    tasks = [
        {
            "name": "a value by field",
            "ansible.builtin.set_fact": {
                "value": "{{ lookup('modelarts.training.training_job', better, metrics=plain, field='metrics.val_accuracy.value', **conn) }}"
            },
        },
        {
            "name": "the verdict against the baseline",
            "ansible.builtin.set_fact": {
                "verdict": "{{ query('modelarts.training.training_job', better, worse, metrics=metrics, baseline=baseline, field='metrics_ok', **conn) }}"
            },
        },
        {
            "name": "an unfit model with wait",
            "ansible.builtin.set_fact": {
                "never": "{{ lookup('modelarts.training.training_job', worse, wait=true, metrics=metrics, baseline=baseline, **conn) }}"
            },
            "register": "unfit",
            "ignore_errors": True,
        },
        {
            "name": "a keyword the lookup checks before any request",
            "ansible.builtin.set_fact": {"never": "{{ lookup('modelarts.training.training_job', worse, metrics=[{'name': 'a', 'regx': 'a=(.*)'}], **conn) }}"},
            "register": "refused",
            "ignore_errors": True,
        },
        save(tmp_path, "value", "verdict", "unfit", "refused"),
    ]
    plays = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "vars": {
                "conn": connection,
                "plain": [{"name": "val_accuracy", "regex": ACC}],
                "metrics": metrics,
                "baseline": baseline,
                "better": better,
                "worse": worse,
            },
            "tasks": tasks,
        }
    ]
    results, _output = run(run_playbook, tmp_path, plays)
    assert float(results["value"]) == 0.91
    assert results["verdict"] == [True, False]
    assert (
        results["unfit"]["failed"]
        and "training job %s (resnet-worse): val_accuracy is 0.85, improving on the baseline's 0.88 by -0.03" % worse in results["unfit"]["msg"]
    )
    assert "(baseline training job %s (resnet-prod))" % prod in results["unfit"]["msg"]
    assert results["refused"]["failed"] and "training_job lookup: metrics[0]: unknown key regx (did you mean regex?)" in results["refused"]["msg"]


# -- no pattern or log holds a task ------------------------------------------------------------------------------

# On 60 "a" and a "b" Python's re backtracks for longer than the universe has existed.
CATASTROPHIC = {"name": "m", "regex": "(a+)+$", "min": 0}
PATHOLOGICAL_LOG = {"metric_lines": ["a" * 60 + "b"] * 3}
# The matcher's command line (matching.CHILD), found in this playbook's process group only: spelt so that the shell's
# own command line does not match it.
NO_MATCHER_LEFT = "pgrep -g $(ps -o pgid= -p $$ | tr -d ' ') -f 'patterns = .re[.]compile' || true"


@WAYS
def test_a_catastrophic_regex_ends_at_the_calls_deadline_and_fails_closed(emulator, run_playbook, tmp_path, in_process):
    job = new_id()
    emulator.add_job(id=job, name="pathological", phase="Completed", **PATHOLOGICAL_LOG)
    tasks = [
        info("catastrophic", "result", training_job_id=job, wait=True, wait_timeout=2, metrics=[CATASTROPHIC]),
        {"name": "no matcher left", "ansible.builtin.shell": NO_MATCHER_LEFT, "register": "left", "changed_when": False},
        save(tmp_path, "result", "left"),
    ]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks, request_timeout=3), in_process)
    result = results["result"]
    assert result["failed"] and result["training_job"]["metrics_ok"] is False
    assert result["training_job"]["metrics"]["m"]["problems"][0] == "log of task worker-0: matching the log's lines did not end by the call's deadline"
    assert results["left"]["stdout"] == ""


def test_a_catastrophic_regex_cannot_hold_a_task_past_its_timeout_in_process(emulator, run_playbook, tmp_path):
    job = new_id()
    emulator.add_job(id=job, name="pathological", phase="Completed", **PATHOLOGICAL_LOG)
    task = info("catastrophic", "result", training_job_id=job, wait=True, wait_timeout=3600, metrics=[CATASTROPHIC])
    task["timeout"] = 5
    tasks = [
        task,
        {"name": "no matcher left", "ansible.builtin.shell": NO_MATCHER_LEFT, "register": "left", "changed_when": False},
        save(tmp_path, "result", "left"),
    ]
    results, output = run(run_playbook, tmp_path, play(emulator, tasks), True)
    result = results["result"]
    assert result["failed"] and ("Timed out after 5 second" in result["msg"] or "time frame (5)" in result["msg"]), result
    assert "training_jobs" not in result
    assert results["left"]["stdout"] == "", "the task's timeout ended the matcher with the task"
    assert "Traceback" not in output


def test_a_catastrophic_regex_as_a_module_ends_with_the_task_timeout_and_the_module_at_its_deadline(emulator, run_playbook, tmp_path):
    """As a module, a task's timeout ends the task (ansible-core leaves the module running): the module and its matcher
    still end by the call's deadline, which the next task waits for."""
    job = new_id()
    emulator.add_job(id=job, name="pathological", phase="Completed", **PATHOLOGICAL_LOG)
    task = info("catastrophic", "result", training_job_id=job, wait=True, wait_timeout=5, metrics=[CATASTROPHIC])
    task["timeout"] = 2
    wait_gone = {
        "name": "the matcher ends by the module's deadline",
        "ansible.builtin.shell": NO_MATCHER_LEFT,
        "register": "left",
        "until": "left.stdout == ''",
        "retries": 120,
        "delay": 1,
        "changed_when": False,
    }
    tasks = [task, wait_gone, save(tmp_path, "result", "left")]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks, request_timeout=3), False)
    assert results["result"]["failed"] and ("Timed out after 2 second" in results["result"]["msg"] or "time frame (2)" in results["result"]["msg"])
    assert results["left"]["stdout"] == ""


# -- log text is data ---------------------------------------------------------------------------------------


@WAYS
def test_log_text_is_never_a_template_and_a_quoted_line_is_masked(emulator, run_playbook, tmp_path, in_process):
    job = new_id()
    marker = tmp_path / "templated"
    line = "val_accuracy={{ lookup('ansible.builtin.pipe', 'touch %s') }}%s" % (marker, emulator.sk)
    emulator.add_job(id=job, name="hostile-log", phase="Completed", metric_lines=[line])
    tasks = [
        info("hostile", "result", training_job_id=job, wait=True, metrics=[{"name": "m", "regex": r"val_accuracy=(.*)", "min": 0}]),
        {"name": "show the problem", "ansible.builtin.debug": {"msg": "{{ result.training_job.metrics.m.problems }}"}},
        save(tmp_path, "result"),
    ]
    # The credentials from the environment: ansible-core quotes a failed task's playbook lines, module_defaults included.
    plays = [{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]
    results, output = run(run_playbook, tmp_path, plays, in_process, env=emulator.env("aksk"))
    problem = results["result"]["training_job"]["metrics"]["m"]["problems"][0]
    assert "captured '{ { lookup(" in problem and "is not a number" in problem
    assert not marker.exists(), "a log line was rendered as a template"
    assert emulator.sk not in output and emulator.sk not in json.dumps(results)


# -- the role -----------------------------------------------------------------------------------------------


def test_the_role_opens_only_on_a_fit_model_and_writes_a_record_an_audit_can_check(emulator, run_playbook, tmp_path):
    import hashlib  # pylint: disable=import-outside-toplevel
    import os  # pylint: disable=import-outside-toplevel
    import stat  # pylint: disable=import-outside-toplevel

    stage, prod, better, worse, _running = champion_and_challengers(emulator)
    connection = emulator_connection(emulator)

    def gate(case, job):
        return {
            "name": "gate on %s" % case,
            "block": [
                {
                    "ansible.builtin.include_role": {"name": "modelarts.training.training_job_gate"},
                    "vars": {
                        "training_job_gate_ids": [job],
                        "training_job_gate_timeout": 60,
                        "training_job_gate_connection": connection,
                        "training_job_gate_metrics": [{"name": "val_accuracy", "regex": ACC, "min": 0.8, "min_improvement": 0.0}],
                        "training_job_gate_baseline": {"tags": {"stage": stage}},
                        "training_job_gate_record": str(tmp_path / ("record-%s.json" % case)),
                    },
                },
                {"ansible.builtin.set_fact": {case: {"opened": True}}},
            ],
            "rescue": [
                {"ansible.builtin.set_fact": {case: {"opened": False, "msg": "{{ ansible_failed_result.msg }}", "lines": "{{ training_job_gate_messages }}"}}}
            ],
        }

    verify = {
        "name": "a later step checks the record",
        "ansible.builtin.assert": {
            "that": ["record.sha256 == record | modelarts.training.record_digest", "record.decision == 'closed'"],
        },
        "vars": {"record": "{{ lookup('ansible.builtin.file', '%s') | from_json }}" % (tmp_path / "record-worse.json")},
    }
    tasks = [gate("worse", worse), gate("better", better), verify, save(tmp_path, "worse", "better")]
    results, output = run(run_playbook, tmp_path, [{"hosts": "localhost", "gather_facts": False, "tasks": tasks}])
    assert emulator.sk not in output
    closed = results["worse"]
    assert not closed["opened"] and results["better"]["opened"]
    assert closed["msg"].splitlines() == [
        # The closed line names the baseline the candidate was measured against (issue 60, item 4).
        "training_job_gate: closed: 1 of 1 training jobs Completed but not fit: a bound of training_job_gate_metrics failed; baseline %s (resnet-prod)" % prod,
        "training job %s (resnet-worse): val_accuracy is 0.85, improving on the baseline's 0.88 by -0.03 (-3.409%%), less than min_improvement 0 (goal max)"
        % worse,
    ]
    assert closed["lines"] == closed["msg"].splitlines()[1:]
    for case, decision in (("worse", "closed"), ("better", "open")):
        path = tmp_path / ("record-%s.json" % case)
        assert stat.S_IMODE(os.stat(str(path)).st_mode) == 0o600
        record = json.loads(path.read_text())
        # The digest, computed as docs/role.md says, without the collection.
        canonical = json.dumps(dict((key, value) for key, value in record.items() if key != "sha256"), sort_keys=True, separators=(",", ":"))
        assert record["sha256"] == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        assert record["decision"] == decision and record["collection"] == "modelarts.training"
        assert record["selection"]["ids"] == [worse if case == "worse" else better] and record["selection"]["baseline"] == {"tags": {"stage": stage}}
        assert record["baseline_job"]["id"] == prod and record["baseline_job"]["metrics"]["val_accuracy"]["value"] == 0.88
        assert record["jobs"][0]["phase"] == "Completed" and record["jobs"][0]["phase_history"]
        assert record["bounds"] == [
            {"name": "val_accuracy", "source": "auto", "pick": "last", "goal": "max", "regex": ACC, "lines": 1000, "min": 0.8, "min_improvement": 0.0}
        ]
        assert record["decided_at"].endswith("Z") and record["messages"]
        assert emulator.sk not in path.read_text()
    worse_record = json.loads((tmp_path / "record-worse.json").read_text())
    assert worse_record["jobs"][0]["metrics_ok"] is False and worse_record["messages"] == closed["msg"].splitlines()
    # Edited, it no longer checks.
    worse_record["decision"] = "open"
    canonical = json.dumps(dict((key, value) for key, value in worse_record.items() if key != "sha256"), sort_keys=True, separators=(",", ":"))
    assert worse_record["sha256"] != hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_a_gate_refused_before_any_request_records_its_refusal(emulator, run_playbook, tmp_path):
    job = new_id()
    emulator.add_job(id=job, name="candidate", phase="Completed", metric_lines=epochs(0.9))
    tasks = [
        {
            "name": "gate",
            "block": [
                {
                    "ansible.builtin.include_role": {"name": "modelarts.training.training_job_gate"},
                    "vars": {
                        "training_job_gate_ids": [job],
                        "training_job_gate_connection": emulator_connection(emulator, regoin="cn-north-4"),
                        "training_job_gate_metrics": [{"name": "val_accuracy", "regex": ACC, "min": 0.8}],
                        "training_job_gate_record": str(tmp_path / "refused.json"),
                    },
                }
            ],
            "rescue": [{"ansible.builtin.set_fact": {"refused": "{{ ansible_failed_result.msg }}"}}],
        },
        save(tmp_path, "refused"),
    ]
    seq = last_seq(emulator)
    results, _output = run(run_playbook, tmp_path, [{"hosts": "localhost", "gather_facts": False, "tasks": tasks}])
    assert "training_job_gate_connection: unknown option regoin (did you mean region?)" in results["refused"]
    record = json.loads((tmp_path / "refused.json").read_text())
    assert record["decision"] == "closed" and record["jobs"] == [] and record["messages"] == [results["refused"]]
    assert requests_since(emulator, seq) == []
