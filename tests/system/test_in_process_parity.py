# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The task run in the controller's worker (the action plugin's default on a local connection) and the module run
through AnsiballZ (``-e modelarts_training_in_process=false``) give the same registered results.

One playbook holds a representative set of tasks; it runs twice against the emulator, reset to the same scenario
before each run, once each way, at -vvv. Each task's registered result is written to a file; the two files must be
equal but for the fields that measure time. The -vvv output shows the way each run took: ansible-core names the
module file it builds an AnsiballZ payload from ("Using module file ..."), once per module task and never in the
default run.

Issue 36 added the cases where the two ways had parted: a task's ``timeout:`` over requests in flight (the task ends
at its timeout either way: tests/system/test_review_36_in_process.py tells how long it took), path options written
with variables the task's ``environment:`` sets while the controller's own environment names another account's
profile, and option values that JSON changes on their way to the module (keys that are not strings, dates, tuples,
a vaulted secret).
"""

import datetime
import json
import os
import re
import subprocess
import sys

import pytest
import yaml
from ansible.release import __version__ as ANSIBLE_VERSION

from conftest import emulator_connection, run_in_group

COMPLETED = "a1000000-0000-4000-8000-000000000001"
# Another Completed job of the scenario (variety-subscription).
OTHER_COMPLETED = "a1000000-0000-4000-8000-000000000031"
FAILED = "a1000000-0000-4000-8000-000000000002"
RUNNING = "a1000000-0000-4000-8000-000000000005"
POLLS_TO_COMPLETED = "a1000000-0000-4000-8000-000000000010"
BIN = os.path.dirname(sys.executable)
# The ansible-core the playbooks run with: the one installed beside this interpreter (make test-cores runs this file
# with each core's venv).
CORE = tuple(int(part) for part in ANSIBLE_VERSION.split(".")[:2])
PROXY_PASSWORD = "proxy-pass-31a7"
DRIFTED = "a1e00000-0000-4000-8000-00000000d001"
SLOW = ["a1e00000-0000-4000-8000-00000000d101", "a1e00000-0000-4000-8000-00000000d102"]
TAGGED = "a1e00000-0000-4000-8000-00000000d201"
# A name YAML reads as a timestamp when unquoted: the module receives it as ISO text, "T" and all.
STAMPED = datetime.datetime(2024, 1, 2, 3, 4, 5)
STAMPED_NAME = "2024-01-02T03:04:05"
# The slow server stalls longer than the request timeout, far longer than the task's timeout.
STALL = 75
VAULT_PASSWORD = "vault-password-36"
PAYLOAD = re.compile(r"Using module file \S*/modules/modelarts_training_job_info\.py")
# Fields that measure time (or the poll count of a wait, which follows the clock).
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?")
# The request ids the emulator makes up for each answer vary too.
TIMING = {"request_id", "duration", "waited_seconds", "duration_seconds", "polls", "phase_history", "at", "time", "start", "delta", "end"}
# ansible-core 2.16-2.18 add to a task's ``timedout`` the Python frame its timeout interrupted (``frame``): where the
# worker happened to be at that moment, which is in this collection's code one way and in ansible-core's the other.
TIMING.add("frame")


def task(name, args, **keywords):
    """One module task whose result is registered as ``r_<index>`` (set by :func:`play`), failures ignored."""
    entry = {"name": name, "modelarts.training.modelarts_training_job_info": args, "ignore_errors": True}
    entry.update(keywords)
    return entry


def cases(emu, files):
    connection = emulator_connection(emu)
    only_place = dict((key, value) for key, value in connection.items() if key not in ("access_key", "secret_key"))
    environment = {"HUAWEICLOUD_SDK_AK": emu.ak, "HUAWEICLOUD_SDK_SK": emu.sk}
    without_ca = dict((key, value) for key, value in only_place.items() if key != "ca_bundle")
    task_profile = {"HUAWEICLOUD_PROFILE_DIR": files["task"], "HUAWEICLOUD_CA_DIR": files["task"]}
    slow = dict(connection, request_timeout=STALL - 15, backoff_retries=0)
    return [
        task("one id", dict(connection, training_job_id=COMPLETED)),
        task("ids", dict(connection, training_job_ids=[COMPLETED, RUNNING, FAILED])),
        task("name", dict(connection, name="phase-completed")),
        task("v1", dict(connection, job_id=2001, version_id=1)),
        task("v1 and v2", dict(connection, training_job_ids=[RUNNING], v1_jobs=[{"job_id": 2001, "version_id": 1}])),
        task("wait", dict(connection, training_job_id=POLLS_TO_COMPLETED, wait=True, wait_sleep=1, wait_timeout=60)),
        task("failing wait with diagnostics", dict(connection, training_job_ids=[COMPLETED, FAILED], wait=True, wait_sleep=1, wait_timeout=60)),
        task("schema warnings", dict(connection, training_job_id=DRIFTED, validate="warn")),
        task("schema failure", dict(connection, training_job_id=DRIFTED)),
        task("check mode", dict(connection, training_job_id=COMPLETED), check_mode=True),
        task("unknown option", dict(connection, training_job_id=COMPLETED, wiat=True)),
        task("bad value", dict(connection, training_job_id=COMPLETED, validate="sometimes")),
        task("bad wait_timeout", dict(connection, training_job_id=COMPLETED, wait=True, wait_timeout="soon")),
        task("mutually exclusive", dict(connection, training_job_id=COMPLETED, name="phase-completed")),
        task("none selected", dict(connection)),
        task("details_paths", dict(connection, training_job_ids=[COMPLETED, RUNNING], details_paths=["metadata.name", "status.phase"])),
        # Issue 48: what a job produced, its bounds and a baseline; the options' check of its suboptions.
        task(
            "metrics",
            dict(connection, training_job_ids=[COMPLETED, RUNNING], v1_jobs=[{"job_id": 2001, "version_id": 1}], metrics=[{"name": "accuracy", "min": 0.5}]),
        ),
        task(
            "metrics failing a wait",
            dict(
                connection,
                job_id=2001,
                version_id=1,
                wait=True,
                wait_sleep=1,
                metrics=[{"name": "accuracy", "min": 0.99}],
                # Another job: v1 job 2001 version 1 is the v1 document of COMPLETED, never its own baseline (issue 56).
                baseline={"training_job_id": OTHER_COMPLETED},
            ),
        ),
        task("unknown metrics key", dict(connection, training_job_id=COMPLETED, metrics=[{"name": "a", "regx": "a=(.*)"}])),
        task("validate_certs false warns", dict(connection, training_job_id=COMPLETED, validate_certs=False)),
        task("credentials through environment only", dict(only_place, training_job_id=COMPLETED), environment=environment),
        task("environment under the task's options", dict(connection, training_job_id=COMPLETED), environment={"HUAWEICLOUD_SDK_AK": "AKFROMENV"}),
        task("no credentials", dict(only_place, training_job_id=COMPLETED)),
        task("wrong secret", dict(connection, secret_key="not-the-secret-%s" % emu.sk[:4], training_job_id=COMPLETED)),
        task("module_defaults group only", dict(training_job_id=COMPLETED), module_defaults={"group/modelarts.training.modelarts": connection}),
        task("no_log", dict(connection, training_job_id=COMPLETED), no_log=True),
        task("proxy credentials", dict(connection, training_job_id=COMPLETED, proxy="http://user:%s@127.0.0.1:9" % PROXY_PASSWORD, backoff_retries=0)),
        task("task timeout", dict(connection, training_job_id=RUNNING, wait=True, wait_sleep=1, wait_timeout=60), timeout=3),
        # Issue 36, item 1: requests in flight when the task's timeout comes.
        task("task timeout over two slow jobs", dict(slow, training_job_ids=SLOW), timeout=3),
        # Issue 36, item 2: the task's environment names the profile; the controller's names another account's.
        task(
            "path options from the task's environment",
            dict(without_ca, training_job_id=COMPLETED, credentials_file="$HUAWEICLOUD_PROFILE_DIR/credentials", ca_bundle="${HUAWEICLOUD_CA_DIR}/ca.pem"),
            environment=task_profile,
        ),
        task("a path variable nobody sets", dict(only_place, training_job_id=COMPLETED, credentials_file="$HUAWEICLOUD_NOBODY_SETS/credentials")),
        # Issue 36, item 4: values JSON changes on their way to the module.
        task("a tag key that is a number", dict(connection, tags={2024: "q4"})),
        task("a tag key that is a boolean and a value that is a date", dict(connection, tags={True: "yes", "day": datetime.date(2024, 1, 2)})),
        task("a name that is a timestamp", dict(connection, name=STAMPED)),
        task("a tuple", dict(connection, training_job_ids="{{ ('%s', '%s') }}" % (COMPLETED, RUNNING))),
        task("a vaulted secret", dict(connection, secret_key="{{ vaulted_secret_key }}", training_job_id=COMPLETED)),
    ]


def play(emu, results_file, files):
    tasks = cases(emu, files)
    registered = []
    for index, entry in enumerate(tasks):
        entry["register"] = "r_%d" % index
        registered.append(entry["register"])
    gate = {
        "block": [
            {
                "name": "gate",
                "ansible.builtin.include_role": {"name": "modelarts.training.training_job_gate"},
                "vars": {"training_job_gate_ids": [COMPLETED, FAILED], "training_job_gate_timeout": 30, "training_job_gate_poll": 1},
            }
        ],
        "rescue": [{"ansible.builtin.set_fact": {"gate_failure": "{{ ansible_failed_result.msg }}"}}],
        "module_defaults": {"group/modelarts.training.modelarts": emulator_connection(emu)},
    }
    names = ", ".join("'%s': %s" % (name, name) for name in registered)
    keep = {
        "ansible.builtin.copy": {
            "dest": results_file,
            "mode": "0600",
            "content": "{{ {%s, 'gate': training_job_gate_result, 'gate_failure': gate_failure} | to_json }}" % names,
        }
    }
    return [{"hosts": "localhost", "gather_facts": False, "vars_files": [files["vault"]], "tasks": tasks + [gate, keep]}]


def extra_jobs(emu):
    drift = {"type": "drift", "mode": "set", "values": {"status.tasks": 3}, "count": -1}
    stall = {"type": "delay", "seconds": STALL, "count": -1}
    emu.add_jobs(
        [
            {"id": DRIFTED, "name": "drifted", "phase": "Completed", "faults": [drift]},
            {"id": TAGGED, "name": STAMPED_NAME, "phase": "Completed", "tags": {"2024": "q4", "true": "yes", "day": "2024-01-02"}},
        ]
        + [{"id": job, "name": "slow", "phase": "Running", "faults": [stall]} for job in SLOW]
    )


@pytest.fixture(scope="module")
def parity_files(emulator, tmp_path_factory):
    """The task's profile and CA file (and the controller's profile, another account's keys), and a vaulted secret."""
    folder = tmp_path_factory.mktemp("profiles")
    profiles = {"task": (emulator.ak, emulator.sk), "controller": ("OTHERACCOUNTAK", "other-account-secret-0123456789")}
    for name, (access_key, secret_key) in profiles.items():
        (folder / name).mkdir()
        text = "[basic]\nak = %s\nsk = %s\nproject_id = %s\n" % (access_key, secret_key, emulator.project_id)
        (folder / name / "credentials").write_text(text)
    with open(emulator.ca_file, "rb") as handle:
        (folder / "task" / "ca.pem").write_bytes(handle.read())
    password = folder / "vault-password"
    password.write_text(VAULT_PASSWORD + "\n")
    command = [os.path.join(BIN, "ansible-vault"), "encrypt_string", "--vault-password-file", str(password), "--name", "vaulted_secret_key", emulator.sk]
    vaulted = subprocess.run(command, capture_output=True, text=True, check=True, timeout=120).stdout
    (folder / "vault.yml").write_text(vaulted)
    return {"task": str(folder / "task"), "controller": str(folder / "controller"), "vault": str(folder / "vault.yml"), "password": str(password)}


def untimed(value):
    """``value`` without what follows the clock: the emulator's jobs live on a timeline that starts at its reset."""
    if isinstance(value, dict):
        return dict((key, untimed(item)) for key, item in value.items() if key not in TIMING and not key.endswith(("_time", "_at", "timestamp")))
    if isinstance(value, list):
        return [untimed(item) for item in value]
    if isinstance(value, str):
        # A time or a duration quoted in a message follows the clock too.
        value = ISO_TIME.sub("<t>", re.sub(r"request id [0-9a-f]+", "request id <id>", value))
        return re.sub(r"\d+(\.\d+)? ?(s|seconds)\b", "<t>", value)
    if isinstance(value, int) and not isinstance(value, bool) and value > 10**12:
        return "<t>"  # milliseconds since the epoch
    return value


def difference(left, right, path=""):
    """The first place where ``left`` and ``right`` differ, with both values, or None."""
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right)):
            found = difference(left.get(key, "<missing>"), right.get(key, "<missing>"), "%s.%s" % (path, key))
            if found:
                return found
        return None
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for index, (one, other) in enumerate(zip(left, right)):
            found = difference(one, other, "%s[%d]" % (path, index))
            if found:
                return found
        return None
    return None if left == right else (path, left, right)


@pytest.fixture(scope="module")
def both_ways(emulator, run_playbook_module, tmp_path_factory, parity_files):
    runs = {}
    # The controller's own environment names another account's profile, and a CA folder that does not exist.
    controller = {
        "HUAWEICLOUD_PROFILE_DIR": parity_files["controller"],
        "HUAWEICLOUD_CA_DIR": parity_files["controller"] + "-none",
        "ANSIBLE_VAULT_PASSWORD_FILE": parity_files["password"],
    }
    for way, extra in (("in_process", None), ("module", {"modelarts_training_in_process": False})):
        emulator.reset()
        extra_jobs(emulator)
        results = str(tmp_path_factory.mktemp(way) / "results.json")
        proc = run_playbook_module(play(emulator, results, parity_files), extra_vars=extra, verbosity=3, env=controller)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
        with open(results) as handle:
            runs[way] = (json.load(handle), proc.stdout + proc.stderr)
    return runs


@pytest.fixture(scope="module")
def run_playbook_module(ansible_env, tmp_path_factory):
    """The conftest's ``run_playbook`` at module scope: both runs serve every test below."""

    def run(playbook, extra_vars=None, verbosity=0, env=None):
        folder = tmp_path_factory.mktemp("parity")
        path = folder / "playbook.yml"
        path.write_text(yaml.safe_dump(playbook, sort_keys=False))
        command = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(path)]
        if verbosity:
            command.append("-" + "v" * verbosity)
        if extra_vars:
            command += ["-e", json.dumps(extra_vars)]
        # In a group of its own, ended with the playbook: the module of "task timeout" is left polling by ansible-core
        # when the task's timeout ends it, and would poll the session's emulator during the tests that come next.
        return run_in_group(command, dict(ansible_env, **(env or {})), str(folder), 600)

    return run


def timed_out_after_3_seconds(result):
    """``result`` ended at its task's ``timeout: 3``: ansible-core's words (before 2.19 "... in the expected time frame (3)
    and was terminated", from it "Timed out after 3 second(s)."), and from 2.18 on the period under ``timedout`` (which
    2.16 and 2.17 do not record)."""
    said = "time frame (3)" in result["msg"] or "Timed out after 3 second" in result["msg"]
    return said and (CORE < (2, 18) or result["timedout"]["period"] == 3)


def test_every_task_gives_the_same_registered_result_both_ways(both_ways, emulator, parity_files):
    in_process, module = both_ways["in_process"][0], both_ways["module"][0]
    assert sorted(in_process) == sorted(module)
    for name in sorted(module):
        assert difference(untimed(in_process[name]), untimed(module[name])) is None, name
    # The cases really are what they claim (a parity of two identical failures would prove little).
    every_case = cases(emulator, parity_files)
    results = [module["r_%d" % index] for index in range(len(every_case))]
    by_name = dict((entry["name"], result) for entry, result in zip(every_case, results))
    assert by_name["one id"]["training_job"]["phase"] == "Completed" and not by_name["one id"]["failed"]
    assert by_name["wait"]["training_job"]["phase"] == "Completed" and by_name["wait"]["training_job"]["polls"] > 1
    assert by_name["failing wait with diagnostics"]["failed"] and by_name["failing wait with diagnostics"]["job_messages"]
    assert by_name["schema warnings"]["warnings"] and not by_name["schema warnings"]["failed"]
    assert by_name["schema failure"]["failed"] and by_name["schema failure"]["schema_errors"]
    assert by_name["unknown option"]["msg"].startswith("Unsupported parameters for (modelarts.training.modelarts_training_job_info) module: wiat")
    assert by_name["bad value"]["failed"] and "validate" in by_name["bad value"]["msg"]
    assert [item["metrics_ok"] for item in by_name["metrics"]["training_jobs"]] == [False, None, True]
    assert by_name["metrics failing a wait"]["failed"] and "accuracy is" in by_name["metrics failing a wait"]["msg"]
    assert by_name["metrics failing a wait"]["baseline_job"]["id"] == OTHER_COMPLETED
    assert "metrics.regx (did you mean regex?)" in by_name["unknown metrics key"]["msg"]
    assert by_name["mutually exclusive"]["failed"] and "mutually exclusive" in by_name["mutually exclusive"]["msg"]
    assert by_name["credentials through environment only"]["training_job"]["phase"] == "Completed"
    assert by_name["environment under the task's options"]["training_job"]["phase"] == "Completed"
    assert by_name["no credentials"]["failed"] and "module_defaults included" in by_name["no credentials"]["msg"]
    assert by_name["wrong secret"]["failed"]
    assert by_name["module_defaults group only"]["training_job"]["phase"] == "Completed"
    assert by_name["no_log"]["training_job"]["phase"] == "Completed"
    assert by_name["proxy credentials"]["failed"] and "Unable to connect to proxy" in by_name["proxy credentials"]["msg"]
    timeout = by_name["task timeout"]
    assert timeout["failed"] and timed_out_after_3_seconds(timeout), timeout
    assert module["gate"]["failed"] is False and "phase Failed" in module["gate_failure"]
    slow = by_name["task timeout over two slow jobs"]
    assert slow["failed"] and timed_out_after_3_seconds(slow) and "training_jobs" not in slow, slow
    assert by_name["path options from the task's environment"]["training_job"]["phase"] == "Completed"
    assert "$HUAWEICLOUD_NOBODY_SETS/credentials" in by_name["a path variable nobody sets"]["msg"]
    for name in ("a tag key that is a number", "a tag key that is a boolean and a value that is a date", "a name that is a timestamp"):
        assert [item["id"] for item in by_name[name]["training_jobs"]] == [TAGGED], name
    if CORE < (2, 19):
        # ansible-core 2.16-2.18 render a template's tuple as its text, "('...', '...')": the option names the first item.
        assert by_name["a tuple"]["failed"] and by_name["a tuple"]["msg"].startswith("training_job_ids[0]: \"('%s'\"" % COMPLETED), by_name["a tuple"]
    else:
        assert [item["id"] for item in by_name["a tuple"]["training_jobs"]] == [COMPLETED, RUNNING]
    assert by_name["a vaulted secret"]["training_job"]["phase"] == "Completed"


def test_secrets_are_masked_both_ways(both_ways, emulator):
    for way, (results, output) in both_ways.items():
        text = json.dumps(results)
        assert emulator.sk not in text, way
        # The module's -vvv EXEC line carries the task's environment: HUAWEICLOUD_SDK_SK of "credentials through
        # environment only" in clear (ansible-core's doing). The worker that runs the task itself has no command line.
        assert (emulator.sk in output) is (way == "module"), way
        assert "not-the-secret-" not in text, way
        assert PROXY_PASSWORD not in text and PROXY_PASSWORD not in output, way
        # -vvv shows each result's invocation: the secret option's value masked, the same number of times both ways
        # (ansible-core 2.21 leaves the invocation out unless INJECT_INVOCATION asks for it).
        masked = '"secret_key": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"'
        assert output.count(masked) == both_ways["module"][1].count(masked), way
        assert output.count(masked) > 10 if CORE < (2, 21) else output.count(masked) == 0, way
        assert output.count("the output has been hidden") == 1, way


def warnings_in(output):
    """Each ``[WARNING]: `` message of ``output`` on one line: ansible-core 2.16-2.18 wrap a warning at 79 columns, its
    following lines starting with no ``[`` (2.19 on print it whole)."""
    found = []
    for line in output.splitlines():
        if line.startswith("[WARNING]: "):
            found.append(line)
        elif found and found[-1] is not None and line and not line.startswith(("[", " ")):
            found[-1] += " " + line
        elif found:
            found.append(None)  # the warning ended
    return [line for line in found if line is not None]


def test_warnings_are_shown_alike_both_ways(both_ways):
    shown = {}
    for way, (_results, output) in both_ways.items():
        lines = warnings_in(output)
        shown[way] = sorted(re.sub(r"127\.0\.0\.1:\d+", "<emulator>", line) for line in lines)
        assert any("validate_certs is false" in line for line in lines), way
        assert any("is not of type 'array'" in line for line in lines), way
    assert shown["in_process"] == shown["module"]


def test_the_default_run_builds_no_module_payload_and_the_other_one_per_task(both_ways, emulator, parity_files):
    module_tasks = len(cases(emulator, parity_files)) + 1  # and the gate's
    assert len(PAYLOAD.findall(both_ways["in_process"][1])) == 0
    assert len(PAYLOAD.findall(both_ways["module"][1])) == module_tasks


def test_async_and_a_proxy_variable_take_the_module(emulator, run_playbook, tmp_path):
    connection = emulator_connection(emulator)
    tasks = [
        task("async", dict(connection, training_job_id=COMPLETED), **{"async": 60, "poll": 0}),
        task("proxy variable", dict(connection, training_job_id=COMPLETED), environment={"NO_PROXY": "127.0.0.1"}),
        task("in process", dict(connection, training_job_id=COMPLETED), environment={"HUAWEICLOUD_SDK_REGION": connection["region"]}),
    ]
    for index, entry in enumerate(tasks):
        entry["register"] = "r_%d" % index
    # The async task's result, polled as users do: ansible-core's own poll (poll: 1) takes async_status's "could not find
    # job" as the end when its async_wrapper reports the job started before the job file exists (it waits 2.5 s at most),
    # which a loaded machine hits; an until loop reads on.
    tasks[0]["register"] = "r_async"
    tasks.insert(
        1,
        {
            "ansible.builtin.async_status": {"jid": "{{ r_async.ansible_job_id }}"},
            "register": "r_0",
            "until": "r_0.finished | default(0) | int == 1",
            "retries": 120,
            "delay": 1,
        },
    )
    tasks.append({"ansible.builtin.copy": {"dest": str(tmp_path / "r.json"), "content": "{{ [r_0, r_1, r_2] | to_json }}", "mode": "0600"}})
    proc = run_playbook([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}], verbosity=3)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    results = json.loads((tmp_path / "r.json").read_text())
    assert [(result.get("training_job") or {}).get("phase") for result in results] == ["Completed"] * 3, json.dumps(results)[:4000]
    assert len(PAYLOAD.findall(proc.stdout)) == 2


def test_a_setting_that_is_not_a_boolean_is_an_error(emulator, run_playbook):
    tasks = [task("bad setting", dict(emulator_connection(emulator), training_job_id=COMPLETED))]
    tasks[0].pop("ignore_errors")
    proc = run_playbook([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}], extra_vars={"modelarts_training_in_process": "sometimes"})
    assert proc.returncode != 0
    assert "modelarts_training_in_process must be a boolean, got 'sometimes'" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
