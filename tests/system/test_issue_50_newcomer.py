# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a fourth newcomer met (issue 50), met through ``ansible-playbook`` against the emulator: a job's name given
as its id, a region that names nothing in the call, a host name that does not resolve, durations with fifteen digits,
and the emulator's failed jobs telling one story each.

Each test fails on the code before the issue; docs/troubleshooting.md quotes the messages they see.
"""

import json
import re
import uuid

import pytest

from documented import assert_documented

ROLE = "modelarts.training.training_job_gate"
# The hint a "not found" carries for a value that cannot be an id (the module's and the event source's option).
NOT_AN_ID = "(not a training job id, which is a UUID such as 3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718: to select jobs by their name, use name)"


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


def output(result):
    return result.stdout + result.stderr


def info_play(task, in_process=True, module_defaults=None):
    """One play: a ``modelarts_training_job_info`` task (its failure ignored), then its ``msg`` and result printed."""
    play = {
        "hosts": "localhost",
        "gather_facts": False,
        "vars": {"modelarts_training_in_process": in_process},
        "tasks": [
            {"name": "read", "modelarts.training.modelarts_training_job_info": task, "register": "job", "ignore_errors": True},
            {"name": "show", "ansible.builtin.debug": {"msg": "MSG={{ job.msg | default('') }}"}},
            {"name": "save", "ansible.builtin.copy": {"content": "{{ job | to_json }}", "dest": "result.json", "mode": "0600"}},
        ],
    }
    if module_defaults:
        play["module_defaults"] = {"group/modelarts.training.modelarts": module_defaults}
    return [play]


def shown_message(result):
    found = re.search(r"MSG=(.*?)\"?$", result.stdout, re.M)
    assert found, output(result)[-3000:]
    return found.group(1)


def saved_result(tmp_path):
    return json.loads((tmp_path / "result.json").read_text())


HOW = pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "module"])


# -- item 1: a job's name given as training_job_id ---------------------------------------------------------------


@pytest.fixture
def named_job(emulator):
    """A Completed job with a name of its own: what a newcomer gives as training_job_id."""
    name = unique("i50-nightly")
    emulator.add_jobs([{"id": str(uuid.uuid4()), "name": name, "phase": "Completed"}])
    return name


@HOW
@pytest.mark.parametrize("wait", [False, True], ids=["read", "wait"])
def test_a_name_given_as_training_job_id_is_said_to_be_no_id_and_points_to_name(emulator, run_playbook, tmp_path, named_job, in_process, wait):
    task = dict(emulator.connection("aksk"), training_job_id=named_job, wait=wait, wait_timeout=30, wait_sleep=0.5)
    result = run_playbook(info_play(task, in_process))
    message = shown_message(result)
    expected = "get training job %s: HTTP 400 ModelArts.2775: Training job not found. %s" % (named_job, NOT_AN_ID)
    assert expected in message, message
    assert "check project_id" not in message, message
    if wait:
        # It will never be found: the wait ends on the first answer, not after the polls a job just created is allowed.
        assert "not found after" not in message and saved_result(tmp_path)["training_job"]["polls"] == 1, message
    assert_documented(message)


def test_a_uuid_that_no_job_has_still_says_to_check_the_project(emulator, run_playbook):
    task = dict(emulator.connection("aksk"), training_job_id=str(uuid.uuid4()))
    message = shown_message(run_playbook(info_play(task)))
    assert "(no training job has this id in the project asked: check project_id (HUAWEICLOUD_SDK_PROJECT_ID) and region)" in message, message
    assert "not a training job id" not in message


def test_the_lookup_given_a_name_says_it_reads_ids_and_where_names_are_searched(emulator, run_playbook, named_job):
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "vars": dict(("modelarts_%s" % name, value) for name, value in emulator.connection("aksk").items()),
            "tasks": [{"ansible.builtin.debug": {"msg": "{{ lookup('modelarts.training.training_job', '%s') }}" % named_job}}],
        }
    ]
    result = run_playbook(play)
    assert result.returncode != 0
    expected = (
        "(not a training job id, which is a UUID such as 3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718: the lookup reads jobs by id; "
        "modelarts_training_job_info's name finds a name's jobs)"
    )
    assert expected in output(result), output(result)[-3000:]
    assert_documented(expected)


def test_the_gate_given_a_name_as_an_id_points_to_its_name_variable(emulator, run_playbook, named_job):
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "module_defaults": {"group/modelarts.training.modelarts": emulator.connection("aksk")},
            "roles": [{"role": ROLE, "vars": {"training_job_gate_ids": [named_job], "training_job_gate_poll": 0.2, "training_job_gate_timeout": 30}}],
        }
    ]
    result = run_playbook(play)
    text = output(result)
    assert result.returncode != 0
    assert "to select jobs by their name, use training_job_gate_name)" in text, text[-3000:]
    assert "use name)" not in text


# -- item 2: a region that names no host and no project -----------------------------------------------------------


def warnings_in(text):
    """Each ``[WARNING]: `` message of ``text`` on one line (ansible-core 2.16-2.18 wrap a warning at 79 columns)."""
    found = []
    for line in text.splitlines():
        if line.startswith("[WARNING]: "):
            found.append(line[len("[WARNING]: ") :])
        elif found and found[-1] is not None and line and not line.startswith(("[", " ")):
            found[-1] += " " + line
        elif found:
            found.append(None)
    return [line for line in found if line is not None]


def unused_region(level):
    return (
        "region eu-west-101 (%s) is not used: endpoint (environment variable HUAWEICLOUD_MODELARTS_ENDPOINT) names the host and "
        "project_id (environment variable HUAWEICLOUD_SDK_PROJECT_ID) the project, and no request carries a region (the AK/SK "
        "signature does not include one); to call eu-west-101, set endpoint and project_id for it (or leave them unset), else "
        "leave region out" % level
    )


@HOW
@pytest.mark.parametrize("where", ["task", "module_defaults"])
def test_a_region_over_the_exported_endpoint_and_project_is_said_to_be_unused(emulator, run_playbook, tmp_path, in_process, where):
    """getting_started.md's exports, then a play for another region: the job is read from the exported project, and the
    play is told its region chose nothing."""
    job = str(uuid.uuid4())
    emulator.add_jobs([{"id": job, "name": unique("i50-region"), "phase": "Completed"}])
    task = {"training_job_id": job}
    if where == "task":
        task["region"] = "eu-west-101"
    result = run_playbook(info_play(task, in_process, {"region": "eu-west-101"} if where == "module_defaults" else None), env=emulator.env())
    assert result.returncode == 0 and saved_result(tmp_path)["training_job"]["phase"] == "Completed", output(result)[-3000:]
    assert warnings_in(output(result)) == [unused_region("task option")], output(result)[-3000:]
    assert_documented(unused_region("task option"))


def test_the_lookup_says_the_same_of_a_modelarts_region_variable(emulator, run_playbook):
    job = str(uuid.uuid4())
    emulator.add_jobs([{"id": job, "name": unique("i50-region"), "phase": "Completed"}])
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "vars": {"modelarts_region": "eu-west-101"},
            "tasks": [{"ansible.builtin.debug": {"msg": "PHASE={{ lookup('modelarts.training.training_job', '%s', field='phase') }}" % job}}],
        }
    ]
    result = run_playbook(play, env=emulator.env())
    assert result.returncode == 0 and "PHASE=Completed" in result.stdout, output(result)[-3000:]
    assert warnings_in(output(result)) == [unused_region("variable modelarts_region")], output(result)[-3000:]


@HOW
def test_a_region_written_with_its_endpoint_and_project_is_not_warned_about(emulator, run_playbook, tmp_path, in_process):
    """The emulator's connection in module_defaults, and the exported one with the task's region the same: no warning."""
    job = str(uuid.uuid4())
    emulator.add_jobs([{"id": job, "name": unique("i50-region"), "phase": "Completed"}])
    together = run_playbook(info_play({"training_job_id": job}, in_process, emulator.connection("aksk")))
    same = run_playbook(info_play({"training_job_id": job, "region": emulator.region}, in_process), env=emulator.env())
    for result in (together, same):
        assert result.returncode == 0 and saved_result(tmp_path)["training_job"]["phase"] == "Completed", output(result)[-3000:]
        assert "[WARNING]" not in output(result), output(result)[-3000:]


# -- item 3: a host name that does not resolve ---------------------------------------------------------------------


@HOW
def test_a_host_name_that_does_not_resolve_is_said_at_once_not_after_five_attempts(emulator, run_playbook, tmp_path, in_process):
    """The client's default retries (backoff_retries 4) are not spent on a name the resolver does not know: the first
    answer is the last. ``.invalid`` never resolves (RFC 2606)."""
    job = str(uuid.uuid4())
    task = dict(emulator.connection("aksk"), training_job_id=job, endpoint="https://modelarts.example.invalid", wait=True, wait_timeout=120)
    message = shown_message(run_playbook(info_play(task, in_process)))
    assert message.startswith("stopped waiting for Completed after ") and " on an error, 1 of 1 training job not Completed: " in message, message
    assert "Failed to resolve 'modelarts.example.invalid'" in message or "Name or service not known" in message, message
    assert "(modelarts.example.invalid is the host of endpoint (task option): check it)" in message, message
    assert "gave up after" not in message, message
    assert saved_result(tmp_path)["training_job"]["polls"] == 1
    assert_documented(message)


def test_a_refused_port_is_still_retried(emulator, run_playbook):
    """The neighbour: a port that refuses may be a service restarting, and keeps the client's retries."""
    from peers import closed_port  # pylint: disable=import-outside-toplevel

    task = dict(emulator.connection("aksk"), training_job_id=str(uuid.uuid4()), endpoint="https://127.0.0.1:%d" % closed_port(), backoff_retries=2)
    message = shown_message(run_playbook(info_play(task)))
    assert "Connection refused" in message and "(gave up after 3 attempts)" in message, message


# -- item 4: durations in milliseconds -----------------------------------------------------------------------------


def decimals(value):
    return len(repr(value).partition(".")[2])


@HOW
def test_waited_seconds_is_in_milliseconds_in_the_result_and_as_printed(emulator, run_playbook, tmp_path, in_process):
    job = str(uuid.uuid4())
    emulator.add_jobs([{"id": job, "name": unique("i50-durations"), "timeline": ["Pending", "Running", "Completed"], "run_seconds": 64.3946}])
    task = dict(emulator.connection("aksk"), training_job_id=job, wait=True, wait_timeout=60, wait_sleep=0.3, wait_sleep_max=0.3)
    result = run_playbook(info_play(task, in_process), verbosity=1)
    item = saved_result(tmp_path)["training_job"]
    assert item["phase"] == "Completed" and item["polls"] >= 3, item
    # A monotonic reading's difference has fifteen digits after the point; milliseconds have three at most.
    assert decimals(item["waited_seconds"]) <= 3 and item["waited_seconds"] > 0, item["waited_seconds"]
    assert decimals(item["duration_seconds"]) <= 3, item["duration_seconds"]
    printed = re.findall(r'"(?:waited|duration)_seconds": ([0-9.]+)', result.stdout)
    assert printed and all(decimals(float(value)) <= 3 and len(value.partition(".")[2]) <= 3 for value in printed), printed


def test_the_lookups_items_say_milliseconds_too(emulator, run_playbook):
    job = str(uuid.uuid4())
    emulator.add_jobs([{"id": job, "name": unique("i50-durations"), "timeline": ["Running", "Completed"]}])
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "vars": dict(("modelarts_%s" % name, value) for name, value in emulator.connection("aksk").items()),
            "tasks": [
                {
                    "ansible.builtin.debug": {
                        "msg": "LOOKUP={{ lookup('modelarts.training.training_job', '%s', wait=true, wait_sleep=0.3, field='waited_seconds') }}" % job
                    }
                }
            ],
        }
    ]
    result = run_playbook(play)
    value = re.search(r"LOOKUP=([0-9.]+)", result.stdout).group(1)
    assert len(value.partition(".")[2]) <= 3, value


# -- item 6: the emulator's failed jobs, one story each -------------------------------------------------------------


@HOW
def test_the_emulators_failed_jobs_each_tell_one_story(emulator, run_playbook, tmp_path, in_process):
    """Read through the module, as a newcomer reads the demo's failures: the default failed job, an import error and a
    container killed for memory. Before issue 50 the first showed a CUDA out-of-memory error and "loss is NaN" together
    and "exited with code 1" twice, the second ended inside conv.py's forward, the third printed a CUDA traceback."""
    diverged, missing, killed = (str(uuid.uuid4()) for _each in range(3))
    emulator.add_jobs(
        [
            {"id": diverged, "name": unique("i50-default-failed"), "phase": "Failed"},
            {
                "id": missing,
                "name": unique("i50-import"),
                "phase": "Failed",
                "node_count": 2,
                "failure": {"task": "worker-1", "exit_code": 2, "message": "ModuleNotFoundError: No module named 'torchvision'"},
            },
            {
                "id": killed,
                "name": unique("i50-oomkilled"),
                "phase": "Failed",
                "failure": {"task": "worker-0", "exit_code": 137, "message": "Container killed: out of memory (OOMKilled)"},
            },
        ]
    )
    task = dict(emulator.connection("aksk"), training_job_ids=[diverged, missing, killed], wait=True, wait_timeout=30, log_lines=12)
    message = shown_message(run_playbook(info_play(task, in_process)))
    items = dict((item["id"], item) for item in saved_result(tmp_path)["training_jobs"])
    assert message.startswith("stopped waiting for Completed after ") and len(items) == 3, message

    def told(job):
        item = items[job]
        tail = item["diagnostics"]["tasks"][0]["log_tail"]
        return item["failure_reason"], [event["message"] for event in item["diagnostics"]["events"]], tail

    reason, events, tail = told(diverged)
    assert reason == "task worker-0 exited with code 1: RuntimeError: training diverged: loss is NaN", reason
    assert "[worker-0] Training process exited with code 1: RuntimeError: training diverged: loss is NaN" in events, events
    assert tail[-2:] == ["RuntimeError: training diverged: loss is NaN", "[ModelArts Service Log]Training end with return code: 1"], tail
    assert not [line for line in tail + events if "CUDA" in line or "out of memory" in line or "OutOfMemory" in line], tail

    reason, events, tail = told(missing)
    assert tail[-3:] == [
        "    import torchvision",
        "ModuleNotFoundError: No module named 'torchvision'",
        "[ModelArts Service Log]Training end with return code: 2",
    ]
    assert not [line for line in tail if "conv.py" in line or "forward" in line or "torch/nn" in line], tail

    reason, events, tail = told(killed)
    assert reason == "task worker-0 exited with code 137: Container killed: out of memory (OOMKilled)", reason
    assert " Killed " in tail[-2] and tail[-1] == "[ModelArts Service Log]Training end with return code: 137", tail
    assert not [line for line in tail if "Traceback" in line or "CUDA" in line or line.startswith("ERROR")], tail
    for job in (diverged, missing, killed):
        # Each job's line in the message says how its task ended once, and its own story only.
        line = next(part for part in message.split("; training job ") if job in part)
        assert line.count("Training end with return code") == 1, line
