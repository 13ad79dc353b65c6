# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The review's holes (issue 20), met the way a user meets them: a playbook, a CI runner's environment, a
crafted inventory value, a rescue block reading the message.

Each test fails on the code before its fix.  The emulator's request log (and, for a crafted region, a
listener standing in for the other host) shows what left this machine.
"""

import asyncio
import json
import socket
import threading
import uuid

import pytest

from eda_helpers import connection_args, load_source
from test_user_patterns import COMPLETED, Repo, iam_token, vaulted_vars


@pytest.fixture
def repo(tmp_path, ansible_env):
    return Repo(tmp_path, ansible_env)


@pytest.fixture
def other_host():
    """A TCP listener on loopback standing in for a host the user never named; it counts connections."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    seen = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _addr = server.accept()
            except OSError:
                continue
            seen.append(conn.recv(65536))
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], seen
    stop.set()
    thread.join(5)
    server.close()


def module_play(task, rescue=False):
    block = {"name": "read", "modelarts.training.modelarts_training_job_info": task, "register": "job"}
    if not rescue:
        return [{"hosts": "localhost", "gather_facts": False, "tasks": [block]}]
    return [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "block": [
                        block,
                        {"name": "gate opened", "ansible.builtin.debug": {"msg": "GATE=open JOBS={{ job.training_jobs | map(attribute='name') | join(',') }}"}},
                    ],
                    "rescue": [{"name": "why", "ansible.builtin.debug": {"msg": "RESCUED={{ ansible_failed_result.msg }}"}}],
                }
            ],
        }
    ]


def without(options, *names):
    return dict((key, value) for key, value in options.items() if key not in names)


# -- 1. region moves no host ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["cn-north-4@127.0.0.1:{port}/", "x.127.0.0.1:{port}#", "x@127.0.0.1:{port}/.."])
def test_a_crafted_region_from_the_runner_environment_sends_nothing_anywhere(emulator, repo, other_host, shape):
    port, seen = other_host
    region = shape.format(port=port)
    task = without(emulator.connection("aksk"), "region", "endpoint", "iam_endpoint")
    task["training_job_id"] = COMPLETED
    result = repo.play(module_play(task), env={"HUAWEICLOUD_SDK_REGION": region}, verbosity=4)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "region (environment variable HUAWEICLOUD_SDK_REGION) must be a region name" in out, out[-3000:]
    assert not seen, "the signed request reached a host the user never named"
    assert emulator.sk not in out


def test_a_crafted_modelarts_region_in_the_inventory_sends_no_password_anywhere(emulator, repo, other_host):
    port, seen = other_host
    main, vault = vaulted_vars(emulator, modelarts_region="cn-north-4@127.0.0.1:%d/" % port)
    for name in ("modelarts_access_key", "modelarts_secret_key", "modelarts_endpoint", "modelarts_iam_endpoint"):
        main.pop(name)
    main.update(modelarts_username=emulator.username, modelarts_password="{{ vault_password }}", modelarts_domain_name=emulator.domain_name)
    vault["vault_password"] = emulator.password
    repo.group_vars(main, vault)
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [{"name": "show", "ansible.builtin.debug": {"msg": "{{ lookup('modelarts.training.training_job', '%s', field='phase') }}" % COMPLETED}}],
        }
    ]
    result = repo.play(play)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "region (variable modelarts_region) must be a region name" in out, out[-3000:]
    assert not seen and emulator.password not in out


# -- 2. a secret ending in a newline ------------------------------------------------------------------


def test_a_token_from_a_yaml_block_is_stripped_and_works(emulator, repo):
    token = iam_token(emulator)
    repo.group_vars({"emulator_url": emulator.url}, {"vault_token": token + "\n"})
    task = without(emulator.connection("aksk"), "access_key", "secret_key")
    task.update(auth_token="{{ vault_token }}", training_job_id=COMPLETED)
    result = repo.play(module_play(task), verbosity=4)
    assert result.returncode == 0, result.stdout[-3000:]
    assert token not in result.stdout + result.stderr and token[:40] not in result.stdout + result.stderr


@pytest.mark.parametrize("variable", ["HUAWEICLOUD_SDK_AUTH_TOKEN", "HUAWEICLOUD_SDK_SECURITY_TOKEN"])
def test_a_control_character_inside_an_environment_secret_is_refused_unechoed(emulator, repo, variable):
    secret = "SECRET0123456789abcdef\nX-Injected: 1\nSECRETtail0123456789"
    env = {variable: secret}
    task = without(emulator.connection("aksk"), "access_key", "secret_key")
    if variable == "HUAWEICLOUD_SDK_SECURITY_TOKEN":
        env.update(HUAWEICLOUD_SDK_AK=emulator.ak, HUAWEICLOUD_SDK_SK=emulator.sk)
    task["training_job_id"] = COMPLETED
    emulator.clear_requests()
    result = repo.play(module_play(task), env=env, verbosity=4)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "(environment variable %s) contains a control character" % variable in out, out[-3000:]
    assert "SECRET0123456789" not in out and "SECRETtail" not in out and "X-Injected" not in out
    assert not emulator.requests(), "refused before any request"


# -- 9. security_token belongs with the access key -----------------------------------------------------


def test_a_task_security_token_beside_runner_aksk_is_an_error_not_ignored(emulator, repo):
    env = {"HUAWEICLOUD_SDK_AK": emulator.ak, "HUAWEICLOUD_SDK_SK": emulator.sk, "HUAWEICLOUD_SDK_SECURITY_TOKEN": "RUNNER-OLD-TOKEN-0123456789"}
    task = without(emulator.connection("aksk"), "access_key", "secret_key")
    task.update(security_token="TASK-NEW-TOKEN-0123456789", training_job_id=COMPLETED)
    emulator.clear_requests()
    result = repo.play(module_play(task), env=env)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "security_token (task option) is set without access_key at the same level" in out, out[-3000:]
    assert "TASK-NEW-TOKEN" not in out and "RUNNER-OLD-TOKEN" not in out
    assert not emulator.requests()


# -- 6, 7, 8. waiting by name ---------------------------------------------------------------------------


def test_waiting_on_a_misspelt_name_never_opens_the_gate(emulator, repo):
    name = "nightly-%s" % uuid.uuid4().hex[:8]
    emulator.add_job(id=str(uuid.uuid4()), name=name, phase="Completed")
    task = dict(emulator.connection("aksk"), name=name + "-typo", wait=True, wait_timeout=3, wait_sleep=1)
    result = repo.play(module_play(task, rescue=True))
    assert result.returncode == 0, result.stdout[-3000:]
    assert "GATE=open" not in result.stdout
    assert "RESCUED=no training job named '%s-typo' was found after waiting" % name in result.stdout, result.stdout[-3000:]


def test_waiting_on_a_name_picks_up_a_job_created_during_the_wait(emulator, repo):
    name = "later-%s" % uuid.uuid4().hex[:8]
    stop = threading.Event()

    def create_once_searched():
        # Created once the wait has searched for the name and found nothing (an event, not a time): during the wait.
        while not stop.wait(0.05):
            if [entry for entry in emulator.requests(path="/training-job-searches") if name in json.dumps(entry.get("body"))]:
                emulator.add_job(id=str(uuid.uuid4()), name=name, phase="Completed")
                return

    creator = threading.Thread(target=create_once_searched, daemon=True)
    creator.start()
    try:
        task = dict(emulator.connection("aksk"), name=name, wait=True, wait_timeout=120, wait_sleep=1)
        result = repo.play(module_play(task, rescue=True))
    finally:
        stop.set()
        creator.join()
    assert "GATE=open JOBS=%s" % name in result.stdout, result.stdout[-3000:]


@pytest.mark.parametrize("phase,opens", [("Completed", True), ("Running", False)])
def test_wait_timeout_0_by_name_looks_once(emulator, repo, phase, opens):
    name = "look-once-%s" % uuid.uuid4().hex[:8]
    emulator.add_job(id=str(uuid.uuid4()), name=name, phase=phase)
    task = dict(emulator.connection("aksk"), name=name, wait=True, wait_timeout=0)
    result = repo.play(module_play(task, rescue=True))
    assert ("GATE=open" in result.stdout) is opens, result.stdout[-3000:]
    assert "deadline passed before the request could be sent" not in result.stdout


@pytest.mark.parametrize("validate", ["warn", "off"])
def test_a_failed_job_without_a_readable_id_does_not_vanish_from_a_name_search(modelarts_emulator, repo, validate):
    emu = modelarts_emulator
    name = "anonymous-%s" % uuid.uuid4().hex[:8]
    emu.add_job(id=str(uuid.uuid4()), name=name, phase="Failed")
    emu.add_fault(type="drift", mode="missing", paths=["metadata.id"], target="search", count=-1)
    task = dict(emu.connection("aksk"), name=name, validate=validate)
    try:
        result = repo.play(module_play(task, rescue=True))
    finally:
        # The session's emulator serves the tests that follow: no fault may outlive this one.
        emu.clear_faults()
    assert "GATE=open" not in result.stdout, result.stdout[-3000:]
    assert "search result 0 for the name '%s' (phase Failed) has no readable metadata.id" % name in result.stdout, result.stdout[-3000:]
    assert "[WARNING]" in result.stdout + result.stderr


# -- 10. dot segments and implausible ids --------------------------------------------------------------


@pytest.mark.parametrize("job_id", ["..", ".", "../training-jobs", "a b"])
def test_an_implausible_job_id_is_refused_before_any_request(emulator, repo, job_id):
    emulator.clear_requests()
    task = dict(emulator.connection("aksk"), training_job_id=job_id)
    result = repo.play(module_play(task))
    assert result.returncode != 0 and "is not a training job id" in result.stdout, result.stdout[-3000:]
    main, vault = vaulted_vars(emulator)
    repo.group_vars(main, vault)
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [{"name": "show", "ansible.builtin.debug": {"msg": "{{ lookup('modelarts.training.training_job', job) }}"}, "vars": {"job": job_id}}],
        }
    ]
    result = repo.play(play)
    assert result.returncode != 0 and "term 0: " in result.stdout and "is not a training job id" in result.stdout, result.stdout[-3000:]
    assert not [entry for entry in emulator.requests() if "training-jobs" in entry["path"]]


# -- 13. password auth without region ---------------------------------------------------------------------


def test_password_auth_with_endpoint_and_project_but_no_region_names_what_is_missing(emulator, repo):
    task = without(emulator.connection("password"), "region", "iam_endpoint")
    task["training_job_id"] = COMPLETED
    result = repo.play(module_play(task))
    assert result.returncode != 0
    assert "set region (HUAWEICLOUD_SDK_REGION), or iam_endpoint (HUAWEICLOUD_SDK_IAM_ENDPOINT)" in result.stdout, result.stdout[-3000:]
    assert "LocationParseError" not in result.stdout and emulator.password not in result.stdout


# -- 14. the event source's fail_on --------------------------------------------------------------------


def test_the_event_source_accepts_fail_on_completed(emulator, collection_root):
    src = load_source(collection_root)
    job = str(uuid.uuid4())
    emulator.add_job(id=job, name="fail-on-completed", phase="Completed")
    queue = asyncio.Queue()
    args = dict(connection_args(emulator), training_job_ids=[job], interval=0.2, stop_when_done=True, fail_on=["Completed", "Failed"])

    async def collect():
        await src["main"](queue, args)
        events = []
        while not queue.empty():
            events.append(queue.get_nowait())
        return events

    events = asyncio.run(asyncio.wait_for(collect(), 30))
    assert [event["modelarts"]["phase"] for event in events] == ["Completed"]
    assert events[0]["modelarts"]["training_job"]["failed"] is True
