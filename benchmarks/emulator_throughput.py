#!/usr/bin/env python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Throughput of the ModelArts emulator with signature checking on.

The emulator runs as its own process (started with modelarts_emulator.launcher, as CI would start
it). Client processes keep one HTTP/1.1 connection each and sign every request with
SDK-HMAC-SHA256 (fresh X-Sdk-Date, full canonical request), so the server verifies a real
signature per request. Reports requests/s, latency percentiles and errors; writes JSON to
benchmarks/results/ when --output is given.

    python benchmarks/emulator_throughput.py --duration 10 --clients 4 [--tls] [--mix]
"""

import argparse
import hashlib
import hmac
import http.client
import json
import multiprocessing
import os
import platform
import ssl
import statistics
import sys
import time
from urllib.parse import quote, unquote

from modelarts_emulator.launcher import running_emulator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


V2_IDS = ["5e1f0000-0000-4000-8000-%012d" % n for n in range(1, 221)]


def _canonical_uri(path):
    uri = "/".join(quote(segment, safe="~") for segment in unquote(path).split("/"))
    return uri if uri.endswith("/") else uri + "/"


def sign(method, host, path, body, ak, sk, project_id):
    """Return headers for an SDK-HMAC-SHA256 signed request (a small client-side signer)."""
    date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    headers = {"content-type": "application/json", "host": host, "x-project-id": project_id, "x-sdk-date": date}
    names = sorted(headers)
    canonical = "\n".join(
        [method, _canonical_uri(path), "", "\n".join("%s:%s" % (n, headers[n]) for n in names) + "\n", ";".join(names), hashlib.sha256(body).hexdigest()]
    )
    to_sign = "SDK-HMAC-SHA256\n%s\n%s" % (date, hashlib.sha256(canonical.encode()).hexdigest())
    signature = hmac.new(sk.encode(), to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = "SDK-HMAC-SHA256 Access=%s, SignedHeaders=%s, Signature=%s" % (ak, ";".join(names), signature)
    return headers


def _requests(project_id, mix):
    """Yield (method, path, body) forever."""
    search = json.dumps({"offset": 0, "limit": 10, "filters": [{"key": "name", "operator": "like", "value": ["bulk-1"]}]}).encode()
    index = 0
    while True:
        index += 1
        if mix and index % 10 == 0:
            yield "POST", "/v2/%s/training-job-searches" % project_id, search
        elif mix and index % 10 == 5:
            yield "GET", "/v1/%s/training-jobs/1001/versions/1" % project_id, b""
        else:
            yield "GET", "/v2/%s/training-jobs/%s" % (project_id, V2_IDS[index % len(V2_IDS)]), b""


def client_worker(args):
    """Run one client for ``duration`` seconds; return (latencies in ms, errors)."""
    url, ca_file, creds, duration, mix = args
    scheme, rest = url.split("://", 1)
    host, port = rest.rsplit(":", 1)
    if scheme == "https":
        conn = http.client.HTTPSConnection(host, int(port), context=ssl.create_default_context(cafile=ca_file), timeout=10)
    else:
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
    latencies, errors = [], 0
    deadline = time.perf_counter() + duration
    for method, path, body in _requests(creds["project_id"], mix):
        if time.perf_counter() >= deadline:
            break
        started = time.perf_counter()
        headers = sign(method, rest, path, body, creds["ak"], creds["sk"], creds["project_id"])
        try:
            conn.request(method, path, body=body or None, headers=headers)
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                errors += 1
        except (OSError, http.client.HTTPException):
            errors += 1
            conn.close()
        latencies.append((time.perf_counter() - started) * 1000)
    conn.close()
    return latencies, errors


def run(duration, clients, tls, mix):
    """Start the emulator, drive it with ``clients`` processes, return a result dict."""
    with running_emulator(scenario="integration", tls=tls) as emu:
        creds = {"ak": emu.ak, "sk": emu.sk, "project_id": emu.project_id}
        # Warm up: connections, TLS session setup and first document builds.
        client_worker((emu.url, emu.ca_file, creds, 0.5, mix))
        started = time.perf_counter()
        with multiprocessing.Pool(clients) as pool:
            results = pool.map(client_worker, [(emu.url, emu.ca_file, creds, duration, mix)] * clients)
        elapsed = time.perf_counter() - started
        log_tail = emu.requests(since=0)[-1:]
    latencies = sorted(value for lat, _e in results for value in lat)
    errors = sum(e for _lat, e in results)
    quantiles = statistics.quantiles(latencies, n=100)
    return {
        "requests": len(latencies),
        "errors": errors,
        "seconds": round(elapsed, 2),
        "requests_per_second": round(len(latencies) / elapsed, 1),
        "latency_ms": {"p50": round(quantiles[49], 2), "p90": round(quantiles[89], 2), "p99": round(quantiles[98], 2)},
        "clients": clients,
        "tls": tls,
        "mix": "v2 80% / v1 10% / search 10%" if mix else "v2 GET only",
        "signature_check": True,
        "last_logged_status": log_tail[0]["status"] if log_tail else None,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
    }


def main():
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of load per run (default 10)")
    parser.add_argument("--clients", type=int, default=4, help="client processes, one keep-alive connection each (default 4)")
    parser.add_argument("--tls", action="store_true", help="HTTPS with the generated CA")
    parser.add_argument("--mix", action="store_true", help="mix v1 GETs and searches into the v2 GETs")
    parser.add_argument("--output", help="write the result as JSON to this file (e.g. benchmarks/results/emulator.json)")
    args = parser.parse_args()
    result = run(args.duration, args.clients, args.tls, args.mix)
    print(json.dumps(result, indent=2))
    if args.output:
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        with open(args.output, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
