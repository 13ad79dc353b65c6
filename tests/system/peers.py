# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hosts in the middle, for the tests and benchmarks that need one on 127.0.0.1: a CONNECT proxy, a TCP relay that
goes down and up, a JSON API answering as the test says (plain or TLS), a closed port, and the pieces of servers that
misbehave (reading a request's head, trickling an answer, relaying bytes)."""

import contextlib
import http.server
import json
import select
import socket
import socketserver
import threading

from urllib.parse import urlsplit


def closed_port():
    """A loopback port nothing listens on (bound, then closed: connecting is refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def read_head(conn):
    """The bytes of a request or CONNECT up to the blank line after its headers, or None when the peer closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    return data


def trickle(conn, payload, stop, interval=1.0):
    """Send ``payload`` one byte every ``interval`` seconds, until it is sent or ``stop`` (an Event) is set."""
    for byte in payload:
        if stop.wait(interval):
            return
        conn.sendall(bytes([byte]))


def relay(one, other, idle=30):
    """Copy bytes both ways between two sockets until either side closes or both are quiet for ``idle`` seconds."""
    ends = [one, other]
    while True:
        readable, _w, _x = select.select(ends, [], [], idle)
        if not readable:
            return
        for end in readable:
            data = end.recv(65536)
            if not data:
                return
            (other if end is one else one).sendall(data)


class _Tunnel(socketserver.BaseRequestHandler):
    """One HTTP CONNECT tunnel, or one plain-HTTP request in absolute form (``GET http://host:port/path``, what a client
    sends a proxy for an ``http://`` URL): note the target, check the request, then relay until either side closes."""

    def handle(self):
        head = read_head(self.request)
        if head is None:
            return
        lines = head.decode("latin-1").split("\r\n")
        method, target = lines[0].split(" ")[:2]
        sent = dict((name.strip().lower(), value.strip()) for name, _sep, value in (line.partition(":") for line in lines[1:] if line))
        check = self.server.check
        allowed = check is None or check(sent)
        self.server.seen.append((target, allowed))
        plain = method != "CONNECT" and target.lower().startswith("http://")
        if method != "CONNECT" and not plain:
            self.request.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        if not allowed:
            self.request.sendall(b'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n')
            return
        if plain:
            self._forward(head, method, target)
            return
        host, _sep, port = target.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=30) as upstream:
            self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            relay(self.request, upstream)

    def _forward(self, head, method, target):
        # The request goes on in origin form (GET /path), its body and the answer relayed as they come; one request a connection.
        parts = urlsplit(target)
        path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
        header_block, _sep, rest = head.partition(b"\r\n\r\n")
        skipped = ("proxy-authorization", "proxy-connection", "connection")
        kept = [line for line in header_block.decode("latin-1").split("\r\n")[1:] if line and line.partition(":")[0].strip().lower() not in skipped]
        upstream_head = "\r\n".join(["%s %s HTTP/1.1" % (method, path)] + kept + ["Connection: close", "", ""]).encode("latin-1")
        with socket.create_connection((parts.hostname, parts.port or 80), timeout=30) as upstream:
            upstream.sendall(upstream_head + rest)
            relay(self.request, upstream)


@contextlib.contextmanager
def connect_proxy(check=None):
    """A forwarding proxy on 127.0.0.1 (HTTP CONNECT, and plain-HTTP requests in absolute form); ``check(headers)``
    (lower-case names) says whether a request may pass (407 otherwise). The server's ``seen`` lists ``(target,
    allowed)`` per request (``host:port`` for a tunnel, the URL for a plain-HTTP request), ``url`` its URL."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Tunnel)
    server.daemon_threads = True
    server.check = check
    server.seen = []
    server.url = "http://127.0.0.1:%d" % server.server_address[1]
    with _serving(server):
        yield server


@contextlib.contextmanager
def _serving(server):
    """``server`` serving on a thread of its own for the length of the block, then shut down and closed."""
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


class Relay:
    """A TCP relay on 127.0.0.1 to ``(host, port)`` that can go down and come back on the same port.

    Down, it takes each connection and resets it at once (``dropped`` counts them) and cuts the relayed ones: to a
    client, the endpoint went away.  ``url`` is ``https://127.0.0.1:<port>``."""

    def __init__(self, host, port):
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = "https://127.0.0.1:%d" % self.port
        self.is_down = False
        self.dropped = 0
        self.relayed = 0
        self._open = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self._closed:
            try:
                conn, _addr = self.listener.accept()
            except OSError:
                return
            if self.is_down:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                conn.close()
                self.dropped += 1
                continue
            threading.Thread(target=self._relay, args=(conn,), daemon=True).start()

    def _relay(self, conn):
        try:
            upstream = socket.create_connection(self.target, timeout=30)
        except OSError:
            conn.close()
            return
        with self._lock:
            self.relayed += 1
            self._open.extend((conn, upstream))
        try:
            relay(conn, upstream)
        except OSError:
            pass
        finally:
            conn.close()
            upstream.close()

    def down(self):
        """Refuse from now on, and cut the connections under way."""
        self.is_down = True
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            self._open = []

    def up(self):
        """Relay again."""
        self.is_down = False

    def close(self):
        self._closed = True
        self.down()
        self.listener.close()


@contextlib.contextmanager
def tcp_relay(host, port):
    """A :class:`Relay` to ``(host, port)`` for the length of the block."""
    server = Relay(host, port)
    try:
        yield server
    finally:
        server.close()


class _Answering(http.server.BaseHTTPRequestHandler):
    """One request to :func:`json_api`: noted in the server's ``seen``, then answered with what its ``answer`` returns."""

    protocol_version = "HTTP/1.1"

    def _serve(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        path = self.path.split("?", 1)[0]
        self.server.seen.append((self.command, path, body))
        answer = self.server.answer(self.command, path, body)
        if len(answer) == 3:
            status, headers, payload = answer
        else:
            status, payload = answer
            headers = {"Content-Type": "application/json", "X-Request-Id": "peer-%d" % len(self.server.seen)}
        if not isinstance(payload, (bytes, tuple)):
            payload = json.dumps(payload).encode("utf-8")
        length, pieces = (len(payload), [payload]) if isinstance(payload, bytes) else payload
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(length))
        self.end_headers()
        try:
            for piece in pieces:
                self.wfile.write(piece)
        except OSError:
            pass  # the client stopped reading

    do_GET = do_POST = do_PUT = _serve

    def log_message(self, *_args):  # pylint: disable=arguments-differ
        pass


def routed(routes):
    """An ``answer`` for :func:`json_api` from ``routes``: ``(method, path) -> (status, headers, body bytes)``; a path
    not routed gets 404."""
    routes = dict(routes)
    return lambda method, path, _body: routes.get((method, path)) or (404, {}, b"")


@contextlib.contextmanager
def json_api(answer, tls_dir=None):
    """A server on 127.0.0.1 that answers every request with ``answer(method, path, body)``: ``path`` without its
    query, ``body`` the request's JSON (its bytes when it is not JSON, None when empty).  The answer is ``(status,
    payload)`` (sent as ``application/json`` with an ``X-Request-Id``) or ``(status, headers, payload)`` (those headers
    alone); the payload is bytes, ``(length, pieces)`` to stream (an answer far larger than the test wants to hold)
    or a document to send as JSON.  Plain HTTP, or HTTPS with ``tls_dir``: the emulator's certificates, made there,
    the server's ``ca_file`` the CA to trust.  The server's ``url`` is its base URL, ``seen`` lists ``(method, path,
    body)`` per request and ``count(path)`` says how many asked for ``path``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answering)
    server.daemon_threads = True
    scheme = "http"
    if tls_dir is not None:
        from modelarts_emulator.tls import ensure_certificates, server_context  # pylint: disable=import-error,import-outside-toplevel

        server.ca_file, cert, key = ensure_certificates(tls_dir)
        server.socket = server_context(cert, key).wrap_socket(server.socket, server_side=True)
        scheme = "https"
    server.answer = answer
    server.seen = []
    server.url = "%s://127.0.0.1:%d" % (scheme, server.server_address[1])
    server.count = lambda path: sum(1 for _method, seen, _body in list(server.seen) if seen == path)
    with _serving(server):
        yield server
