# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 56, items 5, 10, 14 and 17: the gate role and the shipped playbook, run as users run them.

* 5: bounded metrics with a required phase other than Completed (a Terminated job has no metrics read) are refused at
  start, by the role (its variables named, the record closed) and by the module (``wait_for``, ``metrics[i]``).
* 10: a run refused for a bad variable, or killed during its wait, leaves a record that is not ``open`` - never the
  previous run's.
* 14: every path of the role (refuse, connection, wait; each with and without a record), its variables passed as facts
  the way the shipped playbook passes them, and the shipped playbook itself, run on every core: ansible-core 2.16 to
  2.18 ended these plays before their first task. ``make role-paths-oldest`` (part of ``make test``) runs its role paths on the oldest core.
* 17: docs/role.md says what the unkeyed digest proves: accidental damage, not an edit.

Runs with the ansible-core installed beside the interpreter running it (``BIN``), like the in-process parity suite.
"""

import json
import os
import signal
import subprocess
import sys
import uuid

import pytest

from conftest import emulator_connection
from plays import kill_during_wait

BIN = os.path.dirname(sys.executable)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLE = "modelarts.training.training_job_gate"
ACC = r"val_accuracy=([0-9.]+)"
BOUNDED = [{"name": "val_accuracy", "regex": ACC, "min": 0.9}]


def new_id():
    return str(uuid.uuid4())


@pytest.fixture
def jobs(emulator):
    """A Completed job with val_accuracy 0.95, a Terminated one and a Running one that stays Running."""
    found = {"completed": new_id(), "terminated": new_id(), "running": new_id()}
    emulator.add_jobs(
        [
            {"id": found["completed"], "name": "i56-done", "phase": "Completed", "metric_lines": ["EVAL epoch 1: val_accuracy=0.95"]},
            {"id": found["terminated"], "name": "i56-stopped", "phase": "Terminated"},
            {"id": found["running"], "name": "i56-running", "phase": "Running", "metric_lines": ["EVAL epoch 1: val_accuracy=0.99"]},
        ]
    )
    return found


def output(result):
    return result.stdout + result.stderr


def gate_play(emu, role_vars, as_facts=True, connection=False):
    """The role in a play against ``emu``: its variables set by an earlier task (facts, as the shipped playbook's
    gate_todo_ids), or given as literals; the connection in module_defaults or in training_job_gate_connection."""
    # Every variable the shipped playbook passes, v1 jobs included: on 2.16 to 2.18 an undefined one in the include's
    # name ended the play (training_job_gate_ids alone resolved to [] through its default there).
    role_vars = dict({"training_job_gate_poll": 0.2, "training_job_gate_timeout": 30, "training_job_gate_v1_jobs": []}, **role_vars)
    if connection:
        role_vars["training_job_gate_connection"] = emulator_connection(emu)
    tasks = []
    if as_facts:
        facts = dict(("i56_" + name, value) for name, value in role_vars.items())
        tasks.append({"name": "Compute the gate's variables", "ansible.builtin.set_fact": facts})
        role_vars = dict((name, "{{ i56_%s }}" % name) for name in role_vars)
    tasks.append({"name": "Gate", "ansible.builtin.include_role": {"name": ROLE}, "vars": role_vars})
    play = {"hosts": "localhost", "gather_facts": False, "tasks": tasks}
    if not connection:
        play["module_defaults"] = {"group/modelarts.training.modelarts": emulator_connection(emu)}
    return [play]


def read_record(path):
    with open(path) as handle:
        return json.load(handle)


# -- item 14: every path of the role, on every core --------------------------------------------------------------


@pytest.mark.parametrize("recorded", [False, True], ids=["no record", "record"])
@pytest.mark.parametrize("path", ["wait", "connection", "refuse"])
def test_every_path_of_the_role_runs_with_its_variables_from_facts(emulator, run_playbook, tmp_path, jobs, path, recorded):
    record = str(tmp_path / "gate.json")
    role_vars = {"training_job_gate_ids": [] if path == "refuse" else [jobs["completed"]]}
    if recorded:
        role_vars["training_job_gate_record"] = record
    result = run_playbook(gate_play(emulator, role_vars, connection=path == "connection"))
    text = output(result)
    assert "dynamic parent include path" not in text, text[-3000:]
    if path == "refuse":
        assert result.returncode != 0 and "training_job_gate: no jobs to gate on" in text, text[-3000:]
    else:
        assert result.returncode == 0, text[-3000:]
        assert "training_job_gate: open: 1 training job Completed" in text
    if recorded:
        assert read_record(record)["decision"] == ("closed" if path == "refuse" else "open")
    else:
        assert not os.path.exists(record)


def test_the_shipped_playbook_runs_by_its_name(emulator, ansible_env, tmp_path, jobs):
    release_dir = tmp_path / "releases"
    variables = {"training_job_ids": [jobs["completed"]], "release_dir": str(release_dir), "gate_poll": 1, "gate_record": str(tmp_path / "gate.json")}
    command = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", "modelarts.training.gate_deployment", "-e", json.dumps(variables)]
    env = dict(ansible_env, **emulator.env())
    result = subprocess.run(command, env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, output(result)[-3000:]
    assert len(list(release_dir.glob("release-*.json"))) == 1
    assert read_record(str(tmp_path / "gate.json"))["decision"] == "open"


def test_a_variable_nobody_set_fails_the_gate_naming_it(emulator, run_playbook, tmp_path, jobs):
    record = tmp_path / "gate.json"
    role_vars = {"training_job_gate_ids": "{{ i56_nobody_set_this }}", "training_job_gate_record": str(record)}
    result = run_playbook(gate_play(emulator, role_vars, as_facts=False))
    assert result.returncode != 0
    assert "i56_nobody_set_this" in output(result), output(result)[-3000:]
    assert "Traceback" not in output(result)


# -- item 5: bounds with a phase whose metrics are never read ------------------------------------------------------


def test_the_role_refuses_bounds_with_a_required_phase_other_than_completed(emulator, run_playbook, tmp_path, jobs):
    record = str(tmp_path / "gate.json")
    role_vars = {
        "training_job_gate_ids": [jobs["terminated"]],
        "training_job_gate_require": ["Completed", "Terminated"],
        "training_job_gate_fail_on": ["Failed", "Abnormal"],
        "training_job_gate_metrics": BOUNDED,
        "training_job_gate_record": record,
    }
    seen = len(emulator.requests())
    result = run_playbook(gate_play(emulator, role_vars))
    text = output(result)
    assert result.returncode != 0, text[-3000:]
    assert "training_job_gate: training_job_gate_require names Terminated while training_job_gate_metrics has a bound (min)" in text, text[-3000:]
    assert "training_job_gate: open" not in text
    written = read_record(record)
    assert written["decision"] == "closed" and "training_job_gate_require names Terminated" in written["messages"][0]
    assert not [entry for entry in emulator.requests()[seen:] if jobs["terminated"] in entry.get("path", "")]


def test_the_module_refuses_bounds_with_a_wait_for_phase_other_than_completed(emulator, run_info_task, jobs):
    task = dict(
        emulator_connection(emulator),
        training_job_id=jobs["terminated"],
        wait=True,
        wait_timeout=20,
        wait_for=["Completed", "Terminated"],
        fail_on=["Failed"],
        metrics=[{"name": "loss", "regex": "loss=([0-9.]+)"}] + BOUNDED,
    )
    result, _process = run_info_task(task)
    assert result["failed"] and "training_jobs" not in result, result
    assert "wait_for names Terminated while metrics[1] has a bound (min)" in result["msg"], result["msg"]


def test_metrics_without_a_bound_may_wait_for_any_phase(emulator, run_info_task, jobs):
    task = dict(
        emulator_connection(emulator), training_job_id=jobs["terminated"], wait=True, wait_timeout=20, wait_for=["Completed", "Terminated"], fail_on=["Failed"]
    )
    task["metrics"] = [{"name": "val_accuracy", "regex": ACC}]
    result, _process = run_info_task(task)
    assert not result["failed"] and result["training_job"]["phase"] == "Terminated", result


# -- item 10: a refused or killed run never leaves an earlier run's open record ------------------------------------


def open_record(emulator, run_playbook, record, jobs):
    first = run_playbook(gate_play(emulator, {"training_job_gate_ids": [jobs["completed"]], "training_job_gate_record": record}))
    assert first.returncode == 0, output(first)[-3000:]
    assert read_record(record)["decision"] == "open"


# ansible-core runs the role's argument-spec validation before the role's first task (role/__init__.py,
# _prepend_validation_task): the spec states such options as raw and the role checks their real types itself, after it
# wrote the record (filter modelarts.training.gate_variables).
def test_a_run_refused_for_a_bad_variable_replaces_the_open_record(emulator, run_playbook, tmp_path, jobs):
    record = str(tmp_path / "gate.json")
    open_record(emulator, run_playbook, record, jobs)
    role_vars = {"training_job_gate_ids": [jobs["completed"]], "training_job_gate_record": record, "training_job_gate_timeout": "soon"}
    result = run_playbook(gate_play(emulator, role_vars, as_facts=False))
    assert result.returncode != 0
    assert "training_job_gate_timeout" in output(result), output(result)[-3000:]
    written = read_record(record)
    assert written["decision"] == "closed", written
    assert any("training_job_gate_timeout" in line for line in written["messages"]), written


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_run_killed_during_its_wait_leaves_a_closed_record(emulator, ansible_env, tmp_path, run_playbook, jobs, how):
    record = str(tmp_path / "gate.json")
    open_record(emulator, run_playbook, record, jobs)
    play = gate_play(emulator, {"training_job_gate_ids": [jobs["running"]], "training_job_gate_record": record, "training_job_gate_timeout": 600})
    kill_during_wait(play, tmp_path, ansible_env, emulator, jobs["running"], how)
    written = read_record(record)
    assert written["decision"] == "closed", written
    assert written["messages"] == ["training_job_gate: closed: in progress (the gate has not decided yet)"], written
    assert written["sha256"] and written["jobs"] == []


# -- item 17: what the digest proves ------------------------------------------------------------------------------


def test_the_docs_say_the_unkeyed_digest_shows_accidental_damage_only(emulator, run_playbook, tmp_path, jobs):
    with open(os.path.join(ROOT, "docs", "role.md")) as handle:
        text = " ".join(handle.read().split())
    assert "proves the record was not edited" not in text
    assert "any language can, the same way" not in text
    assert "accidental damage" in text
    # What the docs now say, shown: anyone who edits a record can write the digest of the edit, and the check passes.
    record = str(tmp_path / "gate.json")
    closed = run_playbook(gate_play(emulator, {"training_job_gate_ids": [jobs["terminated"]], "training_job_gate_record": record}))
    assert closed.returncode != 0 and read_record(record)["decision"] == "closed"
    check = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {"ansible.builtin.set_fact": {"forged": "{{ lookup('ansible.builtin.file', '%s') | from_json | combine({'decision': 'open'}) }}" % record}},
                {"ansible.builtin.set_fact": {"forged": "{{ forged | combine({'sha256': forged | modelarts.training.record_digest}) }}"}},
                {"ansible.builtin.assert": {"that": ["forged.sha256 == forged | modelarts.training.record_digest", "forged.decision == 'open'"]}},
            ],
        }
    ]
    assert run_playbook(check).returncode == 0
