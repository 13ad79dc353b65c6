# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a job failed, in the user's shape: real ansible-playbook and ansible-rulebook runs against the HTTPS emulator.

The emulator's failing jobs have long logs ending in a traceback (docs/emulator.md); its request log says
which calls the collection made, so "no extra call" is counted, not assumed.
"""

import json
import os

from conftest import block_play, endpoint_tokens
from eda_helpers import RULEBOOKS, event_lines, run_rulebook, unique_id

COMPLETED = "a1000000-0000-4000-8000-000000000001"
# phase-failed: worker-1 exited with code 2 (ModuleNotFoundError), worker-0 was stopped with 143.
FAILED = "a1000000-0000-4000-8000-000000000002"
LAST_LINE = "[ModelArts Service Log]Training end with return code: 2"


def gate_play(emu, job_ids, extra=None, verbosity_marker="RESCUED"):
    """A play whose block waits for the jobs and whose rescue writes what it read from ansible_failed_result."""
    options = dict({"training_job_ids": job_ids, "wait": True, "wait_timeout": 60, "wait_sleep": 1}, **(extra or {}))
    block = [
        {"name": "Wait for training", "modelarts.training.modelarts_training_job_info": options},
        {"name": "Deploy", "ansible.builtin.debug": {"msg": "DEPLOYED"}},
    ]
    rescue = [
        {
            "name": "Keep what the failure says",
            "ansible.builtin.copy": {
                "dest": "{{ playbook_dir }}/failure.json",
                "content": "{{ {'msg': ansible_failed_result.msg, 'jobs': ansible_failed_result.training_jobs} | to_json }}",
                "mode": "0600",
            },
        },
        {"name": "Say so", "ansible.builtin.debug": {"msg": verbosity_marker}},
    ]
    return block_play(emu, block, rescue)


def failure(tmp_path):
    return json.loads((tmp_path / "failure.json").read_text())


def add_failed_job(emu, prefix, name=None, **details):
    """A job in phase Failed (task worker-0 exited with code 1: boom) added to ``emu`` with ``details`` (its ``log``,
    ``faults``...); its id, unique under ``prefix`` (the name, unless ``name`` is given)."""
    job = unique_id(prefix)
    emu.add_jobs([dict({"id": job, "name": name or prefix, "phase": "Failed", "failure": {"exit_code": 1, "message": "boom"}}, **details)])
    return job


def diagnostic_calls(emu, job_id):
    return list(emu.requests(path="/training-jobs/%s/" % job_id))


def test_a_rescue_block_finds_the_last_log_line_in_the_failure_message(emulator, run_playbook, tmp_path):
    emulator.clear_requests()
    result = run_playbook(gate_play(emulator, [FAILED]))
    assert result.returncode == 0 and "RESCUED" in result.stdout and "DEPLOYED" not in result.stdout, result.stdout
    read = failure(tmp_path)
    assert LAST_LINE in read["msg"]
    assert "last error event at " in read["msg"] and "Failed to run the training job." in read["msg"]
    assert "reached phase Failed: task worker-1 exited with code 2" in read["msg"], "the verdict and reason stay first"
    found = read["jobs"][0]["diagnostics"]
    worker = found["tasks"][0]
    assert worker["task_id"] == "worker-1" and worker["log_tail"][-1] == LAST_LINE and len(worker["log_tail"]) == 30
    assert worker["log_truncated"] is True
    assert "ModuleNotFoundError: No module named 'torchvision'" in worker["log_tail"]
    assert [task["task_id"] for task in found["tasks"]] == ["worker-1", "worker-0"]
    assert [event["level"] for event in found["events"]] == ["Error", "Error"]
    assert all(event["time"].endswith("Z") for event in found["events"]) and found["events"][0]["time"] <= found["events"][1]["time"]
    assert found["errors"] == []
    # The cheap call served every log: lines, newest first; no preview was needed.
    calls = diagnostic_calls(emulator, FAILED)
    assert sorted(entry["path"].rsplit("/", 1)[-1] for entry in calls if "/logs/" in entry["path"]) == ["worker-0", "worker-1"]
    assert all("lines=30" in entry["query"] and "order=desc" in entry["query"] for entry in calls if "/logs/" in entry["path"])


def test_a_completed_job_costs_no_extra_call(emulator, run_playbook):
    emulator.clear_requests()
    play = gate_play(emulator, [COMPLETED])
    result = run_playbook(play)
    assert result.returncode == 0 and "DEPLOYED" in result.stdout, result.stdout
    modelarts_calls = [entry for entry in emulator.requests() if entry["path"].startswith("/v2/")]
    assert [entry["path"].rsplit("/", 1)[-1] for entry in modelarts_calls] == [COMPLETED], "one GET of the job, nothing else"


def test_the_lookup_of_a_failed_job_has_its_diagnostics(emulator, run_playbook, tmp_path):
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "ansible.builtin.copy": {
                        "dest": "{{ playbook_dir }}/item.json",
                        "content": "{{ lookup('modelarts.training.training_job', '%s', log_lines=5) | to_json }}" % FAILED,
                        "mode": "0600",
                    }
                }
            ],
        }
    ]
    result = run_playbook(play, env=emulator.env("aksk"))
    assert result.returncode == 0, result.stdout + result.stderr
    item = json.loads((tmp_path / "item.json").read_text())
    assert item["phase"] == "Failed" and item["failed"] is True
    assert item["diagnostics"]["tasks"][0]["log_tail"][-1] == LAST_LINE and len(item["diagnostics"]["tasks"][0]["log_tail"]) == 5
    assert item["diagnostics"]["events"][-1]["message"] == "Failed to run the training job."


def test_log_lines_0_reads_the_events_and_no_log(emulator, run_playbook, tmp_path):
    emulator.clear_requests()
    result = run_playbook(gate_play(emulator, [FAILED], {"log_lines": 0}))
    assert result.returncode == 0 and "RESCUED" in result.stdout, result.stdout
    found = failure(tmp_path)["jobs"][0]["diagnostics"]
    assert found["tasks"] == [] and found["events"] and found["errors"] == []
    calls = diagnostic_calls(emulator, FAILED)
    assert [entry["path"].rsplit("/", 1)[-1] for entry in calls] == ["events"], "no log call at all"


def test_diagnostics_false_makes_no_extra_call(emulator, run_playbook, tmp_path):
    emulator.clear_requests()
    result = run_playbook(gate_play(emulator, [FAILED], {"diagnostics": False}))
    assert result.returncode == 0 and "RESCUED" in result.stdout, result.stdout
    read = failure(tmp_path)
    assert read["jobs"][0]["diagnostics"] is None and LAST_LINE not in read["msg"]
    assert "reached phase Failed" in read["msg"]
    modelarts_calls = [entry for entry in emulator.requests() if entry["path"].startswith("/v2/")]
    assert [entry["path"].rsplit("/", 1)[-1] for entry in modelarts_calls] == [FAILED]


def test_a_non_boolean_diagnostics_is_an_error_naming_the_option(emulator, run_playbook):
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [{"ansible.builtin.debug": {"msg": "{{ lookup('modelarts.training.training_job', '%s', diagnostics='perhaps') }}" % FAILED}}],
        }
    ]
    result = run_playbook(play, env=emulator.env("aksk"))
    assert result.returncode != 0
    assert "diagnostics (keyword) must be a boolean (true or false), got 'perhaps'" in result.stdout + result.stderr


def test_a_403_on_the_log_api_is_an_errors_line_and_the_verdict_stays(emulator, run_playbook, tmp_path):
    job = add_failed_job(emulator, "diag-denied", log={"fault": "forbidden"})
    result = run_playbook(gate_play(emulator, [job]))
    assert result.returncode == 0 and "RESCUED" in result.stdout and "DEPLOYED" not in result.stdout, result.stdout
    read = failure(tmp_path)
    assert "reached phase Failed: task worker-0 exited with code 1: boom" in read["msg"]
    assert "2 diagnostics could not be read (see diagnostics.errors)" in read["msg"]
    found = read["jobs"][0]["diagnostics"]
    assert found["tasks"] == [] and found["events"], "the events were readable"
    assert [line.split(":")[0] for line in found["errors"]] == ["log of task worker-0 (AOM)", "log of task worker-0 (preview)"]
    assert all("HTTP 403 ModelArts.2771" in line and "modelarts:trainJob:getLogs" in line for line in found["errors"])


def test_a_known_secret_in_a_log_line_is_never_shown(emulator, run_playbook, tmp_path):
    log = {"lines": 10, "append": ["debug: export HUAWEICLOUD_SDK_SK=%s" % emulator.sk, "auth failed for %s" % emulator.sk]}
    job = add_failed_job(emulator, "diag-secret", log=log)
    tokens = endpoint_tokens(emulator, [job])
    result = run_playbook(gate_play(emulator, [job], {"include_endpoint_tokens": False}), verbosity=4)
    assert result.returncode == 0 and "RESCUED" in result.stdout, result.stdout
    read = failure(tmp_path)
    shown = result.stdout + result.stderr + json.dumps(read)
    for secret in [emulator.sk] + tokens:
        assert secret not in shown
    tail = read["jobs"][0]["diagnostics"]["tasks"][0]["log_tail"]
    assert tail[-1] == "auth failed for ********" and "export HUAWEICLOUD_SDK_SK=********" in tail[-2]
    assert any("lab?token=********" in line for line in tail), "the job's notebook token, printed in its log, is masked"


def test_control_characters_in_a_log_line_cannot_forge_lines(emulator, run_playbook, tmp_path):
    forged = "ok: [localhost] => deployed"
    job = add_failed_job(emulator, "diag-forge", log={"lines": 5, "append": ["\x1b[32mall good\x1b[0m\r%s\u2028%s\x0b%s" % (forged, forged, forged)]})
    result = run_playbook(gate_play(emulator, [job]))
    assert result.returncode == 0 and "RESCUED" in result.stdout, result.stdout
    assert not [line for line in result.stdout.splitlines() if line.lstrip().startswith(forged)]
    assert "\x1b" not in result.stdout
    read = failure(tmp_path)
    last = read["jobs"][0]["diagnostics"]["tasks"][0]["log_tail"][-1]
    assert last == "\\x1b[32mall good\\x1b[0m\\r%s\\u2028%s\\x0b%s" % (forged, forged, forged)
    assert "\n" not in read["msg"] and "\x1b" not in read["msg"] and "\\x1b[32mall good" in read["msg"]


def test_the_event_sources_failure_event_carries_diagnostics(emulator, ansible_env, tmp_path):
    bad = unique_id("diag-eda")
    emulator.add_jobs(
        [
            {
                "id": bad,
                "name": "diag-eda",
                "timeline": [{"phase": "Running", "polls": 1}, "Failed"],
                "failure": {"task": "worker-0", "exit_code": 137, "message": "OOMKilled"},
                "log": {"lines": 50, "append": ["leaked: %s" % emulator.sk, "[ModelArts Service Log]Training end with return code: 137"]},
            }
        ]
    )
    env = dict(ansible_env, **emulator.env())
    result = run_rulebook(env, tmp_path, os.path.join(RULEBOOKS, "diagnose_failures.yml"), {"training_job_ids": [bad], "interval": 0.3, "log_lines": 3})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert event_lines(result.stdout, "PLAIN") == [(bad, "Running", "None")]
    assert event_lines(result.stdout, "DIAG") == [(bad, "[ModelArts Service Log]Training end with return code: 137", "Failed to run the training job.", "0")]
    assert emulator.sk not in result.stdout + result.stderr
    dumped = [line for line in result.stdout.splitlines() if "DUMP|" in line]
    assert len(dumped) == 1 and "leaked: ********" in dumped[0], result.stdout[-3000:]
    logs = list(emulator.requests(path="/training-jobs/%s/logs/" % bad))
    assert len(logs) == 1 and "lines=3" in logs[0]["query"], "read once, when the event was made"
