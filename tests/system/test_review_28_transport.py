# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 28 (security review): the transport of credential sources and the errors of a misconfigured run.

* The instance's and the pod's own credential services (instance metadata, CCE pod identity) are reached
  directly, never through the ``proxy`` option or the proxy variables; every other request honours them
  (``NO_PROXY`` included, for the variables).
* A credential or connection configuration error met during a ``name`` search fails the way it does with
  ``training_job_id``: one message, no traceback; the event source stops with a ``SourceError``.
* The metadata probe says whether nothing answered or something answered too slowly.
"""

import asyncio
import os
import contextlib
import socket
import threading
import time

import pytest

from eda_helpers import RULEBOOKS, load_source, run_rulebook
from peers import closed_port, connect_proxy
from test_user_patterns import COMPLETED, Repo

MODULE = "modelarts.training.modelarts_training_job_info"
NO_PROXY_ANYWHERE = {"NO_PROXY": "", "no_proxy": ""}


@pytest.fixture
def repo(tmp_path, ansible_env):
    return Repo(tmp_path, ansible_env)


def endpoints(emulator, **extra):
    """Where to call, without credentials: the default chain finds them."""
    return dict(region=emulator.region, project_id=emulator.project_id, endpoint=emulator.url, iam_endpoint=emulator.url, ca_bundle=emulator.ca_file, **extra)


def proxy_variables(url):
    return {"HTTPS_PROXY": url, "https_proxy": url, "HTTP_PROXY": url, "http_proxy": url, "ALL_PROXY": url, "all_proxy": url}


def read_and_look_up(options):
    """The module and the lookup with the same connection options; both print the phase."""
    lookup = "lookup('modelarts.training.training_job', '%s', field='phase', %s)" % (
        COMPLETED,
        ", ".join("%s=%r" % item for item in sorted(options.items())),
    )
    tasks = [
        {"name": "read", MODULE: dict(options, training_job_id=COMPLETED), "register": "job"},
        {"name": "show", "ansible.builtin.debug": {"msg": "RESULT={{ job.training_job.phase }} {{ %s }}" % lookup}},
    ]
    return [{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]


def hostport(url):
    return url.split("://", 1)[1].split("/", 1)[0]


def read_through(repo, proxy, emulator, options, env, direct):
    """Read and look up the job with ``options`` at -vvv, the proxy variables of ``env`` naming ``proxy``: both must
    work, ModelArts reached through ``proxy`` and the service at the URL ``direct`` never; the output."""
    result = repo.play(read_and_look_up(options), env=env, verbosity=3)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    assert "RESULT=Completed Completed" in result.stdout, out[-3000:]
    targets = [target for target, _allowed in proxy.seen]
    assert "127.0.0.1:%d" % emulator.port in targets, targets
    assert not [target for target in targets if hostport(direct) in target], targets
    return out


def test_instance_metadata_is_reached_directly_whatever_proxy_is_set(emulator, repo, tmp_path):
    metadata = emulator.http_listener()
    since = emulator.mark()
    with connect_proxy() as proxy:
        # The proxy option and every proxy variable name the loopback proxy; nothing is exempt by NO_PROXY.
        env = dict(proxy_variables(proxy.url), HUAWEICLOUD_METADATA_ENDPOINT=metadata, HOME=str(tmp_path / "empty-home"), **NO_PROXY_ANYWHERE)
        # ModelArts goes through the proxy (the option applies there), the metadata service never does: its session
        # token and the instance's credentials stay off the proxy.
        read_through(repo, proxy, emulator, endpoints(emulator, proxy=proxy.url), env, direct=metadata)
    assert emulator.requests(since=since, path="/openstack/latest/securitykey"), "the credentials came from the metadata service"


def test_pod_identity_is_reached_directly_and_no_proxy_exempts_other_hosts(emulator, repo, tmp_path):
    listener = emulator.http_listener()
    pod_token = tmp_path / "pod-token"
    pod_token.write_text("emulator-pod-identity-token\n")
    pod = {"HC_CONTAINER_CREDENTIALS_FULL_URI": listener + "/pod-identity/credentials", "HC_CONTAINER_AUTHORIZATION_TOKEN_FILE": str(pod_token)}
    since = emulator.mark()
    with connect_proxy() as proxy:
        # The runner's proxy variables only (the way a pod gets them), nothing exempt.
        env = dict(proxy_variables(proxy.url), HOME=str(tmp_path / "empty-home"), **dict(pod, **NO_PROXY_ANYWHERE))
        out = read_through(repo, proxy, emulator, endpoints(emulator), env, direct=listener)
        assert "emulator-pod-identity-token" not in out

        # A host in NO_PROXY bypasses the variables' proxy, as requests users expect.
        del proxy.seen[:]
        env.update(NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
        result = repo.play(read_and_look_up(endpoints(emulator)), env=env)
        assert result.returncode == 0 and "RESULT=Completed Completed" in result.stdout, (result.stdout + result.stderr)[-3000:]
        assert proxy.seen == [], proxy.seen
    assert emulator.requests(since=since, path="/pod-identity/credentials"), "the credentials came from pod identity"


# -- configuration errors met during a name search ---------------------------------------------------------------


def rescued(task):
    """The task in a block whose rescue prints its message: ``MSG=<msg>``."""
    return {
        "block": [dict(task, name="read")],
        "rescue": [{"name": "why", "ansible.builtin.debug": {"msg": "MSG={{ ansible_failed_result.msg }}"}}],
    }


def messages(stdout):
    return [line.split("MSG=", 1)[1].rstrip('"') for line in stdout.splitlines() if '"msg": "MSG=' in line]


def misconfigured(emulator, tmp_path, case):
    """(module options, environment) of a run whose credentials cannot work, and the words its message must hold."""
    base = dict(endpoint=emulator.url, iam_endpoint=emulator.url, ca_bundle=emulator.ca_file, backoff_retries=0)
    if case == "missing id_token_file":
        missing = str(tmp_path / "no-such-id-token")
        return dict(base, region=emulator.region, project_id=emulator.project_id, idp_id="emulator-idp", id_token_file=missing), {}, [missing, "cannot read"]
    path = tmp_path / "no-project.ini"
    path.write_text("[basic]\nak = %s\nsk = %s\n" % (emulator.ak, emulator.sk))
    return base, {"HUAWEICLOUD_SDK_CREDENTIALS_FILE": str(path)}, ["the project is not known", "project_id"]


CASES = ("missing id_token_file", "credentials file without project or region")


@pytest.mark.parametrize("case", CASES)
def test_a_configuration_error_fails_a_name_search_as_it_fails_a_job_id(emulator, repo, tmp_path, case):
    options, env, words = misconfigured(emulator, tmp_path, case)
    tasks = [rescued({MODULE: dict(options, training_job_id=COMPLETED)}), rescued({MODULE: dict(options, name="any-name")})]
    result = repo.play([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}], env=dict(env, HOME=str(tmp_path / "home")), verbosity=3)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    assert "Traceback" not in out and "MODULE FAILURE" not in out, out[-4000:]
    by_id, by_name = messages(result.stdout)
    # The same one-line message, written by the module (not the text of an exception it did not catch).
    assert by_name == by_id and all(word in by_id for word in words), (by_id, by_name)
    assert "\\n" not in by_id
    assert emulator.sk not in out


@pytest.mark.parametrize("case", CASES)
def test_a_configuration_error_stops_the_event_source_with_a_source_error(emulator, collection_root, tmp_path, monkeypatch, case):
    options, env, words = misconfigured(emulator, tmp_path, case)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    src = load_source(collection_root)
    for selector in ({"name": "any-name"}, {"training_job_ids": [COMPLETED]}):
        args = dict(options, interval=0.1, stop_when_done=True, **selector)
        with pytest.raises(src["SourceError"]) as caught:
            asyncio.run(asyncio.wait_for(src["main"](asyncio.Queue(), args), 30))
        text = str(caught.value)
        assert text.startswith("modelarts.training.training_job_phase: ") and all(word in text for word in words), (selector, text)
        assert "\n" not in text and "could not be read" not in text, "every job's error, said once: %s" % text


# -- the metadata probe: nothing answered, or an answer too slow ---------------------------------------------------


@contextlib.contextmanager
def silent_server():
    """A loopback server that accepts every connection, reads what comes and never answers; yields its port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    stop = threading.Event()
    held = []

    def serve():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _addr = listener.accept()
            except OSError:
                continue
            held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


def no_credentials_play(emulator):
    return [{"hosts": "localhost", "gather_facts": False, "tasks": [rescued({MODULE: dict(endpoints(emulator), training_job_id=COMPLETED)})]}]


def test_the_metadata_probe_tells_nothing_answering_from_an_answer_too_slow(emulator, repo, tmp_path):
    home = str(tmp_path / "empty-home")
    refused = "http://127.0.0.1:%d" % closed_port()
    result = repo.play(no_credentials_play(emulator), env={"HUAWEICLOUD_METADATA_ENDPOINT": refused, "HOME": home}, verbosity=3)
    assert result.returncode == 0 and "Traceback" not in result.stdout + result.stderr, (result.stdout + result.stderr)[-3000:]
    (text,) = messages(result.stdout)
    assert "instance metadata: nothing answered at %s (no connection" % refused in text, text
    assert "too slowly" not in text

    with silent_server() as port:
        silent = "http://127.0.0.1:%d" % port
        result = repo.play(no_credentials_play(emulator), env={"HUAWEICLOUD_METADATA_ENDPOINT": silent, "HOME": home}, verbosity=3)
    assert result.returncode == 0 and "Traceback" not in result.stdout + result.stderr, (result.stdout + result.stderr)[-3000:]
    (text,) = messages(result.stdout)
    assert "instance metadata: %s accepted the connection but answered too slowly" % silent in text, text
    assert "nothing answered" not in text


# -- a 401 renews once, however many requests it refused -------------------------------------------------------------


def test_requests_refused_together_renew_the_token_once(modelarts_emulator, repo):
    # A wait on 12 legacy jobs (one GET each a round) with the password flow; mid-wait the emulator revokes every IAM
    # token it issued, so the next round's concurrent GETs are all refused. One renewal serves them all: the requests
    # signed before it are simply signed again with the new token.
    emu = modelarts_emulator
    jobs = [{"job_id": 28000 + index, "version_id": 1} for index in range(12)]
    for job in jobs:
        # Running until the emulator's clock is moved past the hour, once the renewal has served a round.
        emu.add_job(api="v1", name="refused-together-%d" % job["job_id"], timeline=[{"phase": "Running", "seconds": 3600}, "Completed"], **job)
    emu.clear_requests()
    task = dict(emu.connection("password"), v1_jobs=jobs, wait=True, wait_timeout=120, wait_sleep=1, wait_sleep_max=1, max_concurrency=16)
    plays = [{"hosts": "localhost", "gather_facts": False, "tasks": [{"name": "wait", MODULE: task}]}]
    expired = threading.Event()

    def expire_once_polled():
        # Once the first token has served a request (never before: there would be nothing to refuse), revoke every
        # token; once a request was refused and a later one served again, move the clock so that the jobs complete.
        for _attempt in range(1200):
            log = emu.requests()
            served = [index for index, entry in enumerate(log) if entry["path"].startswith("/v1/") and entry["status"] == 200]
            if not expired.is_set() and served:
                emu.expire_tokens()
                expired.set()
            refused = [index for index, entry in enumerate(log) if entry["path"].startswith("/v1/") and entry["status"] == 401]
            if refused and served and served[-1] > refused[0]:
                emu.advance_clock(3600)
                return
            time.sleep(0.1)

    watcher = threading.Thread(target=expire_once_polled, daemon=True)
    watcher.start()
    result = repo.play(plays)
    watcher.join(5)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-3000:]
    assert expired.is_set()
    log = emu.requests()
    exchanges = [entry for entry in log if entry["path"] == "/v3/auth/tokens" and entry["method"] == "POST"]
    refused = [entry for entry in log if entry["path"].startswith("/v1/") and entry["status"] == 401]
    assert refused, "the round after the revocation was refused"
    assert len(exchanges) == 2, "one token, then one renewal for %d refusals: %d exchanges" % (len(refused), len(exchanges))


def test_a_configuration_error_ends_ansible_rulebook_with_one_source_error(emulator, ansible_env, tmp_path):
    # The credentials file names no project and nothing else does: the runner's ansible-rulebook says so, in one line.
    path = tmp_path / "no-project.ini"
    path.write_text("[basic]\nak = %s\nsk = %s\n" % (emulator.ak, emulator.sk))
    env = {
        "HUAWEICLOUD_SDK_CREDENTIALS_FILE": str(path),
        "HUAWEICLOUD_MODELARTS_ENDPOINT": emulator.url,
        "HUAWEICLOUD_SDK_IAM_ENDPOINT": emulator.url,
        "HUAWEICLOUD_CA_BUNDLE": emulator.ca_file,
        "HOME": str(tmp_path / "home"),
    }
    variables = {"training_job_ids": [COMPLETED], "interval": 0.2, "backoff_retries": 0}
    result = run_rulebook(ansible_env, tmp_path, os.path.join(RULEBOOKS, "observe_phases.yml"), variables, env=env)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out[-3000:]
    line = "modelarts.training.training_job_phase: the project is not known: set project_id (HUAWEICLOUD_SDK_PROJECT_ID), or region"
    assert line in out, out[-3000:]
    assert "ConnectionConfigError" not in out and emulator.sk not in out, out[-3000:]
