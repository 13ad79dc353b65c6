# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hosts in the middle, for the tests and benchmarks that need one on 127.0.0.1: a CONNECT proxy, and the
pieces of servers that misbehave (reading a request's head, trickling an answer, relaying bytes)."""

import contextlib
import http.server
import json
import select
import socket
import socketserver
import threading

from urllib.parse import urlsplit


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
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


class _Api(http.server.BaseHTTPRequestHandler):
    """One GET, answered by the server's ``answer(path)``: ``(status, body)``, the body bytes or ``(length, pieces)`` to
    stream (an answer far larger than the test wants to hold)."""

    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802  (the name http.server calls)
        self.server.paths.append(self.path)
        status, body = self.server.answer(self.path.split("?", 1)[0])
        length, pieces = (len(body), [body]) if isinstance(body, bytes) else body
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length))
        self.end_headers()
        try:
            for piece in pieces:
                self.wfile.write(piece)
        except OSError:
            pass

    def log_message(self, *_args):
        pass


@contextlib.contextmanager
def json_api(answer):
    """A plain HTTP server on 127.0.0.1 that answers each GET with ``answer(path)`` (see ``_Api``); it keeps the
    ``paths`` asked for and its ``url``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    server.daemon_threads = True
    server.answer = answer
    server.paths = []
    server.url = "http://127.0.0.1:%d" % server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
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


class _JsonApi(http.server.BaseHTTPRequestHandler):
    """One request to :func:`https_json_api`: noted, then answered with what the test's ``answer`` returns."""

    protocol_version = "HTTP/1.1"

    def _serve(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"null") if length else None
        self.server.seen.append((self.command, self.path, body))
        status, document = self.server.answer(self.command, self.path, body)
        data = json.dumps(document).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Request-Id", "peer-%d" % len(self.server.seen))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _serve

    def log_message(self, *_args):  # pylint: disable=arguments-differ
        pass


@contextlib.contextmanager
def https_json_api(answer, tls_dir):
    """An HTTPS server on 127.0.0.1 that answers every request with ``answer(method, path, body) -> (status, document)``
    (``body`` the request's JSON); the server's ``seen`` lists ``(method, path, body)``, ``url`` its URL and ``ca_file``
    the CA to trust (the emulator's certificates, made in ``tls_dir``)."""
    from modelarts_emulator.tls import ensure_certificates, server_context  # pylint: disable=import-error,import-outside-toplevel

    ca_file, cert, key = ensure_certificates(tls_dir)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _JsonApi)
    server.daemon_threads = True
    server.socket = server_context(cert, key).wrap_socket(server.socket, server_side=True)
    server.answer = answer
    server.seen = []
    server.url = "https://127.0.0.1:%d" % server.server_address[1]
    server.ca_file = ca_file
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


class _Answering(http.server.BaseHTTPRequestHandler):
    """Answers each request from the server's ``routes``: ``(method, path) -> (status, headers, body bytes)`` or a
    callable of the handler giving that triple; a path not routed gets 404. Every request is noted in ``seen``."""

    protocol_version = "HTTP/1.1"

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        self.server.seen.append((self.command, path))
        route = self.server.routes.get((self.command, path))
        status, headers, payload = route(self, body) if callable(route) else route or (404, {}, b"")
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = _answer

    def log_message(self, *args):  # quiet
        pass


@contextlib.contextmanager
def answering_server(routes):
    """A plain-HTTP server on 127.0.0.1 answering from ``routes`` (see :class:`_Answering`); ``url`` its base URL,
    ``seen`` the ``(method, path)`` of every request, ``count(path)`` how many asked for ``path``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answering)
    server.daemon_threads = True
    server.routes = dict(routes)
    server.seen = []
    server.url = "http://127.0.0.1:%d" % server.server_address[1]
    server.count = lambda path: sum(1 for _method, seen in list(server.seen) if seen == path)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
