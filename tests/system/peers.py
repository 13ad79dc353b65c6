# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hosts in the middle, for the tests and benchmarks that need one on 127.0.0.1: a CONNECT proxy, and the
pieces of servers that misbehave (reading a request's head, trickling an answer, relaying bytes)."""

import contextlib
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
