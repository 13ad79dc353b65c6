# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Event source ``modelarts.training.training_job_phase``: one event per observed phase change of ModelArts training jobs.

A thin shell over the collection's shared pipeline (client -> validation -> normalised item): it
polls every ``interval`` seconds, in a worker thread so the event loop never blocks, and puts::

    {"modelarts": {"training_job": <item>, "previous_phase": <phase or None>, "phase": <phase>}}

on the queue for every phase change it observes, the first observation included (with
``previous_phase: None``).  ``<item>`` has the shape of the module's items.

Arguments (see docs/event_source.md):

``training_job_ids``
    v2 job ids to watch (a list, or one string with ids separated by commas).  A job that reaches a
    terminal phase (Completed, Failed, Terminated, Abnormal) is no longer polled.  When no job is
    left to watch the source idles, or ends when ``stop_when_done`` is true.
``name``
    Watch every v2 job whose name is exactly this.  The search runs every ``interval``, so jobs
    created later with that name are picked up; the source never ends by itself.
``interval``
    Seconds between polls (default 10, must be > 0).  An event reaches the queue at most about one
    interval after the phase change.
``validate``
    ``strict`` (default), ``warn`` or ``off``, as in the module.  Under ``strict`` a document that
    breaks the schema produces no event; it is logged and read again with backoff.
``fail_on``
    Phases for the item's ``failed`` flag (default Failed, Abnormal, Terminated).
``max_concurrency``
    Parallel requests when polling many ids (default 16).
``stop_when_done``
    With ``training_job_ids``: end the source once every job is finished (default false).  Then
    ansible-rulebook shuts down once running actions finish; one still running after
    ``--shutdown-delay`` seconds (default 60) is cancelled.  Left false, the source idles, which is what an
    EDA controller activation wants (a source that ends completes the activation, and a restart
    would observe - and deploy - the completed jobs again).
Connection options
    The same names as everywhere in the collection (``region``, ``access_key``, ``secret_key``,
    ...); an absent one is read from its environment variable (``HUAWEICLOUD_SDK_AK``, ...).

Errors: transient API errors (throttling, 5xx, connection errors, unreadable bodies), schema
failures and a job not found during its first polls are logged and retried with exponential
backoff; the source keeps running.  A job that cannot be read for good (not found after it was
seen or after the first polls, no permission) is logged as an error and no longer watched; when
no job is left it raises, naming those jobs, so the source ends with an error.  Configuration errors (arguments, missing or
conflicting credentials, credentials the service refuses, an unknown project) end the source at
once with a message naming the option.  No secret value ever reaches an event or a log line.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import sys
import time

NAME = "modelarts.training.training_job_phase"


def _collection_parent(path):
    """The directory holding ``ansible_collections`` when ``path`` is this file inside an installed collection, else None."""
    parts = os.path.abspath(path).split(os.sep)
    # .../ansible_collections/modelarts/training/extensions/eda/plugins/event_source/training_job_phase.py
    if len(parts) > 8 and parts[-8] == "ansible_collections":
        return os.sep.join(parts[:-8]) or os.sep
    return None


# ansible-rulebook loads this file with runpy.run_path() and puts nothing on sys.path, and it does
# not install ansible-core's collection loader, so ``ansible_collections`` imports resolve only
# when the directory holding the collection tree is importable.  Putting the tree this very file
# lives in first makes the shared code the same version as this source.
_PARENT = _collection_parent(__file__)
if _PARENT and _PARENT not in sys.path:
    sys.path.insert(0, _PARENT)

# pylint: disable=wrong-import-position
from ansible_collections.modelarts.training.plugins.module_utils.client import ModelArtsClient  # noqa: E402
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError  # noqa: E402
from ansible_collections.modelarts.training.plugins.module_utils.fanout import DEFAULT_MAX_CONCURRENCY, fetch_concurrently  # noqa: E402
from ansible_collections.modelarts.training.plugins.module_utils.jobs import DEFAULT_FAIL_ON, PHASES, VALIDATE_MODES  # noqa: E402
from ansible_collections.modelarts.training.plugins.module_utils.options import (  # noqa: E402
    CONNECTION_OPTIONS,
    ConnectionConfigError,
)
from ansible_collections.modelarts.training.plugins.module_utils.query import describe, fetch_item, keys_for_name, v2_key  # noqa: E402
from ansible_collections.modelarts.training.plugins.module_utils.validation import SchemaValidationError  # noqa: E402
from ansible_collections.modelarts.training.plugins.module_utils.waiter import DEFAULT_NOT_FOUND_TOLERANCE, GROWTH_FACTOR  # noqa: E402

# pylint: enable=wrong-import-position

logger = logging.getLogger(NAME)

DEFAULT_INTERVAL = 10.0
ROUND_TRIPS_KEPT = 5
SOURCE_ARGS = ("training_job_ids", "name", "interval", "validate", "fail_on", "max_concurrency", "stop_when_done")
# Errors that say the credentials or the project are wrong: every job would fail the same way, so
# the source ends at once instead of dropping the jobs one by one.
CREDENTIAL_ERROR_CODES = frozenset(("APIG.0301", "APIG.0303", "APIG.0307", "ModelArts.2786", "ModelArts.0210"))
_TRUE = ("1", "true", "yes", "on", "y", "t")
_FALSE = ("0", "false", "no", "off", "n", "f", "")


class SourceConfigError(Exception):
    """The source cannot run with these arguments or this environment; the message names the option."""


class SourceError(Exception):
    """The source stopped because the service refused it for good (credentials, project, or every job unreadable)."""


# -- arguments ---------------------------------------------------------------------------------


def _to_bool(name, value):
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise SourceConfigError("%s: %s must be a boolean (true/false), got %r" % (NAME, name, value))


def _to_number(name, value, kind):
    if isinstance(value, bool):
        raise SourceConfigError("%s: %s must be a number, got %r" % (NAME, name, value))
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise SourceConfigError("%s: %s must be %s, got %r" % (NAME, name, "an integer" if kind is int else "a number", value)) from None


def _coerce_option(name, value):
    """Convert an argument or environment string to the option's type (connection options only)."""
    spec = CONNECTION_OPTIONS[name][0]
    kind = spec.get("type", "str")
    if kind == "bool":
        return _to_bool(name, value)
    if kind in ("int", "float"):
        return _to_number(name, value, int if kind == "int" else float)
    if not isinstance(value, str):
        # Secrets are strings: naming the type, not the value, keeps a mistyped secret out of the message.
        raise SourceConfigError("%s: %s must be a string, got a %s" % (NAME, name, type(value).__name__))
    if kind == "path":
        return os.path.expanduser(value)
    return value


def connection_params(args, environ=None):
    """The connection options from the source ``args``, falling back to each option's environment variable.

    The names and variables are those of ``options.CONNECTION_OPTIONS``; empty values count as unset.
    """
    environ = os.environ if environ is None else environ
    params = {}
    for name, (_spec, env) in CONNECTION_OPTIONS.items():
        value = args.get(name)
        if value in (None, "") and env:
            value = environ.get(env)
        if value in (None, ""):
            continue
        params[name] = _coerce_option(name, value)
    return params


def _id_list(value):
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)):
        raise SourceConfigError("%s: training_job_ids must be a list of job ids or a comma-separated string" % NAME)
    ids = []
    for entry in value:
        if not isinstance(entry, (str, int)) or isinstance(entry, bool):
            raise SourceConfigError("%s: training_job_ids must hold job id strings, got a %s" % (NAME, type(entry).__name__))
        text = str(entry).strip()
        if text:
            ids.append(text)
    return list(dict.fromkeys(ids))


def _phase_list(value):
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(phase, str) for phase in value):
        raise SourceConfigError("%s: fail_on must be a list of phases" % NAME)
    unknown = [phase for phase in value if phase not in PHASES]
    if unknown:
        raise SourceConfigError("%s: fail_on has unknown phases %s; use some of %s" % (NAME, ", ".join(unknown), ", ".join(PHASES)))
    return tuple(value)


class Settings(object):
    """The validated source arguments, connection options apart."""

    def __init__(self, args):
        unknown = sorted(key for key in args if key not in SOURCE_ARGS and key not in CONNECTION_OPTIONS and not str(key).startswith("eda_"))
        if unknown:
            raise SourceConfigError("%s: unknown arguments %s" % (NAME, ", ".join(str(key) for key in unknown)))
        has_ids = args.get("training_job_ids") not in (None, "", [])
        has_name = args.get("name") not in (None, "")
        if has_ids == has_name:
            raise SourceConfigError("%s: set exactly one of training_job_ids or name" % NAME)
        self.ids = _id_list(args["training_job_ids"]) if has_ids else []
        if has_ids and not self.ids:
            raise SourceConfigError("%s: training_job_ids holds no job id" % NAME)
        self.name = str(args["name"]) if has_name else None
        interval = args.get("interval")
        self.interval = DEFAULT_INTERVAL if interval in (None, "") else _to_number("interval", interval, float)
        if not self.interval > 0:
            raise SourceConfigError("%s: interval must be a number of seconds greater than 0, got %r" % (NAME, interval))
        self.validate = str(args.get("validate") or "strict")
        if self.validate not in VALIDATE_MODES:
            raise SourceConfigError("%s: validate must be one of %s, got %r" % (NAME, ", ".join(VALIDATE_MODES), self.validate))
        self.fail_on = _phase_list(args["fail_on"]) if args.get("fail_on") is not None else DEFAULT_FAIL_ON
        concurrency = args.get("max_concurrency")
        self.max_concurrency = DEFAULT_MAX_CONCURRENCY if concurrency in (None, "") else _to_number("max_concurrency", concurrency, int)
        if self.max_concurrency < 1:
            raise SourceConfigError("%s: max_concurrency must be at least 1, got %r" % (NAME, concurrency))
        stop = args.get("stop_when_done")
        self.stop_when_done = False if stop in (None, "") else _to_bool("stop_when_done", stop)


def build_client(args, environ=None, **client_kwargs):
    """A :class:`ModelArtsClient` from the source arguments and environment; :class:`SourceConfigError` when they are wrong."""
    try:
        return ModelArtsClient(connection_params(args, environ), **client_kwargs)
    except ConnectionConfigError as error:
        raise SourceConfigError("%s: %s" % (NAME, error)) from None


# -- events ------------------------------------------------------------------------------------


def make_event(item, previous_phase):
    """The event for one observed phase change."""
    return {"modelarts": {"training_job": item, "previous_phase": previous_phase, "phase": item.get("phase")}}


def scrub(value, redact):
    """``value`` (JSON-like) with ``redact`` applied to every string: a last guard so no event carries a secret."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return dict((key, scrub(entry, redact)) for key, entry in value.items())
    if isinstance(value, list):
        return [scrub(entry, redact) for entry in value]
    return value


def _unchanged(text):
    return text


def is_credential_error(error):
    """True when a ModelArtsError says the credentials or project are wrong for every job, not just one."""
    return getattr(error, "status", None) == 401 or getattr(error, "error_code", None) in CREDENTIAL_ERROR_CODES


def backoff_delay(interval, failures, cap):
    """Seconds before trying again after ``failures`` consecutive retryable errors: interval * 1.5^(n-1), capped."""
    return min(max(cap, interval), interval * GROWTH_FACTOR ** max(0, failures - 1))


class JobState(object):
    """What the source knows of one watched job."""

    __slots__ = ("phase", "seen", "failures", "not_found", "due")

    def __init__(self, due):
        self.phase = None
        self.seen = False
        self.failures = 0
        self.not_found = 0
        self.due = due


class Watcher(object):
    """Change detection and error policy over polls; the I/O is handed in by :meth:`run`.

    ``clock`` is monotonic seconds.  ``fetch`` / ``search`` / ``prepare`` are blocking callables run
    in a worker thread: ``fetch(keys) -> {key: item or Exception}``, ``search() -> (keys, items)``
    and ``prepare()`` (once, before the first poll).  ``redact(text)`` masks secret values.
    """

    # pylint: disable=too-many-instance-attributes

    def __init__(self, settings, fetch=None, search=None, clock=time.monotonic, backoff_cap=30.0, redact=_unchanged, prepare=None):
        self.settings = settings
        self.fetch = fetch
        self.search = search
        self.prepare = prepare
        self.clock = clock
        self.backoff_cap = backoff_cap
        # The client's redact(): it also masks IAM tokens issued after start-up.
        self.redact = redact
        now = clock()
        self.jobs = dict((key, JobState(now)) for key in settings.ids)
        self.finished = {}
        self.dropped = {}
        self.search_state = JobState(now) if settings.name else None
        # A poll starts this much early so that its answer, not its start, lands within one interval.
        self.lead = 0.0
        self.round_trips = collections.deque(maxlen=ROUND_TRIPS_KEPT)

    # -- pure decisions --------------------------------------------------------

    def observe(self, key, item):
        """Record one successful read of ``key``; return its event, or None when the phase did not change."""
        state = self.jobs.setdefault(key, JobState(self.clock()))
        state.failures = 0
        state.not_found = 0
        phase = item.get("phase")
        if phase is None:
            # Only possible under validate warn/off: a phase we cannot read is no phase change.
            logger.warning("training job %s: the answer holds no readable phase; schema errors: %s", key, _paths(item))
            return None
        event = None
        if not state.seen or phase != state.phase:
            event = scrub(make_event(item, state.phase if state.seen else None), self.redact)
            logger.info("training job %s (%s): %s -> %s", key, item.get("name"), state.phase if state.seen else "(first seen)", phase)
        state.seen = True
        state.phase = phase
        if item.get("terminal"):
            self.finished[key] = phase
            del self.jobs[key]
            logger.info("training job %s is %s: no longer watched", key, phase)
        return event

    def record_error(self, key, error):
        """Apply the error policy to one failed read of ``key``; raise :class:`SourceError` when the source must end."""
        state = self.jobs[key]
        message = _message(error, self.redact)
        if is_credential_error(error):
            raise SourceError("%s: %s" % (NAME, message))
        if getattr(error, "not_found", False) and not state.seen and state.not_found < DEFAULT_NOT_FOUND_TOLERANCE:
            state.not_found += 1
            return self._retry(state, "training job %s not found yet (try %d of %d, a new job may not be visible at once): %s" % (
                key, state.not_found, DEFAULT_NOT_FOUND_TOLERANCE + 1, message))
        if getattr(error, "transient", False) or isinstance(error, SchemaValidationError):
            return self._retry(state, "training job %s: %s" % (key, message))
        logger.error("training job %s: %s; it is no longer watched", key, message)
        self.dropped[key] = message
        del self.jobs[key]
        return None

    def record_search_error(self, error):
        """Apply the error policy to a failed name search; raise :class:`SourceError` when it cannot succeed."""
        message = _message(error, self.redact)
        if getattr(error, "transient", False) or isinstance(error, SchemaValidationError):
            return self._retry(self.search_state, "search for training jobs named %r: %s" % (self.settings.name, message))
        raise SourceError("%s: %s" % (NAME, message))

    def _retry(self, state, text):
        state.failures += 1
        delay = backoff_delay(self.settings.interval, state.failures, self.backoff_cap)
        state.due = self.clock() + delay
        logger.warning("%s; retrying in %.1fs (attempt %d)", text, delay, state.failures)

    def searched(self, keys, items):
        """Events for the jobs a name search returned; forgets unfinished jobs the search no longer returns (deleted)."""
        state = self.search_state
        state.failures = 0
        events = []
        for key in keys:
            if key in self.finished:
                continue
            event = self.observe(key, items[key])
            if event:
                events.append(event)
        for key in [key for key in self.jobs if key not in items]:
            logger.info("training job %s is no longer returned by the search for %r: no longer watched", key, self.settings.name)
            del self.jobs[key]
        return events

    def done(self):
        """Whether no job is left to poll (never with ``name``: a job of that name may appear later)."""
        return not self.settings.name and not self.jobs

    def next_due(self):
        """Monotonic time of the next poll."""
        dues = [state.due for state in self.jobs.values()]
        if self.search_state is not None:
            dues.append(self.search_state.due)
        return min(dues) if dues else self.clock() + self.settings.interval

    # -- the loop --------------------------------------------------------------

    async def run(self, queue):
        """Poll until :meth:`done`; put every event on ``queue``."""
        if self.prepare is not None:
            await self._prepare()
        while not self.done():
            wait = self.next_due() - self.clock()
            if wait > 0:
                await asyncio.sleep(wait)
            started = self.clock()
            events = await (self._search_round(started) if self.settings.name else self._fetch_round(started))
            for event in events:
                await queue.put(event)
        self._finish()
        if not self.settings.stop_when_done:
            logger.info("nothing left to watch; idling until ansible-rulebook stops (stop_when_done is false)")
            await asyncio.Event().wait()

    async def _prepare(self):
        """Resolve what every request needs (the project id) before the first poll, retrying transient errors."""
        state = JobState(self.clock())
        while True:
            try:
                await asyncio.to_thread(self.prepare)
                return
            except ModelArtsError as error:
                if not error.transient:
                    raise SourceError("%s: %s" % (NAME, _message(error, self.redact))) from None
                self._retry(state, _message(error, self.redact))
            await asyncio.sleep(max(0.0, state.due - self.clock()))

    async def _fetch_round(self, started):
        keys = [key for key, state in self.jobs.items() if state.due <= started]
        if not keys:
            return []
        results = await asyncio.to_thread(self.fetch, keys)
        self._schedule(started, keys)
        events = []
        for key in keys:
            result = results.get(key)
            if isinstance(result, BaseException):
                self.record_error(key, result)
                continue
            event = self.observe(key, result)
            if event:
                events.append(event)
        return events

    async def _search_round(self, started):
        try:
            keys, items = await asyncio.to_thread(self.search)
        except (ModelArtsError, SchemaValidationError) as error:
            self.record_search_error(error)
            return []
        self.search_state.due = self._next_round(started)
        return self.searched(keys, items)

    def _schedule(self, started, keys):
        due = self._next_round(started)
        for key in keys:
            state = self.jobs.get(key)
            if state is not None:
                state.due = due

    def _next_round(self, started):
        # The next round starts one round-trip early (the slowest of the last few, as round-trips
        # jitter), so its answer, not its start, comes within one interval of this one's; at most
        # half an interval early, so a slow round cannot turn into back-to-back polling.
        self.round_trips.append(self.clock() - started)
        self.lead = min(max(self.round_trips), self.settings.interval / 2.0)
        return started + self.settings.interval - self.lead

    def _finish(self):
        # Dropped jobs end the source even with stop_when_done false: idling would hide the error.
        if self.dropped:
            lines = "; ".join("%s: %s" % (key, text) for key, text in self.dropped.items())
            raise SourceError("%s: stopped after %d training job(s) could not be read: %s" % (NAME, len(self.dropped), lines))
        logger.info("every watched training job is finished (%s)",
                    ", ".join("%s %s" % (key, phase) for key, phase in self.finished.items()))


def _message(error, redact):
    # The client's messages are already redacted; redacting again covers errors raised elsewhere.
    return redact(str(error))


def _paths(item):
    errors = item.get("schema_errors") or []
    return ", ".join("%s (%s)" % (entry.get("path"), entry.get("message")) for entry in errors[:5]) or "none"


def build_watcher(args, environ=None, clock=time.monotonic, **client_kwargs):
    """Validate ``args`` and return ``(watcher, client)``; :class:`SourceConfigError` when they are wrong."""
    if not isinstance(args, dict):
        raise SourceConfigError("%s: the arguments must be a mapping" % NAME)
    settings = Settings(args)
    client = build_client(args, environ, **client_kwargs)

    def fetch_one(key, deadline):
        return fetch_item(client, key, validate=settings.validate, fail_on=settings.fail_on, deadline=deadline)

    def fetch(keys):
        return fetch_concurrently(keys, fetch_one, max_concurrency=settings.max_concurrency)

    def search():
        return keys_for_name(client, settings.name, validate=settings.validate, fail_on=settings.fail_on)

    def prepare():
        return client.project_id

    watcher = Watcher(settings, fetch=fetch, search=search, clock=clock, backoff_cap=float(client.params["backoff_max_delay"]),
                      redact=client.redact, prepare=prepare)
    return watcher, client


async def main(queue, args):
    """ansible-rulebook entry point: watch the jobs ``args`` select and put phase-change events on ``queue``."""
    watcher, client = build_watcher(dict(args or {}))
    what = "training jobs named %r" % watcher.settings.name if watcher.settings.name else \
        "training job(s) %s" % ", ".join(describe(v2_key(key)) for key in watcher.settings.ids)
    logger.info("watching %s every %ss at %s", what, watcher.settings.interval, client.endpoint)
    try:
        await watcher.run(queue)
    finally:
        client.close()


if __name__ == "__main__":
    # Standalone debugging, like other EDA sources:
    #   python training_job_phase.py '{"training_job_ids": ["<id>"], "interval": 5}'
    # with HUAWEICLOUD_* variables for the connection; events are printed as JSON lines.

    class MockQueue(object):
        """Prints what the source would hand to ansible-rulebook."""

        async def put(self, event):
            """Print one event."""
            print(json.dumps(event, sort_keys=True), flush=True)

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    asyncio.run(main(MockQueue(), json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}))
