# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gate's decision record: what an audit asks of a deployment gate, and the digest that shows it was not edited.

The role ``training_job_gate`` writes one (``training_job_gate_record``) whether the gate opens or closes, through the
filter ``modelarts.training.gate_record``; anyone can check it later with the filter ``modelarts.training.record_digest``
or a few lines of any language (docs/role.md):

``sha256`` is the hex SHA-256 of the record's canonical JSON - every key but ``sha256``, ``json.dumps(record,
sort_keys=True, separators=(",", ":"))`` (ASCII, non-ASCII characters escaped as ``\\uXXXX``), encoded as UTF-8.  The
file's own layout (indentation, key order) does not matter: the digest is over the data.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math

from ansible_collections.modelarts.training.plugins.module_utils.transport import COLLECTION_VERSION

COLLECTION = "modelarts.training"
DIGEST_KEY = "sha256"
# What the record keeps of each job's item.
JOB_KEYS = ("id", "name", "api_version", "version_id", "phase", "phase_history", "create_time", "metrics", "metrics_ok")
BASELINE_KEYS = ("id", "name", "api_version", "version_id", "phase", "create_time", "metrics")


class RecordError(ValueError):
    """A record that cannot be made canonical (a value JSON cannot hold exactly: NaN, an object)."""


def _plain(value, path="record"):
    """``value`` as plain JSON data (dicts with text keys, lists, text, int, finite float, bool, None); RecordError otherwise."""
    if value is None or isinstance(value, (bool, str)):
        return value if not isinstance(value, str) else str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RecordError("%s is %r: a record holds finite numbers only" % (path, value))
        return float(value)
    if isinstance(value, dict):
        return dict((str(key), _plain(item, "%s.%s" % (path, key))) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(item, "%s[%d]" % (path, index)) for index, item in enumerate(value)]
    raise RecordError("%s is a %s, not JSON data" % (path, type(value).__name__))


def canonical(record):
    """The canonical JSON text of ``record`` without its ``sha256``: sorted keys, no spaces, ASCII."""
    data = dict((key, value) for key, value in _plain(record).items() if key != DIGEST_KEY)
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def digest(record):
    """The hex SHA-256 of :func:`canonical` (``record``), encoded as UTF-8."""
    return hashlib.sha256(canonical(record).encode("utf-8")).hexdigest()


def _kept(item, keys):
    if not isinstance(item, dict):
        return None
    return dict((key, item.get(key)) for key in keys if key in item and (key != "version_id" or item.get("api_version") == "v1"))


def _bounds(metrics, baseline):
    """The bounds as checked (``metrics.Plan.bounds``), or as given when they cannot be checked (the gate closed on them)."""
    if not metrics:
        return []
    from ansible_collections.modelarts.training.plugins.module_utils import metrics as metrics_mod  # pylint: disable=import-outside-toplevel
    from ansible_collections.modelarts.training.plugins.module_utils.options import ConnectionConfigError  # pylint: disable=import-outside-toplevel

    try:
        return metrics_mod.plan(metrics, baseline).bounds()
    except ConnectionConfigError:
        return metrics


def decision_record(result, decision, messages, selection, metrics=None, baseline=None, now=None):
    """The decision record of a gate: ``result`` (the module's registered result, or ``{}`` when the gate closed before
    calling it), ``decision`` (``open``/``closed``), ``messages`` (the lines the gate printed), ``selection`` (which jobs it
    gated on), ``metrics`` and ``baseline`` (as given); ``sha256`` over the rest.  ``now`` is an aware ``datetime``."""
    if decision not in ("open", "closed"):
        raise RecordError("decision must be open or closed, got %r" % (decision,))
    moment = now or datetime.datetime.now(datetime.timezone.utc)
    result = result if isinstance(result, dict) else {}
    jobs = result.get("training_jobs") if isinstance(result.get("training_jobs"), list) else []
    record = {
        "decision": decision,
        "decided_at": moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "collection": COLLECTION,
        "collection_version": COLLECTION_VERSION,
        "selection": dict(selection or {}, baseline=baseline if baseline not in (None, {}) else None),
        "jobs": [_kept(item, JOB_KEYS) for item in jobs],
        "bounds": _bounds(metrics, baseline),
        "baseline_job": _kept(result.get("baseline_job"), BASELINE_KEYS),
        "messages": [str(line) for line in (messages or [])],
    }
    record = _plain(record)
    record[DIGEST_KEY] = digest(record)
    return record


def verify(record):
    """Whether ``record`` (a dict read from the file) still has the ``sha256`` of its data."""
    return isinstance(record, dict) and isinstance(record.get(DIGEST_KEY), str) and record[DIGEST_KEY] == digest(record)
