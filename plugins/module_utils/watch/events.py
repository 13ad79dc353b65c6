# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the rooms of the watch share (``source.py`` and its rooms): the source's name and logger, its two errors, what it
knows of one job (:class:`JobState`), and the events it puts on ansible-rulebook's queue.

Nothing here keeps state across calls: the rooms - the schedule (``schedule.py``), the ledger
(``ledger.py``), the judge (``judge.py``), the stall room (``stalls.py``) and the lister (``lister.py``) - do, and
``source.Watcher`` has them call each other.
"""

from __future__ import annotations

import datetime
import logging

from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.job.phases import PHASES, TERMINAL_PHASES
from ansible_collections.modelarts.training.plugins.module_utils.text import inert
from ansible_collections.modelarts.training.plugins.module_utils.waiting.waiter import GROWTH_FACTOR
from ansible_collections.modelarts.training.plugins.module_utils.watch.state import event_id

NAME = "modelarts.training.training_job_phase"
# The event source's logger: its records are the source's (ansible-rulebook shows them under this name).
logger = logging.getLogger(NAME)
# The source's start line (``watch.Watcher.started_line``) alone, at INFO: ansible-rulebook shows WARNING and above by
# default (INFO from -v), and a watch should say once what it watches without the source's other INFO lines.
START_LOGGER = NAME + ".start"


def start_logger():
    """The logger of the start line, enabled for INFO whatever the level ansible-rulebook set (never lowered below it)."""
    started = logging.getLogger(START_LOGGER)
    if not started.isEnabledFor(logging.INFO):
        started.setLevel(logging.INFO)
    return started


# The phases a job can still leave: the search for the selection's unfinished jobs asks for these.
UNFINISHED_PHASES = tuple(phase for phase in PHASES if phase not in TERMINAL_PHASES)
# A search asks for the jobs created since the newest one seen, less this margin (a job may show in the search a little
# after its create_time); a job the state file does not know and created before what it covered, less this, is old.
CREATED_SINCE_MARGIN_MS = 60 * 1000
# Errors that say the credentials or the project are wrong: every job would fail the same way, so
# the source ends at once instead of dropping the jobs one by one.
CREDENTIAL_ERROR_CODES = frozenset(("APIG.0301", "APIG.0303", "APIG.0307", "APIGW.0301", "APIGW.0303", "APIGW.0307", "ModelArts.2786", "ModelArts.0210"))
# The item's texts a rule may pass to run_playbook that hold the service's words: made inert in events.
INERT_FIELDS = ("name", "failure_reason", "error")


class SourceConfigError(ValueError):
    """The source cannot run with these arguments or this environment; the message names the argument."""


class SourceError(Exception):
    """The source stopped because the service refused it for good (credentials, project, or every job unreadable)."""


class JobState(object):
    """What the source knows of one watched job (the judge's and the schedule's: ``due`` and ``failures`` are the
    schedule's, the rest the judge's)."""

    __slots__ = ("phase", "seen", "polls", "failures", "due", "reported", "invalid")

    def __init__(self, due):
        self.phase = None  # the last phase read from a document that was accepted
        self.seen = False
        self.polls = 0  # observations so far (answers and errors), as the waiter counts polls
        self.failures = 0  # consecutive tolerated errors, for the backoff
        self.due = due
        self.reported = None  # the schema problems last warned about, so a lasting problem warns once
        self.invalid = None  # (phase, problems) of the last invalid-document event


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


def is_credential_error(error):
    """True when an error says the credentials or project are wrong for every job, not just one (a configuration error
    met at a request - a token file that cannot be read, a project nobody named - is every job's too)."""
    if isinstance(error, ConnectionConfigError):
        return True
    return getattr(error, "status", None) == 401 or getattr(error, "error_code", None) in CREDENTIAL_ERROR_CODES


def refuses_caller(error):
    """True when the service refused the caller rather than the request: the credentials (HTTP 401, or a code of
    :data:`CREDENTIAL_ERROR_CODES`) or their permissions (HTTP 403), or a configuration error met at a request.  Every
    request would meet it, so it is never read as a filter the service does not take: the source stops on it."""
    return is_credential_error(error) or getattr(error, "status", None) == 403


def backoff_delay(interval, failures, cap):
    """Seconds before trying again after ``failures`` consecutive tolerated errors: interval * 1.5^(n-1), capped."""
    return min(max(cap, interval), interval * GROWTH_FACTOR ** max(0, failures - 1))


def created_ms(text):
    """Epoch milliseconds of an item's ``create_time`` (``YYYY-MM-DDTHH:MM:SSZ``), or None."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return int((moment - datetime.datetime(1970, 1, 1)).total_seconds() * 1000)


def item_of(result):
    """The item of a search's or a GET's answer for one job: the item itself, or the one a document that broke the schema
    still carries; None for any other error."""
    return result if isinstance(result, dict) else getattr(result, "item", None)


def message_of(error, redact):
    """The one-line message of ``error``: the client's messages are already redacted; redacting again covers errors
    raised elsewhere."""
    return redact(str(error))
