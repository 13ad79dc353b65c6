# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gate's decision record: what an audit asks of a deployment gate, and the digest that shows it was not edited.

The role ``training_job_gate`` writes one (``training_job_gate_record``) whether the gate opens or closes, through the
filter ``modelarts.training.gate_record``; anyone can check it later with the filter ``modelarts.training.record_digest``
or a few lines of any language (docs/role.md):

``sha256`` is the hex SHA-256 of the record's canonical JSON - every key but ``sha256`` and ``hmac_sha256``, as
``json.dumps(record, sort_keys=True, separators=(",", ":"))`` writes it (ASCII, non-ASCII characters escaped as
``\\uXXXX``), encoded as UTF-8, with two rules that make it the text JSON tools elsewhere compute (:func:`canonical`):

* numbers as ECMAScript's ``Number.prototype.toString`` writes them (``JSON.stringify``; RFC 8785, JCS): an integral
  value below 1e21 as an integer (``1``, not ``1.0``; ``10000000000000000``, not ``1e+16``), any other value in the
  shortest form that reads back the same (Python's ``repr`` digits) with an exponent only below 1e-6 or from 1e21 on
  (``1e-7``, ``1.5e+21``: no leading zero in the exponent, ``+`` when it is positive), ``-0`` as ``0``.  An integer
  beyond 2**53 - 1 is refused: a JSON tool that reads numbers as doubles cannot read it back exactly;
* keys sorted by their UTF-16 code units (as JCS and JavaScript's ``sort``), which is Python's order unless a key
  holds a character beyond U+FFFF.

``hmac_sha256``, when the record was written with a key, is the hex HMAC-SHA256 with that key (UTF-8) over the same
text.  The unkeyed ``sha256`` shows accidental damage (a truncated copy, an edit by a tool that meant no harm): anyone
can recompute it after an edit.  ``hmac_sha256`` shows an edit by anyone who does not hold the key.  Keys never appear
in a record or a message.

A record holds an integral number as an integer (``min_improvement: 0.0`` is written ``0``), so that Python's own
``json.dumps(json.load(file), sort_keys=True, separators=(",", ":"))`` writes the same text as long as no number in it
is below 1e-4 in magnitude (where Python writes ``1e-05`` and ECMAScript ``0.00001``) or an integral one above 2**53.

Records written before these rules (``1.0`` where a float was integral, Python's ``1e-07``) still verify: their
``sha256`` is also checked against the text ``json.dumps`` wrote (:func:`legacy_digest`); a record with only numbers
like ``0.86`` has the same text either way.  The file's own layout (indentation, key order) does not matter: the
digest is over the data.
"""

from __future__ import annotations

import datetime
import decimal
import hashlib
import hmac
import json
import math

from ansible_collections.modelarts.training.plugins.module_utils.service.transport import COLLECTION_VERSION

COLLECTION = "modelarts.training"
DIGEST_KEY = "sha256"
HMAC_KEY = "hmac_sha256"
PROMOTED_KEY = "promoted_at"
# The keys the canonical JSON leaves out: the digests themselves.
DIGEST_KEYS = (DIGEST_KEY, HMAC_KEY)
# The largest integer every JSON tool reads back exactly (an IEEE 754 double's 53 bits).
MAX_EXACT_INTEGER = 2**53 - 1
# What the record keeps of each job's item.
# ``end_time`` is not an item's key: :func:`end_time` makes it from the item's.
JOB_KEYS = ("id", "name", "api_version", "version_id", "phase", "phase_history", "create_time", "end_time", "metrics", "metrics_ok")
BASELINE_KEYS = ("id", "name", "api_version", "version_id", "phase", "create_time", "end_time", "metrics")
# The phases a job has ended in: only then is start_time + duration its end (phases.TERMINAL_PHASES).
ENDED_PHASES = ("Completed", "Failed", "Terminated", "Abnormal")
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


class RecordError(ValueError):
    """A record that cannot be made canonical (a value JSON cannot hold exactly: NaN, an object), or one refused."""


def _plain(value, path="record"):
    """``value`` as plain JSON data (dicts with text keys, lists, text, int, finite float, bool, None); RecordError otherwise."""
    if value is None or isinstance(value, (bool, str)):
        return value if not isinstance(value, str) else str(value)
    if isinstance(value, int):
        if abs(value) > MAX_EXACT_INTEGER:
            raise RecordError("%s is %d: a record holds integers up to 2**53 - 1, which every JSON tool reads back exactly" % (path, value))
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RecordError("%s is %r: a record holds finite numbers only" % (path, value))
        if value.is_integer() and abs(value) <= MAX_EXACT_INTEGER:
            # 0.0 is held as 0: the file then reads back as every JSON tool writes it (json.dumps too: 0, not 0.0).
            return int(value)
        return float(value)
    if isinstance(value, dict):
        return dict((str(key), _plain(item, "%s.%s" % (path, key))) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(item, "%s[%d]" % (path, index)) for index, item in enumerate(value)]
    raise RecordError("%s is a %s, not JSON data" % (path, type(value).__name__))


def number_text(value):
    """A number as ECMAScript's ``Number.prototype.toString`` (``JSON.stringify``, RFC 8785) writes it: ``1`` for 1.0,
    ``10000000000000000`` for 1e16, ``1e-7``, ``1.5e+21``, ``0.000001``, ``0`` for -0.0; an ``int`` as its digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value == 0:
        return "0"
    # repr gives the shortest digits that read back the same, correctly rounded: the digits ECMAScript asks for.
    sign, written, exponent = decimal.Decimal(repr(float(value))).as_tuple()
    written = "".join(str(digit) for digit in written)
    digits = written.rstrip("0")
    exponent += len(written) - len(digits)
    count = len(digits)
    point = exponent + count  # the value is 0.<digits> * 10**point
    if count <= point <= 21:
        text = digits + "0" * (point - count)
    elif 0 < point <= 21:
        text = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        text = "0." + "0" * -point + digits
    else:
        shown = point - 1
        text = "%s%se%s%d" % (digits[0], "." + digits[1:] if count > 1 else "", "+" if shown >= 0 else "-", abs(shown))
    return ("-" if sign else "") + text


def _utf16(key):
    return key.encode("utf-16-be")


def _text(value):
    """The canonical JSON text of plain data (see the module's docstring)."""
    if isinstance(value, dict):
        return "{%s}" % ",".join("%s:%s" % (json.dumps(key), _text(value[key])) for key in sorted(value, key=_utf16))
    if isinstance(value, list):
        return "[%s]" % ",".join(_text(item) for item in value)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value)
    return number_text(value)


def _unsigned(record):
    if not isinstance(record, dict):
        raise RecordError("a record is a JSON object, got %s" % type(record).__name__)
    return dict((key, value) for key, value in _plain(record).items() if key not in DIGEST_KEYS)


def canonical(record):
    """The canonical JSON text of ``record`` without its ``sha256`` and ``hmac_sha256``: keys sorted, no spaces, ASCII,
    numbers as JSON tools elsewhere write them (see the module's docstring)."""
    return _text(_unsigned(record))


def digest(record):
    """The hex SHA-256 of :func:`canonical` (``record``), encoded as UTF-8."""
    return hashlib.sha256(canonical(record).encode("utf-8")).hexdigest()


def legacy_digest(record):
    """The hex SHA-256 of the text records were digested over before the number rules: ``json.dumps(record,
    sort_keys=True, separators=(",", ":"))`` (``1.0``, ``1e-07``).  Only :func:`check` reads it, for records written then."""
    data = dict((key, value) for key, value in record.items() if key not in DIGEST_KEYS)  # as read: 0.0 stays 0.0
    try:
        text = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise RecordError("the record is not JSON data: %s" % error) from None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def keyed_digest(record, key):
    """The hex HMAC-SHA256 with ``key`` (text, UTF-8) of :func:`canonical` (``record``)."""
    if not isinstance(key, (str, bytes)) or not key:
        raise RecordError("the record key must be a non-empty string")
    secret = key.encode("utf-8") if isinstance(key, str) else key
    return hmac.new(secret, canonical(record).encode("utf-8"), hashlib.sha256).hexdigest()


def sign(record, key=None):
    """``record`` as plain data with its ``sha256`` (and ``hmac_sha256`` with ``key``) computed again; without a key, no
    ``hmac_sha256``."""
    record = _unsigned(record)
    record[DIGEST_KEY] = digest(record)
    if key:
        record[HMAC_KEY] = keyed_digest(record, key)
    return record


def end_time(item):
    """When the job itself ended, as the service tells it: its ``start_time`` plus its ``duration_seconds`` (the API's
    ``status.duration``, the running duration in milliseconds, which starts at ``start_time``, not at ``create_time``), in
    ISO 8601 UTC to the second (``2026-01-02T03:04:05Z``, the sub-second part dropped); None while the job has not ended
    (a phase outside :data:`ENDED_PHASES`) or when the service gave no start time (a job that never started) or duration."""
    if not isinstance(item, dict) or item.get("phase") not in ENDED_PHASES:
        return None
    start, duration = item.get("start_time"), item.get("duration_seconds")
    if not isinstance(start, str) or isinstance(duration, bool) or not isinstance(duration, (int, float)) or not math.isfinite(duration) or duration < 0:
        return None
    try:
        return (datetime.datetime.strptime(start, TIME_FORMAT) + datetime.timedelta(seconds=duration)).strftime(TIME_FORMAT)
    except (ValueError, OverflowError):
        return None


def _kept(item, keys):
    if not isinstance(item, dict):
        return None
    kept = dict((key, item.get(key)) for key in keys if key in item and (key != "version_id" or item.get("api_version") == "v1"))
    if "end_time" in keys:
        kept["end_time"] = end_time(item)
    return kept


def _given_baseline(baseline):
    """The ``baseline`` as given, for the record: never its ``record_key``.  The door hands it without one
    (``door.metric_checks.shown_baseline``); the record leaves it out again whoever calls, since a secret written into a
    record could never be taken back (a rule of the record's format, not a reading of the options)."""
    if baseline in (None, {}):
        return None
    if isinstance(baseline, dict):
        return dict((key, value) for key, value in baseline.items() if key != "record_key")
    return baseline


def _utc(moment):
    return (moment or datetime.datetime.now(datetime.timezone.utc)).astimezone(datetime.timezone.utc).strftime(TIME_FORMAT)


def decision_record(result, decision, messages, selection, bounds=None, baseline=None, now=None, key=None):
    """The decision record of a gate: ``result`` (the module's registered result, or ``{}`` when the gate closed before
    calling it), ``decision`` (``open``/``closed``), ``messages`` (the lines the gate printed), ``selection`` (which jobs it
    gated on), ``bounds`` (the metrics' bounds as the door checked them: ``door.metric_checks.bounds``) and ``baseline``
    (as given, without a ``record_key``); ``sha256`` over the rest, and
    ``hmac_sha256`` with ``key``.  ``now`` is an aware ``datetime``."""
    if decision not in ("open", "closed"):
        raise RecordError("decision must be open or closed, got %r" % (decision,))
    result = result if isinstance(result, dict) else {}
    jobs = result.get("training_jobs") if isinstance(result.get("training_jobs"), list) else []
    given = _given_baseline(baseline)
    record = {
        "decision": decision,
        "decided_at": _utc(now),
        "collection": COLLECTION,
        "collection_version": COLLECTION_VERSION,
        "selection": dict(selection or {}, baseline=given),
        "jobs": [_kept(item, JOB_KEYS) for item in jobs],
        "bounds": list(bounds or []),
        "baseline_job": _kept(result.get("baseline_job"), BASELINE_KEYS),
        "messages": [str(line) for line in (messages or [])],
    }
    return sign(record, key)


def check(record, key=None):
    """Why ``record`` (a dict read from the file) does not verify, or None when it does: its ``sha256`` is that of its
    data (or, for a record written before the number rules, of the text ``json.dumps`` wrote), and with ``key`` its
    ``hmac_sha256`` is the HMAC of its data with that key.  The text never holds the key."""
    if not isinstance(record, dict):
        return "it is not a JSON object"
    stated = record.get(DIGEST_KEY)
    if not isinstance(stated, str):
        return "it has no %s" % DIGEST_KEY
    try:
        if not hmac.compare_digest(stated, digest(record)) and not hmac.compare_digest(stated, legacy_digest(record)):
            return "its %s does not verify: the record was changed after it was written" % DIGEST_KEY
        if not key:
            return None
        keyed = record.get(HMAC_KEY)
        if keyed is None:
            return "it has no %s, and record_key is given: a record written without the key cannot show it was not edited" % HMAC_KEY
        if not isinstance(keyed, str) or not hmac.compare_digest(keyed, keyed_digest(record, key)):
            return "its %s does not verify with record_key: the record was changed, or written with another key" % HMAC_KEY
    except RecordError as error:
        return str(error)
    except RecursionError:
        return "it is nested too deeply to compute its digest"
    return None


def signed_without_key(record, key=None):
    """Whether ``record`` carries an ``hmac_sha256`` and no ``key`` is given: its ``sha256`` alone, which anyone can compute
    again after an edit, is all that could be checked (refused when a record is read as production or promoted)."""
    return not key and isinstance(record, dict) and record.get(HMAC_KEY) is not None


def verify(record, key=None):
    """Whether ``record`` (a dict read from the file) still has the ``sha256`` of its data (and, with ``key``, the
    ``hmac_sha256``): :func:`check` found nothing wrong."""
    return check(record, key) is None


def promote(record, key=None, now=None):
    """A copy of the open ``record`` with ``promoted_at`` (ISO 8601 UTC, ``now`` an aware ``datetime``) and its digests
    computed again (``hmac_sha256`` with ``key``): what a deployment writes to the production path once it succeeded.
    RecordError for a record that does not verify (with ``key`` when given), is not open, or carries an
    ``hmac_sha256`` when no key is given (it could not be signed again)."""
    why = check(record, key)
    if why is not None:
        raise RecordError("the record cannot be promoted: %s" % why)
    if record.get("decision") != "open":
        raise RecordError("the record cannot be promoted: its decision is %s, not open (only a gate that opened is promoted)" % shown(record.get("decision")))
    if signed_without_key(record, key):
        raise RecordError("the record cannot be promoted: it carries %s, and no key is given to sign the promoted record with" % HMAC_KEY)
    promoted = _unsigned(record)
    promoted[PROMOTED_KEY] = _utc(now)
    return sign(promoted, key)


def shown(value):
    """``value`` as a message shows it: text as it is, anything else as JSON, at most 40 characters."""
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= 40 else text[:37] + "..."
