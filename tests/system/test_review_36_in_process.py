# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 36, items 1, 2 and 4: the task run in the controller's process (the action plugin on a local connection)
behaves as the module does, each test both ways (``modelarts_training_in_process`` true and false).

1. A task's ``timeout:`` ends the task whatever requests are in flight: before the fix, in process, ``timeout: 3``
   over two jobs behind a slow server returned when the requests ended (the request threads were joined on the
   interrupt), the module's at once.  As in test_deadlines.py the bound is loose: it tells "ends at its timeout"
   from "waits for the requests", never speed.
2. A ``type: path`` option is expanded against the environment the module sees (the controller's with the task's
   ``environment:`` on top): before the fix, in process, ``credentials_file: $HUAWEICLOUD_PROFILE_DIR/credentials``
   was expanded from the controller's own environment, and the request signed with another account's keys.
3. Option values reach the task as the module receives them through JSON: before the fix, in process,
   ``tags: {2024: q4}`` kept its integer key and was refused.
"""

import json
import os
import re
import sys
import time
import uuid

import pytest

from conftest import emulator_connection

BIN = os.path.dirname(sys.executable)
PAYLOAD = re.compile(r"Using module file \S*/modules/modelarts_training_job_info\.py")
WAYS = pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])

# Long enough for the module's way to build its payload and send its requests on a busy machine.
TASK_TIMEOUT = 8
# The slow server stalls far longer than the request timeout, which is far longer than the bound below: a task that
# waits for its requests ends after REQUEST_TIMEOUT, one that ends at its timeout well before.
STALL = 75
REQUEST_TIMEOUT = 60
STARTUP_ALLOWANCE = 25


def way(in_process):
    return {"modelarts_training_in_process": in_process}


def check_way(in_process, output):
    """The run took the way it was asked to: the module's payload is built only through the module."""
    assert bool(PAYLOAD.search(output)) is not in_process, output[-3000:]


@WAYS
def test_a_task_timeout_ends_the_task_whatever_requests_are_in_flight(emulator, run_playbook, tmp_path, in_process):
    slow = [str(uuid.uuid4()), str(uuid.uuid4())]
    emulator.add_jobs([{"id": job, "name": "slow-%d" % index, "phase": "Running"} for index, job in enumerate(slow)])
    emulator.add_faults([{"type": "delay", "seconds": STALL, "job": job, "count": -1} for job in slow])
    connection = emulator_connection(emulator, request_timeout=REQUEST_TIMEOUT, connect_timeout=5, backoff_retries=0)
    tasks = [
        {
            "name": "two slow jobs",
            "modelarts.training.modelarts_training_job_info": dict(connection, training_job_ids=slow),
            "timeout": TASK_TIMEOUT,
            "register": "slow",
            "ignore_errors": True,
        },
        {"ansible.builtin.copy": {"content": "{{ slow | to_json }}", "dest": str(tmp_path / "slow.json"), "mode": "0600"}},
    ]
    started = time.monotonic()
    proc = run_playbook([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}], extra_vars=way(in_process), verbosity=3, timeout=600)
    elapsed = time.monotonic() - started
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    check_way(in_process, output)
    result = json.loads((tmp_path / "slow.json").read_text())
    assert result["failed"] and result["timedout"]["period"] == TASK_TIMEOUT, result
    # Both requests had reached the server: they were in flight when the timeout came.
    assert sorted(fault["hits"] for fault in emulator.faults() if fault.get("job") in slow) == [1, 1]
    assert "training_jobs" not in result, result
    assert elapsed < TASK_TIMEOUT + STARTUP_ALLOWANCE, "the task outlived its timeout: %.1fs" % elapsed
    # Nothing of the abandoned requests shows: no traceback, no thread's complaint, no worker left to terminate, no secret.
    for text in ("Traceback", "Exception in thread", "still running", emulator.sk):
        assert text not in output, text


def profile(folder, access_key, secret_key, emulator):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "credentials"
    path.write_text("[basic]\nak = %s\nsk = %s\nproject_id = %s\n" % (access_key, secret_key, emulator.project_id))
    return path


@WAYS
def test_a_path_option_is_expanded_against_the_environment_the_module_sees(emulator, run_playbook, tmp_path, in_process):
    # The task's profile holds the emulator's keys; the controller's own HUAWEICLOUD_PROFILE_DIR another account's.
    task_file = profile(tmp_path / "task-profile", emulator.ak, emulator.sk, emulator)
    # The CA file in a folder only the task's environment names.
    (tmp_path / "task-ca").mkdir()
    (tmp_path / "task-ca" / "ca.pem").write_bytes(open(emulator.ca_file, "rb").read())
    profile(tmp_path / "controller-profile", "OTHERACCOUNTAK", "other-account-secret-0123456789", emulator)
    endpoints = dict((key, value) for key, value in emulator.connection("aksk").items() if key not in ("access_key", "secret_key"))
    job = emulator.add_job(id=str(uuid.uuid4()), name="profile-job", phase="Completed")
    tasks = [
        {
            "name": "the profile the task names",
            "modelarts.training.modelarts_training_job_info": dict(endpoints, training_job_id=job, credentials_file="$HUAWEICLOUD_PROFILE_DIR/credentials"),
            "environment": {"HUAWEICLOUD_PROFILE_DIR": str(tmp_path / "task-profile")},
            "register": "by_variable",
            "ignore_errors": True,
        },
        {
            "name": "braces, and the task's CA bundle too",
            "modelarts.training.modelarts_training_job_info": dict(
                endpoints, training_job_id=job, credentials_file="${HUAWEICLOUD_PROFILE_DIR}/credentials", ca_bundle="${HUAWEICLOUD_CA_DIR}/ca.pem"
            ),
            "environment": {"HUAWEICLOUD_PROFILE_DIR": str(tmp_path / "task-profile"), "HUAWEICLOUD_CA_DIR": str(tmp_path / "task-ca")},
            "register": "by_braces",
            "ignore_errors": True,
        },
        {
            "name": "a home the task sets",
            "modelarts.training.modelarts_training_job_info": dict(endpoints, training_job_id=job, credentials_file="~/task-profile/credentials"),
            "environment": {"HOME": str(tmp_path)},
            "register": "by_home",
            "ignore_errors": True,
        },
        {
            "ansible.builtin.copy": {
                "content": "{{ [by_variable, by_braces, by_home] | to_json }}",
                "dest": str(tmp_path / "results.json"),
                "mode": "0600",
            }
        },
    ]
    controller = {"HUAWEICLOUD_PROFILE_DIR": str(tmp_path / "controller-profile"), "HUAWEICLOUD_CA_DIR": str(tmp_path / "no-such-dir")}
    # ansible-core 2.21 shows a result's invocation only when asked (before, always).
    controller["ANSIBLE_INJECT_INVOCATION"] = "true"
    proc = run_playbook([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}], extra_vars=way(in_process), env=controller, verbosity=3)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    results = json.loads((tmp_path / "results.json").read_text())
    for result in results:
        assert not result["failed"], result.get("msg")
        assert result["training_job"]["id"] == job
    # -vvv shows each task's invocation: the paths as the module received them, the controller's nowhere.
    assert output.count('"credentials_file": "%s"' % task_file) == 3, output[-3000:]
    assert output.count('"ca_bundle": "%s"' % (tmp_path / "task-ca" / "ca.pem")) == 1, output[-3000:]
    for text in (str(tmp_path / "controller-profile"), str(tmp_path / "no-such-dir"), "OTHERACCOUNTAK", "other-account-secret"):
        assert text not in output, text
    # Only the task that sets HOME (a variable the door does not read through its mapping) takes the module in process.
    assert len(PAYLOAD.findall(output)) == (1 if in_process else 3), output[-3000:]
