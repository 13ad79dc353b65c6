# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a newcomer met (issue 29), met through ansible-playbook: a wait that cannot reach the service ends on
that error instead of at wait_timeout, and messages that name the next step.

Each test fails on the code before its fix; the subprocess timeout (not a timed assertion) is the guard for the
waits that used to last until wait_timeout.
"""

import http.server
import threading
import time
import urllib.parse
import uuid

import pytest

from peers import closed_port, tcp_relay

# Long enough for the client's retries, far shorter than the default wait_timeout (3600 s).
GUARD = 120


@pytest.fixture
def plain_http():
    """A plain HTTP server on loopback (it answers 404 to everything); yields its ``host:port``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "127.0.0.1:%d" % server.server_address[1]
    server.shutdown()
    server.server_close()


def wait_play(task):
    return [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {"name": "wait", "modelarts.training.modelarts_training_job_info": task, "register": "job", "ignore_errors": True},
                {"name": "show", "ansible.builtin.debug": {"msg": "MSG={{ job.msg | default('') }} OK={{ job.failed is not defined or not job.failed }}"}},
            ],
        }
    ]


@pytest.mark.parametrize("where", ["closed port", "unresolvable name", "http to a TLS server", "https to a plain server", "untrusted certificate"])
def test_a_wait_that_cannot_reach_the_service_ends_on_that_error(emulator, run_playbook, plain_http, where):
    job_id = str(uuid.uuid4())
    task = dict(emulator.connection("aksk"), training_job_id=job_id, wait=True, wait_sleep=1)
    emu = urllib.parse.urlsplit(emulator.url).netloc
    endpoint, expected = {
        "closed port": ("https://127.0.0.1:%d" % closed_port(), "Connection refused"),
        "unresolvable name": ("https://modelarts.invalid", "modelarts.invalid"),
        "http to a TLS server": ("http://%s" % emu, "answered in TLS: use https://%s" % emu),
        "https to a plain server": ("https://%s" % plain_http, "does not answer in TLS: if it serves plain HTTP, use http://%s" % plain_http),
        "untrusted certificate": (emulator.url, "CERTIFICATE_VERIFY_FAILED"),
    }[where]
    task.update(endpoint=endpoint, iam_endpoint=endpoint)
    if where == "untrusted certificate":
        del task["ca_bundle"]
    result = run_playbook(wait_play(task), verbosity=3, timeout=GUARD)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK=False" in result.stdout, result.stdout
    assert expected in result.stdout, result.stdout
    assert "timed out" not in result.stdout, result.stdout


def test_a_seen_job_whose_endpoint_goes_away_keeps_waiting(emulator, run_playbook):
    """Once the service has answered, connection errors are retried within the deadline as before."""
    job_id = str(uuid.uuid4())
    emulator.add_job(id=job_id, name="outage", timeline=[{"phase": "Running", "polls": 3}, {"phase": "Completed"}])
    host, port = urllib.parse.urlsplit(emulator.url).netloc.split(":")
    with tcp_relay(host, int(port)) as relay:
        task = dict(emulator.connection("aksk"), endpoint=relay.url, iam_endpoint=relay.url, training_job_id=job_id, wait=True, wait_sleep=1, wait_timeout=90)
        since = emulator.mark()
        outcome = {}
        thread = threading.Thread(target=lambda: outcome.update(result=run_playbook(wait_play(task), timeout=GUARD)))
        thread.start()
        # Down as soon as the job has been seen once, back after a few failed rounds.
        while not [entry for entry in emulator.requests(since=since, path=job_id) if entry.get("method") == "GET"]:
            assert thread.is_alive(), outcome
            time.sleep(0.05)
        relay.down()
        while relay.dropped < 3 and thread.is_alive():
            time.sleep(0.1)
        relay.up()
        thread.join(GUARD)
    result = outcome["result"]
    assert relay.dropped >= 3, result.stdout
    assert "OK=True" in result.stdout, result.stdout + result.stderr


# -- messages that name the next step ------------------------------------------------------------------------------

COMPLETED = "a1000000-0000-4000-8000-000000000001"
# phase-failed: worker-1 exited with code 2; its newest error event is "Failed to run the training job."
FAILED = "a1000000-0000-4000-8000-000000000002"


def read_play(task, vars_=None):
    """One read whose message the next task prints (MSG=...), whatever happened."""
    play = {
        "hosts": "localhost",
        "gather_facts": False,
        "tasks": [
            {"name": "read", "modelarts.training.modelarts_training_job_info": task, "register": "job", "ignore_errors": True},
            {"name": "show", "ansible.builtin.debug": {"msg": "MSG={{ job.msg | default('none') }}"}},
        ],
    }
    if vars_:
        play["vars"] = vars_
    return [play]


def message(result):
    lines = [line for line in result.stdout.splitlines() if '"msg": "MSG=' in line]
    assert lines, result.stdout + result.stderr
    return lines[-1]


def test_a_job_not_in_the_project_asked_points_at_project_id_and_region(emulator, run_playbook):
    result = run_playbook(read_play(dict(emulator.connection("aksk"), training_job_id=str(uuid.uuid4()))))
    text = message(result)
    assert "ModelArts.2775" in text and "check project_id (HUAWEICLOUD_SDK_PROJECT_ID) and region" in text, text


@pytest.mark.parametrize("shape", ["directory", "not PEM"])
def test_a_ca_bundle_that_is_not_a_pem_file_says_what_was_found(emulator, run_playbook, tmp_path, shape):
    if shape == "directory":
        bundle, found = tmp_path / "certs", "is a directory"
        bundle.mkdir()
    else:
        bundle, found = tmp_path / "ca.der", "holds no PEM certificate"
        bundle.write_bytes(b"0\x82\x03\x1d0\x82\x02\x05\xa0\x03\x02\x01\x02")
    result = run_playbook(read_play(dict(emulator.connection("aksk"), training_job_id=COMPLETED, ca_bundle=str(bundle))))
    text = message(result)
    assert "ca_bundle (task option): %s %s" % (bundle, found) in text, text
    assert "set ca_bundle" not in text


@pytest.mark.parametrize(
    "option, value, expected",
    [
        ("endpoint", "ftp://modelarts.example", "endpoint (task option) must be a URL starting with https:// or http://"),
        ("connect_timeout", 0, "connect_timeout (task option) must be greater than 0, got 0.0"),
        ("backoff_retries", -1, "backoff_retries (task option) must not be negative, got -1"),
    ],
)
def test_a_task_options_bad_value_is_named_as_the_option(emulator, run_playbook, option, value, expected):
    task = dict(emulator.connection("aksk"), training_job_id=COMPLETED)
    task[option] = value
    text = message(run_playbook(read_play(task)))
    assert expected in text, text
    assert "HUAWEICLOUD_" not in text, text


def test_a_wrong_iam_password_says_its_status_once(emulator, run_playbook):
    task = dict(emulator.connection("password"), training_job_id=COMPLETED, password="not-the-password")
    text = message(run_playbook(read_play(task)))
    assert "HTTP 401: " in text, text
    assert "401 401" not in text, text


def test_no_credentials_names_the_variables_and_what_the_module_reads(emulator, run_playbook, tmp_path):
    task = {"region": emulator.region, "project_id": emulator.project_id, "endpoint": emulator.url, "iam_endpoint": emulator.url}
    task.update(ca_bundle=emulator.ca_file, training_job_id=COMPLETED)
    # A newcomer's inventory variables, which only the lookup reads.
    result = run_playbook(read_play(task, {"modelarts_access_key": emulator.ak}), env={"HOME": str(tmp_path / "empty-home")})
    text = message(result)
    assert "no credentials were given and none were found" in text, text
    assert "access_key and secret_key (HUAWEICLOUD_SDK_AK, HUAWEICLOUD_SDK_SK)" in text, text
    assert "modelarts_* inventory variables are read by the training_job lookup only" in text and "module_defaults" in text, text
    assert emulator.ak not in text


def test_expired_temporary_credentials_get_one_hint(emulator, run_playbook):
    job = emulator.add_job(name="expiring-temporary-29", timeline=[{"phase": "Running", "seconds": 120}, "Completed"])
    job_id = job if isinstance(job, str) else job["added"][0]["id"]
    task = dict(emulator.connection("temporary"), training_job_id=job_id, wait=True, wait_timeout=60, wait_sleep=1, wait_sleep_max=1)
    since = emulator.mark()
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.update(result=run_playbook(read_play(task), timeout=GUARD)))
    thread.start()
    try:
        # Expired once they have worked: after the first GET of the job.
        while thread.is_alive() and not [entry for entry in emulator.requests(since=since, path=job_id) if entry.get("status") == 200]:
            time.sleep(0.05)
        emulator.expire_tokens()
        thread.join(GUARD)
    finally:
        emulator.reset()
    text = message(outcome["result"])
    assert "worked earlier in this task and are now refused: they have expired" in text, text
    assert "clock is right" not in text and "renew auth_token" not in text, text


def test_a_generic_last_error_event_is_followed_by_the_one_naming_the_task(emulator, run_playbook):
    task = dict(emulator.connection("aksk"), training_job_id=FAILED, wait=True, wait_timeout=60, wait_sleep=1)
    text = message(run_playbook(read_play(task)))
    assert "Failed to run the training job.; the last naming a task or exit code, at " in text, text
    assert "[worker-1] Training process exited with code 2" in text, text
