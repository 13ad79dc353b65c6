# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 57, item 3 (searches that cannot pick the wrong job) - in the user's shape, against the emulator.

A production job tagged ``stage=production`` 40 days ago is found (the service's tag search sees 31 days a request: the
search walks back its windows up to ``baseline.max_age_days``); one older than ``max_age_days`` is not - skipped with
``required: false``, closed with ``true``; a fault on one of the baseline's searches closes the gate even with
``required: false``; a search by the candidate's own name is warned about once, in the module, the lookup and the
event source.
"""

import asyncio
import json
import logging
import uuid

import pytest

from conftest import emulator_connection
from plays import ACC, epochs, info, new_id, play, rescued_gate, run, save
from eda_helpers import connection_args, load_source, source_events

WAYS = pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
FAST = {"backoff_retries": 1, "backoff_delay": 0.1, "backoff_max_delay": 0.2}
IMPROVE = [{"name": "val_accuracy", "regex": ACC, "min_improvement": 0}]
GATED = [{"name": "val_accuracy", "regex": ACC, "min": 0.8, "min_improvement": 0}]
OWN = "is the name of the job this call gates: the baseline is the run before it, refused or not, not the model in production"
LOGGER = "modelarts.training.training_job_phase"


def old_production(emulator, created_ago="40d", production_value=0.90, candidate_value=0.84):
    """A production job tagged stage=<unique> ``created_ago`` (0.90) and a worse candidate (0.84) created an hour ago."""
    stage = "production-%s" % uuid.uuid4().hex[:8]
    prod, candidate = new_id(), new_id()
    emulator.add_jobs(
        [
            {
                "id": prod,
                "name": "churn-prod",
                "phase": "Completed",
                "created_ago": created_ago,
                "tags": {"stage": stage},
                "metric_lines": epochs(production_value),
            },
            {"id": candidate, "name": "churn-nightly", "phase": "Completed", "created_ago": "1h", "metric_lines": epochs(candidate_value)},
        ]
    )
    return stage, prod, candidate


@WAYS
def test_a_40_day_old_tagged_production_job_is_found_and_a_worse_candidate_refused(emulator, run_playbook, tmp_path, in_process):
    # The newcomer: with required: false (a first deployment), a production model older than the service's 31-day
    # tag window vanished and 0.84 went out over 0.90.
    stage, prod, candidate = old_production(emulator)
    tasks = [
        info("gate", "gate", training_job_id=candidate, wait=True, metrics=IMPROVE, baseline={"tags": {"stage": stage}, "required": False}),
        save(tmp_path, "gate"),
    ]
    results, output = run(run_playbook, tmp_path, play(emulator, tasks, **FAST), in_process)
    gate = results["gate"]
    assert gate["failed"] and gate["training_job"]["metrics_ok"] is False, gate.get("msg")
    assert gate["baseline_job"]["id"] == prod
    assert gate["training_job"]["metrics"]["val_accuracy"]["baseline_value"] == 0.9
    assert "the improvement bounds were skipped" not in output


@WAYS
def test_a_job_older_than_max_age_days_is_not_found_skipped_when_not_required_closed_when_required(emulator, run_playbook, tmp_path, in_process):
    stage, prod, candidate = old_production(emulator)
    baseline = {"tags": {"stage": stage}, "max_age_days": 35}
    tasks = [
        info("reach", "reach", training_job_id=candidate, wait=True, metrics=IMPROVE, baseline=dict(baseline, max_age_days=45)),
        info("skipped", "skipped", training_job_id=candidate, wait=True, metrics=IMPROVE, baseline=dict(baseline, required=False)),
        info("closed", "closed", training_job_id=candidate, wait=True, metrics=IMPROVE, baseline=dict(baseline, required=True)),
        info("bad", "bad", training_job_id=candidate, wait=True, metrics=IMPROVE, baseline=dict(baseline, max_age_days=0)),
        save(tmp_path, "reach", "skipped", "closed", "bad"),
    ]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks, **FAST), in_process)
    assert results["reach"]["baseline_job"]["id"] == prod and results["reach"]["training_job"]["metrics_ok"] is False
    window = "no Completed training job tagged stage=%s was found; the tag search looked at the jobs created up to 35 days before " % stage
    skipped = results["skipped"]
    assert not skipped["failed"] and skipped["training_job"]["metrics_ok"] is None and skipped["baseline_job"] is None
    assert any(window in warning and "the improvement bounds were skipped" in warning for warning in skipped["warnings"]), skipped["warnings"]
    closed = results["closed"]
    assert closed["failed"] and closed["training_job"]["metrics_ok"] is False
    assert "there is no baseline to compare with for min_improvement: " + window in closed["msg"], closed["msg"]
    bad = results["bad"]
    assert bad["failed"] and "baseline.max_age_days must be a whole number of days from 1 to 3650" in bad["msg"], bad["msg"]


@WAYS
def test_a_fault_on_an_older_windows_search_closes_the_gate_even_when_not_required(modelarts_emulator, run_playbook, tmp_path, in_process):
    emulator = modelarts_emulator
    stage, _prod, candidate = old_production(emulator, created_ago="100d")
    # The first search (the service's own window) answers; every later one is refused.
    emulator.add_fault(type="error", status=503, target="search", after=1, count="always")
    tasks = [
        info("gate", "gate", training_job_id=candidate, wait=True, metrics=GATED, baseline={"tags": {"stage": stage}, "required": False}),
        save(tmp_path, "gate"),
    ]
    results, output = run(run_playbook, tmp_path, play(emulator, tasks, **FAST), in_process)
    gate = results["gate"]
    assert gate["failed"] and gate["training_job"]["metrics_ok"] is False, gate.get("msg")
    assert "the search for the newest Completed training job tagged stage=%s created from " % stage in gate["msg"], gate["msg"]
    assert "HTTP 503" in gate["msg"]
    assert "the improvement bounds were skipped" not in output


def test_the_role_closes_when_an_older_windows_search_fails_with_required_false(modelarts_emulator, run_playbook, tmp_path):
    emulator = modelarts_emulator
    stage, _prod, candidate = old_production(emulator, created_ago="100d")
    emulator.add_fault(type="error", status=503, target="search", after=1, count="always")
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
    assert " created from " in results["gate"]["msg"] and "HTTP 503" in results["gate"]["msg"], results["gate"]["msg"]
    written = json.loads(record.read_text())
    assert written["decision"] == "closed"


def nightly_runs(emulator):
    """The issue's nightly runs, all named ``churn-model-<unique>``: 0.86 (2 days ago), 0.83 (yesterday), 0.84 (an hour ago)."""
    name = "churn-model-%s" % uuid.uuid4().hex[:8]
    ids = [new_id() for _run in range(3)]
    emulator.add_jobs(
        [
            {"id": ids[0], "name": name, "phase": "Completed", "created_ago": "2d", "metric_lines": epochs(0.86)},
            {"id": ids[1], "name": name, "phase": "Completed", "created_ago": "1d", "metric_lines": epochs(0.83)},
            {"id": ids[2], "name": name, "phase": "Completed", "created_ago": "1h", "metric_lines": epochs(0.84)},
        ]
    )
    return name, ids


@WAYS
def test_a_search_by_the_candidates_own_name_is_warned_about_once(emulator, run_playbook, tmp_path, in_process):
    name, ids = nightly_runs(emulator)
    conn = emulator_connection(emulator, **FAST)
    tasks = [
        # The newest run alone: compared with the refused run before it (0.83), not with 0.86.
        info("module", "module", training_job_id=ids[2], metrics=IMPROVE, baseline={"name": name}),
        info("tagged", "tagged", training_job_id=ids[2], metrics=IMPROVE, baseline={"name": name, "tags": {"stage": "production"}, "required": False}),
        # Two candidates of that name (the last two runs): one warning for the call.
        info("pair", "pair", training_job_ids=ids[1:], metrics=IMPROVE, baseline={"name": name}),
        save(tmp_path, "module", "tagged", "pair"),
    ]
    results, output = run(run_playbook, tmp_path, play(emulator, tasks, **FAST), in_process)
    module = results["module"]
    own = [warning for warning in module["warnings"] if OWN in warning]
    assert own == [
        "baseline.name '%s' is the name of the job this call gates: the baseline is the run before it, refused or not, not the model in production; "
        "keep the production model in a record (baseline: {record: PATH}, the role's training_job_gate_production)" % name
    ], module["warnings"]
    assert module["baseline_job"]["id"] == ids[1] and module["training_job"]["metrics"]["val_accuracy"]["baseline_value"] == 0.83
    assert not any(OWN in warning for warning in results["tagged"].get("warnings", []))
    assert [warning for warning in results["pair"]["warnings"] if OWN in warning] == own
    assert output.count(OWN) == 1, output[-3000:]
    # The lookup, in a run of its own (ansible-playbook shows a warning text once per run): two candidates of that name
    # (the last two runs), one warning for the call.
    lookup = {
        "name": "lookup",
        "ansible.builtin.set_fact": {
            "verdict": "{{ query('modelarts.training.training_job', *ids, metrics=metrics, baseline=baseline, field='metrics_ok', **conn) }}"
        },
        "vars": {"ids": ids[1:], "metrics": IMPROVE, "baseline": {"name": name}, "conn": conn},
    }
    results, output = run(run_playbook, tmp_path, play(emulator, [lookup, save(tmp_path, "verdict")], **FAST), in_process)
    # Each candidate is compared with the newest other job before it (never another candidate): 0.86 for both.
    assert results["verdict"] == [False, False]
    assert output.count(OWN) == 1, output[-3000:]


def test_the_event_source_logs_the_own_name_warning_once(modelarts_emulator, collection_root, caplog):
    emulator = modelarts_emulator
    caplog.set_level(logging.INFO, LOGGER)
    name, ids = nightly_runs(emulator)
    # Two more runs of the name that complete in two rounds of the source.
    later = [new_id(), new_id()]
    emulator.add_jobs(
        [
            {"id": later[0], "name": name, "timeline": [{"phase": "Running", "polls": 1}, "Completed"], "metric_lines": epochs(0.85)},
            {"id": later[1], "name": name, "timeline": [{"phase": "Running", "polls": 3}, "Completed"], "metric_lines": epochs(0.87)},
        ]
    )
    src = load_source(collection_root)
    args = dict(connection_args(emulator), training_job_ids=later, stop_when_done=True, interval=0.3, metrics=IMPROVE, baseline={"name": name}, **FAST)

    def both_completed(found):
        return {e["modelarts"]["training_job"]["id"] for e in found if e["modelarts"]["phase"] == "Completed"} == set(later)

    events = asyncio.run(asyncio.wait_for(source_events(src, args, both_completed), 300))
    completed = [e for e in events if e["modelarts"]["phase"] == "Completed"]
    assert len(completed) == 2
    assert caplog.text.count(OWN) == 1, caplog.text[-3000:]
