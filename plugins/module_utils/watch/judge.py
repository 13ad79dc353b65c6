# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watch's judge: each answer into an event, or none, by the door's verdicts (``query.judge``, the module's wait
policy): a phase change (or a first observation) is an event, a document that breaks the schema is one event per change
and one warning, a tolerated error is retried with backoff (the schedule's), any other error drops the job, and an error
that every job would meet (credentials, project) ends the source.

It keeps the jobs: those watched (``jobs``, with their :class:`~watch_events.JobState`), those finished (``finished``:
their last phase) and those dropped (``dropped``: why); it asks the ledger whether a job is known or a starting point.
"""

from __future__ import annotations

import logging

from ansible_collections.modelarts.training.plugins.module_utils.door.query import SchemaValidationError, UnidentifiedJobError, describe, unseen_item
from ansible_collections.modelarts.training.plugins.module_utils.text import label
from ansible_collections.modelarts.training.plugins.module_utils.waiting.waiter import (
    DEFAULT_NOT_FOUND_TOLERANCE,
    JOB_DONE,
    JOB_FAILED,
    JOB_TOLERATED,
    JOB_UNREACHABLE,
)
from ansible_collections.modelarts.training.plugins.module_utils.watch.events import (
    NAME,
    JobState,
    SourceError,
    is_credential_error,
    logger,
    make_event,
    make_invalid_event,
    message_of,
)

# Verdicts after which a job is not polled again.
FINAL_VERDICTS = frozenset((JOB_DONE, JOB_FAILED, JOB_UNREACHABLE))


def _signature(problems):
    return tuple((entry.get("path"), entry.get("message")) for entry in problems or [])


def _paths(problems):
    problems = list(problems or [])
    text = ", ".join("%s (%s)" % (entry.get("path"), entry.get("message")) for entry in problems[:5]) or "none"
    return text + (" and %d more" % (len(problems) - 5) if len(problems) > 5 else "")


class Judge(object):
    """Answers into events, and the jobs they are about.

    ``query``: the door (``judge``, ``redact``, ``diagnose``); ``ledger``: the ``watch_ledger.Ledger``; ``schedule``: the
    ``watch_schedule.Schedule`` (backoffs); ``validate``: the door's ``validate`` setting; ``clock``: monotonic seconds."""

    def __init__(self, query, ledger, schedule, validate, clock):
        self.query = query
        self.ledger = ledger
        self.schedule = schedule
        self.validate = validate
        self.clock = clock
        self.jobs = {}
        self.finished = {}
        self.dropped = {}
        self.stalls = None  # the stall room (``watch_stalls.Stalls``) when the watch has ``stall``
        self.running = {}  # the Running items read this round of the jobs still watched: what the stall room judges

    def redact(self, text):
        return self.query.redact(text)

    def watch(self, key):
        """The state of ``key``, watched from now on (resumed from the state file when it knows the job)."""
        state = self.jobs.get(key)
        if state is None:
            state = self.jobs[key] = JobState(self.clock())
            self.ledger.resume(key, state)
        return state

    def done_with(self, key):
        """Whether ``key`` is finished or dropped: no answer about it is judged again."""
        return key in self.finished or key in self.dropped

    def may_report(self, key, result):
        """Whether a search's answer for ``key`` could give an event (else no GET is needed to confirm it): not a job
        whose phase is the one reported, nor a starting point."""
        if not isinstance(result, dict):
            return True
        job = self.jobs.get(key)
        if job is None and self.ledger.knows(key):
            job = self.watch(key)
        if job is not None and job.seen:
            return result.get("phase") != job.phase
        return not self.ledger.is_starting_point(key, result, job)

    def observe(self, key, item):
        """Record one readable answer for ``key``; return its event, or None when the phase did not change."""
        state = self.watch(key)
        state.polls += 1
        state.failures = 0
        state.invalid = None
        phase = item.get("phase")
        if phase is None:
            # Only possible under validate warn/off: a phase we cannot read is no phase change.
            problems = item.get("schema_errors")
            self._report(
                key,
                state,
                ("no phase",) + _signature(problems),
                "training job %s: the answer holds no readable phase; schema errors: %s" % (describe(key), _paths(problems)),
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
            if not state.seen and self.ledger.is_starting_point(key, item, state):
                # startup: changes - the first round's jobs are the starting point: recorded, not reported.
                logger.debug("training job %s (%s): %s at start (startup: changes): the starting point", describe(key), label(item.get("name")), phase)
                self.ledger.record(key, phase)
            else:
                event = self.query.redact_value(make_event(item, state.phase if state.seen else None, key))
                logger.info("training job %s (%s): %s -> %s", describe(key), label(item.get("name")), state.phase if state.seen else "(first seen)", phase)
        state.seen = True
        state.phase = phase
        if verdict in FINAL_VERDICTS:
            self.finished[key] = phase
            del self.jobs[key]
            logger.info("training job %s is %s: no longer watched", describe(key), phase)
        elif phase == "Running" and self.stalls is not None:
            self.running[key] = item
        return event

    def invalid(self, key, error):
        """Record a document that cannot be trusted (it breaks the JSON schema under ``validate: strict``, or has no
        readable id); return its event once per change, else None."""
        state = self.watch(key)
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
        return self.query.redact_value(make_invalid_event(item, problems, state.phase if state.seen else None, key))

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
        state = self.watch(key)
        if isinstance(error, SchemaValidationError):
            event = self.invalid(key, error)
            # Read again with backoff, as for tolerated errors; the warning was given once by invalid().
            self.schedule.retry(state, "training job %s still breaks the JSON schema" % describe(key), level=logging.DEBUG)
            return event
        state.polls += 1
        # The judge tolerates "not found" during a job's first polls because a new job may not be visible yet.  A job
        # this source has seen is visible: not found now means deleted, so its grace is over whatever the count of polls.
        polls = state.polls if not state.seen else max(state.polls, DEFAULT_NOT_FOUND_TOLERANCE + 1)
        verdict, _reason = self.query.judge(error, polls)
        message = message_of(error, self.redact)
        if verdict == JOB_TOLERATED:
            if getattr(error, "not_found", False):
                text = "training job %s not found yet (poll %d of %d, a new job may not be visible at once): %s" % (
                    describe(key),
                    state.polls,
                    DEFAULT_NOT_FOUND_TOLERANCE + 1,
                    message,
                )
            else:
                text = "training job %s: %s" % (describe(key), message)
            self.schedule.retry(state, text)
            return None
        if is_credential_error(error):
            raise SourceError("%s: %s" % (NAME, message))
        logger.error("training job %s: %s; it is no longer watched", describe(key), message)
        self.dropped[key] = message
        del self.jobs[key]
        return None

    def record_search_error(self, state, error, search):
        """Apply the waiter's verdict to a failed search (``state``: the search's); raise :class:`SourceError` when it
        cannot succeed."""
        state.polls += 1
        message = message_of(error, self.redact)
        verdict, _reason = self.query.judge(error, state.polls)
        if verdict == JOB_TOLERATED and not getattr(error, "not_found", False):
            return self.schedule.retry(state, "search for training jobs %s: %s" % (search.describe(), message))
        raise SourceError("%s: %s" % (NAME, message))

    def answered(self, keys, found, searched=False):
        """Events for what a round read of ``keys`` (``found``: items, the schema errors of single documents, or the read's
        errors), in order; a key finished or dropped meanwhile is skipped.  ``searched``: the answers are a search's (a
        document that breaks the schema is reported and read again at the next search, not after a backoff)."""
        events = []
        for key in keys:
            if self.done_with(key):
                continue
            result = found.get(key)
            if searched and isinstance(result, (SchemaValidationError, UnidentifiedJobError)):
                # One document's: a schema failure, or (any validate mode) a job with no readable id.
                event = self.invalid(key, result)
            elif isinstance(result, BaseException):
                event = self.record_error(key, result)
            else:
                event = self.observe(key, result)
            if event:
                events.append(event)
        return events

    def stalled(self, events):
        """The round's events, and with ``stall`` the stall room's verdicts on the Running jobs read this round: their
        progress in the items, and one event per new stall (``watch_stalls.Stalls.round``)."""
        running, self.running = self.running, {}
        if self.stalls is None:
            return events
        return self.stalls.round(events, dict((key, item) for key, item in running.items() if key in self.jobs), watched=self.jobs)

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
