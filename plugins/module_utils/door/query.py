# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one door: every plugin hands its options to :class:`Query` and translates what comes back.

options (``options.resolve``) -> client (``client.ModelArtsClient``) -> request -> validation and
normalisation (``jobs.build_item``) -> endpoint tokens masked -> (``waiter`` polls again) -> diagnostics of
failed items (``diagnostics.diagnose``) -> result.

The module calls ``Query(levels, selection).run()`` and turns the :class:`QueryResult` into
``exit_json``/``fail_json``; the lookup does the same with its terms; the event source keeps a
``Query`` and polls through :meth:`Query.phase_source` (``observer``: a search per 10 jobs, or
:meth:`Query.fetch`, one GET per job) and :meth:`Query.search` on its own schedule, judging phases
with :meth:`Query.judge`.  Everything they share - dependency checks, option rules, the name
search, the deadline, warnings, masking - happens here, once.
"""

from __future__ import annotations

import threading
import time

from ansible_collections.modelarts.training.plugins.module_utils.service.client import HAS_REQUESTS, REQUESTS_IMPORT_ERROR, ModelArtsClient
from ansible_collections.modelarts.training.plugins.module_utils.service.endpoints import escape
from ansible_collections.modelarts.training.plugins.module_utils.door.connection_checks import option_named, unused_region
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.service.fanout import DEFAULT_MAX_CONCURRENCY, fetch_concurrently

# UnidentifiedJobError and unseen_item stay importable from here (the event source's watch.py imports them).
from ansible_collections.modelarts.training.plugins.module_utils.job.items import (  # noqa: F401  # pylint: disable=unused-import
    UnidentifiedJobError,
    _keyed,
    fetch_item,
    keep_paths,
    keys_for_search,
    schema_warnings,
    unseen_item,
)
from ansible_collections.modelarts.training.plugins.module_utils.door.options import LEVEL_ENVIRONMENT, ConnectionConfigError, environment_level, resolve
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import proxy_secret
from ansible_collections.modelarts.training.plugins.module_utils.job.phases import DEFAULT_FAIL_ON, DEFAULT_WAIT_FOR, PHASES, TERMINAL_PHASES

# Selection moved to selection.py: these names stay importable from here.
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import (  # noqa: F401  # pylint: disable=unused-import
    JOB_ID_PATTERN,
    Search,
    Selection,
    check_job_id,
    closest_text,
    v1_key,
    v2_key,
)
from ansible_collections.modelarts.training.plugins.module_utils.door.selection_checks import SELECTION_OPTIONS, select, v1_selection_key  # noqa: F401  # pylint: disable=unused-import
from ansible_collections.modelarts.training.plugins.module_utils.text import Secrets, label, name_key, redact_value
from ansible_collections.modelarts.training.plugins.module_utils.job.validation import HAS_JSONSCHEMA, JSONSCHEMA_IMPORT_ERROR, SchemaValidationError
from ansible_collections.modelarts.training.plugins.module_utils.waiting.wait_options import DEFAULT_WAIT_TIMEOUT, WaitSettings

MESSAGE_JOBS_SHOWN = 20
# A call that does not wait (query_jobs' default): its fail_on still names the failed jobs.
NO_WAIT = WaitSettings(False, tuple(DEFAULT_WAIT_FOR), tuple(DEFAULT_FAIL_ON), DEFAULT_WAIT_TIMEOUT, 5.0, 60.0)


class MissingLibraryError(ConnectionConfigError):
    """A Python library the call needs is not installed: ``library`` names it, ``traceback`` is the import error."""

    def __init__(self, library, traceback_text, hint=""):
        super().__init__("the Python library '%s' is required%s" % (library, hint))
        self.library = library
        self.traceback = traceback_text


def _diagnostics():
    """Events and log tails of failed jobs, imported only when an item is in a fail_on phase (see :func:`_waiter`)."""
    from ansible_collections.modelarts.training.plugins.module_utils.results import diagnostics

    return diagnostics


def _metric_checks():
    """The door's check of ``metrics`` and ``baseline`` into a ``results.metrics.Plan``, imported only when one of them is
    given (see :func:`_waiter`): it brings ``metrics.py``, ``metric_reads.py`` and ``matching.py`` with it."""
    from ansible_collections.modelarts.training.plugins.module_utils.door import metric_checks

    return metric_checks


def _observer():
    """How phases are learned (``observer.py``), imported when a call waits, watches or adopts a search's items."""
    from ansible_collections.modelarts.training.plugins.module_utils.waiting import observer

    return observer


def _progress():
    """Whether Running jobs make progress (``waiting/progress.py``), imported only when ``stall`` is given."""
    from ansible_collections.modelarts.training.plugins.module_utils.waiting import progress

    return progress


def _waiter():
    """The wait loop, imported when a call waits or judges: AnsiballZ compiles every module_utils file a
    module imports on each run, so a task that does not wait does not pay for it (docs/performance.md)."""
    from ansible_collections.modelarts.training.plugins.module_utils.waiting import waiter

    return waiter


# How the door names a job by its key, for messages (text.name_key; the event source uses it too).
describe = name_key


class QueryResult(object):
    """The outcome of a query.

    ``items`` holds one item per job in the order asked (an :func:`unseen_item` for a job never
    fetched); ``ok`` says whether the call succeeded; ``msg`` explains a failure (None on success);
    ``job_messages`` has one line per job that is not done on a failure; ``errors`` maps keys to the
    exceptions that made it fail; ``wait`` is the ``WaitResult`` when waiting; ``warnings`` are
    texts to show the user; ``single`` says whether one job was asked for; ``measured`` is what ``metrics`` found
    (``metrics.Measured``: the baseline job's item, the lines of the broken bounds), None when the call has no ``metrics``.
    """

    def __init__(self, items, ok, msg=None, errors=None, wait=None, job_messages=None, warnings=None, single=False, measured=None):
        self.items = items
        self.measured = measured
        self.ok = ok
        self.msg = msg
        self.errors = errors or {}
        self.wait = wait
        self.job_messages = job_messages or []
        self.warnings = warnings or []
        self.single = single

    def first_error(self):
        """The first exception behind a failure, or None."""
        return next(iter(self.errors.values()), None)

    def failure_fields(self):
        """``error_code``/``request_id`` of a single API error and ``schema_errors`` of a schema failure, for a failed result."""
        fields = {}
        error = self.first_error()
        if isinstance(error, ModelArtsError) and len(self.errors) == 1:
            fields.update(error_code=error.error_code, request_id=error.request_id)
        if isinstance(error, SchemaValidationError):
            fields.update(schema_errors=error.errors)
        return fields


def _errors_message(errors):
    shown = list(errors.items())[:MESSAGE_JOBS_SHOWN]
    text = "; ".join(str(exc) for _key, exc in shown)
    if len(errors) > len(shown):
        text += "; and %d more" % (len(errors) - len(shown))
    if len(errors) > 1:
        text = "%d training jobs could not be read: %s" % (len(errors), text)
    return text


def query_jobs(
    client,
    keys,
    validate="strict",
    waiting=NO_WAIT,
    max_concurrency=DEFAULT_MAX_CONCURRENCY,
    initial=None,
    clock=time.monotonic,
    sleeper=time.sleep,
    start=None,
    include_tokens=False,
    grace=None,
    tokens=None,
    search=None,
    name_pages=None,
    workspace_id=None,
    name_option="name",
    stall=None,
):
    """Fetch the jobs of ``keys`` concurrently over the client's one session; wait when asked.

    ``waiting`` is the wait's typed part (``WaitSettings``: ``wait``, ``wait_for``, ``fail_on``, ``timeout``, ``sleep``,
    ``sleep_max``), handed whole to the waiter; its ``fail_on`` also names the failed jobs of a call that does not wait.
    Without ``wait`` any error fails the call, and each request is bounded by the client's request
    budget.  With ``wait`` there is one deadline, ``timeout`` seconds after ``start`` (a
    ``clock`` reading, default now), for the whole call; only the last look, right at the deadline,
    may run ``grace`` seconds past it (default: one ``request_timeout``).  Transient errors and a few
    not-founds right after creation are tolerated, and any job reaching a ``fail_on`` phase ends the
    wait at once.  ``initial`` may hold items (or errors) already known from a name search made
    after ``start``, keyed like ``keys``; ``search`` is then that :class:`Search`, and ``name_pages`` the requests it took;
    ``workspace_id`` the workspace bulk searches by id look in.  Those items are taken by the rule of every round
    (``observer.adopt``): with ``wait`` a job in a phase the wait acts on is read by its GET in the first round; without it
    every job is (the caller acts on whatever phase it gets), so what comes back is never a search's word.
    ``name_option`` is the caller's option that selects jobs by name (:func:`items.fetch_item`).  ``stall``
    (``StallSettings``, or None) reads the progress of the ``Running`` jobs (``waiting/progress.py``) and, with ``wait``,
    ends the wait on a job that stopped making progress.
    """
    keys = list(dict.fromkeys(keys))
    start = clock() if start is None else start
    wait, wait_for, fail_on = waiting.wait, waiting.wait_for, waiting.fail_on

    def fetch_one(key, when):
        return fetch_item(client, key, validate=validate, fail_on=fail_on, deadline=when, include_tokens=include_tokens, tokens=tokens, name_option=name_option)

    def poll(some, when):
        return fetch_concurrently(some, fetch_one, max_concurrency=max_concurrency, deadline=when, clock=clock)

    if not wait:
        known = {}
        if initial:
            # The search only chose the jobs.  A call that does not wait hands back every item it reads, so its caller
            # acts on every phase: by the rule of every round (observer.adopt) each job the search found is left to its
            # own GET, sent here with the others' (max_concurrency at a time) - a search never reports a job's phase.
            every = set(PHASES) | set(item.get("phase") for item in initial.values() if isinstance(item, dict))
            known = _observer().for_client(client, [], every, poll).adopt(initial)
        missing = [key for key in keys if key not in known]
        known.update(poll(missing, None) if missing else {})
        errors = dict((key, value) for key, value in known.items() if isinstance(value, BaseException))
        items = [unseen_item(key, known[key]) if key in errors else known[key] for key in keys]
        if stall is not None:
            _progress().Progress(client, stall, max_concurrency, clock).read(items)
        return QueryResult(items, not errors, _errors_message(errors) if errors else None, errors, job_messages=[str(exc) for exc in errors.values()])

    if grace is None:
        grace = float(client.service.request_timeout)
    acted = set(wait_for) | set(fail_on or ()) | set(TERMINAL_PHASES)
    source = _observer().for_client(
        client,
        keys,
        acted,
        poll,
        # A job the search shows in a final phase waited for is done; its GET may wait for room in a round.
        settled=(set(wait_for) & set(TERMINAL_PHASES)) - set(fail_on or ()),
        validate=validate,
        fail_on=fail_on,
        max_concurrency=max_concurrency,
        clock=clock,
        include_tokens=include_tokens,
        tokens=tokens,
        search=search,
        name_pages=name_pages,
        workspace_id=workspace_id,
    )
    seen_throttled = [client.throttled]

    def throttled():
        # Whether the service throttled this client since the last round: the waiter then slows its rounds.
        count = client.throttled
        was, seen_throttled[0] = seen_throttled[0], count
        return count > was

    progress = _progress().Progress(client, stall, max_concurrency, clock) if stall is not None else None
    if initial:
        # A name search's items, by the rule of every round: a job it shows in a phase the wait acts on is judged on
        # its own GET, which the first round sends at once (a search never decides a wait).
        initial = source.adopt(initial)
    outcome = _waiter().wait_for_jobs(
        keys,
        source.observe if progress is None else progress.watching(source.observe),
        waiting,
        clock=clock,
        sleeper=sleeper,
        initial=initial,
        terminal_phases=TERMINAL_PHASES,
        start=start,
        grace=grace,
        throttled=throttled,
        unconfirmed=lambda: source.unconfirmed,
        stalled=None if progress is None else progress.stalled,
    )
    # The items the search gave are made as complete as a GET's (within the same bound as the last round).
    completed = source.complete(start + waiting.timeout + grace)
    outcome.complete(completed if progress is None else progress.carry(completed))
    items = []
    for key in keys:
        item = outcome.items[key]
        item = dict(item) if item is not None else unseen_item(key, outcome.errors[key] or "never fetched")
        item.update(outcome.job_fields(key))
        items.append(item)
    errors = dict((key, exc) for key, exc in outcome.errors.items() if exc is not None and key in outcome.failures)
    if outcome.ok:
        return QueryResult(items, True, wait=outcome)
    lines = [outcome.job_message(key) for key in outcome.unsatisfied_keys()]
    return QueryResult(items, False, outcome.message(limit=MESSAGE_JOBS_SHOWN), errors, outcome, job_messages=lines)


# -- the door -------------------------------------------------------------------------------------


def _production():
    """production.py, imported when a call reads a production record (``baseline.record``), not before."""
    from ansible_collections.modelarts.training.plugins.module_utils.results import production

    return production


def _check_libraries(values):
    """The Python libraries the call needs (``requests``; ``jsonschema`` unless ``validate`` is off), checked once the
    options but ``metrics`` and ``baseline`` are resolved (before them, as before issue 58): a
    :class:`MissingLibraryError` naming the library."""
    if not HAS_REQUESTS:
        raise MissingLibraryError("requests", REQUESTS_IMPORT_ERROR)
    if values["validate"] != "off" and not HAS_JSONSCHEMA:
        raise MissingLibraryError("jsonschema", JSONSCHEMA_IMPORT_ERROR, " (or set validate to off)")


class Query(object):
    """One configured query: typed options, one client, and the calls every plugin needs.

    ``levels`` are the entry point's option values, highest precedence first (see
    ``options.resolve``); the environment comes last; ``has_wait_for`` is false for an entry point without a
    ``wait_for`` option (see ``resolve``); ``baseline_workspace_id`` (a keyword) is the workspace a baseline search looks in
    unless the baseline names its own (the event source's; default: the selection's).  Raises ``ConnectionConfigError`` (a
    :class:`MissingLibraryError` for a missing library) before any request.
    """

    def __init__(self, levels, selection=None, environ=None, clock=time.monotonic, sleeper=time.sleep, has_wait_for=True, **client_kwargs):
        self.settings = resolve(levels, environ, has_wait_for=has_wait_for, before_results=_check_libraries)
        self.selection = selection
        # The workspace a baseline search looks in unless the baseline names its own: the watch's (baseline_workspace_id), or the selection's.
        self.baseline_workspace_id = client_kwargs.pop("baseline_workspace_id", None) or (selection.workspace_id if selection is not None else None)
        self.clock = clock
        self.sleeper = sleeper
        client_kwargs.setdefault("pool_size", self.settings.max_concurrency)
        client_kwargs.setdefault("named", lambda name, origins=self.settings.origins: option_named(name, origins))
        # What a job produced: checked here, before any request, and only when asked for (metrics.py is imported then).
        self.metrics = None
        if self.settings.results.metrics or self.settings.results.baseline is not None:
            checks = _metric_checks()
            checks.check_candidates(self.settings.results.baseline, selection.keys if selection is not None else ())
            self.metrics = checks.Plan(self.settings.results.metrics, self.settings.results.baseline)
        self.client = ModelArtsClient(self.settings.service, self.settings.credentials, clock=clock, environ=environ, **client_kwargs)
        self.warnings = []
        # Warnings a wait gives while it goes on (a name that matches nothing yet): added to the result's, and handed at once
        # to ``notify`` (a callable taking the text; the action plugin's, which shows it while the task still waits).
        self.told = []
        self.notify = None
        # Endpoint tokens of the jobs read so far, each once (a dict as an ordered set): masked in diagnostics whatever
        # include_endpoint_tokens says.  A source that never ends reads the same jobs round after round: this holds
        # their distinct tokens, not one entry per item built.
        self.endpoint_tokens = {}
        self._masking = (None, None)  # (what it was built from, text.Secrets): rebuilt only when that changes
        if not self.settings.service.validate_certs:
            self.warnings.append("validate_certs is false: the TLS certificates of %s are not verified" % self.client.endpoint)
        region_at = dict((level, (values or {}).get("region")) for level, values in levels)
        region_at[LEVEL_ENVIRONMENT] = environment_level(environ).get("region")
        region = unused_region(self.settings.service, self.settings.credentials, self.settings.origins, region_at)
        if region:
            self.warnings.append(region)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is not None:
            # Interrupted (a task's timeout, ^C): what other threads still have in flight is ended, never waited for.
            self.client.abandon()
        self.close()

    def close(self):
        """Close the client's pooled connections."""
        self.client.close()

    def secrets(self):
        """Values to hide from every output: the secret options, the proxy's ``user:password``, and every
        credential obtained or token issued so far (ask again after the call)."""
        values = list(self.client.secrets())
        values.append(proxy_secret(self.settings.service.proxy))
        # The production record's key (baseline.record_key) is as secret as a no_log option, in the lookup and the event source too.
        baseline = self.settings.results.baseline
        values.append(baseline.record_key if baseline is not None else None)
        return [value for value in values if value]

    def redact(self, text):
        """``text`` with every secret this query knows masked (IAM tokens issued since included)."""
        return self.client.redact(text)

    def redact_value(self, value):
        """``value`` (JSON-like data) with every secret this query knows masked in each of its strings (``text.redact_value``:
        its JSON text looked over once, every string masked only when something is found there)."""
        return redact_value(value, self.client.secrets())

    def masking_secrets(self):
        """Every secret of :meth:`secrets` and every endpoint token read so far, as one :class:`text.Secrets` built
        once per change of either (not once per masked line, nor per call): what diagnostics masks with."""
        secrets = self.secrets()
        source = (tuple(secrets), len(self.endpoint_tokens))
        if self._masking[0] != source:
            self._masking = (source, Secrets(list(secrets) + list(self.endpoint_tokens)))
        return self._masking[1]

    # -- what the event source calls ------------------------------------------------------------

    def _item_options(self):
        """How this query builds items, whichever way a document was read: ``validate``, ``fail_on``, and its endpoint
        tokens masked (or kept) and collected into :attr:`endpoint_tokens`."""
        settings = self.settings
        return dict(validate=settings.validate, fail_on=settings.waiting.fail_on, include_tokens=settings.include_endpoint_tokens, tokens=self.endpoint_tokens)

    def read_production(self, path, key=None, name=None):
        """A production record read as a baseline (``production.read_production``: found, missing or failed, naming the
        file); loaded only by a call whose ``baseline`` has a ``record``."""
        return _production().read_production(path, key, name)

    def fetch(self, keys, deadline=None):
        """``{key: item or exception}`` for ``keys``, fetched concurrently; never raises for one job."""
        options = self._item_options()

        name_option = self.selection.name_option if self.selection is not None else "name"

        def fetch_one(key, when):
            return fetch_item(self.client, key, deadline=when, name_option=name_option, **options)

        return fetch_concurrently(keys, fetch_one, max_concurrency=self.settings.max_concurrency, deadline=deadline, clock=self.clock)

    def search(self, search, deadline=None, pages=None, created_since=None, newest=None):
        """``(keys, found)`` for the v2 jobs of ``search`` (a :class:`Search`, or a name): ``found[key]`` is an item or the
        schema error of that one job (``pages``, a list, receives how many requests the search took; ``created_since`` and
        ``newest``: what is new since a listing, see :func:`keys_for_search`)."""
        return keys_for_search(self.client, search, deadline=deadline, pages=pages, created_since=created_since, newest=newest, **self._item_options())

    def search_pages(self, search, pages=None, resume_on=()):
        """``(keys, found, newest, last)`` of the v2 jobs of ``search`` a page at a time (a generator; ``keys`` and ``found``
        as :meth:`search` gives them, ``newest`` the latest ``create_time`` of the page or None, ``last`` whether it is the
        last page): every match however many, one page held at a time (``pages``, a list, receives how many requests it
        took).  With ``resume_on`` (exception classes) a failed request yields a ``search.PageFailed`` and the next
        ``next()`` asks for the same page again."""
        index = 0
        counts = {}
        for documents in self.client.search_pages(search, pages=pages, counts=counts, resume_on=resume_on):
            if not isinstance(documents, list):  # a search.PageFailed: handed on as it is
                yield documents
                continue
            newest = []
            keys, found = _keyed(documents, search, newest, first_index=index, **self._item_options())
            index += len(documents)
            yield keys, found, (newest[0] if newest else None), bool(counts.get("last"))

    def diagnose(self, items, deadline=None):
        """Set ``diagnostics`` on each of ``items`` (in place): the service's events and log tails for a v2 item in a
        ``fail_on`` phase when the ``diagnostics`` option is on, None otherwise.  Never raises for the service's answers
        and never changes an item's phase; returns ``{id(item): summary}`` for the items that got diagnostics.

        ``deadline`` (a reading of this query's clock) bounds the calls, at most one ``request_timeout`` from now.
        """
        settings = self.settings
        failed = [item for item in items if isinstance(item, dict) and item.get("api_version") == "v2" and item.get("phase") in settings.waiting.fail_on]
        for item in items:
            if isinstance(item, dict):
                item["diagnostics"] = None
        if not settings.diagnostics or not failed:
            return {}
        diagnostics = _diagnostics()
        limit = self.clock() + float(self.client.service.request_timeout)
        secrets = self.masking_secrets()
        diagnostics.diagnose(
            self.client,
            failed,
            settings.waiting.fail_on,
            log_lines=settings.log_lines,
            secrets=secrets,
            max_concurrency=settings.max_concurrency,
            deadline=limit if deadline is None else min(limit, deadline),
            clock=self.clock,
        )
        return dict((id(item), diagnostics.summary(item)) for item in failed if item.get("diagnostics"))

    def read_metrics(self, items, deadline=None, candidates=None):
        """Read the ``metrics`` of each Completed item of ``items`` (and of the ``baseline``) and set its ``metrics`` and
        ``metrics_ok`` in place - the one call for an entry point that has items of its own (the event source, for the
        items of its events into Completed); :meth:`run` makes it for the module and the lookup.  Returns the
        ``metrics.Measured`` (the baseline's item, warnings, the lines of each broken bound), or None when the call has
        no ``metrics``.  ``deadline`` (a reading of this query's clock; default one ``request_timeout`` from now) bounds
        every read; ``candidates`` are the keys a baseline search leaves out (default: the items')."""
        if self.metrics is None:
            return None
        return self.metrics.measure(
            self, items, deadline=deadline, candidates=candidates, max_concurrency=self.settings.max_concurrency, workspace_id=self.baseline_workspace_id
        )

    def acted(self):
        """The phases a job is judged in on its own GET only, never on a search's word: this query's ``wait_for`` and
        ``fail_on`` phases and every final phase (the event source's ``wait_for`` is the final phases outside ``fail_on``)."""
        settings = self.settings
        return set(settings.waiting.wait_for) | set(settings.waiting.fail_on) | set(TERMINAL_PHASES)

    def phase_source(self, keys, acted=None, workspace_id=None):
        """The phase source (``observer``) for watching ``keys``: ``observe(keys)`` once a round, answered as one GET per job would be.

        ``acted`` are the phases whose item must come from the job's own GET (:meth:`fetch`; default: :meth:`acted`);
        ``workspace_id`` the workspace the bulk searches look in (default: the selection's).
        """
        settings = self.settings
        if workspace_id is None and self.selection is not None:
            workspace_id = self.selection.workspace_id
        return _observer().for_client(
            self.client,
            keys,
            self.acted() if acted is None else acted,
            self.fetch,
            max_concurrency=settings.max_concurrency,
            clock=self.clock,
            workspace_id=workspace_id,
            **self._item_options(),
        )

    def settle(self, found, deadline=None):
        """``found`` (``{key: item or exception}`` of a name search, the jobs still watched) with the rule of every round
        applied (``observer``): a job the search shows in an :meth:`acted` phase is answered by its own GET (an item, or
        the GET's error) instead - a search never decides what a job is.  A document that broke the schema stays as it
        is: the event source reports it and decides nothing on it."""
        return _observer().settle(self.phase_source([]), found, deadline)  # no jobs to search: GetPhases, for its rule and GETs

    def judge(self, observation, poll_number, not_found_tolerance=None):
        """The waiter's verdict on one observation (see ``waiter.judge``), with this query's phases.

        ``not_found_tolerance`` defaults to ``waiter.DEFAULT_NOT_FOUND_TOLERANCE``.
        """
        waiter = _waiter()
        if not_found_tolerance is None:
            not_found_tolerance = waiter.DEFAULT_NOT_FOUND_TOLERANCE
        return waiter.judge(observation, poll_number, self.settings.waiting.wait_for, self.settings.waiting.fail_on, TERMINAL_PHASES, not_found_tolerance)

    # -- what the module and the lookup call ----------------------------------------------------

    def _find_named(self, name, start, pages=None):
        """``(keys, found)`` of the jobs of the :class:`Search` ``name`` (see :meth:`search`; ``pages`` receives each
        search's requests).  The selection is made here, once: with ``latest`` the newest match is the job waited on.

        Without ``wait``, one search.  With it, a search no job matches yet is not an answer (a misspelt name
        must never open a gate): the search is repeated on the waiter's schedule until a job matches, and a
        :class:`ModelArtsError` saying no job did ends the call at the deadline.  As for
        the jobs' own polls, the search at the deadline (the only one when ``wait_timeout`` is 0) may
        run one ``request_timeout`` past it, and transient errors are tolerated until then (not one from a host that has
        never answered: ``ModelArtsError.unreached``).  A search the wait ran out on (``waiter.ran_out``: cut short by a
        deadline it had no time past, so never the last one) after another one ended is not a failure: the message
        reports what the search before it found.
        """
        settings = self.settings
        if not settings.waiting.wait:
            return self.search(name, None, pages)
        waiter = _waiter()
        deadline = start + settings.waiting.timeout
        grace = float(self.client.service.request_timeout)
        interval, cap = settings.waiting.sleep, max(settings.waiting.sleep, settings.waiting.sleep_max)
        last = settings.waiting.timeout <= 0
        searches, failure = 0, None
        nearby = None  # the look for the names closest to a name that matches nothing (:class:`_Nearby`: once, at the first empty answer)
        while True:
            searches += 1
            given = deadline + grace if last else deadline
            try:
                keys, found = self.search(name, given, pages)
                failure = None
            except ModelArtsError as error:
                if not error.transient or error.unreached:
                    raise
                if error.not_sent:
                    # The deadline passed before this search could be sent: no search was made, and none failed.
                    searches -= 1
                    keys, found = [], {}
                elif searches > 1 and waiter.ran_out(error, given, deadline):
                    # A search counted before this one ended (answered or failed): what it said stands (a service that
                    # stopped answering shows in that one, ended by request_timeout, not by the wait).  The last search
                    # had grace past the deadline: cut, it failed.
                    keys, found = [], {}
                else:
                    keys, found, failure = [], {}, error
            if keys:
                return keys, found
            if nearby is None and failure is None and isinstance(name, Search) and name.name is not None:
                nearby = _Nearby(self, name, deadline + grace if last else deadline)
            now = self.clock()
            remaining = deadline - now
            if last or remaining <= 0:
                text = "no training job %s was found after waiting %.1fs (wait_timeout %s, %d search%s)" % (
                    name.describe(window=True) if isinstance(name, Search) else "named '%s'" % label(name),
                    now - start,
                    settings.waiting.timeout,
                    searches,
                    "" if searches == 1 else "es",
                )
                if failure is not None:
                    text += "; the last search failed: %s" % failure
                elif isinstance(name, Search) and name.coverage():
                    text += "; %s" % name.coverage()
                if nearby is not None and nearby.answer(max(0.0, nearby.deadline - self.clock())):
                    text += "; %s" % nearby.text
                raise ModelArtsError(text, operation="search training jobs %s" % (name.describe() if isinstance(name, Search) else "named '%s'" % label(name)))
            nap = waiter.nap_length(interval, now, deadline)
            if nearby is not None and not nearby.told:
                # Said as soon as the look has answered, within the nap: the searches keep the wait's schedule.
                if nearby.answer(nap) is not None:
                    nearby.told = True
                    self._tell(nearby.warning())
                nap = max(0.0, nap - (self.clock() - now))
            self.sleeper(nap)
            last = nap >= remaining
            interval = waiter.next_interval(interval, cap)

    def _tell(self, text):
        """A warning given while the wait goes on: kept for the result's warnings, and handed to ``notify`` at once."""
        self.told.append(text)
        if self.notify is not None:
            self.notify(text)

    def run(self):
        """Query the selected jobs, waiting when asked, and return a :class:`QueryResult` (never raises for the service's answers)."""
        settings = self.settings
        selection = self.selection
        start = self.clock()
        keys, initial, pages = selection.keys, None, []
        warnings = list(self.warnings)
        if selection.search is not None:
            try:
                keys, initial = self._find_named(selection.search, start, pages)
            except (ModelArtsError, ConnectionConfigError) as error:
                # A configuration error met on the way (a credential source, the project) fails the search as it fails a
                # job's GET: one message, the same as with training_job_id.
                return QueryResult([], False, str(error), {"search": error}, warnings=warnings + self.told, single=selection.single)
            warnings.extend(self.told)
            warnings.extend(str(value) for value in initial.values() if isinstance(value, UnidentifiedJobError))
            if not keys and selection.search.coverage():
                warnings.append("no training job %s was found: %s" % (selection.search.describe(), selection.search.coverage()))
        result = query_jobs(
            self.client,
            keys,
            waiting=settings.waiting,
            max_concurrency=settings.max_concurrency,
            initial=initial,
            clock=self.clock,
            sleeper=self.sleeper,
            start=start,
            search=selection.search,
            name_pages=pages[-1] if pages else None,
            workspace_id=selection.workspace_id,
            name_option=selection.name_option,
            stall=settings.stall,
            **dict((name, value) for name, value in self._item_options().items() if name != "fail_on"),
        )
        result.single = selection.single
        grace = float(self.client.service.request_timeout)
        notes = self.diagnose(result.items, start + settings.waiting.timeout + grace if settings.waiting.wait else None)
        if notes and result.wait is not None and not result.ok:
            by_key = dict((key, notes[id(item)]) for key, item in zip(keys, result.items) if notes.get(id(item)))
            result.msg = result.wait.message(limit=MESSAGE_JOBS_SHOWN, notes=by_key)
            result.job_messages = [result.wait.job_message(key, by_key.get(key)) for key in result.wait.unsatisfied_keys()]
        if self.metrics is not None:
            # Once the wait has ended: the metrics of the Completed jobs and the baseline's, within the call's deadline (the
            # wait's, with the same grace as diagnostics; without wait one request_timeout).  With wait, a Completed job
            # whose bounds fail fails the call as a fail_on phase does; without, the items only report.
            measured = self.read_metrics(result.items, start + settings.waiting.timeout + grace if settings.waiting.wait else None, candidates=keys)
            result.measured = measured
            warnings.extend(measured.warnings)
            if settings.waiting.wait and measured.unfit:
                text = measured.message(limit=MESSAGE_JOBS_SHOWN)
                result.msg = text if result.ok or not result.msg else "%s; %s" % (result.msg, text)
                result.ok = False
                result.job_messages = list(result.job_messages) + measured.job_messages()
        search = selection.search
        if search is not None and not search.latest and len(keys) > 1 and settings.waiting.wait and not result.ok and result.msg:
            # A reused name (or tags every run carries): every match was waited on, an older failed run included.
            result.msg += "; the search %s matched %d jobs and each was waited on: set latest: true to wait on the newest only" % (
                search.describe(),
                len(keys),
            )
        result.warnings = warnings
        _keep_details(result.items, settings.details_paths)
        if settings.validate == "warn":
            result.warnings.extend(schema_warnings(result.items))
        return result


def _keep_details(items, paths):
    """Each item's ``details`` cut to the dotted ``paths`` (option ``details_paths``; None keeps the whole document)."""
    if paths is not None:
        for item in items:
            if "details" in item:
                item["details"] = keep_paths(item["details"], paths)


class _Nearby(object):
    """The names closest to ``search.name`` among those of the newest jobs of its workspace (``search.names_in_workspace``,
    ranked by ``selection.closest_text``): one request, ended by ``deadline`` (a reading of the query's clock), sent in a
    thread of its own so that the wait's searches keep their schedule.  ``text`` is '' when the request failed - nothing
    is offered, and the wait's own searches say what fails."""

    def __init__(self, query, search, deadline):
        self.search = search
        self.deadline = deadline
        self.text = None
        self.told = False
        self._thread = threading.Thread(target=self._look, args=(query.client,), name="closest-names", daemon=True)
        self._thread.start()

    def _look(self, client):
        from ansible_collections.modelarts.training.plugins.module_utils.service import search as search_api

        deadline = self.deadline

        def post(body, operation):
            path = "/v2/%s/training-job-searches" % escape(client.resolve_project_id(deadline))
            return client.request("POST", path, body=body, operation=operation, deadline=deadline)

        try:
            self.text = closest_text(self.search, search_api.names_in_workspace(post, self.search.workspace_id), search_api.NAMES_PAGE)
        except Exception:  # pylint: disable=broad-except  # a suggestion never fails the wait
            self.text = ""

    def answer(self, seconds):
        """``text`` once the look has answered, waiting at most ``seconds`` for it; None while it has not."""
        self._thread.join(max(0.0, seconds))
        return None if self._thread.is_alive() else self.text

    def warning(self):
        """The warning of a wait that goes on: no job has the name yet, and the names that come closest."""
        search = self.search
        return "no training job %s%s: still waiting (a job may be submitted later)%s" % (
            search.describe(),
            "" if search.workspace_id is not None else " in the default workspace",
            "; %s" % self.text if self.text else "",
        )


def run(levels, selection, environ=None, **kwargs):
    """Build a :class:`Query`, run it and close it: the whole call for the module and the lookup."""
    with Query(levels, selection, environ=environ, **kwargs) as query:
        return query.run()
