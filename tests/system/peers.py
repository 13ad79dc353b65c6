# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hosts in the middle, for the tests and benchmarks that need one on 127.0.0.1: a CONNECT proxy, and the
pieces of servers that misbehave (reading a request's head, trickling an answer, relaying bytes)."""

import contextlib
import http.server
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
