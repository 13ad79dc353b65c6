# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 56, the baseline and the verdict (items 1, 2, 12, 15, 16, 19) - in the user's shape.

``ansible-playbook`` against the emulator (the module both ways, the role), and the event source's ``main()``: a
``baseline.required: false`` skips the improvement bounds only when the selection answered with no job at all; a job
is never compared with itself (another document of it, a job created after it, the job the call selects by name); the
baseline search looks in the call's workspace; a relative bound against 0 and a value a hair under its bound fail closed
saying so.
"""

import asyncio
import json
import uuid

import pytest

from conftest import emulator_connection
from plays import ACC, epochs, info, new_id, play, rescued_gate, run, save
from eda_helpers import connection_args, load_source, source_events

WAYS = pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
# Few retries: a 503 that every retry meets fails the request sooner (the verdict is the same with the default).
FAST = {"backoff_retries": 1, "backoff_delay": 0.1, "backoff_max_delay": 0.2}


def production_and_candidate(emulator, candidate_value=0.85, production_value=0.88):
    """A production job tagged stage=<unique> (0.88 by default) and a worse candidate (0.85), created after it."""
    stage = "production-%s" % uuid.uuid4().hex[:8]
    prod, candidate = new_id(), new_id()
    emulator.add_jobs(
        [
            {"id": prod, "name": "prod", "phase": "Completed", "created_ago": "2d", "tags": {"stage": stage}, "metric_lines": epochs(production_value)},
            {"id": candidate, "name": "candidate", "phase": "Completed", "created_ago": "1h", "metric_lines": epochs(candidate_value)},
        ]
    )
    return stage, prod, candidate


IMPROVE = [{"name": "val_accuracy", "regex": ACC, "min_improvement": 0}]
# With a bound the candidate meets, a skipped improvement bound opened the gate (the role's record "open", the event's
# metrics_ok true): what the review saw.
GATED = [{"name": "val_accuracy", "regex": ACC, "min": 0.8, "min_improvement": 0}]


# -- item 1: required: false skips only when nothing matched -------------------------------------------------------


@WAYS
def test_a_failed_baseline_search_or_get_fails_closed_even_when_the_baseline_is_not_required(modelarts_emulator, run_playbook, tmp_path, in_process):
    emulator = modelarts_emulator
    stage, prod, candidate = production_and_candidate(emulator)
    running = new_id()
    emulator.add_job(id=running, name="prod-running", phase="Running", created_ago="3h", metric_lines=epochs(0.5))
    emulator.add_fault(type="error", status=503, target="search", count="always")
    emulator.add_fault(type="error", status=503, job=prod, count="always")
    tasks = [
        info("search 503", "search", training_job_id=candidate, wait=True, metrics=IMPROVE, baseline={"tags": {"stage": stage}, "required": False}),
        info("get 503", "get", training_job_id=candidate, wait=True, metrics=IMPROVE, baseline={"training_job_id": prod, "required": False}),
        info("not Completed", "running", training_job_id=candidate, wait=True, metrics=IMPROVE, baseline={"training_job_id": running, "required": False}),
        save(tmp_path, "search", "get", "running"),
    ]
    results, output = run(run_playbook, tmp_path, play(emulator, tasks, **FAST), in_process)
    for case in ("search", "get", "running"):
        result = results[case]
        assert result["failed"] and result["training_job"]["metrics_ok"] is False, (case, result.get("msg"))
        assert "there is no baseline to compare with for min_improvement" in result["msg"], (case, result["msg"])
        assert "were skipped" not in " ".join(result.get("warnings", [])), case
    assert "the search for the newest Completed training job tagged stage=%s failed: " % stage in results["search"]["msg"]
    assert "HTTP 503" in results["search"]["msg"]
    # The search failed: the 31-day window of a tag search is not the cause, and is not blamed.
    assert "31 days" not in results["search"]["msg"]
    assert "training job %s could not be read: " % prod in results["get"]["msg"]
    assert "training job %s (prod-running) is Running, not Completed" % running in results["running"]["msg"]
    assert "the improvement bounds were skipped" not in output


def test_the_role_closes_when_the_baseline_search_fails_with_required_false(modelarts_emulator, run_playbook, tmp_path):
    emulator = modelarts_emulator
    stage, _prod, candidate = production_and_candidate(emulator)
    emulator.add_fault(type="error", status=503, target="search", count="always")
    record = tmp_path / "record.json"
    role_vars = {
        "training_job_gate_ids": [candidate],
        "training_job_gate_timeout": 60,
        "training_job_gate_connection": emulator_connection(emulator, **FAST),
        "training_job_gate_metrics": GATED,
        "training_job_gate_baseline": {"tags": {"stage": stage}, "required": False},
        "training_job_gate_record": str(record),
    }
    tasks = [rescued_gate("gate", role_vars), save(tmp_path, "gate")]
    results, _output = run(run_playbook, tmp_path, [{"hosts": "localhost", "gather_facts": False, "tasks": tasks}])
    assert results["gate"]["opened"] is False, results
    assert "there is no baseline to compare with for min_improvement: the search for the newest Completed training job" in results["gate"]["msg"]
    written = json.loads(record.read_text())
    assert written["decision"] == "closed" and written["jobs"][0]["metrics_ok"] is False


def test_the_event_source_says_metrics_ok_false_when_the_baselines_get_fails_with_required_false(modelarts_emulator, collection_root):
    emulator = modelarts_emulator
    _stage, prod, candidate = production_and_candidate(emulator)
    emulator.add_fault(type="error", status=503, job=prod, count="always")
    src = load_source(collection_root)
    args = dict(connection_args(emulator), training_job_ids=[candidate], stop_when_done=True, interval=0.3, metrics=GATED)
    args.update(baseline={"training_job_id": prod, "required": False}, **FAST)
    events = asyncio.run(asyncio.wait_for(source_events(src, args, lambda found: any(e["modelarts"]["phase"] == "Completed" for e in found)), 300))
    item = [e for e in events if e["modelarts"]["phase"] == "Completed"][0]["modelarts"]["training_job"]
    assert item["metrics_ok"] is False, item["metrics"]
    assert "could not be read" in " ".join(item["metrics"]["val_accuracy"]["problems"])


@WAYS
def test_a_first_deployment_still_skips_when_the_search_matched_no_job(emulator, run_playbook, tmp_path, in_process):
    _stage, _prod, candidate = production_and_candidate(emulator)
    nothing = "never-deployed-%s" % uuid.uuid4().hex[:8]
    tasks = [
        info("first", "first", training_job_id=candidate, wait=True, metrics=IMPROVE, baseline={"tags": {"stage": nothing}, "required": False}),
        save(tmp_path, "first"),
    ]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks, **FAST), in_process)
    first = results["first"]
    assert not first["failed"] and first["training_job"]["metrics_ok"] is None and first["baseline_job"] is None
    assert "the improvement bounds were skipped (baseline.required is false)" in " ".join(first["warnings"])


# -- item 2: never compared with itself, nor with a job created after it ------------------------------------------------


@WAYS
def test_a_v1_candidate_is_never_compared_with_its_own_v2_document(emulator, run_playbook, tmp_path, in_process):
    name = "twin-%s" % uuid.uuid4().hex[:8]
    v1_job = 56000 + uuid.uuid4().int % 1000
    prod, twin = new_id(), new_id()
    emulator.add_jobs(
        [
            # Production: the same name, two days older, far better.
            {"id": prod, "name": name, "phase": "Completed", "created_ago": "2d", "ft_metrics": [{"name_en": "accuracy", "data": [0.95]}]},
            # The candidate: a v1 version whose v2 document the search shows (the same job: one name, one creation time).
            {
                "id": twin,
                "name": name,
                "v1": {"job_id": v1_job, "version_id": 1},
                "phase": "Completed",
                "created_ago": "1h",
                "model_metric_list": '{"total_metric": {"total_metric_values": {"accuracy": 0.85}}}',
                "ft_metrics": [{"name_en": "accuracy", "data": [0.85]}],
            },
        ]
    )
    metrics = [{"name": "accuracy", "min_improvement": 0}]
    tasks = [info("v1", "v1", job_id=v1_job, version_id=1, wait=True, metrics=metrics, baseline={"name": name}), save(tmp_path, "v1")]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks, **FAST), in_process)
    result = results["v1"]
    assert result["baseline_job"]["id"] == prod, result["baseline_job"]
    assert result["failed"] and result["training_job"]["metrics"]["accuracy"]["baseline_value"] == 0.95
    assert "accuracy is 0.85, improving on the baseline's 0.95 by -0.1" in result["msg"]


@WAYS
def test_a_job_created_after_the_candidate_is_never_its_baseline(emulator, run_playbook, tmp_path, in_process):
    name = "nightly-%s" % uuid.uuid4().hex[:8]
    prod, candidate, later = new_id(), new_id(), new_id()
    emulator.add_jobs(
        [
            {"id": prod, "name": name, "phase": "Completed", "created_ago": "2d", "metric_lines": epochs(0.88)},
            {"id": candidate, "name": name, "phase": "Completed", "created_ago": "1d", "metric_lines": epochs(0.85)},
            {"id": later, "name": name, "phase": "Completed", "created_ago": "1h", "metric_lines": epochs(0.5)},
        ]
    )
    tasks = [info("older run", "older", training_job_id=candidate, wait=True, metrics=IMPROVE, baseline={"name": name}), save(tmp_path, "older")]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks, **FAST), in_process)
    result = results["older"]
    assert result["baseline_job"]["id"] == prod and result["failed"]
    assert result["training_job"]["metrics"]["val_accuracy"]["improvement"] == -0.03


def test_several_candidates_each_get_the_newest_job_created_before_them(emulator, run_playbook, tmp_path):
    name = "nightly-%s" % uuid.uuid4().hex[:8]
    oldest, first, middle, second = new_id(), new_id(), new_id(), new_id()
    emulator.add_jobs(
        [
            {"id": oldest, "name": name, "phase": "Completed", "created_ago": "4d", "metric_lines": epochs(0.80)},
            {"id": first, "name": name, "phase": "Completed", "created_ago": "3d", "metric_lines": epochs(0.82)},
            {"id": middle, "name": name, "phase": "Completed", "created_ago": "2d", "metric_lines": epochs(0.90)},
            {"id": second, "name": name, "phase": "Completed", "created_ago": "1d", "metric_lines": epochs(0.91)},
        ]
    )
    tasks = [info("two", "two", training_job_ids=[first, second], wait=True, metrics=IMPROVE, baseline={"name": name}), save(tmp_path, "two")]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks, **FAST))
    by_id = dict((item["id"], item["metrics"]["val_accuracy"]) for item in results["two"]["training_jobs"])
    assert (by_id[first]["baseline_value"], by_id[second]["baseline_value"]) == (0.8, 0.9)
    assert not results["two"]["failed"] and results["two"]["baseline_job"]["id"] == middle


# -- item 12: the call's workspace -------------------------------------------------------------------------------


@WAYS
def test_the_baseline_search_looks_in_the_calls_workspace(emulator, run_playbook, tmp_path, in_process):
    workspace = uuid.uuid4().hex
    stage = "production-%s" % uuid.uuid4().hex[:8]
    prod, candidate = new_id(), new_id()
    emulator.add_jobs(
        [
            {
                "id": prod,
                "name": "prod",
                "workspace_id": workspace,
                "phase": "Completed",
                "created_ago": "2d",
                "tags": {"stage": stage},
                "metric_lines": epochs(0.88),
            },
            {"id": candidate, "name": "candidate", "workspace_id": workspace, "phase": "Completed", "created_ago": "1h", "metric_lines": epochs(0.91)},
        ]
    )
    tasks = [
        info("workspace", "ws", training_job_id=candidate, workspace_id=workspace, wait=True, metrics=IMPROVE, baseline={"tags": {"stage": stage}}),
        save(tmp_path, "ws"),
    ]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks, **FAST), in_process)
    result = results["ws"]
    assert not result["failed"], result["msg"]
    assert result["baseline_job"]["id"] == prod and result["training_job"]["metrics"]["val_accuracy"]["improvement"] == 0.03


# -- items 15 and 16: messages that tell the truth ----------------------------------------------------------------------


@WAYS
def test_a_relative_bound_against_a_baseline_of_zero_fails_closed_and_says_why(emulator, run_playbook, tmp_path, in_process):
    stage, _prod, candidate = production_and_candidate(emulator, candidate_value=0.0, production_value=0.0)
    metrics = [{"name": "val_accuracy", "regex": ACC, "min_relative_improvement": 0.1}]
    tasks = [info("zero", "zero", training_job_id=candidate, wait=True, metrics=metrics, baseline={"tags": {"stage": stage}}), save(tmp_path, "zero")]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks, **FAST), in_process)
    result = results["zero"]
    assert result["failed"] and result["training_job"]["metrics_ok"] is False
    assert "min_relative_improvement 0.1 cannot be computed against the baseline's value of 0" in result["msg"]


@WAYS
def test_a_value_a_hair_under_its_bound_prints_digits_enough_to_tell_them_apart(emulator, run_playbook, tmp_path, in_process):
    job = new_id()
    emulator.add_job(id=job, name="hair", phase="Completed", metric_lines=["val_accuracy=0.89999999999999"])
    metrics = [{"name": "val_accuracy", "regex": ACC, "min": 0.9}]
    tasks = [info("hair", "hair", training_job_id=job, wait=True, metrics=metrics), save(tmp_path, "hair")]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks, **FAST), in_process)
    assert results["hair"]["failed"]
    assert "val_accuracy is 0.89999999999999, below min 0.9" in results["hair"]["msg"], results["hair"]["msg"]


# -- item 19: the job a name selects, given as its own baseline -------------------------------------------------------------


@WAYS
def test_a_baseline_id_equal_to_the_job_a_name_selects_is_refused(emulator, run_playbook, tmp_path, in_process):
    name = "selected-%s" % uuid.uuid4().hex[:8]
    job = new_id()
    emulator.add_job(id=job, name=name, phase="Completed", created_ago="1h", metric_lines=epochs(0.85))
    tasks = [
        info("itself", "itself", name=name, latest=True, wait=True, metrics=IMPROVE, baseline={"training_job_id": job}),
        info("itself not required", "lax", name=name, latest=True, wait=True, metrics=IMPROVE, baseline={"training_job_id": job, "required": False}),
        save(tmp_path, "itself", "lax"),
    ]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks, **FAST), in_process)
    for case in ("itself", "lax"):
        result = results[case]
        assert result["failed"] and result["training_job"]["metrics_ok"] is False, (case, result.get("msg"))
        assert "%s is also a job this call selects: a job is never its own baseline" % job in result["msg"], (case, result["msg"])
