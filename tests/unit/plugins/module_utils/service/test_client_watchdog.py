# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watchdog (issue 20, item 5): an attempt ends at its deadline whatever the server does.

Socket timeouts bound each read, not an exchange: a server that trickles a byte a second kept a call
going for as long as it liked. These tests use real servers on 127.0.0.1 (started and stopped here)
and the real clock; their bounds are loose on purpose - they tell "ended at the deadline" from "hung",
they do not measure speed.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.service import watchdog as watchdog_mod
from ansible_collections.modelarts.training.plugins.module_utils.service.client import ModelArtsClient
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fakes import FakeResponse, FakeSession, client_parts

PROJECT = "0123456789abcdef0123456789abcdef"
JOB = b'{"metadata": {"id": "job-1", "name": "n"}, "status": {"phase": "Running"}}'
# "Ended at the deadline" is the deadline and a thread switch; "hung" is the trickle's length (60 s).
LOOSE = 5.0


def params(url, **extra):
    merged = dict(region="cn-north-4", project_id=PROJECT, access_key="AK", secret_key="SK", endpoint=url, request_timeout=4, connect_timeout=2)
    merged.update(extra)
    return merged


class Server(object):
    """A TCP server on 127.0.0.1 whose ``behaviour(conn, server)`` answers each connection in its own thread."""

    def __init__(self, behaviour):
        self.behaviour = behaviour
        self.stop = threading.Event()
        self.connections = 0
        self.closed_by_client = []  # seconds from accepting a trickled connection to seeing the client close it
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def _accept(self):
        while not self.stop.is_set():
            try:
                conn, _addr = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            self.behaviour(conn, self)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.stop.set()
        self.thread.join(5)
        self.sock.close()


@contextlib.contextmanager
def server(behaviour):
    running = Server(behaviour)
    try:
        yield running
    finally:
        running.close()


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    return data


def trickle(conn, srv, payload):
    """Send ``payload`` a byte every 0.5 s (60 s at most); note when the client closed its end."""
    started = time.monotonic()
    conn.settimeout(0.5)
    for byte in payload[:120]:
        if srv.stop.is_set():
            return
        try:
            conn.sendall(bytes([byte]))
            if conn.recv(1) == b"":
                srv.closed_by_client.append(time.monotonic() - started)
                return
        except socket.timeout:
            continue
        except OSError:
            srv.closed_by_client.append(time.monotonic() - started)
            return


def trickled_headers(conn, srv):
    if read_request(conn) is not None:
        trickle(conn, srv, b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 200)


def keep_alive(conn, srv):
    """Answer every request, keeping the connection open; the requests numbered in ``srv.trickled`` get trickled headers."""
    while read_request(conn) is not None:
        srv.requests = getattr(srv, "requests", 0) + 1
        if srv.requests in getattr(srv, "trickled", ()):
            trickle(conn, srv, b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 200)
            return
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(JOB), JOB))


def slow_proxy(conn, srv):
    """A proxy whose answer to CONNECT never completes."""
    if read_request(conn) is not None:
        trickle(conn, srv, b"HTTP/1.1 200 Connection established\r\nX-Slow: " + b"a" * 200)


def ends_by(call, bound):
    started = time.monotonic()
    with pytest.raises(ModelArtsError) as info:
        call()
    elapsed = time.monotonic() - started
    assert elapsed < bound, "the call outlived its deadline: %.1fs" % elapsed
    return info.value


def test_trickled_headers_end_at_the_deadline_and_the_connection_is_closed():
    with server(trickled_headers) as srv:
        client = ModelArtsClient(*client_parts(params(srv.url, backoff_retries=0)))
        error = ends_by(lambda: client.get_training_job("job-1", deadline=time.monotonic() + 1.5), 1.5 + LOOSE)
        assert "the deadline passed while waiting for the status line and headers of the response" in str(error), str(error)
        assert error.transient and error.deadline_cut, "the deadline ended it: a wait ran out, the service did not fail"
        # The socket was shut down, not merely abandoned: the server sees the connection end at once.
        for _wait in range(100):
            if srv.closed_by_client:
                break
            time.sleep(0.05)
        assert srv.closed_by_client and srv.closed_by_client[0] < 1.5 + LOOSE
        client.close()


def test_a_proxy_that_never_completes_its_connect_answer_ends_at_the_deadline():
    with server(slow_proxy) as srv:
        client = ModelArtsClient(*client_parts(params("https://modelarts.example.invalid", proxy=srv.url, backoff_retries=0)))
        error = ends_by(lambda: client.get_training_job("job-1", deadline=time.monotonic() + 1.5), 1.5 + LOOSE)
        assert "the deadline passed while waiting for the proxy 127.0.0.1:%d to answer CONNECT modelarts.example.invalid" % srv.port in str(error)
        client.close()


def pooled_connections(client):
    adapter = client._session.get_adapter("http://")  # pylint: disable=protected-access
    pools = adapter.poolmanager.pools._container.values()  # pylint: disable=protected-access
    return [conn for pool in pools for conn in list(pool.pool.queue) if conn is not None]


def test_a_killed_connection_never_goes_back_to_the_pool_and_healthy_ones_do():
    with server(keep_alive) as srv:
        srv.trickled = (2,)
        client = ModelArtsClient(*client_parts(params(srv.url, backoff_retries=0)))
        assert client.get_training_job("job-1").data["metadata"]["id"] == "job-1"
        ends_by(lambda: client.get_training_job("job-1", deadline=time.monotonic() + 1.0), 1.0 + LOOSE)
        for _wait in range(100):  # the abandoned worker closes its connection as it unwinds
            if all(conn.sock is None for conn in pooled_connections(client)):
                break
            time.sleep(0.05)
        assert all(conn.sock is None for conn in pooled_connections(client)), "the killed connection is closed, never pooled in use"
        for _call in range(3):
            assert client.get_training_job("job-1").data["metadata"]["id"] == "job-1"
        assert srv.connections == 2, "a new connection after the killed one, then kept alive and reused"
        client.close()


def test_name_resolution_that_never_ends_is_abandoned_at_the_deadline(monkeypatch):
    """Name resolution has no timeout at all: it runs in a helper the attempt stops waiting for; the call ends on time."""
    release = threading.Event()
    resolve = socket.getaddrinfo

    def slow_resolver(host, *args, **kwargs):
        if host == "slow-dns.example.invalid":
            release.wait(60)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_resolver)
    client = ModelArtsClient(*client_parts(params("https://slow-dns.example.invalid", backoff_retries=0)))
    try:
        error = ends_by(lambda: client.get_training_job("job-1", deadline=time.monotonic() + 1.0), 1.0 + LOOSE)
        assert "the deadline passed while connecting to slow-dns.example.invalid:443 (name resolution and TCP connect)" in str(error), str(error)
        assert error.transient
    finally:
        release.set()
        client.close()


def watchdogs():
    return set(thread for thread in threading.enumerate() if thread.name == "modelarts-watchdog" and thread.is_alive())


def test_one_watchdog_thread_per_client_ends_with_the_client():
    # Threads are compared as sets: watchdogs of clients earlier tests left to the garbage collector may end meanwhile.
    with server(keep_alive) as srv:
        before = watchdogs()
        client = ModelArtsClient(*client_parts(params(srv.url)))
        client.get_training_job("job-1")
        during = set(threading.enumerate())
        for _call in range(20):
            client.get_training_job("job-1")
        ours = watchdogs() - before
        assert len(ours) == 1 and set(threading.enumerate()) <= during, "one watchdog, and no thread per attempt"
        client.close()
        for _wait in range(100):
            if not ours & watchdogs():
                break
            time.sleep(0.05)
        assert not ours & watchdogs(), "the watchdog ended with the client"
        assert client.get_training_job("job-1").data["metadata"]["id"] == "job-1", "a closed client still works (a new watchdog)"
        client.close()


def test_an_injected_session_has_no_watchdog():
    before = watchdogs()
    client = ModelArtsClient(*client_parts(params("https://modelarts.example.invalid")), session=FakeSession(FakeResponse(200, raw=JOB)))
    client.get_training_job("job-1")
    assert watchdogs() <= before, "no new watchdog"


def test_the_watch_refuses_to_go_on_after_the_kill_and_closes_late_sockets():
    watch = watchdog_mod.Watch()
    assert watch.kill() is True and watch.release() is False
    with pytest.raises(watchdog_mod.Killed):
        watch.enter("while sending the request")
    left, right = socket.socketpair()
    with pytest.raises(watchdog_mod.Killed):
        watch.track(left)
    assert left.fileno() == -1 and right.recv(1) == b""
    right.close()
    late = watchdog_mod.Watch()
    assert late.release() is True and late.kill() is False, "an attempt that handed its connection back is done"


def test_the_metadata_probe_of_a_host_that_accepts_and_never_answers_ends_within_its_budget(tmp_path, monkeypatch):
    # No credentials anywhere: the default chain probes instance metadata. A host that accepts connections and
    # never answers (a firewall's tarpit, a transparent proxy) must cost the probe's budget, not a read timeout.
    from ansible_collections.modelarts.training.plugins.module_utils.service import credential_sources, credentials

    monkeypatch.setenv("HOME", str(tmp_path))
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # the kernel completes the TCP handshake; nothing ever reads or answers
    port = silent.getsockname()[1]
    try:
        environ = {"HUAWEICLOUD_METADATA_ENDPOINT": "http://127.0.0.1:%d" % port}
        merged = dict(region="cn-north-4", project_id=PROJECT, endpoint="http://127.0.0.1:9", request_timeout=60, backoff_retries=0)
        client = ModelArtsClient(*client_parts(merged), environ=environ)
        assert client.kind == "default"
        started = time.monotonic()
        with pytest.raises(credentials.NoCredentialsError) as info:
            client.get_training_job("job-1")
        elapsed = time.monotonic() - started
        client.close()
    finally:
        silent.close()
    # The probe's session-token request ends within METADATA_PROBE_WITHIN; a read timeout would be 60 s.
    assert elapsed < credential_sources.METADATA_PROBE_WITHIN + LOOSE, "the probe took %.1fs" % elapsed
    assert "instance metadata: http://127.0.0.1:%d accepted the connection but answered too slowly" % port in str(info.value), str(info.value)


def test_an_abandoned_client_ends_the_requests_in_flight_and_sends_no_other():
    """Issue 36: a task interrupted (its timeout) while other threads have requests in flight ends them, never waits."""
    with server(trickled_headers) as srv:
        client = ModelArtsClient(*client_parts(params(srv.url, backoff_retries=3, request_timeout=60)))
        outcome = []

        def in_flight():
            try:
                client.get_training_job("job-1", deadline=time.monotonic() + 60)
            except ModelArtsError as exc:
                outcome.append(exc)

        worker = threading.Thread(target=in_flight, daemon=True)
        worker.start()
        for _wait in range(100):
            if srv.connections:
                break
            time.sleep(0.05)
        assert srv.connections == 1
        client.abandon()
        worker.join(LOOSE)
        assert not worker.is_alive() and len(outcome) == 1, "the request in flight ended with the abandonment, not its deadline"
        assert "gave up after" not in str(outcome[0]), "no retry after the abandonment"
        with pytest.raises(ModelArtsError, match="job-1: not sent, the task was interrupted"):
            client.get_training_job("job-1", deadline=time.monotonic() + 60)
        assert srv.connections == 1, "nothing sent after the abandonment"
        client.close()


class _Pool(object):
    """What requests' cert_verify sets its attributes on (a urllib3 connection pool)."""

    cert_reqs = ca_certs = ca_cert_dir = None


@pytest.mark.parametrize("kind", ["file", "dir"])
def test_the_adapter_looks_at_a_ca_location_on_disk_once(tmp_path, monkeypatch, kind):
    """requests' cert_verify stats the CA bundle on every request; the watched adapter keeps what it found for its session,
    and sets on each connection pool what requests would."""
    import os.path  # pylint: disable=import-outside-toplevel

    location = tmp_path / "ca"
    if kind == "dir":
        location.mkdir()
    else:
        location.write_text("")
    adapter = watchdog_mod.watched_adapter(4)
    looks = []
    for name in ("exists", "isdir"):
        original = getattr(os.path, name)
        monkeypatch.setattr(os.path, name, lambda path, original=original, name=name: looks.append(name) or original(path))
    pools = [_Pool() for _number in range(3)]
    for pool in pools:
        adapter.cert_verify(pool, "https://modelarts.example/v2", str(location), None)
    assert len(looks) == 2, looks
    for pool in pools:
        assert pool.cert_reqs == "CERT_REQUIRED"
        assert (pool.ca_certs, pool.ca_cert_dir) == ((str(location), None) if kind == "file" else (None, str(location)))
    adapter.cert_verify(pools[0], "https://modelarts.example/v2", False, None)
    assert pools[0].cert_reqs == "CERT_NONE", "verify false is never cached"
    with pytest.raises(OSError, match="invalid path"):
        adapter.cert_verify(_Pool(), "https://modelarts.example/v2", str(tmp_path / "missing"), None)


# -- the TLS context: once per process per trust store (issue 51) -------------------------------------------------


class _Loads(object):
    """Counts ``SSLContext.load_verify_locations`` by CA file, through the real method."""

    def __init__(self, monkeypatch):
        import ssl  # pylint: disable=import-outside-toplevel

        self.files = []
        original = ssl.SSLContext.load_verify_locations

        def counted(context, cafile=None, capath=None, cadata=None):
            self.files.append(cafile or capath)
            return original(context, cafile, capath, cadata)

        monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)


def _bundle(path, source=None):
    import certifi  # pylint: disable=import-outside-toplevel  # requests' own: a real PEM bundle

    with open(source or certifi.where(), "rb") as handle:
        path.write_bytes(handle.read())
    return str(path)


def test_a_trust_store_is_loaded_once_per_process_and_again_when_it_changes_on_disk(tmp_path, monkeypatch):
    import os  # pylint: disable=import-outside-toplevel
    import ssl  # pylint: disable=import-outside-toplevel

    from urllib3.util.ssl_ import create_urllib3_context  # pylint: disable=import-outside-toplevel

    loads = _Loads(monkeypatch)
    first = _bundle(tmp_path / "first.pem")
    second = _bundle(tmp_path / "second.pem")
    context = watchdog_mod.tls_context("CERT_REQUIRED", first)
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_REQUIRED
    # The host name is checked as urllib3 checks it with a context of its own (by OpenSSL, or by urllib3 1.26 itself).
    own = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED)
    assert (context.check_hostname, context.hostname_checks_common_name) == (own.check_hostname, own.hostname_checks_common_name)
    assert watchdog_mod.tls_context("CERT_REQUIRED", first) is context, "the same trust store: the same context"
    other = watchdog_mod.tls_context("CERT_REQUIRED", second)
    assert other is not None and other is not context, "another CA file: a context of its own"
    assert loads.files == [first, second]
    # The file rewritten in place (another bundle at the same path): what it holds now is loaded.
    with open(first, "ab") as handle:
        handle.write(b"\n")
    stat = os.stat(first)
    os.utime(first, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1000000))
    renewed = watchdog_mod.tls_context("CERT_REQUIRED", first)
    assert renewed is not context and loads.files == [first, second, first]
    assert watchdog_mod.tls_context("CERT_REQUIRED", first) is renewed


def test_a_context_that_cannot_be_shared_is_left_to_urllib3(tmp_path):
    import ssl  # pylint: disable=import-outside-toplevel

    assert watchdog_mod.tls_context("CERT_REQUIRED", str(tmp_path / "missing.pem")) is None, "urllib3 says the file is missing, as before"
    broken = tmp_path / "broken.pem"
    broken.write_text("-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n")
    assert watchdog_mod.tls_context("CERT_REQUIRED", str(broken)) is None, "urllib3 reports the bad file, as before"
    assert watchdog_mod.tls_context("CERT_REQUIRED") is None, "verifying without a CA location is urllib3's (the system's CAs)"
    unverified = watchdog_mod.tls_context("CERT_NONE")
    assert unverified.verify_mode == ssl.CERT_NONE and not unverified.check_hostname
    assert watchdog_mod.tls_context("CERT_NONE") is unverified


class _Connection(object):
    """What urllib3's HTTPS connection holds when it connects (the settings requests gives it)."""

    ssl_context = ca_cert_data = cert_file = key_file = key_password = ssl_version = None
    ssl_minimum_version = ssl_maximum_version = assert_fingerprint = assert_hostname = ca_cert_dir = proxy = None

    def __init__(self, ca_certs, cert_reqs="CERT_REQUIRED", **settings):
        self.ca_certs = ca_certs
        self.cert_reqs = cert_reqs
        for name, value in settings.items():
            setattr(self, name, value)


@pytest.mark.parametrize(
    "setting",
    [
        {"ssl_context": object()},
        {"cert_file": "/client.pem"},
        {"key_file": "/client.key"},
        {"ca_cert_data": "-----BEGIN CERTIFICATE-----"},
        {"assert_hostname": "modelarts.example"},
        {"assert_fingerprint": "aa:bb"},
        {"ssl_minimum_version": 771},
        {"proxy": type("Url", (), {"scheme": "https"})()},
    ],
    ids=lambda setting: next(iter(setting)),
)
def test_a_connection_with_settings_of_its_own_builds_its_own_context(tmp_path, setting):
    bundle = _bundle(tmp_path / "ca.pem")
    assert watchdog_mod._shared_context(_Connection(bundle)) is watchdog_mod.tls_context("CERT_REQUIRED", bundle)  # pylint: disable=protected-access
    assert watchdog_mod._shared_context(_Connection(bundle, **setting)) is None  # pylint: disable=protected-access


def test_a_connection_through_an_http_proxy_shares_the_context(tmp_path):
    """CONNECT through a plain HTTP proxy: the TLS session is the server's only, verified with the shared context."""
    bundle = _bundle(tmp_path / "ca.pem")
    through = _Connection(bundle, proxy=type("Url", (), {"scheme": "http"})())
    assert watchdog_mod._shared_context(through) is watchdog_mod.tls_context("CERT_REQUIRED", bundle)  # pylint: disable=protected-access


def test_the_watched_connection_hands_urllib3_the_shared_context_and_takes_its_settings_back(tmp_path, monkeypatch):
    import urllib3.connection  # pylint: disable=import-outside-toplevel

    bundle = _bundle(tmp_path / "ca.pem")
    seen = []

    def connect(connection):
        seen.append((connection.ssl_context, connection.ca_certs, connection.ca_cert_dir))

    monkeypatch.setattr(urllib3.connection.HTTPSConnection, "connect", connect)
    pool = watchdog_mod._watched_classes()[0]["https"]("modelarts.example", 443, cert_reqs="CERT_REQUIRED", ca_certs=bundle)  # pylint: disable=protected-access
    connection = pool._new_conn()  # pylint: disable=protected-access
    connection.connect()
    assert seen == [(watchdog_mod.tls_context("CERT_REQUIRED", bundle), None, None)], "urllib3 loads no CA file: the context holds them"
    assert (connection.ssl_context, connection.ca_certs) == (None, bundle), "a reconnection looks at the trust store again"
    connection.connect()
    assert seen[1] == seen[0]


def test_prepare_builds_the_default_trust_store_s_contexts(tmp_path, monkeypatch):
    """The action plugin's job_info.prepare, in the controller's main process: the contexts a task without ca_bundle
    uses (requests' CA bundle, or REQUESTS_CA_BUNDLE's), built before the workers are forked."""
    from ansible_collections.modelarts.training.plugins.module_utils.service import transport

    loads = _Loads(monkeypatch)
    bundle = _bundle(tmp_path / "requests-ca.pem")
    transport.prepare({"REQUESTS_CA_BUNDLE": bundle})
    assert loads.files == [bundle]
    assert watchdog_mod.tls_context("CERT_REQUIRED", bundle) is not None and loads.files == [bundle], "built already"
    transport.prepare({})
    import requests.adapters  # pylint: disable=import-outside-toplevel

    default = requests.adapters.DEFAULT_CA_BUNDLE_PATH
    assert watchdog_mod.tls_context("CERT_REQUIRED", default) is not None
    assert loads.files.count(default) <= 1, "requests' own bundle is loaded once in the process at most"
