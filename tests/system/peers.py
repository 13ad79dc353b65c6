# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hosts in the middle, for the tests and benchmarks that need one on 127.0.0.1: a CONNECT proxy, the
pieces of servers that misbehave (reading a request's head, trickling an answer, relaying bytes), and an HTTPS
JSON API whose answers a test writes (``json_api``)."""

import contextlib
import http.server
import json
import select
import socket
import socketserver
import threading


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
    """One HTTP CONNECT tunnel: note the target, check the request, answer 200 and relay until either side closes."""

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
        if method != "CONNECT":
            self.request.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        if not allowed:
            self.request.sendall(b'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n')
            return
        host, _sep, port = target.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=30) as upstream:
            self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            relay(self.request, upstream)


@contextlib.contextmanager
def connect_proxy(check=None):
    """A forwarding proxy on 127.0.0.1 (HTTP CONNECT only); ``check(headers)`` (lower-case names) says whether a
    request may pass (407 otherwise). The server's ``seen`` lists ``(target, allowed)`` per request, ``targets``
    the targets, ``url`` its URL."""
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


class _JsonApi(http.server.BaseHTTPRequestHandler):
    """One request to :func:`json_api`: noted, then answered with what the test's ``answer`` returns."""

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
def json_api(answer, tls_dir):
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
