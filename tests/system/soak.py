# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fault soak: many job queries through the collection's client while the emulator injects transient faults.

Every query goes through the real pipeline (``query.query_jobs``: signed HTTPS request, retries with
backoff, JSON-schema validation, normalisation) against the emulator on 127.0.0.1. Before a query,
the driver may bind a fault to that job through the emulator's control API: 429 with Retry-After,
500/502/503/504, a TCP reset, a response slower than the client's timeout, an HTML gateway page or a
truncated body, hitting 1 to 3 consecutive attempts, or more attempts than the client retries (the
query must then fail cleanly). Each answer is checked against the emulator's own state (id, name,
phase) and classified:

* ``correct``: the item equals the emulator's truth for that job;
* ``clean_error``: a ``ModelArtsError`` after every retry was used;
* ``wrong``: an item that differs from the truth (a gate would decide wrongly);
* ``unexpected_error``: an error although the faults left a retry to succeed;
* ``traceback``: any other exception, or a non-``ModelArtsError`` in the result.

The fault counts come from the emulator's request log (what it really did), the retries from the
client's per-attempt trace. Workers own disjoint sets of jobs, so a fault bound to a job only ever
hits the query it was meant for.

The soak itself lives here, with the tests (``tests/system/test_fault_soak.py`` runs a quick form);
``benchmarks/fault_soak.py`` runs the full form and writes the figures::

    python benchmarks/fault_soak.py                      # full form: 1,200 queries, ~45% faulted
    python benchmarks/fault_soak.py --queries 300 --workers 8 --fault-rate 0.5 --seed 7

Besides transient faults the mix holds two that are not: ``throttle`` with a ``Retry-After`` of 300 s,
far beyond a request's budget, which must end the query at once with a clean error (the deadline,
not the service, decides), and ``nulls``, documents whose every optional field is ``null``, which
must be read correctly (the name is then null too).
"""

import collections
import json
import os
import random
import sys
import tempfile
import threading
import time
import traceback

from modelarts_emulator.launcher import running_emulator, wait_until  # noqa: F401  pylint: disable=unused-import

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# Far beyond any request budget of the soak: the retries must end at once, on the deadline.
LONG_RETRY_AFTER = 300
PHASES = ("Creating", "Pending", "Running", "Failed", "Completed", "Terminating", "Terminated", "Abnormal")
# (fault spec without job and count, weight). Delay faults stall past the client's request_timeout.
FAULT_MIX = (
    ({"type": "throttle", "retry_after": 0}, 10),
    ({"type": "throttle", "retry_after": 1}, 3),
    ({"type": "error", "status": 500}, 8),
    ({"type": "error", "status": 502}, 8),
    ({"type": "error", "status": 503}, 10),
    ({"type": "error", "status": 504}, 8),
    ({"type": "reset"}, 10),
    ({"type": "delay"}, 6),
    ({"type": "html", "status": 502}, 4),
    ({"type": "truncate", "mode": "body"}, 4),
    ({"type": "truncate", "mode": "short_read"}, 4),
    ({"type": "throttle", "retry_after": LONG_RETRY_AFTER}, 3),
    ({"type": "nulls"}, 4),
)
OUTCOMES = ("correct", "clean_error", "wrong", "unexpected_error", "traceback")


def import_collection(collections_root=None):
    """Import and return ``(client module, query module, ModelArtsError)`` of this checkout.

    ``collections_root`` is a directory holding ``ansible_collections/modelarts/training`` (a staged
    copy); without it a temporary symlink tree pointing at this checkout is made.
    """
    if collections_root is None:
        collections_root = tempfile.mkdtemp(prefix="fault-soak-")
        os.makedirs(os.path.join(collections_root, "ansible_collections", "modelarts"))
        os.symlink(ROOT, os.path.join(collections_root, "ansible_collections", "modelarts", "training"))
    if collections_root not in sys.path:
        sys.path.insert(0, collections_root)
    # pylint: disable=import-outside-toplevel,import-error
    from ansible_collections.modelarts.training.plugins.module_utils.service import client as client_mod
    from ansible_collections.modelarts.training.plugins.module_utils.door import query as query_mod
    from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError

    return client_mod, query_mod, ModelArtsError


def soak_scenario(jobs_per_phase):
    """A scenario with ``jobs_per_phase`` static jobs in each phase, each with a v1 twin."""
    jobs = []
    for index, phase in enumerate(PHASES):
        jobs.append(
            {
                "name": "soak-%s-{n:03d}" % phase.lower(),
                "id": "50a50000-%04d-4000-8000-{n:012d}" % index,
                "count": jobs_per_phase,
                "phase": phase,
                "v1": {"job_id": 7000 + 1000 * index, "version_id": 1},
            }
        )
    return {"description": "fault soak", "jobs": jobs}


def truth_of(emu):
    """The emulator's own view of every job: ``{v2 id: {'name', 'phase', 'v1': (job_id, version_id)}}``."""
    truth = {}
    for job in emu.control("GET", "/jobs")["jobs"]:
        v1 = job.get("v1") or {}
        truth[job["id"]] = {"name": job["name"], "phase": job["phase"], "v1": (v1["job_id"], v1["version_id"]) if v1 else None}
    return truth


def percentile(values, fraction):
    """The nearest-rank percentile of ``values`` (0 < fraction <= 1); None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, int(-(-fraction * len(ordered) // 1)))
    return ordered[min(rank, len(ordered)) - 1]


class Plan:
    """What one query does: which job, through which API, with which fault for how many attempts."""

    # pylint: disable=too-few-public-methods
    def __init__(self, job_id, api, fault, hits):
        self.job_id = job_id
        self.api = api
        self.fault = fault
        self.hits = hits


def make_plans(rng, job_ids, queries, fault_rate, retries):
    """``queries`` plans over ``job_ids``; about ``fault_rate`` of them carry a fault."""
    specs = [spec for spec, _weight in FAULT_MIX]
    weights = [weight for _spec, weight in FAULT_MIX]
    plans = []
    for index in range(queries):
        job_id = job_ids[index % len(job_ids)]
        api = "v1" if rng.random() < 0.2 else "v2"
        fault, hits = None, 0
        if rng.random() < fault_rate:
            fault = dict(rng.choices(specs, weights)[0])
            # Mostly recoverable; one in eight outlasts every retry and must end in a clean error.
            hits = retries + 1 if rng.random() < 0.125 else rng.choice((1, 1, 1, 2, 2, 3))
            hits = min(hits, retries + 1)
        plans.append(Plan(job_id, api, fault, hits))
    return plans


def check_item(item, truth, plan):
    """Whether ``item`` is exactly the emulator's truth for the planned job (a ``nulls`` document has no name)."""
    expected = dict(truth[plan.job_id])
    if plan.fault and plan.fault["type"] == "nulls":
        expected["name"] = None
    if plan.api == "v1":
        job_id, version_id = expected["v1"]
        same_id = item.get("id") == job_id and item.get("version_id") == version_id
    else:
        same_id = item.get("id") == plan.job_id
    return (
        same_id
        and item.get("name") == expected["name"]
        and item.get("phase") == expected["phase"]
        and item.get("completed") == (expected["phase"] == "Completed")
        and item.get("api_version") == plan.api
    )


class Worker:
    """One thread of the soak: its own client (and HTTP session), its own jobs, its own records."""

    def __init__(self, emu, modules, params, truth, plans):
        # pylint: disable=too-many-arguments
        self.emu = emu
        self.client_mod, self.query_mod, self.error_type = modules
        self.attempts = 0
        # pylint: disable-next=import-outside-toplevel,import-error
        from ansible_collections.modelarts.training.plugins.module_utils.door.options import connection_parts

        self.client = self.client_mod.ModelArtsClient(*connection_parts(params), trace=self._count, pool_size=1)
        self.truth = truth
        self.plans = plans
        self.records = []

    def _count(self, line):
        # Only ModelArts attempts: a password worker's IAM token request is not a retry.
        if "/v3/" not in line.split(" ")[1]:
            self.attempts += 1

    def run(self):
        """Run every plan in order; never raises."""
        for plan in self.plans:
            self.records.append(self._one(plan))
        self.client.close()

    def _one(self, plan):
        fault_id = None
        if plan.fault:
            fault_id = self.emu.add_fault(job=plan.job_id, count=plan.hits, **plan.fault)
        key = self.query_mod.v2_key(plan.job_id) if plan.api == "v2" else self.query_mod.v1_key(*self.truth[plan.job_id]["v1"])
        before = self.attempts
        started = time.perf_counter()
        detail = None
        try:
            result = self.query_mod.query_jobs(self.client, [key], validate="strict", max_concurrency=1)
        except BaseException as exc:  # pylint: disable=broad-except
            result = None
            detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        latency = time.perf_counter() - started
        attempts = self.attempts - before
        if fault_id is not None:
            try:
                self.emu.control("DELETE", "/faults/%d" % fault_id)
            except RuntimeError:
                pass  # fully consumed faults stay listed until removed; a 404 means already gone
        outcome = self._classify(result, plan, attempts)
        if outcome == "traceback" and detail is None:
            detail = repr(list(result.errors.values()) if result else None)
        elif outcome in ("wrong", "unexpected_error", "clean_error"):
            detail = result.msg if result and not result.ok else json.dumps(result.items[0], default=str)[:500]
        return {
            "job": plan.job_id,
            "api": plan.api,
            "fault": describe_fault(plan.fault),
            "hits": plan.hits,
            "attempts": attempts,
            "latency": latency,
            "outcome": outcome,
            "detail": detail,
        }

    def _classify(self, result, plan, attempts):
        if result is None:
            return "traceback"
        if result.ok:
            return "correct" if check_item(result.items[0], self.truth, plan) else "wrong"
        errors = list(result.errors.values())
        if not errors or not all(isinstance(exc, self.error_type) for exc in errors) or "Traceback" in (result.msg or ""):
            return "traceback"
        retries = int(self.client.service.backoff_retries)
        if ends_at_once(plan):
            # The service asked for more time than the request's budget has left: one attempt, one clean line.
            return "clean_error" if attempts == 1 and "no time left before the deadline" in (result.msg or "") else "unexpected_error"
        exhausted = plan.fault is not None and plan.hits > retries and attempts == retries + 1
        return "clean_error" if exhausted else "unexpected_error"


def ends_at_once(plan):
    """Whether the plan's fault must end the query after its first attempt (a Retry-After beyond the budget)."""
    return bool(plan.fault) and plan.fault["type"] == "throttle" and plan.fault["retry_after"] >= LONG_RETRY_AFTER


def fault_name(entry):
    """The name of the fault behind one request-log entry: ``error-503``, ``throttle-429``, ``reset``..."""
    kind = entry["fault"]
    if kind in ("error", "html", "throttle"):
        return "%s-%s" % (kind, entry["status"])
    return kind


def overruns(summary):
    """Seconds by which the queries that had to end at once took longer than one request_timeout (worst first)."""
    limit = summary["config"]["request_timeout"]
    return sorted(
        (
            record["latency"] - limit
            for record in summary["records"]
            if record["fault"] == describe_fault({"type": "throttle", "retry_after": LONG_RETRY_AFTER})
        ),
        reverse=True,
    )


def describe_fault(fault):
    """A short name for a fault spec: ``error-503``, ``throttle-ra1``, ``truncate-short_read``."""
    if not fault:
        return None
    kind = fault["type"]
    if kind in ("error", "html"):
        return "%s-%s" % (kind, fault["status"])
    if kind == "throttle":
        return "throttle-ra%s" % fault["retry_after"]
    if kind == "truncate":
        return "truncate-%s" % fault["mode"]
    return kind


def client_params(emu, kind, request_timeout, retries):
    """Connection options for one credential kind (the emulator's own), with soak-sized timeouts and backoff."""
    return dict(
        emu.connection(kind),
        validate_certs=True,
        connect_timeout=2.0,
        request_timeout=request_timeout,
        backoff_retries=retries,
        backoff_delay=0.02,
        backoff_max_delay=0.2,
    )


def run_soak(emu, modules, queries=1200, workers=8, fault_rate=0.45, seed=20260522, request_timeout=0.3, retries=4):
    """Run the soak against a running TLS emulator; return the summary dict (``records`` holds every query)."""
    # pylint: disable=too-many-arguments,too-many-locals
    jobs_per_phase = max(2, workers)
    emu.reset({"scenario": soak_scenario(jobs_per_phase)}["scenario"])
    truth = truth_of(emu)
    rng = random.Random(seed)
    job_ids = sorted(truth)
    rng.shuffle(job_ids)
    kinds = ("aksk", "temporary", "password")
    pool = []
    for index in range(workers):
        own = job_ids[index::workers]
        count = queries // workers + (1 if index < queries % workers else 0)
        plans = make_plans(rng, own, count, fault_rate, retries)
        for plan in plans:
            if plan.fault and plan.fault["type"] == "delay":
                plan.fault["seconds"] = request_timeout * 2
        pool.append(Worker(emu, modules, client_params(emu, kinds[index % len(kinds)], request_timeout, retries), truth, plans))
    since = emu.mark()
    started = time.perf_counter()
    threads = [threading.Thread(target=worker.run, daemon=True) for worker in pool]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    records = [record for worker in pool for record in worker.records]
    attempts = sum(record["attempts"] for record in records)
    # A stalled (delay) request is logged when the emulator finally answers, after the client gave up.
    log = wait_until(lambda: _settled(emu.requests(since=since), attempts), timeout=10 + 4 * request_timeout) or emu.requests(since=since)
    return summarise(
        records,
        log,
        elapsed,
        dict(queries=queries, workers=workers, fault_rate=fault_rate, seed=seed, request_timeout=request_timeout, retries=retries, jobs=len(truth)),
    )


def _settled(log, attempts):
    api_log = [entry for entry in log if entry["path"].startswith(("/v1/", "/v2/"))]
    return log if len(api_log) >= attempts else None


def summarise(records, log, elapsed, config):
    """The figures of a soak: outcomes, faults by type (from the emulator's log), retries, latency."""
    api_log = [entry for entry in log if entry["path"].startswith(("/v1/", "/v2/"))]
    faults = collections.Counter(fault_name(entry) for entry in api_log if entry.get("fault"))
    outcomes = collections.Counter(record["outcome"] for record in records)
    latencies = [record["latency"] for record in records]
    faulted = [record["latency"] for record in records if record["fault"]]
    clean = [record["latency"] for record in records if not record["fault"]]
    retries_used = sum(max(0, record["attempts"] - 1) for record in records)
    lat = dict(
        (name, dict((p, round(1000 * percentile(values, q), 1) if values else None) for p, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))))
        for name, values in (("all", latencies), ("faulted", faulted), ("unfaulted", clean))
    )
    return {
        "config": config,
        "elapsed_seconds": round(elapsed, 2),
        "queries": len(records),
        "requests": len(api_log),
        "faults_injected": sum(faults.values()),
        "faults_by_type": dict(sorted(faults.items())),
        "fault_ratio_requests": round(sum(faults.values()) / len(api_log), 3) if api_log else 0.0,
        "queries_with_faults": sum(1 for record in records if record["fault"]),
        "fault_ratio_queries": round(sum(1 for record in records if record["fault"]) / len(records), 3) if records else 0.0,
        "retries": retries_used,
        "outcomes": dict((name, outcomes.get(name, 0)) for name in OUTCOMES),
        "latency_ms": lat,
        "problems": [record for record in records if record["outcome"] not in ("correct", "clean_error")][:20],
        "records": records,
    }


def table(summary):
    """A plain-text table of the summary."""
    lines = [
        "fault soak: %d queries in %.1f s (%d workers, seed %s)"
        % (summary["queries"], summary["elapsed_seconds"], summary["config"]["workers"], summary["config"]["seed"]),
        "  API requests            %6d" % summary["requests"],
        "  faults injected         %6d  (%.1f%% of requests; %d queries = %.1f%% had a fault)"
        % (summary["faults_injected"], 100 * summary["fault_ratio_requests"], summary["queries_with_faults"], 100 * summary["fault_ratio_queries"]),
    ]
    for name, count in summary["faults_by_type"].items():
        lines.append("    %-20s %6d" % (name, count))
    lines.append("  retries used            %6d" % summary["retries"])
    for name in OUTCOMES:
        lines.append("  %-23s %6d" % (name.replace("_", " "), summary["outcomes"][name]))
    for name, values in summary["latency_ms"].items():
        lines.append("  latency %-10s p50 %s ms, p90 %s ms, p99 %s ms, max %s ms" % (name, values["p50"], values["p90"], values["p99"], values["max"]))
    return "\n".join(lines)
