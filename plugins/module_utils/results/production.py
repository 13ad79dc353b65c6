# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The production record read as a baseline (``baseline: {record: PATH}``): the job a gate opened on and a deployment
then promoted, checked before anything is compared with it.

:func:`read_production` gives a :class:`Production`: ``found`` (the :class:`RecordJob` to compare with), ``missing``
(the path does not exist yet - a first deployment, the only outcome ``baseline.required: false`` may skip) or
``failed`` (anything else, named with the file: a link, not a regular file, too large, not UTF-8, not JSON, not an
object, a digest that does not verify, an ``hmac_sha256`` read without the key, a decision not open, no ``promoted_at``,
no job or more than one, a job that is not a Completed training job).  What a record holds and how its digests are computed is ``record.py``.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat

from ansible_collections.modelarts.training.plugins.module_utils.results import record as record_mod
from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import check_job_id, v1_ids_key, v2_key
from ansible_collections.modelarts.training.plugins.module_utils.text import describe_value, label

FOUND = "found"
MISSING = "missing"
FAILED = "failed"
# A decision record holds a gate's jobs and messages: far below this.  A larger file is not read.
MAX_RECORD_BYTES = 16 * 1024 * 1024
COMPLETED = "Completed"


class RecordJob(object):
    """The job a production record holds: ``key`` (a v2 id, or ``("v1", job_id, version_id)``), ``name``, ``api_version``
    and ``values`` (``{metric: number}`` for each metric the record holds a value for)."""

    def __init__(self, key, name, api_version, values):
        self.key = key
        self.name = name
        self.api_version = api_version
        self.values = values


class Production(object):
    """What :func:`read_production` found: ``status`` (``found``, ``missing`` or ``failed``), ``job`` (a
    :class:`RecordJob` when found), ``why`` (the reason, naming the file, when not found) and ``record`` (the data read)."""

    def __init__(self, status, job=None, why=None, record=None):
        self.status = status
        self.job = job
        self.why = why
        self.record = record

    def __repr__(self):
        return "Production(%r, %r)" % (self.status, self.why)


def _named(path):
    return "the production record %s" % repr(label(path, 200))


def _pairs(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError("it holds the key %s twice" % label(key, 60))
        seen[key] = value
    return seen


def _constant(name):
    raise ValueError("it holds %s, which is not a JSON number" % name)


def _read(path):
    """The bytes of ``path``: a regular file, never through a symbolic link, at most :data:`MAX_RECORD_BYTES`; raises
    ``FileNotFoundError`` when it does not exist, ``ValueError`` with the reason otherwise."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise
    except OSError as error:
        if error.errno == errno.ENOENT:
            raise FileNotFoundError(path) from None
        raise ValueError("it cannot be read: %s" % (error.strerror or error)) from None
    if stat.S_ISLNK(info.st_mode):
        raise ValueError("it is a symbolic link: a production record is a regular file, read as it stands")
    if not stat.S_ISREG(info.st_mode):
        raise ValueError("it is not a regular file")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        handle = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ValueError("it is a symbolic link: a production record is a regular file, read as it stands") from None
        raise ValueError("it cannot be read: %s" % (error.strerror or error)) from None
    try:
        opened = os.fstat(handle)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
            raise ValueError("it was replaced while it was read")
        chunks, size = [], 0
        while True:
            chunk = os.read(handle, 1024 * 1024)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_RECORD_BYTES:
                raise ValueError("it is larger than %d bytes: not a decision record" % MAX_RECORD_BYTES)
            chunks.append(chunk)
    except OSError as error:
        raise ValueError("it cannot be read: %s" % (error.strerror or error)) from None
    finally:
        os.close(handle)
    return b"".join(chunks)


def _parse(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError("it is not UTF-8 text (byte %d)" % error.start) from None
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except ValueError as error:
        reason = str(error)
        if reason.startswith("it "):
            raise ValueError(reason) from None
        raise ValueError("it is not JSON: %s" % label(reason, 120)) from None
    except RecursionError:
        raise ValueError("it is not JSON a record can be: nested too deeply") from None


def _job_key(job, where):
    api = job.get("api_version")
    try:
        if api == "v1":
            return v1_ids_key(job.get("id"), job.get("version_id"), where + ".")
        if api == "v2":
            return v2_key(check_job_id(job.get("id"), where + ".id"))
    except ConnectionConfigError as error:
        raise ValueError(str(error)) from None
    raise ValueError("%s.api_version is %s, not v1 or v2" % (where, describe_value(api, 20)))


def _values(job, where):
    metrics = job.get("metrics")
    if metrics is None:
        return {}
    if not isinstance(metrics, dict):
        raise ValueError("%s.metrics is not an object" % where)
    values = {}
    for name, entry in metrics.items():
        value = entry.get("value") if isinstance(entry, dict) else None
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError("%s.metrics.%s.value is %s, not a number" % (where, label(name, 60), describe_value(value, 20)))
        values[name] = float(value)
    return values


def _job(record, name):
    jobs = record.get("jobs")
    if not isinstance(jobs, list):
        raise ValueError("it has no list of jobs")
    indexed = [(index, job) for index, job in enumerate(jobs) if isinstance(job, dict)]
    if len(indexed) < len(jobs):
        raise ValueError("a job in it is not an object")
    if name is not None:
        indexed = [(index, job) for index, job in indexed if job.get("name") == name]
        if not indexed:
            raise ValueError("it holds no job named %s (baseline.name)" % repr(label(name, 60)))
        if len(indexed) > 1:
            raise ValueError("it holds %d jobs named %s: a production record names one job" % (len(indexed), repr(label(name, 60))))
    elif not indexed:
        raise ValueError("it holds no job")
    elif len(indexed) > 1:
        raise ValueError("it holds %d jobs: give baseline.name to pick the one in production" % len(indexed))
    index, job = indexed[0]
    where = "jobs[%d]" % index
    key = _job_key(job, where)
    if job.get("phase") != COMPLETED:
        raise ValueError("its job %s is %s, not Completed" % (label(job.get("id"), 80), record_mod.shown(job.get("phase"))))
    job_name = job.get("name") if isinstance(job.get("name"), str) else None
    return RecordJob(key, job_name, job.get("api_version"), _values(job, where))


def read_production(path, key=None, name=None):
    """The production record at ``path`` as a :class:`Production`; ``key`` (the baseline's ``record_key``) must verify its
    ``hmac_sha256``; ``name`` picks one of its jobs by name.  Never raises for what the file holds; the reason never
    holds the key."""
    where = _named(path)
    try:
        data = _read(path)
    except FileNotFoundError:
        return Production(MISSING, why="%s does not exist" % where)
    except ValueError as error:
        return Production(FAILED, why="%s: %s" % (where, error))
    try:
        record = _parse(data)
    except ValueError as error:
        return Production(FAILED, why="%s: %s" % (where, error))
    if not isinstance(record, dict):
        return Production(FAILED, why="%s: it is not a JSON object" % where)
    if record.get("collection") != record_mod.COLLECTION:
        return Production(
            FAILED,
            why="%s: it is not a decision record of %s (collection is %s)" % (where, record_mod.COLLECTION, describe_value(record.get("collection"), 40)),
            record=record,
        )
    problem = record_mod.check(record, key)
    if problem is not None:
        return Production(FAILED, why="%s: %s" % (where, problem), record=record)
    if record_mod.signed_without_key(record, key):
        return Production(
            FAILED,
            why="%s: it carries %s and no record_key is given: a signed record is read with the key it was signed with (baseline.record_key)"
            % (where, record_mod.HMAC_KEY),
            record=record,
        )
    if record.get("decision") != "open":
        return Production(
            FAILED,
            why="%s: its decision is %s, not open: a gate that closed never put its job in production" % (where, record_mod.shown(record.get("decision"))),
            record=record,
        )
    if not isinstance(record.get(record_mod.PROMOTED_KEY), str) or not record.get(record_mod.PROMOTED_KEY):
        # A gate's decision record becomes production only once its deployment succeeded and promoted it.
        return Production(
            FAILED,
            why="%s: it has no %s: it is a gate's decision record that was never promoted (a deployment that succeeded promotes it)"
            % (where, record_mod.PROMOTED_KEY),
            record=record,
        )
    try:
        job = _job(record, name)
    except ValueError as error:
        return Production(FAILED, why="%s: %s" % (where, error), record=record)
    return Production(FOUND, job=job, record=record)
