# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Injected faults: throttling, server errors, resets, delays, truncated bodies, HTML pages, schema drift, nulls,
echoed requests, another job's document and stale searches.

A fault is a dict (from a scenario file or ``POST /_emulator/faults``)::

    {type: throttle|error|reset|delay|truncate|html|drift|nulls|echo|wrong_job|stale,
     count: 1,            # how many matching requests it hits; -1 or "always" = every one
     after: 0,            # let this many matching requests through first
     every: 1,            # hit only every Nth matching request (the Nth, 2Nth...); count then defaults to always
     target: modelarts,   # modelarts (v2, v1 and search), v2, v1, search, iam or all (stale: search only)
     job: <id>,           # only GETs of this job (v2 id, or "<job_id>/<version_id>" for v1)
     status: 503,         # error: 500/502/503/504; html: the status of the HTML page (502)
     retry_after: 1,      # throttle: Retry-After seconds
     seconds: 5,          # delay: how long to stall before answering
     mode: ...,           # truncate: body|short_read; drift: extra|missing|wrong_types|set
     paths: [...],        # drift: dotted JSON paths to change (defaults per API)
     values: {...},       # drift set: dotted JSON path -> the value it gets (any JSON value)
     encoding: raw,       # echo: raw|json|repr|percent|html, how the echoed request is written
     pad: 0,              # echo: blank lines before the echo (an indented error page's whitespace)
     phase: Running,      # stale: the phase every job of the search answer is reported in
     headers: [...],      # echo: only these request headers (names, any case); default all of them
     answer_with: <key>}  # wrong_job: the job whose document answers (v2 id, or "<job_id>/<version_id>")

``nulls`` answers the job documents (v2 details, v1 versions, each item of a search) with JSON
``null`` for every key that is not required: only ``metadata.id`` and ``status.phase`` (v2) or
``job_id``, ``version_id`` and ``status`` (v1) keep their values, as an API that sends every optional
field as ``null`` would.

``echo`` answers with an error page (``status``, 400 by default) that quotes the whole request - its
line, every header (``X-Auth-Token``, ``X-Security-Token``, ``Authorization``...) and its body (the
IAM password) - written as a careless gateway or framework would: as it is (``raw``), as a JSON
string (``json``), as a Python ``repr`` (``repr``), percent-encoded (``percent``) or HTML-escaped
(``html``). It is how a client's handling of secrets echoed in error bodies is tested.

``wrong_job`` answers with the document of another job, ``answer_with``, in its phase now (its lifecycle is
peeked at, not advanced): a GET of one job (v2 or v1) gets the other job's document of the same API, and each
item of a search becomes the other job's v2 document, as a misrouting gateway or a mixed-up cache would answer.
The answer is unchanged when ``answer_with`` names no job with a document of that API.  It is how a client's
check that a document is the job it asked for is tested.

``stale`` answers a search (by name, by id, any filter) with every item's ``status.phase`` set to the fault's
``phase``, whatever the job's own document (its GET) says: a search index that lags behind the jobs, or
disagrees with them.  The jobs the search matches and their order are those of the true phases; only what
the items say changes.  It is how a client that must never decide on a search's word alone is tested.
"""

import copy
import html
import itertools
import json
import threading
from urllib.parse import quote_plus

from .lifecycle import PHASES

FAULT_TYPES = ("throttle", "error", "reset", "delay", "truncate", "html", "drift", "nulls", "echo", "wrong_job", "stale")
ECHO_ENCODINGS = ("raw", "json", "repr", "percent", "html")
TARGETS = ("modelarts", "v2", "v1", "search", "iam", "all")
DRIFT_MODES = ("extra", "missing", "wrong_types", "set")
DEFAULT_DRIFT_PATHS = {
    "v2": {
        "missing": ["status.secondary_phase", "metadata.create_time"],
        "wrong_types": ["status.duration", "metadata.create_time", "spec.resource.node_count"],
        "extra": ["x_emulator_extra", "status.x_emulator_extra", "metadata.labels"],
    },
    "v1": {"missing": ["duration", "job_name"], "wrong_types": ["status", "create_time", "duration"], "extra": ["x_emulator_extra", "job_labels"]},
}
# The keys a ``nulls`` fault keeps, as nested dicts: every other key of the document becomes null.
NULLS_KEEP = {
    "v2": {"metadata": {"id": {}}, "status": {"phase": {}}},
    "v1": {"job_id": {}, "version_id": {}, "status": {}},
}
HTML_PAGE = (
    "<html>\r\n<head><title>{status} {reason}</title></head>\r\n<body>\r\n"
    "<center><h1>{status} {reason}</h1></center>\r\n<hr><center>api-gateway</center>\r\n</body>\r\n</html>\r\n"
)


class FaultError(ValueError):
    """A fault spec that cannot be used."""


def normalise(spec, job_key=None):
    """Validate a fault spec and return a clean copy (with ``job`` set when given)."""
    if not isinstance(spec, dict):
        raise FaultError("a fault must be a mapping")
    fault = dict(spec)
    kind = fault.get("type")
    if kind not in FAULT_TYPES:
        raise FaultError("fault type must be one of %s, got %r" % (", ".join(FAULT_TYPES), kind))
    count = fault.get("count", 1 if fault.get("every") is None else -1)
    if count in ("always", None):
        count = -1
    try:
        fault["count"] = int(count)
        fault["after"] = int(fault.get("after", 0))
        fault["every"] = int(1 if fault.get("every") is None else fault["every"])
    except (TypeError, ValueError):
        raise FaultError("fault count, after and every must be integers") from None
    if fault["every"] < 1:
        raise FaultError("fault every must be at least 1")
    if job_key is not None:
        fault["job"] = job_key
    if fault.get("job") is not None:
        fault["job"] = str(fault["job"])
    fault.setdefault("target", "search" if kind == "stale" else "modelarts")
    if fault["target"] not in TARGETS:
        raise FaultError("fault target must be one of %s" % ", ".join(TARGETS))
    if kind == "error":
        fault["status"] = int(fault.get("status", 503))
        if fault["status"] not in (500, 502, 503, 504):
            raise FaultError("error faults take status 500, 502, 503 or 504")
    elif kind == "html":
        fault["status"] = int(fault.get("status", 502))
    elif kind == "throttle":
        fault["retry_after"] = fault.get("retry_after", 1)
    elif kind == "delay":
        fault["seconds"] = float(fault.get("seconds", 5))
    elif kind == "truncate":
        fault.setdefault("mode", "body")
        if fault["mode"] not in ("body", "short_read"):
            raise FaultError("truncate mode must be body or short_read")
    elif kind == "echo":
        fault["status"] = int(fault.get("status", 400))
        if not 400 <= fault["status"] <= 599:
            raise FaultError("echo faults take a status from 400 to 599")
        fault.setdefault("encoding", "raw")
        if fault["encoding"] not in ECHO_ENCODINGS:
            raise FaultError("echo encoding must be one of %s" % ", ".join(ECHO_ENCODINGS))
        try:
            fault["pad"] = int(fault.get("pad", 0))
        except (TypeError, ValueError):
            raise FaultError("echo pad must be an integer") from None
        if not 0 <= fault["pad"] <= 100000:
            raise FaultError("echo pad must be from 0 to 100000")
        names = fault.get("headers")
        if names is not None and (not isinstance(names, list) or not all(isinstance(name, str) for name in names)):
            raise FaultError("echo headers must be a list of header names")
    elif kind == "wrong_job":
        other = fault.get("answer_with")
        if not isinstance(other, (str, int)) or isinstance(other, bool) or not str(other):
            raise FaultError("wrong_job faults need answer_with: the key of the job whose document answers (a v2 id or <job_id>/<version_id>)")
        fault["answer_with"] = str(other)
    elif kind == "stale":
        if fault["target"] != "search" or fault.get("job") is not None:
            raise FaultError("stale faults rewrite every item of a search answer: their target is search, and they take no job")
        if fault.get("phase") not in PHASES:
            raise FaultError("stale faults need a phase, one of %s" % ", ".join(PHASES))
    elif kind == "drift":
        fault.setdefault("mode", "extra")
        if fault["mode"] not in DRIFT_MODES:
            raise FaultError("drift mode must be one of %s" % ", ".join(DRIFT_MODES))
        if fault.get("paths") is not None and not isinstance(fault["paths"], list):
            raise FaultError("drift paths must be a list of dotted paths")
        if fault["mode"] == "set" and (not isinstance(fault.get("values"), dict) or not fault["values"]):
            raise FaultError("drift mode set takes values: a mapping of dotted paths to the values they get")
    return fault


def _target_matches(target, family):
    if target == "all":
        return True
    if target == "modelarts":
        return family in ("v2", "v1", "search")
    return target == family


class FaultStore:
    """Pending faults, consumed in insertion order by matching requests. Thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self._faults = []
        self._ids = itertools.count(1)

    def add(self, spec, job_key=None):
        """Add a fault; return its id."""
        fault = normalise(spec, job_key)
        with self._lock:
            fault["id"] = next(self._ids)
            fault["hits"] = 0
            fault["seen"] = 0
            self._faults.append(fault)
            return fault["id"]

    def clear(self, job_key=None):
        """Remove all faults (or only those bound to ``job_key``)."""
        with self._lock:
            if job_key is None:
                self._faults = []
            else:
                self._faults = [f for f in self._faults if f.get("job") != job_key]

    def remove(self, fault_id):
        """Remove one fault by id; return whether it existed."""
        with self._lock:
            before = len(self._faults)
            self._faults = [f for f in self._faults if f["id"] != fault_id]
            return len(self._faults) != before

    def take(self, family, job_key=None):
        """Return the fault that hits this request (consuming one use), or None.

        Job-bound faults only match requests for that job; unbound ones match by target.
        """
        with self._lock:
            for fault in self._faults:
                if fault.get("job") is not None:
                    if fault["job"] != job_key or family not in ("v2", "v1"):
                        continue
                elif not _target_matches(fault["target"], family):
                    continue
                if fault["count"] >= 0 and fault["hits"] >= fault["count"]:
                    continue
                fault["seen"] += 1
                if fault["seen"] <= fault["after"] or (fault["seen"] - fault["after"]) % fault["every"]:
                    continue
                fault["hits"] += 1
                return copy.deepcopy(fault)
        return None

    def snapshot(self):
        """Return all faults with their remaining counts (for the control API)."""
        with self._lock:
            result = []
            for fault in self._faults:
                item = copy.deepcopy(fault)
                item["remaining"] = None if fault["count"] < 0 else max(0, fault["count"] - fault["hits"])
                result.append(item)
            return result


def _split(path):
    return [int(p) if p.isdigit() else p for p in str(path).split(".") if p != ""]


def _walk(doc, parts):
    node = doc
    for part in parts[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return None
    return node


def _wrong_type(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return 12345
    if isinstance(value, list):
        return {"items": value}
    if isinstance(value, dict):
        return [value]
    return 0


def apply_drift(doc, fault, api):
    """Return a drifted deep copy of a job document (``api`` is ``v2`` or ``v1``)."""
    doc = copy.deepcopy(doc)
    mode = fault.get("mode", "extra")
    values = fault.get("values") or {}
    paths = list(values) if mode == "set" else fault.get("paths") or DEFAULT_DRIFT_PATHS[api][mode]
    for path in paths:
        parts = _split(path)
        if not parts:
            continue
        parent = _walk(doc, parts)
        last = parts[-1]
        if mode == "set":
            if isinstance(parent, dict):
                parent[last] = copy.deepcopy(values[path])
            elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
                parent[last] = copy.deepcopy(values[path])
        elif mode == "extra":
            if isinstance(parent, dict):
                parent[last] = {"emulator_drift": True, "note": "field unknown to the published schema"}
        elif mode == "missing":
            if isinstance(parent, dict):
                parent.pop(last, None)
            elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
                parent.pop(last)
        else:
            if isinstance(parent, dict) and last in parent:
                parent[last] = _wrong_type(parent[last])
            elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
                parent[last] = _wrong_type(parent[last])
    return doc


def _nulled(node, keep):
    if not isinstance(node, dict):
        return node
    return {key: _nulled(value, keep[key]) if key in keep else None for key, value in node.items()}


def apply_nulls(doc, api):
    """Return a copy of a job document (``api`` ``v2`` or ``v1``) with every key but the required ones set to null."""
    return _nulled(copy.deepcopy(doc), NULLS_KEEP[api])


def apply_stale(doc, phase):
    """Return a copy of a v2 job document whose ``status.phase`` is ``phase`` (a ``stale`` fault's search item)."""
    doc = copy.deepcopy(doc)
    if isinstance(doc.get("status"), dict):
        doc["status"]["phase"] = phase
    return doc


def echo_response(fault, method, target, headers, body):
    """``(content type, body bytes)`` of an ``echo`` fault: the request, quoted in the fault's encoding."""
    wanted = fault.get("headers")
    wanted = None if wanted is None else set(name.lower() for name in wanted)
    lines = ["%s %s" % (method, target)] + ["%s: %s" % (name, value) for name, value in headers.items() if wanted is None or name.lower() in wanted]
    request = "\r\n".join(lines) + "\r\n\r\n" + (body or b"").decode("utf-8", "replace")
    encoding = fault.get("encoding", "raw")
    content_type = "text/plain; charset=utf-8"
    if encoding == "json":
        content_type = "application/json"
        text = json.dumps({"echo": request})
    elif encoding == "repr":
        text = repr(request)
    elif encoding == "percent":
        text = quote_plus(request)
    elif encoding == "html":
        content_type = "text/html; charset=utf-8"
        text = "<html><body><h1>Bad request</h1><pre>%s</pre></body></html>" % html.escape(request)
    else:
        text = request
    # JSON allows leading whitespace: a padded JSON echo is still JSON (in a shape no error parser knows).
    text = "\n" * fault.get("pad", 0) + (text if encoding == "json" else "the request was:\n" + text)
    return content_type, text.encode("utf-8")
