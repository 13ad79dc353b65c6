#!/usr/bin/env python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How far past ``wait_timeout`` a waiting query runs against servers that trickle (docs/reliability.md, issue 20 item 5).

python benchmarks/slow_servers.py                 # 5 runs of each kind and mode
python benchmarks/slow_servers.py --runs 10

Kinds: ``headers`` (TLS, then the status line and headers a byte a second), ``handshake`` (a TLS
handshake record a byte a second), ``connect`` (a proxy's answer to CONNECT a byte a second).
Modes: ``always`` (every request meets the slow server) and ``last`` (the server answers "Running"
until just before the deadline, so the last look, which may run one ``request_timeout`` past the
deadline, is the one that meets it: the worst case). The query is the collection's own pipeline
(``query.query_jobs``, wait: true) in process; servers run on 127.0.0.1.
"""

import argparse
import json
import os
import socket
import ssl
import sys
import tempfile
import threading
import time

from modelarts_emulator.tls import ensure_certificates, server_context

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))

# pylint: disable=wrong-import-position,import-error
from peers import read_head, relay, trickle  # noqa: E402
from soak import import_collection  # noqa: E402

JOB_ID = "a1000000-0000-4000-8000-000000000001"
DOCUMENT = json.dumps({"metadata": {"id": JOB_ID, "name": "slow"}, "status": {"phase": "Running"}}).encode()


class SlowServer(object):
    """Answers normally until ``slow_from`` (a monotonic time), then the ``kind`` way; ``upstream`` makes it a CONNECT proxy."""

    def __init__(self, kind, context, upstream=None):
        self.kind, self.context, self.upstream = kind, context, upstream
        self.slow_from = 0.0
        self.stop = threading.Event()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stop.is_set():
            try:
                conn, _addr = self.listener.accept()
            except OSError:
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        slow = time.monotonic() >= self.slow_from
        try:
            if self.upstream is not None:
                if read_head(conn) is None:
                    return
                if slow:
                    trickle(conn, b"HTTP/1.1 200 Connection established\r\nX-Slow: " + b"a" * 1000, self.stop)
                    return
                with socket.create_connection(("127.0.0.1", self.upstream), timeout=10) as far:
                    conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    relay(conn, far, idle=10)
                return
            if slow and self.kind == "handshake":
                conn.recv(65536)
                trickle(conn, b"\x16\x03\x03\x40\x00" + b"\x00" * 16384, self.stop)
                return
            conn = self.context.wrap_socket(conn, server_side=True)
            if read_head(conn) is None:
                return
            if slow and self.kind == "headers":
                trickle(conn, b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 1000, self.stop)
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(DOCUMENT), DOCUMENT))
        except (OSError, ssl.SSLError):
            pass
        finally:
            conn.close()

    def close(self):
        self.stop.set()
        self.listener.close()


def measure(modules, kind, mode, ca_file, context, wait_timeout, request_timeout):
    client_mod, query_mod, _error = modules
    server = SlowServer(kind if kind != "connect" else None, context)
    proxy = SlowServer(None, context, upstream=server.port) if kind == "connect" else None
    slow = proxy or server
    params = dict(
        region="cn-north-4",
        project_id="0123456789abcdef0123456789abcdef",
        access_key="AKSLOW",
        secret_key="SK-slow",
        endpoint="https://127.0.0.1:%d" % server.port,
        ca_bundle=ca_file,
        request_timeout=request_timeout,
        connect_timeout=2,
    )
    if proxy is not None:
        params["proxy"] = "http://127.0.0.1:%d" % proxy.port
    from ansible_collections.modelarts.training.plugins.module_utils.door.options import connection_parts  # pylint: disable=import-outside-toplevel

    client = client_mod.ModelArtsClient(*connection_parts(params))
    started = time.monotonic()
    slow.slow_from = started if mode == "always" else started + wait_timeout - 0.02
    try:
        waiting = query_mod.NO_WAIT._replace(wait=True, timeout=wait_timeout, sleep=1)
        result = query_mod.query_jobs(client, [JOB_ID], validate="warn", waiting=waiting, start=started)
        elapsed = time.monotonic() - started
    finally:
        client.close()
        server.close()
        if proxy is not None:
            proxy.close()
    return elapsed - wait_timeout, result.msg or ""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--wait-timeout", type=float, default=3.0)
    parser.add_argument("--request-timeout", type=float, default=4.0)
    args = parser.parse_args(argv)
    modules = import_collection()
    with tempfile.TemporaryDirectory() as tls_dir:
        ca_file, cert, key = ensure_certificates(tls_dir)
        context = server_context(cert, key)
        rows = []
        for kind in ("headers", "handshake", "connect"):
            for mode in ("always", "last"):
                overruns = []
                for _run in range(args.runs):
                    overrun, message = measure(modules, kind, mode, ca_file, context, args.wait_timeout, args.request_timeout)
                    overruns.append(overrun)
                rows.append((kind, mode, overruns, message))
    print("wait_timeout %gs, request_timeout %gs, %d runs each; overrun = time past wait_timeout" % (args.wait_timeout, args.request_timeout, args.runs))
    print("| slow server | meets | overrun min / max (s) | bound (request_timeout) | last message |")
    print("|---|---|---|---|---|")
    for kind, mode, overruns, message in rows:
        tail = message.split("last poll failed: ", 1)[-1][:110]
        meets = "every request" if mode == "always" else "the last look"
        print("| %s | %s | %.3f / %.3f | %g | %s |" % (kind, meets, min(overruns), max(overruns), args.request_timeout, tail))
    return 0 if all(max(overruns) < args.request_timeout + 1 for _k, _m, overruns, _msg in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
