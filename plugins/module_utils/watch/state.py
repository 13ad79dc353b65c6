# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the event source has reported, kept on disk (its ``state_file``), and the ``event_id`` of its events.

The file is JSON: ``{"version": 1, "selection": {...}, "covered": <ms or null>, "jobs": {"<job id>": "<phase>"}}``.
``selection`` is what the watch selects (ids, name, tags, workspace, project, endpoint): a file written for another
selection is refused, never reused.  ``jobs`` holds each job's last *reported* phase - written only after the
events were handed over (put on ansible-rulebook's queue, or acknowledged on its feedback queue) - so a kill at any
instant loses no transition and repeats only the events that were in flight.  ``covered`` is the newest
``create_time`` (epoch ms) the watch's search has listed: after a restart a job created since then is new, whatever
``startup`` says.  ``stalls`` (argument ``stall``; present only when it holds any) maps a ``Running`` job to the start
(``YYYY-MM-DDTHH:MM:SSZ``) of the stall last reported for it, so a restart does not report the same stall again.
Writes are atomic (a temporary file in the same directory, fsync, ``os.replace``), mode 0600.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
import uuid

from ansible_collections.modelarts.training.plugins.module_utils.job.phases import PHASES, TERMINAL_PHASES
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import JOB_ID_PATTERN

STATE_VERSION = 1
# A stall's start as the file holds it (``stall.iso``).
_STALL_START = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
# The namespace of every event_id (uuid5): fixed, so the same job and transition give the same id in every run.
EVENT_ID_NAMESPACE = uuid.UUID("7fc7da57-cd81-41d9-b345-f1b5a4ecf6ff")
# The most bytes a state file may hold per job it can hold, and at least this much: a bigger file is not one this
# source wrote (a job's entry is its id and phase: about 50 bytes).
MAX_BYTES_PER_JOB = 400
MIN_MAX_BYTES = 1 << 20


def event_id(job_id, previous_phase, phase, extra=None):
    """The UUID of the event of ``job_id`` going from ``previous_phase`` to ``phase`` (None: first seen, or an untrusted
    document): the same job and transition give the same id in every run and on every host.

    An event into a final phase (``Completed``, ``Failed``, ``Terminated``, ``Abnormal``) takes its id from the job and
    that phase alone: a job enters a final phase once, and a restart that first sees it there (``None -> Completed``)
    must give the id the first run gave ``Running -> Completed``, or a deployment that skips a repeat by its id deploys
    the same model twice.  That id is the one of ``None -> phase``, as 1.0.0 gave it: a restart after an upgrade repeats
    the ids a 1.0.0 source gave to the jobs it first saw finished."""
    if phase in TERMINAL_PHASES and not extra:
        previous_phase = None
    parts = ["training-job", str(job_id), "" if previous_phase is None else str(previous_phase), "" if phase is None else str(phase)]
    if extra:
        parts.append(str(extra))
    return str(uuid.uuid5(EVENT_ID_NAMESPACE, "\x1f".join(parts)))


class StateFileError(Exception):
    """The state file cannot be used: its message names the file and what is wrong (the source does not start)."""


def _describe(value):
    if value is None:
        return "none"
    if isinstance(value, list):
        return ", ".join(_describe_entry(entry) for entry in value) or "none"
    return str(value)


def _describe_entry(entry):
    if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], list):
        return "%s=%s" % (entry[0], "|".join(str(value) for value in entry[1]) or "(any)")
    return str(entry)


class StateFile(object):
    """One ``state_file``: loaded (and checked) at start, saved atomically after events were handed over.

    ``selection`` is a dict of what the watch selects; ``project_id`` is checked once known (:meth:`check_project`).
    Raises :class:`StateFileError` for a directory that is not the user's, a file that cannot be read or parsed, or
    one written for another selection - the file is left as it is.
    """

    def __init__(self, path, selection):
        self.path = os.path.abspath(os.path.expanduser(str(path)))
        # As JSON gives it back (lists, not tuples): what is compared with a file's.
        self.selection = json.loads(json.dumps(selection))
        self.jobs = {}
        self.stalls = {}
        self.covered = None
        self.loaded = False
        self.saved_text = None
        self.stored_project = None
        self._check_directory()
        self._load()
        self._check_writable()

    def _check_directory(self):
        # os.stat follows a link: the rules hold for the directory the file really lives in.
        directory = os.path.dirname(self.path)
        if not os.path.lexists(directory):
            # A state directory that does not exist yet is made, for this user only (systemd's StateDirectory= does the
            # same): the shipped rulebook's default, ~/.local/state/modelarts.training/, then works on a new host.
            try:
                os.makedirs(directory, mode=0o700)
            except OSError as error:
                raise StateFileError("state_file %s: its directory cannot be made: %s" % (self.path, error.strerror or error)) from None
        try:
            info = os.stat(directory)
        except OSError as error:
            raise StateFileError("state_file %s: its directory cannot be used: %s" % (self.path, error.strerror or error)) from None
        if not stat.S_ISDIR(info.st_mode):
            raise StateFileError("state_file %s: %s is not a directory" % (self.path, directory))
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise StateFileError(
                "state_file %s: the directory %s belongs to another user (uid %d, this process runs as uid %d): keep the state in a directory "
                "of your own" % (self.path, directory, info.st_uid, os.geteuid())
            )
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise StateFileError(
                "state_file %s: the directory %s can be written by other users (mode %04o): keep the state in a directory only you can write"
                % (self.path, directory, stat.S_IMODE(info.st_mode))
            )

    def _load(self):
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            return
        except OSError as error:
            raise StateFileError("state_file %s cannot be read: %s; the source did not start" % (self.path, error.strerror or error)) from None
        if stat.S_ISLNK(info.st_mode):
            # A link would make the directory's rules (yours, written by nobody else) hold for the link, not for the file
            # read: a link to a file someone else wrote could suppress events.
            raise StateFileError(
                "state_file %s is a symbolic link: the source keeps its state only in a regular file of a directory of your own; give the "
                "path of the file itself; the source did not start" % self.path
            )
        if stat.S_ISDIR(info.st_mode):
            raise StateFileError("state_file %s is a directory" % self.path)
        if not stat.S_ISREG(info.st_mode):
            raise StateFileError("state_file %s cannot be read: it is not a regular file; the source did not start" % self.path)
        try:
            # O_NOFOLLOW: a link put there since the check above is refused too.
            descriptor = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(descriptor, "rb") as handle:
                raw = handle.read(self._max_bytes() + 1)
        except FileNotFoundError:
            return
        except OSError as error:
            raise StateFileError("state_file %s cannot be read: %s; the source did not start" % (self.path, error.strerror or error)) from None
        if len(raw) > self._max_bytes():
            raise StateFileError("state_file %s cannot be read: it holds more than %d bytes, more than this source writes" % (self.path, self._max_bytes()))
        try:
            data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as error:
            reason = "it nests deeper than this source writes" if isinstance(error, RecursionError) else str(error)[:120]
            raise StateFileError(
                "state_file %s cannot be read: it is not the JSON this source writes (%s); the source did not start and left the file as it was "
                "(move it away to start over)" % (self.path, reason)
            ) from None
        problem = _malformed(data)
        if problem:
            raise StateFileError(
                "state_file %s cannot be read: %s; the source did not start and left the file as it was (move it away to start over)" % (self.path, problem)
            )
        stored = data["selection"]
        ids, stored_ids = self.selection.get("training_job_ids"), stored.get("training_job_ids")
        # A watch of ids keeps what the file knows of the ids it still watches when ids are added or removed: the others
        # follow startup, and the removed ones are dropped.  Anything else that differs (ids for a search, another name,
        # tags, workspace, endpoint) is another watch.
        by_ids = bool(ids) and isinstance(stored_ids, list) and bool(stored_ids)
        self._compare(stored, keys=[key for key in self.selection if key != "project_id" and not (by_ids and key == "training_job_ids")])
        self.stored_project = stored.get("project_id")
        self.jobs = dict((key, phase) for key, phase in data["jobs"].items() if not by_ids or key in ids)
        self.stalls = dict((key, since) for key, since in (data.get("stalls") or {}).items() if key in self.jobs)
        self.covered = data.get("covered")
        self.loaded = True
        self.saved_text = raw.decode("utf-8") if not by_ids or stored_ids == ids else None

    def _check_writable(self):
        """Write what the file will hold to a temporary file beside it, then remove it: a directory the source cannot write
        (a read-only mount, a full disk) is found now, before any request, and not after the first events went out -
        which every restart would then send again."""
        text = self.text()
        directory = os.path.dirname(self.path)
        temporary = None
        try:
            handle, temporary = tempfile.mkstemp(prefix="." + os.path.basename(self.path) + ".", suffix=".probe", dir=directory)
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
                stream.flush()
                os.fsync(stream.fileno())
        except OSError as error:
            raise StateFileError(
                "state_file %s cannot be written: %s; the source did not start (it could report events but not keep them)"
                % (self.path, error.strerror or error)
            ) from None
        finally:
            if temporary is not None:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass

    def _max_bytes(self):
        ids = self.selection.get("training_job_ids")
        return max(MIN_MAX_BYTES, MAX_BYTES_PER_JOB * len(ids)) if ids else 1 << 30

    def _compare(self, stored, keys):
        differences = []
        for key in keys:
            mine, theirs = self.selection.get(key), stored.get(key)
            if mine != theirs:
                differences.append("%s is %s here, %s in the file" % (key, _describe(mine), _describe(theirs)))
        if differences:
            raise StateFileError(
                "state_file %s was written for another selection: %s; the source did not start and left the file as it was "
                "(give each watch its own state_file)" % (self.path, "; ".join(differences))
            )

    def check_project(self, project_id):
        """Check the project the file was written for, once the source knows its own (``project_id``)."""
        self.selection["project_id"] = project_id
        if self.loaded:
            self._compare({"project_id": self.stored_project}, keys=["project_id"])

    def text(self):
        data = {"version": STATE_VERSION, "selection": self.selection, "covered": self.covered, "jobs": self.jobs}
        if self.stalls:
            data["stalls"] = self.stalls
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    def save(self):
        """Write the state atomically (mode 0600) when it changed since the last save; True when written."""
        text = self.text()
        if text == self.saved_text:
            return False
        directory = os.path.dirname(self.path)
        handle, temporary = tempfile.mkstemp(prefix="." + os.path.basename(self.path) + ".", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                os.fchmod(stream.fileno(), 0o600)
                stream.write(text)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
        try:
            descriptor = os.open(directory, os.O_RDONLY)
        except OSError:
            descriptor = None
        if descriptor is not None:
            try:
                os.fsync(descriptor)
            except OSError:
                pass
            finally:
                os.close(descriptor)
        self.saved_text = text
        return True


def _no_constant(name):
    raise ValueError("%r is not a number this source writes" % name)


def _malformed(data):
    """What is wrong with the structure of a state file's JSON, or None."""
    if not isinstance(data, dict):
        return "its JSON is not an object"
    if data.get("version") != STATE_VERSION:
        return "its version is %r, not %d" % (data.get("version"), STATE_VERSION)
    if not isinstance(data.get("selection"), dict):
        return "it has no 'selection' object"
    jobs = data.get("jobs")
    if not isinstance(jobs, dict) or not all(isinstance(key, str) and isinstance(value, str) for key, value in jobs.items()):
        return "its 'jobs' is not an object of job ids to phases"
    odd = sorted(key for key in jobs if not JOB_ID_PATTERN.fullmatch(key))
    if odd:
        return "its 'jobs' holds %r, which is not a training job id" % odd[0][:60]
    unknown = sorted(set(jobs.values()) - set(PHASES))
    if unknown:
        return "its 'jobs' holds %r, which is not a phase" % unknown[0][:40]
    stalls = data.get("stalls")
    if stalls is not None and (not isinstance(stalls, dict) or not all(isinstance(key, str) and isinstance(value, str) for key, value in stalls.items())):
        return "its 'stalls' is not an object of job ids to times"
    if stalls and not all(_STALL_START.fullmatch(value) for value in stalls.values()):
        return "its 'stalls' holds a time that is not YYYY-MM-DDTHH:MM:SSZ"
    covered = data.get("covered")
    if covered is not None and (isinstance(covered, bool) or not isinstance(covered, int) or covered < 0):
        return "its 'covered' is not a time in milliseconds"
    return None
