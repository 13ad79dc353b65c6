# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared helpers of the benchmarks: paths, job ids, statistics, machine facts, staging, the emulator."""

import collections
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time

from modelarts_emulator.launcher import running_emulator  # noqa: F401  pylint: disable=unused-import

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.path.join(ROOT, "benchmarks")
RESULTS_DIR = os.path.join(BENCH_DIR, "results")
CALLBACK_DIR = os.path.join(BENCH_DIR, "callback_plugins")


# The integration scenario holds 220 Completed v2 jobs with these ids (bulk-001 .. bulk-220).
V2_IDS = ["5e1f0000-0000-4000-8000-%012d" % n for n in range(1, 221)]
SCENARIO = "integration"

# Full-size documents (issue 14): 220 more Completed v2 jobs added through the control API in
# scenario syntax. A long multi-node GPU job: 22 workers (tasks, task statuses, task IPs, SSH URLs
# per worker), the annotations a platform team sets, a real description: about 12.6 KB of JSON, as
# large as a complete document of the official SDK's response tree. Every 50th job (ids 50, 100,
# 150, 200) has 160 workers, about 48 KB. The emulator cannot serve a long ``node_count_metrics``
# series (it derives three points from the lifecycle), so node scale stands in for that growth.
FULL_IDS = ["6f2e0000-0000-4000-8000-%012d" % n for n in range(1, 221)]
LARGE_POSITIONS = (50, 100, 150, 200)
DOCSETS = {"bulk": V2_IDS, "full": FULL_IDS}
_ANNOTATIONS = dict(
    ("%s/%s" % (prefix, key), value)
    for prefix, key, value in (
        ("fault-tolerance", "job-retry-num", "3"),
        ("fault-tolerance", "hang-retry", "true"),
        ("modelarts.huaweicloud.com", "tenant-team", "recommendation-ranking-platform"),
        ("modelarts.huaweicloud.com", "cost-center", "cc-4711-ml-research-shared-gpu-pool"),
        ("modelarts.huaweicloud.com", "git-commit", "9f0c2e7a1b3d4c5e6f708192a3b4c5d6e7f80912"),
        ("modelarts.huaweicloud.com", "git-repository", "https://git.example.invalid/ml/ranking-transformer.git"),
        ("modelarts.huaweicloud.com", "pipeline-run", "https://ci.example.invalid/ml/ranking-transformer/-/pipelines/884213"),
        ("modelarts.huaweicloud.com", "experiment", "ranking-transformer-v7-lr-sweep-2026-11"),
        ("modelarts.huaweicloud.com", "dataset-version", "clicks-2026-10-31-dedup-v3-shard-0000-of-0256"),
        ("modelarts.huaweicloud.com", "owner-email", "ml-platform-oncall@example.invalid"),
        ("modelarts.huaweicloud.com", "checkpoint-policy", "every-2000-steps-keep-last-5-upload-to-obs"),
        ("modelarts.huaweicloud.com", "notification-topic", "urn:smn:cn-north-4:0123456789abcdef:ml-training-events"),
        ("modelarts.huaweicloud.com", "launcher", "ansible-playbook deploy-ranking.yml --limit training"),
    )
)
_DESCRIPTION = (
    "Nightly retraining of the ranking transformer on the last 30 days of click logs; "
    "16 x 8 GPU workers, mixed precision, gradient accumulation 4, checkpoint every 2000 steps to OBS; "
    "evaluation on the held-out week runs as a separate job after this one completes."
)


def _kind(entry):
    """A logged request's kind for :func:`calls_since`: ``search``, ``by_id``, ``get`` or None (anything else)."""
    if "/training-job" not in entry.get("path", ""):
        return None
    if entry["method"] == "POST" and entry["path"].endswith("/training-job-searches"):
        body = entry.get("body") or {}
        return "by_id" if any(spec.get("key") == "id" for spec in body.get("filters") or []) else "search"
    return "get" if entry["method"] == "GET" else None


class LogDropped(RuntimeError):
    """The emulator's request log (it keeps the last 20,000 requests) dropped requests before they were counted."""


def calls_since(emu, since, until=None):
    """``(searches, searches by id, GETs)`` of training jobs the emulator answered after log sequence ``since`` (up to
    ``until``): what a watch's rounds cost (a search is by id when its filters name ``id``).  Raises LogDropped when
    the log no longer holds every request after ``since``: count such a run with a :class:`RequestTally`."""
    tally = RequestTally(emu, since=since)
    tally.drain()
    return tally.calls(since, tally.last if until is None else until)


class RequestTally:
    """Counts the emulator's requests while a long run goes on: a thread reads the request log every ``period``
    seconds and keeps each training-job request's kind by its sequence number, so a run of more requests than the log
    holds (20,000) is counted whole.  :meth:`calls` raises LogDropped when the log dropped a request before it was read.
    Use it as a context manager."""

    def __init__(self, emu, period=1.0, since=None):
        self.emu = emu
        self.period = period
        self.kinds = {}  # sequence number -> kind, training-job requests only
        self.last = emu_mark(emu) if since is None else since  # the log's sequence number read up to
        self.dropped = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="request-tally", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        return False

    def _run(self):
        while not self._stop.wait(self.period):
            self.drain()

    def drain(self):
        """Read what the log gained since the last read."""
        with self._lock:
            while True:
                entries = self.emu.requests(since=self.last, limit=5000)
                if not entries:
                    return
                if entries[0]["seq"] != self.last + 1 and self.dropped is None:
                    self.dropped = (self.last + 1, entries[0]["seq"] - 1)
                for entry in entries:
                    kind = _kind(entry)
                    if kind:
                        self.kinds[entry["seq"]] = kind
                self.last = entries[-1]["seq"]

    def calls(self, since, until):
        """``(searches, searches by id, GETs)`` with ``since < seq <= until`` (as :func:`calls_since`)."""
        self.drain()
        if self.dropped is not None:
            raise LogDropped("the request log dropped requests %d to %d before they were counted" % self.dropped)
        counts = collections.Counter(kind for seq, kind in self.kinds.items() if since < seq <= until)
        return counts["search"], counts["by_id"], counts["get"]


def full_jobs():
    """The full-size jobs in the emulator's scenario syntax (for ``emu.add_jobs``)."""
    base = {
        "flavor": "gpu",
        "engine": "pytorch",
        "phase": "Completed",
        "run_seconds": 86400 * 3,
        "description": _DESCRIPTION,
        "annotations": _ANNOTATIONS,
        "parameters": {"learning_rate": "0.0003", "epochs": "40"},
        "dataset": "clicks-30d-v3",
        "bucket": "ml-ranking-prod",
        "code_name": "ranking-transformer",
    }
    jobs = [dict(base, name="full-{n:03d}", id="6f2e0000-0000-4000-8000-{n:012d}", count=len(FULL_IDS), node_count=22)]
    for position in LARGE_POSITIONS:
        jobs.append(dict(base, name="full-%03d" % position, id=FULL_IDS[position - 1], node_count=160))
    return jobs


def add_full_jobs(emu):
    """Add the full-size jobs to a running emulator (ids ``FULL_IDS``)."""
    emu.add_jobs(full_jobs())


def summarize(samples):
    """Median and spread of a list of numbers: ``{n, median, min, max, q1, q3}`` (None when empty)."""
    values = sorted(float(value) for value in samples)
    if not values:
        return None
    if len(values) >= 4:
        q1, _q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    else:
        q1, q3 = values[0], values[-1]
    return {"n": len(values), "median": statistics.median(values), "min": values[0], "max": values[-1], "q1": q1, "q3": q3}


def ratio_summary(numerators, denominators):
    """Paired ratios ``numerators[i] / denominators[i]`` (one per round), summarised."""
    pairs = [(a, b) for a, b in zip(numerators, denominators) if a is not None and b]
    return summarize([a / b for a, b in pairs])


def fmt_spread(summary, unit="", scale=1.0, digits=3):
    """``median (min-max)`` of a summary, scaled; ``n/a`` when missing."""
    if not summary:
        return "n/a"
    form = "%%.%df" % digits
    return "%s%s (%s-%s)" % (form % (summary["median"] * scale), unit, form % (summary["min"] * scale), form % (summary["max"] * scale))


def _command_output(command):
    try:
        return subprocess.run(command, capture_output=True, text=True, check=False, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def cpu_model():
    """The CPU model from /proc/cpuinfo, or the platform's processor string."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def machine_facts(python):
    """Facts that qualify every figure: cores, CPU, Python, ansible-core and library versions, load."""
    versions = _command_output(
        [
            python,
            "-c",
            (
                "import json, importlib.metadata as m\n"
                'names = ["ansible-core", "requests", "urllib3", "jsonschema", "huaweicloudsdkcore", "huaweicloudsdkmodelarts", "matplotlib"]\n'
                "out = {}\n"
                "for name in names:\n"
                "    try:\n"
                "        out[name] = m.version(name)\n"
                "    except m.PackageNotFoundError:\n"
                "        out[name] = None\n"
                "print(json.dumps(out))\n"
            ),
        ]
    )
    try:
        packages = json.loads(versions) if versions else None
    except ValueError:
        packages = None
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "nproc": _command_output(["nproc"]),
        "cpu": cpu_model(),
        "python": _command_output([python, "-V"]),
        "platform": platform.platform(),
        "packages": packages,
        "loadavg_at_start": load,
    }


class LoadSampler:
    """The machine's 1-minute load average, sampled every ``every`` seconds while a run lasts (a context manager).

    A figure measured on a shared machine is qualified by the load *during* its run, not only at its start.
    """

    def __init__(self, every=15.0):
        self.every = every
        self.samples = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="load-sampler", daemon=True)

    def _sample(self):
        while True:
            try:
                self.samples.append(round(os.getloadavg()[0], 2))
            except OSError:
                return
            if self._stop.wait(self.every):
                return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join()
        try:
            self.samples.append(round(os.getloadavg()[0], 2))
        except OSError:
            pass
        return False

    def summary(self):
        """``{"median", "min", "max", "samples", "every"}`` of the samples, or ``None`` without any."""
        if not self.samples:
            return None
        return {
            "median": statistics.median(self.samples),
            "min": min(self.samples),
            "max": max(self.samples),
            "samples": len(self.samples),
            "every": self.every,
        }


def iam_token(emu):
    """An IAM token from the emulator for ``auth_token`` tasks, as the playbook benchmarks get one (a password token)."""
    import requests  # pylint: disable=import-outside-toplevel

    body = {
        "auth": {
            "identity": {"methods": ["password"], "password": {"user": {"name": emu.username, "password": emu.password, "domain": {"name": emu.domain_name}}}},
            "scope": {"project": {"id": emu.project_id}},
        }
    }
    answer = requests.post(emu.url + "/v3/auth/tokens", json=body, verify=emu.ca_file, timeout=30)
    answer.raise_for_status()
    return answer.headers["X-Subject-Token"]


def write_results(base, results, report):
    """Write ``results`` to ``base.json`` and the Markdown ``report`` to ``base.md``; print the report."""
    os.makedirs(os.path.dirname(base), exist_ok=True)
    with open(base + ".json", "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=1, sort_keys=True)
    with open(base + ".md", "w", encoding="utf-8") as handle:
        handle.write(report + "\n")
    print()
    print(report)


def stage_collection(base):
    """Copy this checkout to ``base/ansible_collections/modelarts/training`` (with the what-if plugins); return ``base``."""
    subprocess.run([os.path.join(ROOT, "hacking", "stage_collection.sh"), base], check=True, stdout=subprocess.DEVNULL)
    add_what_if_plugins(base)
    add_floor_plugins(base)
    return base


# What an option that leaves out ``details`` would save (issue 14): copies of the module and the
# lookup, written into the staged collection only, that drop each item's ``details`` before
# returning. They measure the cost of carrying whole documents through Ansible; they are not part
# of the collection.
WHAT_IF_MODULE = "bench_job_info_nodetails"
WHAT_IF_LOOKUP = "bench_training_job_nodetails"
_MODULE_EDIT = (
    "        outcome = job_info.run(module.params)\n",
    '        outcome = job_info.run(module.params)\n        for item in outcome.result.get("training_jobs", []):\n            item.pop("details", None)\n',
)
_LOOKUP_EDIT = (
    "        return [pick(item, field) for item in items] if field else items\n",
    "        return [pick(item, field) for item in items] if field else [dict((key, value) for key, value in item.items() "
    'if key != "details") for item in items]\n',
)


def add_what_if_plugins(base):
    """Write the ``details``-less copies of the module and the lookup into the staged collection at ``base``."""
    target = os.path.join(base, "ansible_collections", "modelarts", "training", "plugins")
    for kind, source, name, (old, new) in (
        ("modules", "modelarts_training_job_info", WHAT_IF_MODULE, _MODULE_EDIT),
        ("lookup", "training_job", WHAT_IF_LOOKUP, _LOOKUP_EDIT),
    ):
        with open(os.path.join(target, kind, source + ".py"), encoding="utf-8") as handle:
            text = handle.read()
        if text.count(old) != 1:
            raise RuntimeError("cannot write the what-if copy of %s: the line %r changed" % (source, old.strip()))
        with open(os.path.join(target, kind, name + ".py"), "w", encoding="utf-8") as handle:
            handle.write(text.replace(old, new))


# Ansible's floor for carrying the same documents (issue 14): a module and a lookup that return the
# collection's own items, read from a file the benchmark wrote before the rounds (``capture_items``),
# with no HTTP, no validation and no collection code at all. With ``single`` it also returns the
# first item as ``training_job``, as the module does for ``training_job_id``. What they cost is what ansible-core
# costs to start a plain module or lookup and to carry these items to the play; no module or
# lookup returning the same items can be faster than that. Written into the staged collection only.
FLOOR_MODULE = "bench_floor_module"
FLOOR_LOOKUP = "bench_floor_lookup"
_FLOOR_HEADER = """# Benchmark-only plugin written by benchmarks/common.py into a staged copy; not part of the collection.
# The items file has one line per item: the job id, a tab, the item as JSON (benchmarks/common.py capture_items).
"""
_FLOOR_MODULE_SOURCE = (
    _FLOOR_HEADER
    + """
import json

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(items_file=dict(type="path", required=True), count=dict(type="int", required=True), single=dict(type="bool", default=False))
    )
    items = []
    with open(module.params["items_file"], encoding="utf-8") as handle:
        for line in handle:
            if len(items) >= module.params["count"]:
                break
            items.append(json.loads(line.partition("\\t")[2]))
    if len(items) < module.params["count"]:
        module.fail_json(msg="items_file holds %d items, count is %d" % (len(items), module.params["count"]))
    if module.params["single"]:
        module.exit_json(changed=False, training_jobs=items, training_job=items[0])
    module.exit_json(changed=False, training_jobs=items)


if __name__ == "__main__":
    main()
"""
)
_FLOOR_LOOKUP_SOURCE = (
    _FLOOR_HEADER
    + """
import json

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        path = kwargs.get("items_file") or (variables or {}).get("bench_floor_items_file")
        if not path:
            raise AnsibleLookupError("bench_floor_lookup: give items_file=")
        ids = []
        for term in terms:
            ids.extend(term if isinstance(term, (list, tuple)) else [term])
        wanted = set(str(job_id) for job_id in ids)
        found = {}
        with open(str(path), encoding="utf-8") as handle:
            for line in handle:
                job_id, _tab, text = line.partition("\\t")
                if job_id in wanted and job_id not in found:
                    found[job_id] = json.loads(text)
        missing = sorted(wanted - set(found))
        if missing:
            raise AnsibleLookupError("bench_floor_lookup: not in %s: %s" % (path, ", ".join(missing)))
        return [found[str(job_id)] for job_id in ids]
"""
)


# The floor of the GETs with ``requests`` (issue 14, goal "one module task <= one uri task"; issue 24): a
# plain module that imports ``requests``, GETs the jobs with the IAM token and returns the documents,
# either as ``uri`` does (``json``, one job) or under the module's keys (``training_job`` and
# ``training_jobs``, which the interface fixes). With ``base_url`` and ``ids`` it GETs every job over
# one session, 16 at a time, as the module does by default, and returns the documents as
# ``training_jobs``. It has no collection code: no option resolution, signing, validation,
# normalisation or masking. Between ``uri`` and it is the transport library; between it and the
# module, the collection's own code.
REQUESTS_FLOOR_MODULE = "bench_requests_floor"
# The two GET floors' options: one ``url``, or ``base_url`` and ``ids``; the IAM token; the CA file.
_GET_FLOOR_MAIN = """def main():
    module = AnsibleModule(
        argument_spec=dict(url=dict(type="str"), base_url=dict(type="str"), ids=dict(type="list", elements="str"),
                           token=dict(type="str", required=True, no_log=True), ca_path=dict(type="path"), both_keys=dict(type="bool", default=False)),
        required_one_of=[("url", "ids")], mutually_exclusive=[("url", "ids")], required_together=[("base_url", "ids")],
    )
    params = module.params
"""
_REQUESTS_FLOOR_SOURCE = (
    """# Benchmark-only plugin written by benchmarks/common.py into a staged copy; not part of the collection.

import json
from concurrent.futures import ThreadPoolExecutor

import requests

from ansible.module_utils.basic import AnsibleModule


"""
    + _GET_FLOOR_MAIN
    + """    verify = params["ca_path"] or True
    if params["url"]:
        response = requests.get(params["url"], headers={"X-Auth-Token": params["token"]}, verify=verify, timeout=30)
        if response.status_code != 200:
            module.fail_json(msg="HTTP %d" % response.status_code)
        document = json.loads(response.content)
        if params["both_keys"]:
            module.exit_json(changed=False, training_job=document, training_jobs=[document])
        module.exit_json(changed=False, json=document)
    session = requests.Session()
    session.trust_env = False

    def get(job_id):
        response = session.get("%s/%s" % (params["base_url"], job_id), headers={"X-Auth-Token": params["token"]}, verify=verify, timeout=30)
        if response.status_code != 200:
            raise RuntimeError("HTTP %d" % response.status_code)
        return json.loads(response.content)

    with ThreadPoolExecutor(max_workers=min(16, len(params["ids"]))) as pool:
        documents = list(pool.map(get, params["ids"]))
    session.close()
    module.exit_json(changed=False, training_jobs=documents)


if __name__ == "__main__":
    main()
"""
)


# The floor of any HTTPS GET from Python (issue 24): the requests floor's module on the standard library alone
# (``http.client`` and ``ssl``, one kept-alive connection per worker thread), so that neither ``requests`` nor
# ``urllib3`` is imported. It takes the same options.
HTTP_FLOOR_MODULE = "bench_http_floor"
_HTTP_FLOOR_SOURCE = (
    """# Benchmark-only plugin written by benchmarks/common.py into a staged copy; not part of the collection.

import http.client
import json
import ssl
import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

from ansible.module_utils.basic import AnsibleModule


"""
    + _GET_FLOOR_MAIN
    + """    context = ssl.create_default_context(cafile=params["ca_path"])
    local = threading.local()

    def get(url):
        parts = urlsplit(url)
        connection = getattr(local, "connection", None)
        if connection is None:
            connection = local.connection = http.client.HTTPSConnection(parts.hostname, parts.port, context=context, timeout=30)
        connection.request("GET", parts.path, headers={"X-Auth-Token": params["token"]})
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError("HTTP %d" % response.status)
        return json.loads(body)

    if params["url"]:
        document = get(params["url"])
        if params["both_keys"]:
            module.exit_json(changed=False, training_job=document, training_jobs=[document])
        module.exit_json(changed=False, json=document)
    with ThreadPoolExecutor(max_workers=min(16, len(params["ids"]))) as pool:
        documents = list(pool.map(get, ["%s/%s" % (params["base_url"], job_id) for job_id in params["ids"]]))
    module.exit_json(changed=False, training_jobs=documents)


if __name__ == "__main__":
    main()
"""
)


def add_floor_plugins(base):
    """Write the floor plugins (``FLOOR_MODULE``, ``FLOOR_LOOKUP``, ``REQUESTS_FLOOR_MODULE``, ``HTTP_FLOOR_MODULE``) into the
    staged collection at ``base``."""
    target = os.path.join(base, "ansible_collections", "modelarts", "training", "plugins")
    for kind, name, text in (
        ("modules", FLOOR_MODULE, _FLOOR_MODULE_SOURCE),
        ("lookup", FLOOR_LOOKUP, _FLOOR_LOOKUP_SOURCE),
        ("modules", REQUESTS_FLOOR_MODULE, _REQUESTS_FLOOR_SOURCE),
        ("modules", HTTP_FLOOR_MODULE, _HTTP_FLOOR_SOURCE),
    ):
        with open(os.path.join(target, kind, name + ".py"), "w", encoding="utf-8") as handle:
            handle.write(text)


def capture_items(emu, base, ids, path):
    """Query ``ids`` once with the staged collection in this process and write the items for the floor plugins to ``path``.

    The items are the module's ``training_jobs`` items (default options, whole ``details``); the file
    has one line per item: the id, a tab, the item as JSON. Returns the bytes of JSON written.
    """
    import_staged(base)
    # pylint: disable=import-outside-toplevel
    try:  # the level names live in text.py since issue 58; a revision before it (whole_run.py --rev) has them in options.py
        from ansible_collections.modelarts.training.plugins.module_utils.text import LEVEL_OPTION
    except ImportError:
        from ansible_collections.modelarts.training.plugins.module_utils.options import LEVEL_OPTION
    query_mod, job_info_mod = door_module("query"), door_module("job_info")
    Query, select, argument_spec = query_mod.Query, query_mod.select, job_info_mod.argument_spec

    given = dict(emu.connection("aksk"), training_job_ids=list(ids))
    params = dict((name, given.get(name, spec.get("default"))) for name, spec in argument_spec().items())
    with Query([(LEVEL_OPTION, params)], select(params), environ={}) as query:
        outcome = query.run()
    if not outcome.ok:
        raise RuntimeError("cannot capture the items for the floor plugins: %s" % outcome.msg)
    written = 0
    with open(path, "w", encoding="utf-8") as handle:
        for item in outcome.items:
            text = json.dumps(item)
            written += len(text)
            handle.write("%s\t%s\n" % (item["id"], text))
    return written


def door_module(name):
    """The door's module ``name`` (``options``, ``query``, ``job_info``) of the staged collection: in ``module_utils/door/``
    since issue 58, at the top of ``module_utils`` in a revision before it (whole_run.py --rev)."""
    import importlib  # pylint: disable=import-outside-toplevel

    base = "ansible_collections.modelarts.training.plugins.module_utils."
    try:
        return importlib.import_module(base + "door." + name)
    except ImportError:
        return importlib.import_module(base + name)


def import_staged(base):
    """Make the staged collection importable as ``ansible_collections.modelarts.training`` in this process."""
    if base not in sys.path:
        sys.path.insert(0, base)


def start_emulator():
    """A context manager running the HTTPS emulator (integration scenario) on 127.0.0.1."""
    return running_emulator(scenario=SCENARIO, tls=True)


class simulated_latency:  # pylint: disable=invalid-name,too-few-public-methods
    """Context manager: every v2 job GET stalls ``seconds`` in the emulator (a ``delay`` fault, count -1).

    The emulator serves each request on its own thread, so concurrent requests stall in parallel,
    as they would on a distant service. The fault is removed on exit.
    """

    def __init__(self, emu, seconds):
        self._emu = emu
        self._seconds = seconds
        self._fault = None

    def __enter__(self):
        self._fault = self._emu.add_fault(type="delay", seconds=self._seconds, count=-1, target="v2")
        return self

    def __exit__(self, *exc):
        self._emu.control("DELETE", "/faults/%d" % self._fault)
        return False


def emulator_extra_vars(emu):
    """The extra vars every benchmark playbook reads: the emulator's address, credentials, and each document set's ids."""
    extra = {
        "emu_url": emu.url,
        "project_id": emu.project_id,
        "region": emu.region,
        "ca_file": emu.ca_file,
        "ak": emu.ak,
        "sk": emu.sk,
        "username": emu.username,
        "password": emu.password,
        "domain_name": emu.domain_name,
    }
    extra.update(("%s_ids" % name, ids) for name, ids in DOCSETS.items())
    return extra


def emu_mark(emu):
    """The log's last sequence number now (every request after it is this run's)."""
    last = 0
    while True:
        entries = emu.requests(since=last, limit=5000)
        if not entries:
            return last
        last = entries[-1]["seq"]


def timed_playbook(emu, base, play, workdir):
    """One ``ansible-playbook`` run of ``play`` on localhost (local connection, this Python), the collection staged under
    ``base``, the emulator's request log cleared first: its wall seconds.  A failed run ends the benchmark with its output."""
    path = os.path.join(workdir, "play.json")
    with open(path, "w") as handle:
        json.dump(play, handle)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=base, ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_LOCALHOST_WARNING="0")
    env.update(ANSIBLE_INVENTORY_UNPARSED_WARNING="0", ANSIBLE_NOCOLOR="1")
    emu.clear_requests()
    started = time.perf_counter()
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local", path]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit("ansible-playbook failed:\n%s%s" % (done.stdout[-2000:], done.stderr[-2000:]))
    return elapsed
