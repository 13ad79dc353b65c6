# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Normalise v2 and v1 training-job documents into the collection's item shape.

One item shape for every plugin (module, lookup, role, event source):
``id, name, api_version, phase, secondary_phase, terminal, completed, failed, create_time,
start_time, duration_seconds, failure_reason, details, schema_errors`` (v1 adds
``version_id`` and ``status_code``).

Normalisation never raises on the content of a document: a field of the wrong JSON type is
read as null and reported in ``schema_errors`` at its JSON path.  A null optional field is read
as null without an error (a null list as an empty one), as the schemas accept it.  A document
that is valid against its schema always yields a phase from ``PHASES`` (phases.py).

Conventions:

* Times: epoch milliseconds become ``YYYY-MM-DDTHH:MM:SSZ`` (UTC).  The sub-second part is
  dropped (floor), so a rendered time never lies after the real instant; 0 means "not set"
  and becomes null (the API reports ``start_time: 0`` for a job that never started).
* ``duration_seconds`` keeps millisecond precision (``duration / 1000``).
* ``failure_reason`` is set only when the phase is in ``fail_on`` or is Failed/Abnormal; see
  ``FAILURE_REASON_RULES``.
* ``details`` is the document as returned (the same object for v2; a shallow copy plus
  ``metrics`` for v1).  The caller's dict is never modified.
"""

from __future__ import annotations

import datetime
import json

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.job.phases import (
    DEFAULT_FAIL_ON,
    FAILURE_PHASES,
    PHASES,
    TERMINAL_PHASES,
    V1_STATUS_NAMES,
    V1_STATUS_PHASES,
)
from ansible_collections.modelarts.training.plugins.module_utils.job.schema_data import (
    MAX_DURATION_MS,
    MAX_EPOCH_MS,
    V1_JOB_VERSION_SCHEMA,
    V2_TRAINING_JOB_SCHEMA,
)
from ansible_collections.modelarts.training.plugins.module_utils.text import describe_typed, describe_value, json_type_name, label, truncate
from ansible_collections.modelarts.training.plugins.module_utils.service.transport import KeyedTwice, pairs_marking_duplicates
from ansible_collections.modelarts.training.plugins.module_utils.job.validation import (
    VALIDATE_MODES,
    SchemaValidationError,
    json_path,
    prepare as prepare_schemas,
    validate_document,
)


API_VERSIONS = ("v2", "v1")
MAX_REASON_CHARS = 1000

FAILURE_REASON_RULES = (
    "Set only when the phase is in fail_on or is Failed or Abnormal; otherwise null.",
    "v2, first match wins: (1) the entry of status.task_statuses with a non-zero exit_code for the task that the last "
    "running record blames (end_related_task), else the first with a non-zero exit_code "
    "(task name, exit code and message; further failed tasks are counted); (2) the first entry with "
    "a message and no exit_code; (3) the last status.running_records entry naming an end_related_task, "
    "else the last one with an end_reason; (4) status.secondary_phase; (5) null.",
    "v1: the status code and its name, e.g. 'v1 status 11 (FAILED)'.",
    "Bounded to %d characters." % MAX_REASON_CHARS,
)


def prepare():
    """Compile the pre-checks of both schemas now, once for this process (``job_info.prepare``)."""
    prepare_schemas(V2_TRAINING_JOB_SCHEMA, V1_JOB_VERSION_SCHEMA)


def schema_for(api_version):
    """Return the JSON schema of an API version (``v2`` or ``v1``)."""
    if api_version == "v2":
        return V2_TRAINING_JOB_SCHEMA
    if api_version == "v1":
        return V1_JOB_VERSION_SCHEMA
    raise ValueError("api_version must be one of %s, got %s" % (", ".join(API_VERSIONS), describe_value(api_version)))


def _is_integer(value):
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_KIND_CHECKS = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
}


class _Reader:
    """Reads typed fields out of untrusted JSON, noting every problem by JSON path."""

    def __init__(self):
        self.issues = []

    def note(self, parts, message, missing=False):
        """Record a problem at ``parts``; ``missing`` marks an absent required field."""
        self.issues.append((list(parts), message, missing))

    def get(self, obj, parts, key, kind, required=False):
        """Return ``obj[key]`` if it has the JSON type ``kind``, else None (noting why).

        ``obj`` that is not a dict (an unusable parent, already reported) yields None silently,
        and so does a null optional field (the schemas accept null for every optional field).
        """
        if not isinstance(obj, dict):
            return None
        if key not in obj:
            if required:
                self.note(list(parts) + [key], "required field is missing", missing=True)
            return None
        value = obj[key]
        if value is None and not required:
            return None
        if not _KIND_CHECKS[kind](value):
            self.note(list(parts) + [key], "expected %s, got %s" % (kind, describe_typed(value)))
            return None
        return int(value) if kind == "integer" else value


_EPOCH = datetime.datetime(1970, 1, 1)


def epoch_ms_to_iso(value):
    """Convert epoch milliseconds to ``YYYY-MM-DDTHH:MM:SSZ`` (UTC, sub-second part floored).

    Returns None for 0 (not set).  Raises ValueError outside 0 .. 9999-12-31T23:59:59.999Z.
    """
    if not _is_integer(value) or value < 0 or value > MAX_EPOCH_MS:
        raise ValueError("not an epoch time in milliseconds between 0 and %d" % MAX_EPOCH_MS)
    if value == 0:
        return None
    # Naive arithmetic on whole seconds: no time zone database, no platform gmtime() limits,
    # and isoformat() prints no fraction when there is none.
    return (_EPOCH + datetime.timedelta(seconds=int(value) // 1000)).isoformat() + "Z"


def _read_time(reader, obj, parts, key):
    value = reader.get(obj, parts, key, "integer")
    if value is None:
        return None
    try:
        return epoch_ms_to_iso(value)
    except ValueError as exc:
        reader.note(list(parts) + [key], "%s, got %s" % (exc, describe_value(value)))
        return None


def _read_duration(reader, obj, parts, key="duration"):
    value = reader.get(obj, parts, key, "integer")
    if value is None:
        return None
    if value < 0 or value > MAX_DURATION_MS:
        reader.note(list(parts) + [key], "expected milliseconds between 0 and %d, got %s" % (MAX_DURATION_MS, describe_value(value)))
        return None
    return value / 1000.0


def _phase_set(phases, default):
    if phases is None:
        return frozenset(default)
    if isinstance(phases, str):
        return frozenset([phases])
    try:
        return frozenset(phase for phase in phases if isinstance(phase, str))
    except TypeError:
        return frozenset(default)


ITEM_KEYS = (
    "id",
    "name",
    "api_version",
    "phase",
    "secondary_phase",
    "terminal",
    "completed",
    "failed",
    "create_time",
    "start_time",
    "duration_seconds",
    "failure_reason",
    "details",
    "schema_errors",
    # Whether a Running job makes progress (option stall: waiting/progress.py); None for other phases and without stall.
    "progress",
)
V1_ITEM_KEYS = ITEM_KEYS[:2] + ("version_id", "status_code") + ITEM_KEYS[2:]


def _empty_item(api_version, details):
    item = dict.fromkeys(V1_ITEM_KEYS if api_version == "v1" else ITEM_KEYS)
    item.update({"api_version": api_version, "terminal": False, "completed": False, "failed": False, "details": details, "schema_errors": []})
    return item


def _covered(parts, missing, known_paths):
    if json_path(parts) in known_paths:
        return True
    return missing and json_path(parts[:-1]) in known_paths


def _merge_errors(schema_errors, issues):
    merged = [dict(error) for error in (schema_errors or []) if isinstance(error, dict)]
    known_paths = set(error.get("path") for error in merged)
    for parts, message, missing in issues:
        if not _covered(parts, missing, known_paths):
            merged.append({"path": json_path(parts), "message": truncate(message, 300)})
            known_paths.add(json_path(parts))
    return merged


def _finish(item, phase, fail_on, reader, schema_errors):
    fail_set = _phase_set(fail_on, DEFAULT_FAIL_ON)
    item["phase"] = phase
    item["terminal"] = phase in TERMINAL_PHASES
    item["completed"] = phase == "Completed"
    item["failed"] = phase is not None and phase in fail_set
    item["schema_errors"] = _merge_errors(schema_errors, reader.issues)
    return item


def _wants_reason(phase, fail_on):
    return phase is not None and (phase in FAILURE_PHASES or phase in _phase_set(fail_on, DEFAULT_FAIL_ON))


def _v2_phase(reader, status):
    phase = reader.get(status, ["status"], "phase", "string", required=True)
    if phase is not None and phase not in PHASES:
        reader.note(["status", "phase"], "unknown phase %s (expected one of %s)" % (describe_value(phase), ", ".join(PHASES)))
        return None
    return phase


def _task_entries(reader, status):
    tasks = reader.get(status, ["status"], "task_statuses", "array")
    entries = []
    for index, entry in enumerate(tasks or []):
        parts = ["status", "task_statuses", index]
        if not isinstance(entry, dict):
            reader.note(parts, "expected object, got %s" % describe_typed(entry))
            continue
        entries.append(
            (reader.get(entry, parts, "task", "string"), reader.get(entry, parts, "exit_code", "integer"), reader.get(entry, parts, "message", "string"))
        )
    return entries


def _task_reason(reader, status, culprit=None):
    entries = _task_entries(reader, status)
    failed = [entry for entry in entries if entry[1] not in (None, 0)]
    # The task the running record blames is the root cause; the others often
    # only exited because it did (e.g. 143 after a peer's crash).
    failed.sort(key=lambda entry: culprit is None or entry[0] != culprit)
    if failed:
        task, code, message = failed[0]
        reason = "%s exited with code %s" % ("task %s" % task if task else "a task", describe_value(code))
        if message:
            reason += ": " + message
        if len(failed) > 1:
            reason += " (and %d more failed task%s)" % (len(failed) - 1, "" if len(failed) == 2 else "s")
        return reason
    for task, code, message in entries:
        if code is None and message:
            return "%s: %s" % ("task %s" % task if task else "a task", message)
    return None


def _record_reason(reader, status):
    """The last running record's end: ``(reason text, blamed task)``, either may be None."""
    records = reader.get(status, ["status"], "running_records", "array")
    fallback = None
    for index in range(len(records or []) - 1, -1, -1):
        parts = ["status", "running_records", index]
        record = records[index]
        if not isinstance(record, dict):
            reader.note(parts, "expected object, got %s" % describe_typed(record))
            continue
        end_reason = reader.get(record, parts, "end_reason", "string")
        task = reader.get(record, parts, "end_related_task", "string")
        if end_reason and task:
            return "run ended: %s (task %s)" % (end_reason, task), task
        if end_reason and fallback is None:
            fallback = "run ended: %s" % end_reason
    return fallback, None


def _v2_failure_reason(reader, status, secondary_phase):
    record_reason, culprit = _record_reason(reader, status)
    reason = _task_reason(reader, status, culprit) or record_reason
    if reason is None and secondary_phase:
        reason = "secondary phase %s" % secondary_phase
    return truncate(reason, MAX_REASON_CHARS) if reason else None


def normalise_v2(doc, fail_on=DEFAULT_FAIL_ON, schema_errors=None):
    """Normalise a v2 training-job document into an item (never raises on document content).

    ``schema_errors`` (from ``validate_document``) is copied into the item; problems found
    while reading are appended unless an error at the same path is already listed.
    """
    reader = _Reader()
    item = _empty_item("v2", doc)
    if not isinstance(doc, dict):
        reader.note([], "expected object, got %s" % describe_typed(doc))
        return _finish(item, None, fail_on, reader, schema_errors)
    metadata = reader.get(doc, [], "metadata", "object", required=True)
    status = reader.get(doc, [], "status", "object", required=True)
    item["id"] = reader.get(metadata, ["metadata"], "id", "string", required=True)
    item["name"] = reader.get(metadata, ["metadata"], "name", "string")
    item["create_time"] = _read_time(reader, metadata, ["metadata"], "create_time")
    phase = _v2_phase(reader, status)
    item["secondary_phase"] = reader.get(status, ["status"], "secondary_phase", "string")
    item["start_time"] = _read_time(reader, status, ["status"], "start_time")
    item["duration_seconds"] = _read_duration(reader, status, ["status"])
    if _wants_reason(phase, fail_on):
        item["failure_reason"] = _v2_failure_reason(reader, status, item["secondary_phase"])
    return _finish(item, phase, fail_on, reader, schema_errors)


def _parse_metrics(reader, doc):
    # What Python's json parses is parsed, NaN, Infinity and -Infinity included: a loss that went to NaN is
    # what a training framework writes, the schema asks only for a string, and Ansible carries float NaN
    # through a module result, a registered variable and the lookup unchanged (docs/module.md).
    if "model_metric_list" not in doc or doc["model_metric_list"] is None:
        return None
    raw = doc["model_metric_list"]
    if isinstance(raw, (dict, list)):
        reader.note(["model_metric_list"], "expected a JSON-encoded string, got %s; used as is" % json_type_name(raw))
        return raw
    if not isinstance(raw, str):
        reader.note(["model_metric_list"], "expected a JSON-encoded string, got %s" % describe_typed(raw))
        return None
    if not raw.strip():
        return None
    try:
        # A key given twice is marked (transport.KeyedTwice), never silently the last: the metric gate refuses it.
        return json.loads(raw, object_pairs_hook=pairs_marking_duplicates)
    except RecursionError:
        reader.note(["model_metric_list"], "not parsed: the JSON is nested too deeply")
    except ValueError as exc:
        reader.note(["model_metric_list"], "not valid JSON: %s" % truncate(str(exc), 200))
    return None


def _v1_phase(reader, doc):
    code = reader.get(doc, [], "status", "integer", required=True)
    if code is None:
        return None, None
    if code not in V1_STATUS_PHASES:
        reader.note(["status"], "unknown v1 status %s (expected 0-22)" % describe_value(code))
        return None, code
    return V1_STATUS_PHASES[code], code


def normalise_v1(doc, fail_on=DEFAULT_FAIL_ON, schema_errors=None):
    """Normalise a v1 job-version document into an item (never raises on document content).

    ``details`` is a shallow copy of the document plus ``metrics``: ``model_metric_list``
    parsed from its JSON string (null when absent, empty or malformed; malformed is reported
    in ``schema_errors``).  ``secondary_phase`` holds the v1 status name.
    """
    reader = _Reader()
    if not isinstance(doc, dict):
        item = _empty_item("v1", doc)
        reader.note([], "expected object, got %s" % describe_typed(doc))
        return _finish(item, None, fail_on, reader, schema_errors)
    details = dict(doc)
    if getattr(doc, "duplicated", None):
        # The document's own keys given twice (model_metric_list...) stay marked for the metric gate.
        details = KeyedTwice(details)
        details.duplicated = doc.duplicated
    details["metrics"] = _parse_metrics(reader, doc)
    item = _empty_item("v1", details)
    item["id"] = reader.get(doc, [], "job_id", "integer", required=True)
    item["version_id"] = reader.get(doc, [], "version_id", "integer", required=True)
    item["name"] = reader.get(doc, [], "job_name", "string")
    phase, code = _v1_phase(reader, doc)
    item["status_code"] = code
    item["secondary_phase"] = V1_STATUS_NAMES.get(code)
    item["create_time"] = _read_time(reader, doc, [], "create_time")
    item["start_time"] = _read_time(reader, doc, [], "start_time")
    item["duration_seconds"] = _read_duration(reader, doc, [])
    if _wants_reason(phase, fail_on):
        item["failure_reason"] = "v1 status %d (%s)" % (code, V1_STATUS_NAMES[code])
    return _finish(item, phase, fail_on, reader, schema_errors)


def _job_ref(item):
    if item["api_version"] == "v1" and item["id"] is not None:
        ref = "job %s version %s" % (item["id"], item["version_id"])
    else:
        ref = item["id"]
    if item["name"]:
        return "%s (%s)" % (describe_value(item["name"]), ref) if ref is not None else describe_value(item["name"])
    return ref if ref is not None else "(unidentified)"


class WrongJobError(ModelArtsError):
    """The service answered a question about one job with the document of another (or of no readable job).

    Nothing of such a document is used: not its phase, not its id, not its name, so another job's ``Completed`` can
    never answer for the job asked.  Neither ``transient`` nor ``not_found``: it ends a wait as an error for that job.
    """

    def __init__(self, operation, found, request_id=None):
        text = "%s: the service answered with the document of another job (%s), so nothing in it is taken for this job" % (operation, found)
        if request_id:
            text += " [request id %s]" % label(request_id)
        super(WrongJobError, self).__init__(text, operation=operation, request_id=request_id)


def _identity(doc, api_version):
    """The identity a document states, as read from it: the v2 ``metadata.id``, or the v1 ``(job_id, version_id)``."""
    if not isinstance(doc, dict):
        return None
    if api_version == "v2":
        metadata = doc.get("metadata")
        return metadata.get("id") if isinstance(metadata, dict) else None
    return doc.get("job_id"), doc.get("version_id")


def _same_job(found, expect, api_version):
    if api_version == "v2":
        return isinstance(found, str) and found == expect
    # A v1 id is an integer; JSON's 10.0 is the same number, a bool or a string is not.
    return all(not isinstance(part, bool) and isinstance(part, (int, float)) and part == wanted for part, wanted in zip(found, expect))


def _describe_identity(found, api_version):
    if api_version == "v2":
        return "metadata.id %s" % (repr(label(found, 80)) if isinstance(found, str) else describe_value(found, 40))
    return "job_id %s, version_id %s" % tuple(label(part, 40) if isinstance(part, int) else describe_value(part, 40) for part in found)


def check_identity(doc, api_version, expect, operation, request_id=None):
    """Raise :class:`WrongJobError` unless ``doc`` states the identity ``expect``: a v2 ``metadata.id`` equal to the id
    asked, or a v1 ``job_id`` and ``version_id`` equal to the ``(job_id, version_id)`` asked.  ``operation`` names the
    question (``get training job <id>``); the identity found is quoted escaped and bounded."""
    found = _identity(doc, api_version)
    if api_version == "v1" and found is None:
        found = (None, None)
    if not _same_job(found, expect, api_version):
        raise WrongJobError(operation, _describe_identity(found, api_version), request_id)


def build_item(doc, api_version, validate="strict", fail_on=DEFAULT_FAIL_ON, job_ref=None, expect=None, operation=None, request_id=None):
    """Validate and normalise one document into an item.

    ``validate``: ``off`` skips the JSON schema (reading problems are still reported in
    ``schema_errors``); ``warn`` returns the item with ``schema_errors`` filled; ``strict``
    raises ``SchemaValidationError`` (carrying ``job_ref``, the errors and the item) when
    ``schema_errors`` would not be empty.  ``job_ref`` names the job in that error; by default
    it is derived from the document.  ``expect``, the v2 id or v1 ``(job_id, version_id)`` asked
    for, is checked first, in every ``validate`` mode (:func:`check_identity`, with ``operation``
    and ``request_id`` for its message): a document of another job is a :class:`WrongJobError`,
    never an item.  Raises ValueError on a bad ``api_version``/``validate``
    and ``MissingJsonSchemaError`` when validation is on but jsonschema is not installed.
    """
    schema = schema_for(api_version)
    if validate not in VALIDATE_MODES:
        raise ValueError("validate must be one of %s, got %s" % (", ".join(VALIDATE_MODES), describe_value(validate)))
    if expect is not None:
        check_identity(doc, api_version, expect, operation or "read training job %s" % label(expect), request_id)
    errors = validate_document(doc, schema) if validate != "off" else None
    normalise = normalise_v2 if api_version == "v2" else normalise_v1
    item = normalise(doc, fail_on=fail_on, schema_errors=errors)
    if validate == "strict" and item["schema_errors"]:
        ref = job_ref if job_ref is not None else _job_ref(item)
        raise SchemaValidationError(ref, item["schema_errors"], api_version=api_version, item=item)
    return item
