# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Watching training jobs for the event source: its arguments, rounds, change detection, events and error policy.

The event source (``extensions/eda/plugins/event_source/training_job_phase.py``) is an adapter over this module: it
hands its arguments to :func:`build_watcher`, runs :meth:`Watcher.round` in a worker thread on the watcher's schedule
and puts the events it returns on ansible-rulebook's queue.  Everything here is synchronous and testable without
ansible-rulebook: the door (``query.Query``) does the requests, ``clock`` is monotonic seconds.
"""

from __future__ import annotations

import collections
import datetime
import logging
import threading
import time

from ansible_collections.modelarts.training.plugins.module_utils.options import (
    CONNECTION_OPTIONS,
    LEVEL_ARGUMENT,
    QUERY_OPTIONS,
    WAIT_OPTIONS,
    ConnectionConfigError,
    check_known,
    convert,
    to_bool,
    where,
)
from ansible_collections.modelarts.training.plugins.module_utils.phases import PHASES, TERMINAL_PHASES
from ansible_collections.modelarts.training.plugins.module_utils.selection import Search, check_workspace_id, parse_tags
from ansible_collections.modelarts.training.plugins.module_utils.query import (
    ModelArtsError,
    Query,
    SchemaValidationError,
    UnidentifiedJobError,
    check_job_id,
    describe,
    unseen_item,
    v2_key,
)
from ansible_collections.modelarts.training.plugins.module_utils.text import inert, label
from ansible_collections.modelarts.training.plugins.module_utils.watch_state import StateFile, StateFileError, event_id
from ansible_collections.modelarts.training.plugins.module_utils.waiter import (
    DEFAULT_NOT_FOUND_TOLERANCE,
    GROWTH_FACTOR,
    JOB_DONE,
    JOB_FAILED,
    JOB_TOLERATED,
    JOB_UNREACHABLE,
)

NAME = "modelarts.training.training_job_phase"
# The event source's logger: its records are the source's (ansible-rulebook shows them under this name).
logger = logging.getLogger(NAME)

DEFAULT_INTERVAL = 10.0
ROUND_TRIPS_KEPT = 5
# The source's own arguments; everything else it accepts is the door's.
SOURCE_ARGUMENTS = ("training_job_ids", "name", "tags", "workspace_id", "interval", "stop_when_done", "startup", "state_file")
# ansible-rulebook's own source arguments, accepted and left to it: ``feedback: true`` asks it for a feedback queue.
RULEBOOK_ARGUMENTS = ("feedback",)
STARTUP_CHOICES = ("all", "changes")
# After the first listing, each round's search asks only for the jobs created since the newest one seen, less this
# margin (a job may show in the search a little after its create_time); the watched jobs are read by id.
CREATED_SINCE_MARGIN_MS = 60 * 1000
# What a first listing that found nothing records as covered: when it started, less this (the host's clock may run ahead).
EMPTY_LISTING_MARGIN_MS = 15 * 60 * 1000
DOOR_ARGUMENTS = tuple(CONNECTION_OPTIONS) + tuple(QUERY_OPTIONS) + ("fail_on",)
# The wait options are the module's and the lookup's: the source follows every job to a final phase.
WAIT_HINTS = dict((name, "the source has no wait options; it follows each job to a final phase") for name in WAIT_OPTIONS if name != "fail_on")
# The phases a job can still leave: a later round's search for the selection's unfinished jobs asks for these.
UNFINISHED_PHASES = tuple(phase for phase in PHASES if phase not in TERMINAL_PHASES)
# During a first listing, the state file is written at most this often (what a kill repeats: what was handed over since).
LISTING_SAVE_SECONDS = 2.0
# Verdicts after which a job is not polled again.
FINAL_VERDICTS = frozenset((JOB_DONE, JOB_FAILED, JOB_UNREACHABLE))
# Errors that say the credentials or the project are wrong: every job would fail the same way, so
# the source ends at once instead of dropping the jobs one by one.
CREDENTIAL_ERROR_CODES = frozenset(("APIG.0301", "APIG.0303", "APIG.0307", "APIGW.0301", "APIGW.0303", "APIGW.0307", "ModelArts.2786", "ModelArts.0210"))


class SourceConfigError(ValueError):
    """The source cannot run with these arguments or this environment; the message names the argument."""


class SourceError(Exception):
    """The source stopped because the service refused it for good (credentials, project, or every job unreadable)."""


# -- arguments ---------------------------------------------------------------------------------


def _blank(value):
    return value is None or value == [] or (isinstance(value, str) and not value.strip())


def _id_list(value):
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)):
        raise SourceConfigError("%s: %s must be a list of job ids or a comma-separated string" % (NAME, where("training_job_ids", LEVEL_ARGUMENT)))
    ids = []
    for index, entry in enumerate(value):
        if not isinstance(entry, (str, int)) or isinstance(entry, bool):
            raise SourceConfigError("%s: %s must hold job id strings, got a %s" % (NAME, where("training_job_ids", LEVEL_ARGUMENT), type(entry).__name__))
        text = str(entry).strip()
        if text:
            try:
                ids.append(check_job_id(text, "training_job_ids[%d] (argument)" % index))
            except ConnectionConfigError as error:
                raise SourceConfigError("%s: %s" % (NAME, error)) from None
    return list(dict.fromkeys(ids))


class Arguments(object):
    """The source's own arguments (``training_job_ids``, or ``name`` and/or ``tags`` with ``workspace_id``, ``interval``,
    ``stop_when_done``), checked.

    Unknown arguments are refused here, before the door sees the rest; ``eda_*`` keys are ansible-rulebook's own.
    """

    def __init__(self, args):
        try:
            check_known(
                (key for key in args if not str(key).startswith("eda_")), SOURCE_ARGUMENTS + DOOR_ARGUMENTS + RULEBOOK_ARGUMENTS, "argument", hints=WAIT_HINTS
            )
        except ConnectionConfigError as error:
            raise SourceConfigError("%s: %s; see the DOCUMENTATION of the source or docs/event_source.md" % (NAME, error)) from None
        has_ids = not _blank(args.get("training_job_ids"))
        has_name = not _blank(args.get("name"))
        try:
            tags = parse_tags(args.get("tags"), "tags (argument)")
            workspace_id = check_workspace_id(args.get("workspace_id"), "workspace_id (argument)")
        except ConnectionConfigError as error:
            raise SourceConfigError("%s: %s" % (NAME, error)) from None
        if has_ids == (has_name or bool(tags)):
            raise SourceConfigError("%s: set exactly one of training_job_ids, or name and/or tags" % NAME)
        self.ids = _id_list(args["training_job_ids"]) if has_ids else []
        if has_ids and not self.ids:
            raise SourceConfigError("%s: training_job_ids holds no job id" % NAME)
        self.name = None
        if has_name:
            if not isinstance(args["name"], (str, int)) or isinstance(args["name"], bool):
                raise SourceConfigError("%s: %s must be a string, got a %s" % (NAME, where("name", LEVEL_ARGUMENT), type(args["name"]).__name__))
            self.name = str(args["name"])
        self.workspace_id = workspace_id
        # The search that selects the jobs (None: training_job_ids).
        self.search = Search(name=self.name, tags=tags, workspace_id=workspace_id) if (has_name or tags) else None
        self.interval = DEFAULT_INTERVAL
        self.stop_when_done = False
        try:
            if not _blank(args.get("interval")):
                self.interval = convert("interval", {"type": "float"}, args["interval"], LEVEL_ARGUMENT)
            if not _blank(args.get("stop_when_done")):
                self.stop_when_done = to_bool(args["stop_when_done"], "stop_when_done", LEVEL_ARGUMENT)
        except ConnectionConfigError as error:
            raise SourceConfigError("%s: %s" % (NAME, error)) from None
        if not self.interval > 0:
            raise SourceConfigError(
                "%s: %s must be a number of seconds greater than 0, got %r" % (NAME, where("interval", LEVEL_ARGUMENT), args.get("interval"))
            )
        self.startup = "all" if _blank(args.get("startup")) else args["startup"]
        if self.startup not in STARTUP_CHOICES:
            raise SourceConfigError("%s: %s must be one of %s, got %r" % (NAME, where("startup", LEVEL_ARGUMENT), ", ".join(STARTUP_CHOICES), self.startup))
        self.state_file = None
        if not _blank(args.get("state_file")):
            if not isinstance(args["state_file"], str):
                raise SourceConfigError("%s: %s must be a path, got a %s" % (NAME, where("state_file", LEVEL_ARGUMENT), type(args["state_file"]).__name__))
            self.state_file = args["state_file"]
        self.tags = tags

    def selection(self, endpoint):
        """What the watch selects, as a state file records it (the project is added once known)."""
        return {
            "training_job_ids": sorted(self.ids) or None,
            "name": self.name,
            "tags": sorted([key, sorted(values)] for key, values in self.tags) or None,
            "workspace_id": self.workspace_id,
            "endpoint": endpoint,
            "project_id": None,
        }


# -- events ------------------------------------------------------------------------------------


# The item's texts a rule may pass to run_playbook that hold the service's words: made inert in events.
INERT_FIELDS = ("name", "failure_reason", "error")


def event_item(item):
    """The item as an event carries it: its ``name``, ``failure_reason`` and ``error`` made inert (:func:`text.inert`:
    one line, no Jinja delimiter).

    ansible-rulebook hands the whole event to ``run_playbook`` (``ansible_eda.event``) and a rule may pass these as
    extra vars, which ansible-playbook would render as templates.  The ``id`` needs nothing: it is the id asked for
    (the door refuses another job's document) or one a name search found that matches the job id pattern, never
    anything else.  ``details``, ``diagnostics`` and ``schema_errors`` keep the service's text as it is
    (docs/event_source.md: what is safe to pass to run_playbook).
    """
    inerted = dict((field, inert(item[field])) for field in INERT_FIELDS if isinstance(item.get(field), str))
    return dict(item, **inerted) if inerted else item


def _job_ref(key, item):
    return key if isinstance(key, str) else "%s:%s" % (item.get("id"), key)


def make_event(item, previous_phase, key=None):
    """The event for one observed phase change; its ``event_id`` is the same for the same job and transition in every run."""
    phase = item.get("phase")
    ref = _job_ref(key if key is not None else item.get("id"), item)
    return {"modelarts": {"training_job": event_item(item), "previous_phase": previous_phase, "phase": phase, "event_id": event_id(ref, previous_phase, phase)}}


def make_invalid_event(item, schema_errors, previous_phase, key=None):
    """The event for a document that breaks the JSON schema under ``validate: strict``.

    ``phase`` is None so that no rule written for phase changes (``event.modelarts.phase == "Completed"``)
    acts on a document the user chose not to trust; the phase read from it stays in ``training_job``.
    """
    ref = _job_ref(key if key is not None else item.get("id"), item)
    problems = "|".join("%s %s" % (entry.get("path"), entry.get("message")) for entry in schema_errors)
    identity = event_id(ref, previous_phase, None, extra="schema %s %s" % (item.get("phase"), problems))
    return {
        "modelarts": {
            "training_job": event_item(item),
            "previous_phase": previous_phase,
            "phase": None,
            "schema_errors": list(schema_errors),
            "event_id": identity,
        }
    }


def scrub(value, redact):
    """``value`` (JSON-like) with ``redact`` applied to every string: a last guard so no event carries a secret."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return dict((key, scrub(entry, redact)) for key, entry in value.items())
    if isinstance(value, list):
        return [scrub(entry, redact) for entry in value]
    return value


def is_credential_error(error):
    """True when an error says the credentials or project are wrong for every job, not just one (a configuration error
    met at a request - a token file that cannot be read, a project nobody named - is every job's too)."""
    if isinstance(error, ConnectionConfigError):
        return True
    return getattr(error, "status", None) == 401 or getattr(error, "error_code", None) in CREDENTIAL_ERROR_CODES


def backoff_delay(interval, failures, cap):
    """Seconds before trying again after ``failures`` consecutive tolerated errors: interval * 1.5^(n-1), capped."""
    return min(max(cap, interval), interval * GROWTH_FACTOR ** max(0, failures - 1))


def _signature(problems):
    return tuple((entry.get("path"), entry.get("message")) for entry in problems or [])


def _paths(problems):
    problems = list(problems or [])
    text = ", ".join("%s (%s)" % (entry.get("path"), entry.get("message")) for entry in problems[:5]) or "none"
    return text + (" and %d more" % (len(problems) - 5) if len(problems) > 5 else "")


class JobState(object):
    """What the source knows of one watched job."""

    __slots__ = ("phase", "seen", "polls", "failures", "due", "reported", "invalid")

    def __init__(self, due):
        self.phase = None  # the last phase read from a document that was accepted
        self.seen = False
        self.polls = 0  # observations so far (answers and errors), as the waiter counts polls
        self.failures = 0  # consecutive tolerated errors, for the backoff
        self.due = due
        self.reported = None  # the schema problems last warned about, so a lasting problem warns once
        self.invalid = None  # (phase, problems) of the last invalid-document event


class _Reporting(object):
    """What was reported and where a watch starts (``startup``, ``state_file``): a :class:`Watcher`'s part that
    resumes jobs from the state file, takes the first round's jobs as the starting point, and saves what was delivered."""

    def _resume(self, key, job):
        """Start ``job`` from the phase the state file recorded for it, when it did: no event while that phase holds."""
        phase = self.recorded.get(key) if isinstance(key, str) else None
        if phase is not None and not job.seen:
            job.seen, job.phase = True, phase

    def _resumed(self, key):
        """A job a search lists that the state file knows starts from its recorded phase (see :meth:`_resume`)."""
        if key in self.recorded and key not in self.jobs and key not in self.finished and key not in self.dropped:
            self._resume(key, self.jobs.setdefault(key, JobState(self.clock())))

    def _baseline(self, key, item):
        """Whether the first observation of ``key`` is the starting point (no event): ``startup: changes``, in the first
        round, for a job the state file does not know and that was not created since the file's search covered."""
        if self.arguments.startup != "changes":
            return False
        if self.arguments.search is None:
            # training_job_ids: a job read at its first attempt is a starting point.  One whose first reads failed (503s,
            # not found yet) may have finished meanwhile: it gives its first observation when it is read.
            job = self.jobs.get(key)
            return job is not None and job.polls <= 1
        if not self.first_round:
            return False
        covered = self.state.covered if self.state is not None else None
        created = _created_ms(item.get("create_time"))
        return covered is None or created is None or created < covered - CREATED_SINCE_MARGIN_MS

    def _record(self, key, phase):
        """Note ``phase`` as what ``key`` was reported at (or started from); written with the next save."""
        if isinstance(key, str) and phase is not None:
            self.recorded[key] = phase
            self.pending.pop(key, None)

    def delivered(self, events):
        """The ``events`` were handed over (put on ansible-rulebook's queue, or acknowledged by it): record their phases and
        save the state file.  Only then is a transition taken as reported, so a kill before this repeats it (same
        ``event_id``) rather than losing it."""
        for event in events:
            body = event.get("modelarts") if isinstance(event, dict) else None
            item = body.get("training_job") if isinstance(body, dict) else None
            if isinstance(item, dict) and body.get("phase") is not None:
                self._record(item.get("id"), body["phase"])
        self.save()

    def save(self):
        """Write what was reported to the state file (when there is one and it changed).

        During a first listing (a page a round) it is written at most every :data:`LISTING_SAVE_SECONDS`: the file holds
        every listed job, and writing it whole for every page of a long listing would cost more than the listing."""
        if self.state is None:
            return
        now = self.clock()
        if self.listing is not None and self.last_save is not None and now - self.last_save < LISTING_SAVE_SECONDS:
            return
        self.last_save = now
        self.state.jobs = self.recorded
        self.state.covered = self._covered()
        try:
            self.state.save()
        except OSError as error:
            raise SourceError("%s: state_file %s cannot be written: %s" % (NAME, self.state.path, error.strerror or error)) from None

    def _covered(self):
        """What the state file says the search has covered (epoch ms): after a restart, a job the file does not know that
        was created before it is a starting point (``startup: changes``), any other is new.

        It moves only over what this run took care of: once the first listing is over, to the newest job listed (or to
        when the listing started, when it found none), and never past a listed job that was not yet reported, saved or
        taken as a starting point (its confirming GET failed, its event is still on its way): a kill then must not make
        it a starting point of the next run."""
        covered = self.state.covered
        if self.listed:
            # A listing that found nothing covered up to when it started - by this host's clock, so with a margin for a
            # clock ahead of the service's: it found no job, so an earlier point costs nothing.
            covered = self.newest if self.newest is not None else max(0, self.listing_started - EMPTY_LISTING_MARGIN_MS)
        if self.pending:
            floor = max(0, min(self.pending.values()) - 1)
            covered = floor if covered is None else min(covered, floor)
        return covered

    def _listed_jobs(self, keys, found):
        """Note each job a search listed that is not recorded yet, with its creation time (:meth:`_covered`)."""
        for key in keys:
            if isinstance(key, str) and key not in self.recorded and key not in self.finished and key not in self.dropped:
                result = found.get(key)
                # A document that breaks the schema still carries the item read from it (its create_time).
                result = result if isinstance(result, dict) else getattr(result, "item", None)
                created = _created_ms(result.get("create_time")) if isinstance(result, dict) else None
                self.pending[key] = 0 if created is None else created

    def _forget(self, key):
        self.recorded.pop(key, None)
        self.pending.pop(key, None)

    def _may_report(self, key, result):
        """Whether the search's answer for ``key`` could give an event (else no GET is needed to confirm it)."""
        if not isinstance(result, dict):
            return True
        job = self.jobs.get(key)
        if job is not None and job.seen:
            return result.get("phase") != job.phase
        return not self._baseline(key, result)


class _Verdicts(object):
    """A :class:`Watcher`'s decisions on each answer: phase changes into events (confirmed by the door's verdicts,
    ``query.judge``), schema problems warned once, errors tolerated with backoff or ending the job or the source."""

    def observe(self, key, item):
        """Record one readable answer for ``key``; return its event, or None when the phase did not change."""
        state = self.jobs.setdefault(key, JobState(self.clock()))
        state.polls += 1
        state.failures = 0
        state.invalid = None
        phase = item.get("phase")
        if phase is None:
            # Only possible under validate warn/off: a phase we cannot read is no phase change.
            self._report(
                key,
                state,
                ("no phase",) + _signature(item.get("schema_errors")),
                "training job %s: the answer holds no readable phase; schema errors: %s" % (describe(key), _paths(item.get("schema_errors"))),
            )
            return None
        if self.validate == "warn":
            problems = item.get("schema_errors")
            self._report(
                key, state, _signature(problems), "training job %s: the answer breaks the JSON schema (validate: warn): %s" % (describe(key), _paths(problems))
            )
        elif state.reported:
            self._report(key, state, (), "")
        verdict, _reason = self.query.judge(item, state.polls)
        event = None
        if not state.seen or phase != state.phase:
            if not state.seen and self._baseline(key, item):
                # startup: changes - the first round's jobs are the starting point: recorded, not reported.
                logger.debug("training job %s (%s): %s at start (startup: changes): the starting point", describe(key), label(item.get("name")), phase)
                self._record(key, phase)
            else:
                event = scrub(make_event(item, state.phase if state.seen else None, key), self.redact)
                logger.info("training job %s (%s): %s -> %s", describe(key), label(item.get("name")), state.phase if state.seen else "(first seen)", phase)
        state.seen = True
        state.phase = phase
        if verdict in FINAL_VERDICTS:
            self.finished[key] = phase
            del self.jobs[key]
            logger.info("training job %s is %s: no longer watched", describe(key), phase)
        return event

    def invalid(self, key, error):
        """Record a document that cannot be trusted (it breaks the JSON schema under ``validate: strict``, or has no
        readable id); return its event once per change, else None."""
        state = self.jobs.setdefault(key, JobState(self.clock()))
        state.polls += 1
        item = unseen_item(key, error)
        problems = list(getattr(error, "errors", None) or item.get("schema_errors") or [])
        if isinstance(error, SchemaValidationError):
            text = "training job %s: the answer breaks the JSON schema (validate: strict), so it gives no phase-change event: %s" % (
                describe(key),
                _paths(problems),
            )
        else:
            text = "%s; it gives no phase-change event" % error
        self._report(key, state, _signature(problems) or (str(error),), text)
        observed = (item.get("phase"), _signature(problems))
        if observed == state.invalid:
            return None
        state.invalid = observed
        return scrub(make_invalid_event(item, problems, state.phase if state.seen else None, key), self.redact)

    def _report(self, key, state, signature, text):
        """Warn about schema problems once per change; note when they are gone."""
        if signature == (state.reported or ()):
            return
        if signature:
            logger.warning("%s", self.redact(text))
        else:
            logger.info("training job %s: the answer matches the JSON schema again", describe(key))
        state.reported = signature or None

    def record_error(self, key, error):
        """Apply the waiter's verdict to one failed read of ``key``; return an event (invalid document) or None.

        Raises :class:`SourceError` when the error says every job would fail the same way.
        """
        state = self.jobs[key]
        if isinstance(error, SchemaValidationError):
            event = self.invalid(key, error)
            # Read again with backoff, as for tolerated errors; the warning was given once by invalid().
            self._retry(state, "training job %s still breaks the JSON schema" % describe(key), level=logging.DEBUG)
            return event
        state.polls += 1
        verdict, _reason = self.query.judge(error, self._poll_number(state))
        message = _message(error, self.redact)
        if verdict == JOB_TOLERATED:
            if getattr(error, "not_found", False):
                self._retry(
                    state,
                    "training job %s not found yet (poll %d of %d, a new job may not be visible at once): %s"
                    % (describe(key), state.polls, DEFAULT_NOT_FOUND_TOLERANCE + 1, message),
                )
            else:
                self._retry(state, "training job %s: %s" % (describe(key), message))
            return None
        if is_credential_error(error):
            raise SourceError("%s: %s" % (NAME, message))
        logger.error("training job %s: %s; it is no longer watched", describe(key), message)
        self.dropped[key] = message
        del self.jobs[key]
        return None

    @staticmethod
    def _poll_number(state):
        # The judge tolerates "not found" during a job's first polls because a new job may not be
        # visible yet.  A job this source has seen is visible: not found now means deleted, so its
        # grace is over whatever the count of polls.
        return state.polls if not state.seen else max(state.polls, DEFAULT_NOT_FOUND_TOLERANCE + 1)

    def record_search_error(self, error):
        """Apply the waiter's verdict to a failed name search; raise :class:`SourceError` when it cannot succeed."""
        state = self.search_state
        state.polls += 1
        message = _message(error, self.redact)
        verdict, _reason = self.query.judge(error, state.polls)
        if verdict == JOB_TOLERATED and not getattr(error, "not_found", False):
            return self._retry(state, "search for training jobs %s: %s" % (self.arguments.search.describe(), message))
        raise SourceError("%s: %s" % (NAME, message))

    def _retry(self, state, text, level=logging.WARNING):
        state.failures += 1
        delay = backoff_delay(self.arguments.interval, state.failures, self.backoff_cap)
        state.due = self.clock() + delay
        logger.log(level, "%s; retrying in %.1fs (attempt %d)", self.redact(text), delay, state.failures)

    def searched(self, keys, found, complete=True):
        """Events for what a search returned (items, or the schema errors of single documents).

        After a ``complete`` listing, forgets unfinished jobs the search no longer returns (deleted).
        """
        self.search_state.failures = 0
        self.search_state.polls = 0
        events = []
        for key in keys:
            if key in self.finished or key in self.dropped:
                continue
            self._resumed(key)
            result = found[key]
            if isinstance(result, (SchemaValidationError, UnidentifiedJobError)):
                # One document's: a schema failure, or (any validate mode) a job with no readable id.
                event = self.invalid(key, result)
            elif isinstance(result, BaseException):
                # The job's own GET failed (Query.settle): judged like any poll's error.
                self.jobs.setdefault(key, JobState(self.clock()))
                event = self.record_error(key, result)
            else:
                event = self.observe(key, result)
            if event:
                events.append(event)
        for key in [key for key in self.jobs if key not in found] if complete else []:
            logger.info("training job %s is no longer returned by the search for jobs %s: no longer watched", describe(key), self.arguments.search.describe())
            del self.jobs[key]
            self._forget(key)
        return events

    def diagnosed(self, events):
        """The events, their jobs' ``diagnostics`` set by the door: the service's events and log tails for a job that
        reached a ``fail_on`` phase (read once, when its event is made), None for the others - and for the event of a
        document that breaks the schema (its phase is not trusted)."""
        items = []
        for event in events:
            item = event.get("modelarts", {}).get("training_job")
            if isinstance(item, dict):
                item["diagnostics"] = None
                if event["modelarts"].get("phase") is not None:
                    items.append(item)
        if items:
            self.query.diagnose(items)
        return events

    def _polled(self, keys, results):
        """Events for the jobs still watched, read by id this round (jobs that went meanwhile are skipped)."""
        events = []
        for key in keys:
            if key not in self.jobs:
                continue
            result = results.get(key)
            event = self.record_error(key, result) if isinstance(result, BaseException) else self.observe(key, result)
            if event:
                events.append(event)
        return events


class _SearchRounds(object):
    """A :class:`Watcher`'s rounds with ``name``/``tags``: the first listing a page a round, then what is new, the
    selection's unfinished jobs and the watched jobs by id."""

    def _listing_round(self, started):
        """One page of the first listing of a search: its events (the next page is due at once).  The listing reads a
        page at a time (``query.search_pages``), however many jobs match: memory holds a page and the ids seen.  When
        it is over, the jobs it did not return are forgotten (and left out of the state file), and later rounds ask
        only for what is new."""
        if self.listing is None:
            self.listing = self.query.search_pages(self.arguments.search, resume_on=(ModelArtsError, ConnectionConfigError))
            self.listed_keys = set()
            self.listing_started = int(self.wall() * 1000)
        try:
            page = next(self.listing)
        except StopIteration:
            self._listed()
            self.search_state.due = self._next_round(started) + self._throttled_delay(1)
            return []
        if not isinstance(page, tuple):
            # A failed request (a search.PageFailed): the listing keeps its place and asks for that page again when the
            # search is next due (after the backoff of record_search_error); the pages already read are not read again.
            self.record_search_error(page.error)
            return []
        keys, found, newest, last = page
        self.search_state.failures = 0
        if newest is not None:
            self.newest = max(newest, self.newest or newest)
        self.listed_keys.update(key for key in keys if isinstance(key, str))
        for key in keys:
            self._resumed(key)
        self._listed_jobs(keys, found)
        shown = dict((key, found[key]) for key in keys if key not in self.finished and key not in self.dropped and self._may_report(key, found[key]))
        found.update(self.query.settle(shown))
        events = self.searched(keys, found, complete=False)
        if last:
            self._listed()
            self.search_state.due = self._next_round(started) + self._throttled_delay(1)
        else:
            self.search_state.due = self.clock()
        return self.diagnosed(events)

    def _listed(self):
        """The first listing is over: it returned every job the selection holds, and the state keeps no other."""
        listed, self.listed_keys, self.listing = self.listed_keys, None, None
        if not listed and not self.said_empty:
            self.said_empty = True
            coverage = self.arguments.search.coverage()
            logger.log(
                logging.WARNING if coverage else logging.INFO,
                "no training job %s was found yet; the search runs every %ss%s",
                self.arguments.search.describe(),
                self.arguments.interval,
                " (%s)" % coverage if coverage else "",
            )
        for key in [key for key in self.jobs if key not in listed]:
            logger.info("training job %s is no longer returned by the search for jobs %s: no longer watched", describe(key), self.arguments.search.describe())
            del self.jobs[key]
        for key in [key for key in self.recorded if key not in listed]:
            self._forget(key)
        self.first_round = False
        self.listed = True

    def _search_round(self, started):
        """One round of a search: the first lists every matching job, a page a round (:meth:`_listing_round`); each later
        one asks the search only for the jobs created since the newest seen (one request while fewer than a page of them
        are new) and for the selection's unfinished jobs (a page per 50), and reads the jobs still watched by id
        (``query.phase_source``: a search per 10 jobs in their workspace, GETs where needed) - so a round costs a few
        requests plus one per 10 unfinished jobs, however many finished jobs the search matches."""
        if not self.listed:
            return self._listing_round(started)
        since = None if self.newest is None else self.newest - CREATED_SINCE_MARGIN_MS
        newest = []
        # The two searches of a later round go out together: a round takes the longer of them, not both.
        unfinished = {}
        helper = threading.Thread(target=lambda: unfinished.setdefault("answer", self._unfinished()), name="unfinished-search", daemon=True)
        if since is not None:
            helper.start()
        try:
            keys, found = self.query.search(self.arguments.search, None, None, since, newest)
        except (ModelArtsError, ConnectionConfigError) as error:
            self.record_search_error(error)
            return []
        finally:
            if since is not None:
                helper.join()
        if newest:
            self.newest = max(newest[0], self.newest or newest[0])
        # After the first listing the search only brings new jobs; the jobs already watched are read by id.
        watched = list(self.jobs) if since is not None else []
        listed = keys if since is None else [key for key in keys if key not in self.jobs]
        if since is not None:
            more, answers = unfinished.get("answer", ([], {}))
            for key in more:
                if key not in found and key not in self.jobs and key not in self.finished and key not in self.dropped:
                    logger.info("training job %s now matches the search for jobs %s", describe(key), self.arguments.search.describe())
                    listed.append(key)
                    found[key] = answers[key]
        for key in listed:
            self._resumed(key)
        self._listed_jobs(listed, found)
        # A job the search shows in a final or fail_on phase is judged on its own GET, as with training_job_ids - when
        # its answer could give an event: not a job whose phase is the one reported, nor a starting point (startup: changes).
        shown = dict((key, found[key]) for key in listed if key not in self.finished and key not in self.dropped and self._may_report(key, found[key]))
        found.update(self.query.settle(shown))
        events = self.searched(listed, found, complete=since is None)
        if since is None:
            # Nothing matched at the first listing: this search was every job the selection returns (bounded state).
            for key in [key for key in self.recorded if key not in found]:
                self._forget(key)
        if watched:
            events += self._polled(watched, self._by_id(watched).observe(watched))
        self.search_state.due = self._next_round(started) + self._throttled_delay(1)
        return self.diagnosed(events)

    def _unfinished(self):
        """``(keys, found)`` of the selection's jobs the service shows unfinished (its search with a ``phase`` filter).

        A job that started to match after it was created (tagged later, moved into the workspace) is older than the
        newest seen, so the search for what is new misses it; this search finds it within a round, however many newer
        jobs match.  Its cost follows the unfinished jobs (a page per 50).  A transient failure skips it for a round; a
        service that refuses the filter for good turns it off, with one warning."""
        if self.unfinished_off:
            return [], {}
        try:
            return self.query.search(self.arguments.search.in_phases(UNFINISHED_PHASES))
        except (ModelArtsError, ConnectionConfigError) as error:
            message = _message(error, self.redact)
            if getattr(error, "transient", False):
                logger.info("the search for the unfinished jobs %s failed this round: %s", self.arguments.search.describe(), message)
            else:
                self.unfinished_off = True
                logger.warning(
                    "the search for the unfinished jobs %s was refused (%s): a job that starts to match after its creation is no longer picked up",
                    self.arguments.search.describe(),
                    message,
                )
            return [], {}

    def _by_id(self, watched):
        """The phase source reading the watched jobs of a search by id: kept from round to round (a search by id the
        service refused for good stays off), made again when one GET per job gave way to two jobs or more."""
        source = self.by_id
        if source is None or (len(watched) >= 2 and source.batch == 1 and getattr(source, "disabled", None) is None):
            source = self.by_id = self.query.phase_source(watched, workspace_id=self.arguments.workspace_id)
        return source


class Watcher(_Reporting, _Verdicts, _SearchRounds):
    """Change detection over polls, with the waiter's verdicts (``query.judge``) as the error policy.

    ``query`` is the door (``module_utils.query.Query``): the blocking ``observe(keys)`` of its phase
    source (``query.phase_source``: a search per batch of jobs, or one GET per job - the source does not
    know which), ``search(name)`` and ``client.resolve_project_id()`` run in a worker thread; ``judge``,
    ``redact`` and ``settings`` are read here.  ``clock`` is monotonic seconds.
    """

    # pylint: disable=too-many-instance-attributes

    def __init__(self, arguments, query, clock=time.monotonic, state=None):
        self.arguments = arguments
        self.query = query
        self.clock = clock
        # What was reported, on disk (state_file), or None; the jobs of the first round (startup: changes).
        self.state = state
        self.first_round = True
        self.recorded = dict(state.jobs) if state is not None else {}
        self.backoff_cap = float(query.settings.connection["backoff_max_delay"])
        self.validate = query.settings.validate
        now = clock()
        self.jobs = dict((v2_key(job_id), JobState(now)) for job_id in arguments.ids)
        for key, job in self.jobs.items():
            self._resume(key, job)
        # How phases are learned (one GET per job, or a search per batch of jobs): the door decides.
        self.source = query.phase_source(list(self.jobs), workspace_id=arguments.workspace_id) if self.jobs else None
        self._spread(now)
        self.throttled = query.client.throttled
        self.finished = {}
        self.dropped = {}
        self.search_state = JobState(now) if arguments.search is not None else None
        # The newest create_time (epoch ms) a search returned: later rounds ask only for what is newer (None: list all).
        self.newest = None
        self.by_id = None  # the phase source of the jobs a search selected, after the first listing
        self.unfinished_off = False  # the service refused the search for unfinished jobs for good
        # The first listing of a search, a page a round: its pages (a generator), the ids it returned so far, and whether
        # it is over.
        self.listing = None
        self.listed_keys = None
        self.listed = False
        self.said_empty = False  # whether the log said, once, that the search has found no job yet
        self.last_save = None
        # For the state file's covered (_covered): when the first listing started (epoch ms, this host's clock), and the
        # listed jobs not yet recorded, with their creation times.
        self.wall = time.time
        self.listing_started = None
        self.pending = {}
        self.prepare_state = JobState(now)
        # A poll starts this much early so that its answer, not its start, lands within one interval.
        self.lead = 0.0
        self.round_trips = collections.deque(maxlen=ROUND_TRIPS_KEPT)

    def _spread(self, now):
        """Spread the jobs' first polls over one interval, a batch (what one request reads) at a time, so that the
        requests of a round go out evenly rather than all at once; each job is still polled once an interval."""
        batch = getattr(self.source, "batch", 1)
        keys = list(self.jobs)
        groups = (len(keys) + batch - 1) // batch
        if groups < 2:
            return
        for index, key in enumerate(keys):
            self.jobs[key].due = now + self.arguments.interval * (index // batch) / groups

    def redact(self, text):
        """``text`` with every secret the door knows masked (IAM tokens issued since start-up included)."""
        return self.query.redact(text)

    def done(self):
        """Whether no job is left to poll (never with a search: a matching job may appear later)."""
        return self.arguments.search is None and not self.jobs

    def next_due(self):
        """Monotonic time of the next poll."""
        if self.search_state is not None:
            # With name, one search a round reads every job: the jobs' own states hold no schedule.
            return self.search_state.due
        dues = [state.due for state in self.jobs.values()]
        return min(dues) if dues else self.clock() + self.arguments.interval

    def round(self, started):
        """One round of polls (blocking: the source runs it in a worker thread); the events it gives, in order."""
        if self.arguments.search is not None:
            return self._search_round(started)
        return self._fetch_round(started)

    def prepare(self):
        """Resolve what every request needs (the project id) before the first poll, judging errors like a poll's.

        Returns None once resolved, or the monotonic time to try again after a tolerated error; raises
        :class:`SourceError` when it cannot succeed.
        """
        state = self.prepare_state
        try:
            project_id = self.query.client.resolve_project_id()
        except (ModelArtsError, ConnectionConfigError) as error:  # a configuration error is never tolerated: a SourceError
            return self._prepare_failed(state, error)
        if self.state is not None:
            try:
                self.state.check_project(project_id)
            except StateFileError as error:
                raise SourceError("%s: %s" % (NAME, error)) from None
        return None

    def _prepare_failed(self, state, error):
        state.polls += 1
        message = _message(error, self.redact)
        verdict, _reason = self.query.judge(error, state.polls)
        if verdict != JOB_TOLERATED or getattr(error, "not_found", False):
            raise SourceError("%s: %s" % (NAME, message)) from None
        self._retry(state, message)
        return state.due

    def round_keys(self, started):
        """The jobs to poll now: those due, and - when one request reads a batch of jobs - the soonest due of the
        others to fill the last batch (polled early at no extra request)."""
        keys = [key for key, state in self.jobs.items() if state.due <= started]
        batch = getattr(self.source, "batch", 1)
        short = -len(keys) % batch
        if keys and short:
            others = sorted((state.due, index) for index, (key, state) in enumerate(self.jobs.items()) if state.due > started and not state.failures)
            ordered = list(self.jobs)
            keys += [ordered[index] for _due, index in others[:short]]
        return keys

    def _fetch_round(self, started):
        keys = self.round_keys(started)
        if not keys:
            return []
        results = self.source.observe(keys)
        self._schedule(started, keys)
        events = []
        for key in keys:
            result = results.get(key)
            event = self.record_error(key, result) if isinstance(result, BaseException) else self.observe(key, result)
            if event:
                events.append(event)
        return self.diagnosed(events)

    def _throttled_delay(self, jobs):
        """One ``interval`` when the service throttled requests (HTTP 429) since the last round, else 0: the next
        poll of the round's ``jobs`` waits that much more, so rounds slow down under throttling instead of hammering."""
        throttled, self.throttled = self.throttled, self.query.client.throttled
        if self.throttled <= throttled:
            return 0.0
        logger.info("the service throttled requests (HTTP 429): the next poll of %d job(s) waits one interval more", jobs)
        return self.arguments.interval

    def _schedule(self, started, keys):
        due = self._next_round(started) + self._throttled_delay(len(keys))
        for key in keys:
            state = self.jobs.get(key)
            # A read that fails this round is given its backoff afterwards, by _retry().
            if state is not None:
                state.due = due

    def _next_round(self, started):
        # The next round starts one round-trip early (the slowest of the last few, as round-trips
        # jitter), so its answer, not its start, comes within one interval of this one's; at most
        # half an interval early, so a slow round cannot turn into back-to-back polling.
        self.round_trips.append(self.clock() - started)
        self.lead = min(max(self.round_trips), self.arguments.interval / 2.0)
        return started + self.arguments.interval - self.lead

    def finish(self):
        # Dropped jobs end the source even with stop_when_done false: idling would hide the error.
        if self.dropped:
            lines = "; ".join("%s: %s" % (describe(key), text) for key, text in self.dropped.items())
            raise SourceError("%s: stopped after %d training job(s) could not be read: %s" % (NAME, len(self.dropped), lines))
        logger.info("every watched training job is finished (%s)", ", ".join("%s %s" % (describe(key), phase) for key, phase in self.finished.items()))


def _created_ms(text):
    """Epoch milliseconds of an item's ``create_time`` (``YYYY-MM-DDTHH:MM:SSZ``), or None."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return int((moment - datetime.datetime(1970, 1, 1)).total_seconds() * 1000)


def _message(error, redact):
    # The client's messages are already redacted; redacting again covers errors raised elsewhere.
    return redact(str(error))


def build_watcher(args, environ=None, clock=time.monotonic, **query_kwargs):
    """Check ``args``, open the door with them and return ``(watcher, query)``; :class:`SourceConfigError` when they are wrong.

    ``environ`` (default ``os.environ``) is the environment the door reads below the arguments.
    """
    if not isinstance(args, dict):
        raise SourceConfigError("%s: the arguments must be a mapping" % NAME)
    arguments = Arguments(args)
    door = dict((key, value) for key, value in args.items() if key in DOOR_ARGUMENTS)
    try:
        # The door sizes the HTTP pool to max_concurrency; nothing smaller is passed here.
        # The source has no wait_for: it follows every job to a final phase, and fail_on only says which count as failed.
        query = Query([(LEVEL_ARGUMENT, door)], environ=environ, clock=clock, has_wait_for=False, **query_kwargs)
    except ConnectionConfigError as error:
        raise SourceConfigError("%s: %s" % (NAME, error)) from None
    state = None
    if arguments.state_file is not None:
        try:
            state = StateFile(arguments.state_file, arguments.selection(query.client.endpoint))
        except StateFileError as error:
            query.close()
            raise SourceConfigError("%s: %s" % (NAME, error)) from None
    return Watcher(arguments, query, clock=clock, state=state), query
