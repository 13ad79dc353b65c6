# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 28, item 6: the diagnostics of a failed job never raise for what the service sends, and hold bounded memory.

A drifted document (``validate: warn``) read through a real ``ansible-playbook -vvv`` against the emulator: the task
fails with the normal failure message, the drift is an ``errors`` line of the item's diagnostics, and the emulator's
request log shows that a string was not read character by character into log calls.
"""

import json

import pytest

from eda_helpers import unique_id
from test_diagnostics import failure, gate_play

# Each drift the service may send in the fields the diagnostics read the task ids from.
DRIFTS = {
    "tasks-int": ("status.tasks", 3),
    "tasks-string": ("status.tasks", "worker-0worker-1"),
    "tasks-object": ("status.tasks", {"worker-0": "worker-1"}),
    "statuses-int": ("status.task_statuses", 7),
    "statuses-string": ("status.task_statuses", "worker-0"),
    "records-int": ("status.running_records", 5),
    "records-string": ("status.running_records", "worker-0"),
    "records-object": ("status.running_records", {"end_related_task": "worker-1"}),
}


def log_calls(emu, job):
    return sorted(entry["path"].rsplit("/training-jobs/%s/" % job, 1)[1] for entry in emu.requests(path="/training-jobs/%s/" % job) if "/logs" in entry["path"])


def test_a_drifted_document_is_an_errors_line_not_a_traceback(emulator, run_playbook, tmp_path):
    jobs = {}
    for name, (path, value) in DRIFTS.items():
        job = unique_id("diag-drift-" + name)
        jobs[name] = job
        emulator.add_jobs(
            [
                {
                    "id": job,
                    "name": "diag-drift",
                    "phase": "Failed",
                    "failure": {"exit_code": 1, "message": "boom"},
                    "log": {"lines": 5},
                    "faults": [{"type": "drift", "mode": "set", "values": {path: value}, "count": -1}],
                }
            ]
        )
    emulator.clear_requests()
    result = run_playbook(gate_play(emulator, list(jobs.values()), {"validate": "warn"}), verbosity=3)
    shown = result.stdout + result.stderr
    assert "The full traceback is" not in shown and "MODULE FAILURE" not in shown, shown[-3000:]
    assert result.returncode == 0 and "RESCUED" in result.stdout and "DEPLOYED" not in result.stdout, shown[-3000:]
    read = failure(tmp_path)
    assert "reached phase Failed" in read["msg"]
    items = dict((item["id"], item) for item in read["jobs"])
    for name, (path, value) in DRIFTS.items():
        job = jobs[name]
        found = items[job]["diagnostics"]
        assert items[job]["phase"] == "Failed" and found is not None, name
        assert [line for line in found["errors"] if line.startswith(path + ":") and "not an array" in line], (name, found["errors"])
        # The failing task's log was read, once; a string was not read character by character into log calls.
        assert [task["task_id"] for task in found["tasks"]] == ["worker-0"], (name, found)
        assert log_calls(emulator, job) == ["logs/worker-0"], (name, log_calls(emulator, job))
    assert json.dumps(read).count("not an array") == len(DRIFTS)


@pytest.mark.parametrize("value", [12, "worker-0"], ids=["int", "string"])
def test_drifted_task_ids_with_validate_off_still_fail_with_the_normal_message(emulator, run_playbook, tmp_path, value):
    job = unique_id("diag-drift-off")
    emulator.add_jobs(
        [
            {
                "id": job,
                "name": "diag-drift-off",
                "phase": "Failed",
                "failure": {"exit_code": 1, "message": "boom"},
                "log": {"lines": 5},
                "faults": [{"type": "drift", "mode": "set", "values": {"status.tasks": value, "status.task_statuses": value}, "count": -1}],
            }
        ]
    )
    emulator.clear_requests()
    result = run_playbook(gate_play(emulator, [job], {"validate": "off"}), verbosity=3)
    shown = result.stdout + result.stderr
    assert "The full traceback is" not in shown and result.returncode == 0 and "RESCUED" in result.stdout, shown[-3000:]
    read = failure(tmp_path)
    assert "reached phase Failed" in read["msg"] and "diagnostics could not be read (see diagnostics.errors)" in read["msg"]
    errors = read["jobs"][0]["diagnostics"]["errors"]
    assert [line.split(":")[0] for line in errors] == ["status.tasks", "status.task_statuses"], errors
    assert log_calls(emulator, job) == ["logs/worker-0"]
