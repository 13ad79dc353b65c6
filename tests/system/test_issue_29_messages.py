# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a newcomer met (issue 29), met through ansible-playbook: a wait that cannot reach the service ends on
that error instead of at wait_timeout, and messages that name the next step.

Each test fails on the code before its fix; the subprocess timeout (not a timed assertion) is the guard for the
waits that used to last until wait_timeout.
"""

import http.server
import socket
import threading
import time
import urllib.parse
import uuid

import pytest

from peers import tcp_relay

# Long enough for the client's retries, far shorter than the default wait_timeout (3600 s).
GUARD = 120


def closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
        since = emulator.requests()[-1]["seq"] if emulator.requests() else 0
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
