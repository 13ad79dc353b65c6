# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 28, item 6: the diagnostics of a failed job never raise for what the service sends, and hold bounded memory.

A drifted document (``validate: warn``) read through a real ``ansible-playbook -vvv`` against the emulator: the task
fails with the normal failure message, the drift is an ``errors`` line of the item's diagnostics, and the emulator's
request log shows that a string was not read character by character into log calls.
"""

import json
import os
import subprocess
import sys

import pytest
import yaml

from conftest import BIN
from peers import json_api
from test_diagnostics import add_failed_job, failure, gate_play

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
        drift = [{"type": "drift", "mode": "set", "values": {path: value}, "count": -1}]
        jobs[name] = add_failed_job(emulator, "diag-drift-" + name, name="diag-drift", log={"lines": 5}, faults=drift)
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
    drift = [{"type": "drift", "mode": "set", "values": {"status.tasks": value, "status.task_statuses": value}, "count": -1}]
    job = add_failed_job(emulator, "diag-drift-off", log={"lines": 5}, faults=drift)
    emulator.clear_requests()
    result = run_playbook(gate_play(emulator, [job], {"validate": "off"}), verbosity=3)
    shown = result.stdout + result.stderr
    assert "The full traceback is" not in shown and result.returncode == 0 and "RESCUED" in result.stdout, shown[-3000:]
    read = failure(tmp_path)
    assert "reached phase Failed" in read["msg"] and "diagnostics could not be read (see diagnostics.errors)" in read["msg"]
    errors = read["jobs"][0]["diagnostics"]["errors"]
    assert [line.split(":")[0] for line in errors] == ["status.tasks", "status.task_statuses"], errors
    assert log_calls(emulator, job) == ["logs/worker-0"]


# -- memory: previews far larger than the tail the diagnostics keep ---------------------------------

PROJECT = "c2078239586c89f12689d89fd66e9f9b"
HUGE = "b2800000-0000-4000-8000-000000000028"
TASKS = ["worker-%d" % index for index in range(16)]
# A log line of multi-byte characters (3 and 4 bytes in UTF-8, 2 and 4 bytes a character in Python), sent as UTF-8.
LINE = json.dumps("训练 step 😀 loss=nan, grad=inf " * 30 + "\n", ensure_ascii=False)[1:-1].encode("utf-8")
PREVIEW_BYTES = 12 * 1024 * 1024
# What ansible-playbook and its module process may reach whatever the previews' size: the module's own baseline and a
# few MB of log tails. Reading the 16 previews whole (as before) takes several hundred MB.
MAX_RSS_MB = 150
# Runs a command and reports the largest resident set size among its processes (ansible-playbook, its workers, the module).
PROBE = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
    "sys.stderr.write('MAXRSS_KB=%d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)"
)


def huge_preview(task):
    """``(length, pieces)`` of a preview answer of PREVIEW_BYTES, streamed: the server never holds it whole either."""
    head = b'{"current_size": %d, "full_size": %d, "content": "' % (PREVIEW_BYTES, PREVIEW_BYTES)
    last = json.dumps("%s: RuntimeError: the last line of the log" % task).encode("ascii")[1:-1]
    end = b'"}'
    repeats = (PREVIEW_BYTES - len(head) - len(last) - len(end)) // len(LINE)
    batch = LINE * 64

    def pieces():
        yield head
        for _round in range(repeats // 64):
            yield batch
        yield LINE * (repeats % 64) + last + end

    return len(head) + repeats * len(LINE) + len(last) + len(end), pieces()


def huge_answer(_method, path, _body):
    job = "/v2/%s/training-jobs/%s" % (PROJECT, HUGE)
    if path == job:
        status = {"phase": "Failed", "secondary_phase": "Failed", "duration": 1000, "start_time": 1764000001000, "tasks": TASKS}
        status["task_statuses"] = [{"task": "worker-3", "exit_code": 1, "message": "boom"}]
        return 200, json.dumps({"metadata": {"id": HUGE, "name": "huge-previews", "create_time": 1764000000000}, "status": status}).encode()
    if path == job + "/events":
        return 200, b'{"total": 0, "events": []}'
    if path.startswith(job + "/logs/"):
        return 403, b'{"error_code": "ModelArts.2771", "error_msg": "No permission to perform modelarts:trainJob:getLogs."}'
    if path.startswith(job + "/tasks/") and path.endswith("/logs/preview"):
        return 200, huge_preview(path.split("/")[-3])
    return 404, b'{"error_code": "ModelArts.0404", "error_msg": "not here"}'


def test_huge_log_previews_are_read_in_bounded_memory(ansible_env, tmp_path):
    with json_api(huge_answer) as server:
        connection = {"region": "cn-north-4", "project_id": PROJECT, "access_key": "HPUAMAEMULATOR000001", "endpoint": server.url}
        connection.update(iam_endpoint=server.url, secret_key="MaEmulatorSecretKey000000000000000000001", request_timeout=120)
        options = dict(connection, training_job_id=HUGE, validate="off", wait=True, wait_timeout=120, wait_sleep=1)
        rescue = {"ansible.builtin.copy": {"dest": "{{ playbook_dir }}/failure.json", "mode": "0600"}}
        rescue["ansible.builtin.copy"]["content"] = "{{ {'msg': ansible_failed_result.msg, 'jobs': ansible_failed_result.training_jobs} | to_json }}"
        wait = {"name": "Wait for training", "modelarts.training.modelarts_training_job_info": options}
        play = [{"hosts": "localhost", "gather_facts": False, "tasks": [{"block": [wait], "rescue": [rescue, {"ansible.builtin.debug": {"msg": "RESCUED"}}]}]}]
        (tmp_path / "playbook.yml").write_text(yaml.safe_dump(play, sort_keys=False))
        command = [sys.executable, "-c", PROBE, os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", "playbook.yml"]
        result = subprocess.run(command, env=ansible_env, cwd=str(tmp_path), capture_output=True, text=True, timeout=600, check=False)
        previews = [path for _method, path, _body in server.seen if path.endswith("/logs/preview")]
    assert result.returncode == 0 and "RESCUED" in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]
    read = failure(tmp_path)
    assert "reached phase Failed: task worker-3 exited with code 1: boom" in read["msg"]
    assert "worker-3: RuntimeError: the last line of the log" in read["msg"]
    found = read["jobs"][0]["diagnostics"]
    assert found["errors"] == [] and [task["task_id"] for task in found["tasks"]] == ["worker-3"] + [t for t in TASKS if t != "worker-3"]
    for task in found["tasks"]:
        assert len(task["log_tail"]) == 30 and task["log_tail"][-1] == "%s: RuntimeError: the last line of the log" % task["task_id"]
        assert task["log_tail"][0] == json.loads('"%s"' % LINE.decode("utf-8"))[:-1] and task["log_truncated"] is True
    assert len(previews) == len(TASKS), "every preview was read (none failed and was retried)"
    peak_mb = int(result.stderr.rsplit("MAXRSS_KB=", 1)[1].split()[0]) // 1024
    assert peak_mb < MAX_RSS_MB, "the largest process of the run reached %d MB" % peak_mb
