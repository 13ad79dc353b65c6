# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 28, a security review of the credential code, in the user's shape.

* a credential exchange answered 2xx with a body that cannot be read is reported by the call and what was
  wrong, never quoted (the secrets inside it are unknown when the message is made), in ``ansible-playbook
  -vvv`` and in the event source's log lines;
* the OIDC id token goes only to an STS the user named or the one of the region the user gave;
* tuning options of the OIDC kind (session name, duration) select no kind: a runner's AK/SK still work;
* a failed first credential fetch backs off instead of running the whole exchange at every poll;
* an id token file that is a FIFO with no writer is refused at once, naming its option.

The misbehaving credential services are loopback servers (``peers.json_api``).
"""

import asyncio
import logging
import os
import signal
import subprocess
import uuid

import pytest
import yaml

from eda_helpers import load_source
from peers import connect_proxy, json_api, routed
from test_user_patterns import BIN, COMPLETED, Repo

PROJECT = "0" * 31 + "9"
SECRET = "leaked-secret-key-%s" % uuid.uuid4().hex
TOKEN = "leaked-security-token-%s" % uuid.uuid4().hex
SUBJECT = "leaked-iam-token-%s" % uuid.uuid4().hex
SESSION = "leaked-metadata-session-%s" % uuid.uuid4().hex
EXPIRES = "2099-01-01T00:00:00.000000Z"
CREDENTIAL = '{"credential": {"access": "AKLEAKED", "secret": "%s", "securitytoken": "%s", "expires_at": "%s"}}' % (SECRET, TOKEN, EXPIRES)
# What a gateway that appends its own page, or a cut connection, leaves of a credential answer.
NOT_JSON = (CREDENTIAL + "<!-- gateway 7 -->").encode()
GOOD_IAM_TOKEN = (201, {"X-Subject-Token": SUBJECT, "Content-Type": "application/json"}, b'{"token": {"expires_at": "%s"}}' % EXPIRES.encode())

# kind -> (the call answered badly, the routes before it that answer well)
EXCHANGES = {
    "password": (("POST", "/v3/auth/tokens"), {}),
    "federated id token": (("POST", "/v3.0/OS-AUTH/id-token/tokens"), {}),
    "federated security token": (("POST", "/v3.0/OS-CREDENTIAL/securitytokens"), {("POST", "/v3.0/OS-AUTH/id-token/tokens"): GOOD_IAM_TOKEN}),
    "agency": (("POST", "/v3.0/OS-CREDENTIAL/securitytokens"), {}),
    "oidc": (("POST", "/v5/agencies/assume-with-oidc"), {}),
    "pod identity": (("POST", "/pod-identity/credentials"), {}),
    "instance metadata": (("GET", "/openstack/latest/securitykey"), {("PUT", "/meta-data/latest/api/token"): (200, {}, SESSION.encode())}),
}


@pytest.fixture
def repo(tmp_path, ansible_env):
    return Repo(tmp_path, ansible_env)


def setup(kind, url, tmp_path):
    """(task options, environment) of credential ``kind`` with every service at ``url``."""
    options = dict(region="cn-north-4", endpoint=url, iam_endpoint=url, sts_endpoint=url, project_id=PROJECT, backoff_retries=0)
    token_file = tmp_path / "id-token"
    token_file.write_text("header.payload.signature\n")
    env = {"HOME": str(tmp_path / "home")}
    if kind == "password":
        options.update(username="ci-robot", password="robot-password-1234", domain_name="acme")
    elif kind.startswith("federated"):
        env.update(HUAWEICLOUD_SDK_IDP_ID="ci", HUAWEICLOUD_SDK_ID_TOKEN_FILE=str(token_file))
    elif kind == "agency":
        options.update(access_key="AKBASE", secret_key="base-secret-key-1234", agency_name="deployer", agency_domain_name="acme")
    elif kind == "oidc":
        env.update(HUAWEICLOUD_OIDC_PROVIDER_URN="iam::0:identity-provider:ci", HUAWEICLOUD_OIDC_AGENCY_URN="iam::0:agency:d")
        env.update(HUAWEICLOUD_OIDC_TOKEN_FILE=str(token_file))
    elif kind == "pod identity":
        pod_token = tmp_path / "pod-token"
        pod_token.write_text("pod-identity-token\n")
        env.update(HC_CONTAINER_CREDENTIALS_FULL_URI=url + "/pod-identity/credentials", HC_CONTAINER_AUTHORIZATION_TOKEN_FILE=str(pod_token))
    elif kind == "instance metadata":
        env.update(HUAWEICLOUD_METADATA_ENDPOINT=url)
    return options, env


def read_play(options):
    task = dict(options, training_job_id=COMPLETED)
    return [{"hosts": "localhost", "gather_facts": False, "tasks": [{"name": "read", "modelarts.training.modelarts_training_job_info": task}]}]


def routes_for(kind, answer):
    call, before = EXCHANGES[kind]
    headers = {"X-Subject-Token": SUBJECT} if call[1] in ("/v3/auth/tokens", "/v3.0/OS-AUTH/id-token/tokens") else {}
    routes = dict(before)
    routes[call] = (201 if call[0] == "POST" else 200, dict(headers, **{"Content-Type": "application/json"}), answer)
    return routes


def assert_no_secret(out):
    for secret in (SECRET, TOKEN, SUBJECT, SESSION):
        assert secret not in out, "a secret of the credential answer is shown"
    assert "AKLEAKED" not in out, "the answer is quoted"


@pytest.mark.parametrize("kind", sorted(EXCHANGES))
def test_an_unreadable_credential_answer_is_named_never_quoted(repo, tmp_path, kind):
    with json_api(routed(routes_for(kind, NOT_JSON))) as server:
        options, env = setup(kind, server.url, tmp_path)
        result = repo.play(read_play(options), env=env, verbosity=3)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out[-3000:]
    assert_no_secret(out)
    call = EXCHANGES[kind][0]
    assert "the answer of %s %s%s" % (call[0], server.url, call[1]) in out, out[-3000:]
    assert "is not JSON (extra data: line 1 column %d" % (len(CREDENTIAL) + 1) in out, out[-3000:]
    assert "Traceback" not in out


ANSWERS = {
    "truncated": (CREDENTIAL[: CREDENTIAL.index(TOKEN) + 10].encode(), "is not JSON (unterminated string starting at: line 1"),
    "byte-order mark": (b"\xef\xbb\xbf" + CREDENTIAL.encode(), "starts with a UTF-8 byte-order mark"),
    "not UTF-8": (CREDENTIAL.replace(TOKEN, TOKEN + "\udcff").encode("utf-8", "surrogateescape"), "is not UTF-8 text (byte"),
    "missing field": (('{"credential": {"access": "AKLEAKED", "securitytoken": "%s"}}' % TOKEN).encode(), "has no secret key"),
    "wrong type": (
        ('{"credential": {"access": "AKLEAKED", "secret": ["%s"], "securitytoken": "%s"}}' % (SECRET, TOKEN)).encode(),
        "has a secret key that is not a string (a JSON array)",
    ),
    "a list": (('[{"secret": "%s"}]' % SECRET).encode(), "holds no credential object"),
    "empty": (b"", "is empty"),
}


@pytest.mark.parametrize("answer", sorted(ANSWERS))
def test_each_way_an_answer_cannot_be_read_says_what_was_wrong(repo, tmp_path, answer):
    body, expected = ANSWERS[answer]
    with json_api(routed(routes_for("pod identity", body))) as server:
        options, env = setup("pod identity", server.url, tmp_path)
        result = repo.play(read_play(options), env=env, verbosity=3)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out[-3000:]
    assert_no_secret(out)
    assert "get pod identity credentials from HC_CONTAINER_CREDENTIALS_FULL_URI: the answer of POST %s/pod-identity/credentials" % server.url in out
    assert expected in out, out[-3000:]


def test_the_event_source_logs_name_the_answer_never_quote_it(collection_root, tmp_path, monkeypatch, caplog):
    src = load_source(collection_root)
    with json_api(routed(routes_for("oidc", NOT_JSON))) as server:
        options, env = setup("oidc", server.url, tmp_path)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        args = dict(options, training_job_ids=[COMPLETED], interval=0.2)
        caplog.set_level(logging.DEBUG)

        async def watch():
            # Until the first exchange was answered (an event, however slow the start), then ten polls' worth more.
            task = asyncio.ensure_future(src["main"](asyncio.Queue(), args))
            while not server.count("/v5/agencies/assume-with-oidc") and not task.done():
                await asyncio.sleep(0.05)
            await asyncio.sleep(2)
            running = not task.done()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return running

        assert asyncio.run(asyncio.wait_for(watch(), 120)), "the source must go on polling"
        asked = server.count("/v5/agencies/assume-with-oidc")
    logged = "\n".join(record.getMessage() for record in caplog.records)
    # Polled every 0.2 s (backing off to 1.5 s) for 2 s after the first exchange: that one, then the same error until
    # the credentials' backoff (5 s) ends.
    assert 1 <= asked <= 2, asked
    assert_no_secret(logged)
    assert "the answer of POST %s/v5/agencies/assume-with-oidc" % server.url in logged, logged[-3000:]


# -- a failed first fetch backs off ------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", ["HTTP 500", "unreadable"])
def test_a_failing_credential_service_is_not_asked_at_every_poll(repo, tmp_path, answer):
    response = (500, {"Content-Type": "application/json"}, b'{"error_code": "X.500", "error_msg": "down"}') if answer == "HTTP 500" else None
    routes = routes_for("pod identity", NOT_JSON)
    if response:
        routes[("POST", "/pod-identity/credentials")] = response
    with json_api(routed(routes)) as server:
        options, env = setup("pod identity", server.url, tmp_path)
        task = dict(options, wait=True, wait_timeout=12, wait_sleep=0.5, wait_sleep_max=0.5)
        result = repo.play(read_play(task), env=env)
        asked = server.count("/pod-identity/credentials")
    out = result.stdout + result.stderr
    assert result.returncode != 0, out[-3000:]
    # Polled every half second for 12 s: about 24 exchanges without a backoff; with one, a handful.
    assert 1 <= asked <= 5, asked
    assert_no_secret(out)


# -- the id token goes only where the user points ------------------------------------------------------------------


def oidc_runner(tmp_path, emulator):
    """The environment of a runner with OIDC variables (an id token of the emulator's in a file), 127.0.0.1 exempt
    from the proxy variables."""
    token_file = tmp_path / "id-token"
    token_file.write_text(emulator.id_token(lifetime=600))
    return {
        "HUAWEICLOUD_OIDC_PROVIDER_URN": "iam::0:identity-provider:ci",
        "HUAWEICLOUD_OIDC_AGENCY_URN": "iam::0:agency:deployer",
        "HUAWEICLOUD_OIDC_TOKEN_FILE": str(token_file),
        "NO_PROXY": "127.0.0.1",
    }


def play_behind_a_closed_proxy(repo, plays, env, **options):
    """``repo.play`` with the proxy variables naming a proxy that lets nothing through: the process and the
    ``host:port`` every request was meant for."""
    with connect_proxy(check=lambda headers: False) as proxy:
        result = repo.play(plays, env=dict(env, HTTPS_PROXY=proxy.url, HTTP_PROXY=proxy.url), **options)
        seen = [target for target, _allowed in proxy.seen]
    return result, seen


@pytest.mark.parametrize("region", [None, "eu-west-101"])
def test_private_endpoints_never_send_the_id_token_to_a_public_sts(repo, tmp_path, emulator, region):
    options = dict(endpoint=emulator.url, iam_endpoint=emulator.url, ca_bundle=emulator.ca_file, project_id=emulator.project_id, backoff_retries=0)
    if region:
        options["region"] = region
    result, seen = play_behind_a_closed_proxy(repo, read_play(options), oidc_runner(tmp_path, emulator), verbosity=3)
    out = result.stdout + result.stderr
    assert not seen, "the id token was sent towards %s" % seen
    assert result.returncode != 0
    assert "sts_endpoint (HUAWEICLOUD_SDK_STS_ENDPOINT)" in out, out[-3000:]
    assert "Traceback" not in out


def test_the_sts_of_the_region_given_is_used_with_private_endpoints(repo, tmp_path, emulator):
    options = dict(region="cn-south-1", endpoint=emulator.url, iam_endpoint=emulator.url, project_id=emulator.project_id, backoff_retries=0)
    result, seen = play_behind_a_closed_proxy(repo, read_play(dict(options, ca_bundle=emulator.ca_file)), oidc_runner(tmp_path, emulator))
    assert seen == ["sts.cn-south-1.myhuaweicloud.com:443"], (seen, result.stdout[-2000:])


# -- tuning options select no kind -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "variables", [{"HUAWEICLOUD_OIDC_SESSION_NAME": "deploy"}, {"HUAWEICLOUD_OIDC_DURATION_SECONDS": "1800", "HUAWEICLOUD_OIDC_SESSION_NAME": "d"}]
)
def test_oidc_tuning_variables_beside_runner_aksk_do_not_hide_them(repo, emulator, variables):
    env = dict(variables, HUAWEICLOUD_SDK_AK=emulator.ak, HUAWEICLOUD_SDK_SK=emulator.sk)
    options = dict(region=emulator.region, endpoint=emulator.url, iam_endpoint=emulator.url, ca_bundle=emulator.ca_file, project_id=emulator.project_id)
    plays = read_play(options)
    plays[0]["tasks"][0]["register"] = "job"
    plays[0]["tasks"].append({"name": "show", "ansible.builtin.debug": {"msg": "PHASE={{ job.training_job.phase }}"}})
    result = repo.play(plays, env=env)
    assert result.returncode == 0 and "PHASE=Completed" in result.stdout, result.stdout[-3000:]


def test_a_task_oidc_session_name_does_not_hide_runner_aksk(repo, emulator):
    env = {"HUAWEICLOUD_SDK_AK": emulator.ak, "HUAWEICLOUD_SDK_SK": emulator.sk}
    options = dict(region=emulator.region, endpoint=emulator.url, iam_endpoint=emulator.url, ca_bundle=emulator.ca_file, project_id=emulator.project_id)
    result = repo.play(read_play(dict(options, oidc_session_name="deploy")), env=env)
    assert result.returncode == 0, result.stdout[-3000:]


# -- an id token file that would block -----------------------------------------------------------------------------


def play_guarded(repo, plays, env, fifo, timeout=60):
    """``repo.play`` in a process group of its own: when it has not ended after ``timeout`` seconds (blocked on
    ``fifo``), the group is killed, the FIFO unblocked, and None returned."""
    path = repo.root / "site.yml"
    path.write_text(yaml.safe_dump(plays, sort_keys=False))
    command = [os.path.join(BIN, "ansible-playbook"), "-i", str(repo.root / "inventory"), str(path)]
    process = subprocess.Popen(
        command, env=dict(repo.env, **env), cwd=str(repo.root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        unblock(fifo)
        process.communicate()
        return None
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def unblock(fifo):
    """Let a reader blocked on ``fifo`` go (an end of file), if there is one."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


@pytest.mark.parametrize("option", ["id_token_file", "oidc_token_file", "HC_CONTAINER_AUTHORIZATION_TOKEN_FILE", "credentials_file"])
def test_a_fifo_as_token_file_is_refused_not_waited_on(repo, tmp_path, option):
    fifo = tmp_path / "token-fifo"
    os.mkfifo(fifo)
    with json_api(routed({})) as server:
        options, env = setup("oidc", server.url, tmp_path)
        for name in list(env):
            if name.startswith("HUAWEICLOUD_OIDC"):
                del env[name]
        if option == "id_token_file":
            options.update(idp_id="ci", id_token_file=str(fifo))
        elif option == "oidc_token_file":
            options.update(oidc_provider_urn="iam::0:identity-provider:ci", oidc_agency_urn="iam::0:agency:d", oidc_token_file=str(fifo))
        elif option == "credentials_file":
            options.update(credentials_file=str(fifo))
        else:
            env.update(HC_CONTAINER_CREDENTIALS_FULL_URI=server.url + "/pod-identity/credentials", HC_CONTAINER_AUTHORIZATION_TOKEN_FILE=str(fifo))
        result = play_guarded(repo, read_play(options), env, fifo)
        if result is None:
            pytest.fail("the task blocked on reading the FIFO given as %s" % option)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "is not a regular file" in out and option in out, out[-3000:]
    assert "Traceback" not in out
