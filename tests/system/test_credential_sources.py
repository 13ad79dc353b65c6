# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Credentials where runners keep them (issue 21), used the way a user's repository uses them.

The SDK's credentials file in a temporary HOME, ``HUAWEICLOUD_SDK_CREDENTIALS_FILE`` as a CI system sets
it, ``credentials_file`` in ``module_defaults``, the lookup with ``modelarts_*`` variables, the gate role
and the event source; and, with nothing given anywhere, one error naming every source tried.
"""

import asyncio
import datetime
import socket
import threading

import pytest

from eda_helpers import load_source
from test_user_patterns import COMPLETED, Repo

SOURCES = ("credentials file", "CCE pod identity", "instance metadata")


@pytest.fixture
def repo(tmp_path, ansible_env):
    return Repo(tmp_path, ansible_env)


def credentials_file(path, emulator, **extra):
    """The SDK's INI credentials file: section [basic], keys ak, sk, project_id (and others)."""
    lines = ["[basic]", "ak = %s" % emulator.ak, "sk = %s" % emulator.sk, "project_id = %s" % emulator.project_id]
    lines += ["%s = %s" % item for item in extra.items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def endpoints(emulator):
    """What a user sets besides credentials: the region and, for the emulator, its URL and CA."""
    return {"region": emulator.region, "endpoint": emulator.url, "iam_endpoint": emulator.url, "ca_bundle": emulator.ca_file}


def phase_play(module_defaults=None, **task):
    play = {
        "hosts": "localhost",
        "gather_facts": False,
        "tasks": [
            {"name": "read", "modelarts.training.modelarts_training_job_info": dict(task, training_job_id=COMPLETED), "register": "job"},
            {"name": "show", "ansible.builtin.debug": {"msg": "PHASE={{ job.training_job.phase }}"}},
        ],
    }
    if module_defaults:
        play["module_defaults"] = {"group/modelarts.training.modelarts": module_defaults}
    return [play]


def test_the_sdk_credentials_file_in_home_is_found_when_nothing_is_given(emulator, repo, tmp_path):
    home = tmp_path / "home"
    credentials_file(home / ".huaweicloud" / "credentials", emulator)
    result = repo.play(phase_play(module_defaults=endpoints(emulator)), env={"HOME": str(home)}, verbosity=4)
    out = result.stdout + result.stderr
    assert result.returncode == 0 and "PHASE=Completed" in result.stdout, out[-3000:]
    assert emulator.sk not in out


def test_huaweicloud_sdk_credentials_file_as_a_ci_system_sets_it(emulator, repo, tmp_path):
    path = credentials_file(tmp_path / "ci" / "huaweicloud.ini", emulator)
    result = repo.play(phase_play(module_defaults=endpoints(emulator)), env={"HUAWEICLOUD_SDK_CREDENTIALS_FILE": str(path), "HOME": str(tmp_path / "empty")})
    assert result.returncode == 0 and "PHASE=Completed" in result.stdout, result.stdout[-3000:]


def test_runner_aksk_in_the_environment_win_over_the_credentials_file(emulator, repo, tmp_path):
    # The file sits below every level, the environment included: the runner's variables win, as in the SDK.
    path = tmp_path / "bad.ini"
    path.write_text("[basic]\nak = WRONGAK\nsk = wrong-secret-0123456789\nproject_id = %s\n" % emulator.project_id)
    env = {"HUAWEICLOUD_SDK_CREDENTIALS_FILE": str(path), "HUAWEICLOUD_SDK_AK": emulator.ak, "HUAWEICLOUD_SDK_SK": emulator.sk}
    result = repo.play(phase_play(module_defaults=dict(endpoints(emulator), project_id=emulator.project_id)), env=env)
    assert result.returncode == 0 and "PHASE=Completed" in result.stdout, result.stdout[-3000:]


def test_credentials_file_in_module_defaults_and_the_lookup_with_modelarts_variables(emulator, repo, tmp_path):
    path = credentials_file(tmp_path / "team.ini", emulator)
    defaults = dict(endpoints(emulator), credentials_file=str(path))
    plays = phase_play(module_defaults=defaults)
    plays[0]["vars"] = dict(("modelarts_%s" % key, value) for key, value in defaults.items())
    plays[0]["tasks"].append(
        {"name": "lookup", "ansible.builtin.debug": {"msg": "LOOKUP={{ lookup('modelarts.training.training_job', '%s', field='phase') }}" % COMPLETED}}
    )
    result = repo.play(plays)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "PHASE=Completed" in result.stdout and "LOOKUP=Completed" in result.stdout


def test_the_gate_role_with_a_credentials_file(emulator, repo, tmp_path):
    path = credentials_file(tmp_path / "team.ini", emulator)
    plays = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "roles": [
                {
                    "role": "modelarts.training.training_job_gate",
                    "vars": {"training_job_gate_ids": [COMPLETED], "training_job_gate_connection": dict(endpoints(emulator), credentials_file=str(path))},
                }
            ],
            "tasks": [{"name": "after the gate", "ansible.builtin.debug": {"msg": "GATE=open"}}],
        }
    ]
    result = repo.play(plays)
    assert result.returncode == 0 and "GATE=open" in result.stdout, result.stdout[-3000:]


def test_the_event_source_with_a_credentials_file(emulator, collection_root, tmp_path, monkeypatch):
    path = credentials_file(tmp_path / "team.ini", emulator)
    monkeypatch.setenv("HUAWEICLOUD_SDK_CREDENTIALS_FILE", str(path))
    src = load_source(collection_root)
    queue = asyncio.Queue()
    args = dict(endpoints(emulator), training_job_ids=[COMPLETED], interval=0.2, stop_when_done=True)
    asyncio.run(asyncio.wait_for(src["main"](queue, args), 30))
    assert queue.get_nowait()["modelarts"]["phase"] == "Completed"


def unanswered_connections(listener):
    """How many connections ``listener`` (a listening socket nobody accepts on) holds: each one a client opened."""
    listener.setblocking(False)
    count = 0
    while True:
        try:
            conn, _address = listener.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


def test_with_no_credentials_anywhere_one_error_names_every_source(emulator, repo, tmp_path):
    task = dict(endpoints(emulator), project_id=emulator.project_id)
    plays = phase_play(**task)
    # The instance metadata is a port that takes connections and never answers; they are counted once the play is
    # over (a thread accepting them as they come could be late on a loaded machine: the kernel keeps them queued).
    with socket.create_server(("127.0.0.1", 0), backlog=16) as metadata:
        endpoint = "http://127.0.0.1:%d" % metadata.getsockname()[1]
        result = repo.play(plays, env={"HOME": str(tmp_path / "empty-home"), "HUAWEICLOUD_METADATA_ENDPOINT": endpoint})
        looks = unanswered_connections(metadata)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "no credentials were given and none were found" in out, out[-3000:]
    for source in SOURCES:
        assert source in out
    assert "Traceback" not in out
    # One quick look, counted rather than timed: the session token's PUT and the key's GET, each once, never retried.
    assert 1 <= looks <= 2, looks


# -- obtained credentials, renewed while a wait lasts ----------------------------------------------------------

# A wait over three credential lifetimes and more: every issued credential must be renewed before it expires.
# Scaled down from 20 s credentials and a minute's wait (same ratios; renewal at a third of the lifetime left).
LIFETIME = 9  # seconds each issued credential lives in the emulator
# The job stays Running for this many polls of the wait, whatever their speed: the wait's naps (wait_sleep 2 s,
# growing by half up to wait_sleep_max 5 s: 2, 3, 4.5, 5, 5...) are real sleeps, never shorter on a loaded machine,
# so the eighth poll, the one that sees Completed, comes at least 29.5 s after the first: more than three lifetimes.
RUNNING_POLLS = 7
WAIT_SLEEP, WAIT_SLEEP_MAX = 2, 5


def renewing_source(emu, tmp_path, source):
    """(task options, environment) for ``source``, as a CI system or a cloud host provides them."""
    emu.settings(credential_lifetime=LIFETIME)
    token_file = tmp_path / "id-token"
    token_file.write_text(emu.id_token(lifetime=3600) + "\n")
    options = dict(endpoints(emu), project_id=emu.project_id, sts_endpoint=emu.url)
    if source == "federated":
        return options, {"HUAWEICLOUD_SDK_IDP_ID": "emulator-idp", "HUAWEICLOUD_SDK_ID_TOKEN_FILE": str(token_file)}, token_file
    if source == "oidc":
        env = {"HUAWEICLOUD_OIDC_PROVIDER_URN": "iam::0:identity-provider:ci", "HUAWEICLOUD_OIDC_AGENCY_URN": "iam::0:agency:deployer"}
        return options, dict(env, HUAWEICLOUD_OIDC_TOKEN_FILE=str(token_file)), token_file
    if source == "pod":
        pod_token = tmp_path / "pod-token"
        pod_token.write_text("emulator-pod-identity-token\n")
        uri = emu.http_listener() + "/pod-identity/credentials"
        return options, {"HC_CONTAINER_CREDENTIALS_FULL_URI": uri, "HC_CONTAINER_AUTHORIZATION_TOKEN_FILE": str(pod_token)}, None
    if source == "metadata":
        return options, {"HUAWEICLOUD_METADATA_ENDPOINT": emu.http_listener()}, None
    if source == "agency":
        options.update(access_key=emu.ak, secret_key=emu.sk, agency_name="deployer", agency_domain_name=emu.domain_name)
        return options, {}, None
    raise AssertionError(source)


EXCHANGE_PATHS = {
    "federated": "/v3.0/OS-CREDENTIAL/securitytokens",
    "oidc": "/v5/agencies/assume-with-oidc",
    "pod": "/pod-identity/credentials",
    "metadata": "/openstack/latest/securitykey",
    "agency": "/v3.0/OS-CREDENTIAL/securitytokens",
}


def exchanges(emu, source):
    """The exchanges of ``source`` the emulator answered with credentials, oldest first."""
    return [entry for entry in emu.requests(path=EXCHANGE_PATHS[source]) if entry["path"] == EXCHANGE_PATHS[source] and entry["status"] in (200, 201)]


def rotate_after_first_exchange(emu, source, token_file, stop):
    """The CI system rotates the id token once the first credentials were obtained with it (an event, not a time):
    the wait's later exchanges must read the new one from the file."""
    while not stop.wait(0.1):
        if exchanges(emu, source):
            token_file.write_text(emu.id_token(subject="rotated", lifetime=3600))
            return


def seconds_between(first, last):
    """Seconds between two request log entries (their ``time``, to the second)."""
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    return (datetime.datetime.strptime(last["time"], stamp) - datetime.datetime.strptime(first["time"], stamp)).total_seconds()


@pytest.mark.parametrize("source", sorted(EXCHANGE_PATHS))
def test_a_wait_of_three_lifetimes_outlives_9_second_credentials(modelarts_emulator, repo, tmp_path, source):
    emu = modelarts_emulator
    options, env, token_file = renewing_source(emu, tmp_path, source)
    # Driven by polls, not by seconds: however long ansible-playbook takes to start, the wait sees RUNNING_POLLS polls
    # of Running, and its naps between them make it last more than three lifetimes.
    job_id = emu.add_job(name="renewal-%s" % source, timeline=[{"phase": "Running", "polls": RUNNING_POLLS}, "Completed"])
    emu.clear_requests()
    stop = threading.Event()
    rotator = None
    if token_file is not None:
        rotator = threading.Thread(target=rotate_after_first_exchange, args=(emu, source, token_file, stop), daemon=True)
        rotator.start()
    # wait_timeout is only a guard: the wait ends when the job completes, on its poll count.
    task = dict(options, training_job_id=job_id, wait=True, wait_timeout=600, wait_sleep=WAIT_SLEEP, wait_sleep_max=WAIT_SLEEP_MAX)
    plays = [
        {"hosts": "localhost", "gather_facts": False, "tasks": [{"name": "wait", "modelarts.training.modelarts_training_job_info": task, "register": "job"}]}
    ]
    try:
        result = repo.play(plays, env=dict(env, HOME=str(tmp_path / "home")), verbosity=4)
    finally:
        stop.set()
        if rotator is not None:
            rotator.join()
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    log = emu.requests()
    polls = [entry for entry in log if entry["path"].startswith("/v2/") and entry["path"].endswith(job_id)]
    assert len(polls) == RUNNING_POLLS + 1 and all(entry["status"] == 200 for entry in polls), [(e["path"], e["status"]) for e in log]
    # The wait outlived three lifetimes of the credentials it started with (the log's times are whole seconds).
    assert seconds_between(polls[0], polls[-1]) >= 3 * LIFETIME, (polls[0]["time"], polls[-1]["time"])
    issued = exchanges(emu, source)
    # Renewed when a third of the lifetime is left (at most 6 s after each was obtained): the naps of 2 + 3 s let the
    # first credentials serve at most polls 1-3, 5 s naps let each later one serve at most two polls; 8 polls need 4.
    assert len(issued) >= 4, [entry["path"] for entry in log]
    refused = [entry for entry in log if entry["path"].startswith("/v2/") and entry["status"] == 401]
    assert not refused, "no request was made with expired credentials"
    if token_file is not None:
        # The file is read again at every exchange: the token written mid-wait is the one used afterwards.
        subjects = [entry["issued"].get("subject") for entry in log if entry.get("issued") and entry["issued"].get("subject")]
        assert subjects[0] == "ci-job" and subjects[-1] == "rotated", subjects
    print("%s: %d credentials issued over the wait" % (source, len(issued)))
    for secret in (emu.sk, token_file.read_text().strip() if token_file else None):
        if secret:
            assert secret not in out


def expire_once_served(emu, job_id, stop):
    """Expire every token once a GET of ``job_id`` has been served (an event, not a time): the credentials worked first."""
    while not stop.wait(0.05):
        if [entry for entry in emu.requests(path=job_id) if entry["method"] == "GET" and entry["status"] == 200]:
            emu.expire_tokens()
            return


def test_user_given_temporary_credentials_that_expire_mid_wait_say_so(modelarts_emulator, repo):
    emu = modelarts_emulator
    # Running for as many polls as the wait could make: only the expiry can end it.
    job_id = emu.add_job(name="expiring-temporary", timeline=[{"phase": "Running", "polls": 1000}, "Completed"])
    task = dict(emu.connection("temporary"), training_job_id=job_id, wait=True, wait_timeout=120, wait_sleep=1, wait_sleep_max=1)
    plays = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "block": [{"name": "wait", "modelarts.training.modelarts_training_job_info": task}],
                    "rescue": [{"name": "why", "ansible.builtin.debug": {"msg": "RESCUED={{ ansible_failed_result.msg }}"}}],
                }
            ],
        }
    ]
    stop = threading.Event()
    watcher = threading.Thread(target=expire_once_served, args=(emu, job_id, stop), daemon=True)
    watcher.start()
    try:
        result = repo.play(plays)
    finally:
        stop.set()
        watcher.join()
    assert "RESCUED=" in result.stdout, result.stdout[-3000:]
    assert "worked earlier in this task and are now refused: they have expired" in result.stdout, result.stdout[-3000:]
    assert "idp_id and id_token_file" in result.stdout
    assert emu.security_token not in result.stdout and emu.temp_sk not in result.stdout


# -- switching the instance metadata off (issue 29) -----------------------------------------------------------------


@pytest.mark.parametrize("value", ["true", "false", "maybe"])
def test_huaweicloud_metadata_disabled_switches_the_probe_off(emulator, repo, tmp_path, value):
    """``HUAWEICLOUD_METADATA_DISABLED=true``: the default chain never asks the instance metadata, even one that would serve."""
    metadata = emulator.http_listener()
    env = {"HOME": str(tmp_path / "empty-home"), "HUAWEICLOUD_METADATA_ENDPOINT": metadata, "HUAWEICLOUD_METADATA_DISABLED": value}
    before = emulator.mark()
    result = repo.play(phase_play(**dict(endpoints(emulator), project_id=emulator.project_id)), env=env)
    out = result.stdout + result.stderr
    probes = [entry for entry in emulator.requests(since=before) if entry["path"].startswith(("/meta-data/", "/openstack/"))]
    assert "Traceback" not in out
    if value == "false":
        assert result.returncode == 0 and "PHASE=Completed" in result.stdout, out[-3000:]
        assert probes
        return
    assert result.returncode != 0 and probes == [], out[-3000:]
    if value == "true":
        assert "no credentials were given and none were found" in out, out[-3000:]
        assert "instance metadata: HUAWEICLOUD_METADATA_DISABLED is true" in out
    else:
        assert "HUAWEICLOUD_METADATA_DISABLED must be a boolean (true or false), got 'maybe'" in out, out[-3000:]
