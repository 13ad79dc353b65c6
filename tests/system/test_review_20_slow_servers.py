# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 20, item 5: no call runs past ``wait_timeout`` plus one ``request_timeout``, whatever the server does.

Socket timeouts bound each read: a server that trickles its status line and headers a byte a second
(here over TLS), or a proxy that trickles its answer to CONNECT, kept a ``wait_timeout: 3`` task going
for as long as it trickled (20 s in the review, a minute here). A server that accepts and never
completes the TLS handshake is the third kind (Python bounds a handshake by the connect timeout; the
watchdog would end it too). The servers run on 127.0.0.1, started and stopped by the test. As in
test_deadlines.py the bound is checked on the time the module reports for its wait, and loose: it
tells "ends at the deadline" from "hangs", never speed; a task that hangs is also stopped by the
playbook's timeout, well before the slow server stops trickling.
"""

import contextlib
import re
import socket
import ssl
import subprocess
import threading
import time

import pytest

from modelarts_emulator.tls import ensure_certificates, server_context  # pylint: disable=import-error
from peers import read_head, trickle

WAIT_TIMEOUT = 3
REQUEST_TIMEOUT = 4
# Slack for a machine so loaded that the module's own process is starved: far below the hang (a minute and more).
SLACK = 25
# How long a slow server keeps trickling: far past any bound, so a hang cannot pass for an ending.
TRICKLE_SECONDS = 90
PROJECT = "0123456789abcdef0123456789abcdef"


def _trickle(conn, stop, payload):
    """One byte a second until the payload, TRICKLE_SECONDS or the test ends."""
    trickle(conn, payload[:TRICKLE_SECONDS], stop)


def _headers(conn, stop, context):
    conn = context.wrap_socket(conn, server_side=True)
    if read_head(conn) is not None:
        _trickle(conn, stop, b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 1000)


def _handshake(conn, stop, _context):
    # Take the ClientHello, then a TLS handshake record whose 16 KB arrive a byte a second.
    conn.recv(65536)
    _trickle(conn, stop, b"\x16\x03\x03\x40\x00" + b"\x00" * 16384)


def _connect(conn, stop, _context):
    if read_head(conn) is not None:
        _trickle(conn, stop, b"HTTP/1.1 200 Connection established\r\nX-Slow: " + b"a" * 1000)


@contextlib.contextmanager
def slow_server(kind, tls_dir):
    """A server on 127.0.0.1 that answers every connection the ``kind`` way; yields its port and the connections seen."""
    ca_file, cert, key = ensure_certificates(tls_dir)
    context = server_context(cert, key)
    behaviour = {"headers": _headers, "handshake": _handshake, "connect": _connect}[kind]
    stop = threading.Event()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    seen = []

    def serve(conn):
        try:
            behaviour(conn, stop, context)
        except (OSError, ssl.SSLError):
            pass
        finally:
            conn.close()

    def accept():
        while not stop.is_set():
            try:
                conn, _addr = listener.accept()
            except OSError:
                continue
            seen.append(time.monotonic())
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], ca_file, seen
    finally:
        stop.set()
        thread.join(5)
        listener.close()


@pytest.mark.parametrize("kind", ["headers", "handshake", "connect"])
def test_a_slow_server_cannot_keep_a_waiting_task_past_its_deadline(kind, run_playbook, tmp_path):
    with slow_server(kind, str(tmp_path / "tls")) as (port, ca_file, seen):
        endpoint = "https://127.0.0.1:%d" % port if kind != "connect" else "https://modelarts.cn-north-4.myhuaweicloud.com"
        task = dict(
            region="cn-north-4",
            project_id=PROJECT,
            access_key="AKSLOWSERVER",
            secret_key="SK-slow-server-secret",
            endpoint=endpoint,
            ca_bundle=ca_file,
            training_job_id="a1000000-0000-4000-8000-000000000001",
            wait=True,
            wait_timeout=WAIT_TIMEOUT,
            wait_sleep=1,
            request_timeout=REQUEST_TIMEOUT,
            connect_timeout=2,
        )
        if kind == "connect":
            task["proxy"] = "http://127.0.0.1:%d" % port
        plays = [
            {
                "hosts": "localhost",
                "gather_facts": False,
                "tasks": [
                    {"name": "wait", "modelarts.training.modelarts_training_job_info": task, "register": "job", "ignore_errors": True},
                    {"name": "show", "ansible.builtin.debug": {"msg": "MSG={{ job.msg }}"}},
                ],
            }
        ]
        try:
            result = run_playbook(plays, env={"NO_PROXY": "", "no_proxy": ""}, timeout=TRICKLE_SECONDS - 10)
        except subprocess.TimeoutExpired:
            pytest.fail("the task was still running after %ds: it hung on the slow server" % (TRICKLE_SECONDS - 10))
    assert result.returncode == 0, result.stdout + result.stderr
    assert seen, "the slow server was reached"
    assert "timed out after" in result.stdout, result.stdout
    expected = {
        "headers": "the deadline passed while waiting for the status line and headers of the response",
        # Python ends a handshake at the connect timeout (cut to the time left), the watchdog otherwise.
        "handshake": "",
        "connect": "the deadline passed while waiting for the proxy 127.0.0.1:%d to answer CONNECT" % port,
    }[kind]
    assert expected in result.stdout, result.stdout
    if kind == "handshake":
        assert re.search(r"last poll failed: [^:]+: (ReadTimeout|ConnectTimeout|SSLError|the deadline passed during the TLS handshake)", result.stdout), (
            result.stdout
        )
    waited = re.search(r"timed out after ([0-9.]+)s", result.stdout)
    assert waited, result.stdout
    assert float(waited.group(1)) < WAIT_TIMEOUT + REQUEST_TIMEOUT + SLACK, "the task outlived its deadline: %ss" % waited.group(1)
    print("%s: the module waited %ss of wait_timeout %ss" % (kind, waited.group(1), WAIT_TIMEOUT))
