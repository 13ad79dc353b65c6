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

import time

from ansible_collections.modelarts.training.plugins.module_utils.client import HAS_REQUESTS, REQUESTS_IMPORT_ERROR, ModelArtsClient
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.fanout import DEFAULT_MAX_CONCURRENCY, fetch_concurrently
from ansible_collections.modelarts.training.plugins.module_utils.jobs import ITEM_KEYS, build_item
from ansible_collections.modelarts.training.plugins.module_utils.options import ConnectionConfigError, proxy_secret, resolve
from ansible_collections.modelarts.training.plugins.module_utils.phases import DEFAULT_FAIL_ON, DEFAULT_WAIT_FOR, PHASES, TERMINAL_PHASES

# Selection moved to selection.py: these names stay importable from here.
from ansible_collections.modelarts.training.plugins.module_utils.selection import (  # noqa: F401  # pylint: disable=unused-import
    JOB_ID_PATTERN,
    SELECTION_OPTIONS,
    Search,
    Selection,
    check_job_id,
    select,
    v1_key,
    v1_selection_key,
    v2_key,
)
from ansible_collections.modelarts.training.plugins.module_utils.text import MASK, Secrets, label, name_key, redact
from ansible_collections.modelarts.training.plugins.module_utils.validation import HAS_JSONSCHEMA, JSONSCHEMA_IMPORT_ERROR, SchemaValidationError

MESSAGE_JOBS_SHOWN = 20


class MissingLibraryError(ConnectionConfigError):
    """A Python library the call needs is not installed: ``library`` names it, ``traceback`` is the import error."""

    def __init__(self, library, traceback_text, hint=""):
        super().__init__("the Python library '%s' is required%s" % (library, hint))
        self.library = library
        self.traceback = traceback_text


def _diagnostics():
    """Events and log tails of failed jobs, imported only when an item is in a fail_on phase (see :func:`_waiter`)."""
    from ansible_collections.modelarts.training.plugins.module_utils import diagnostics  # pylint: disable=import-outside-toplevel

    return diagnostics


def _waiter():
    """The wait loop, imported when a call waits or judges: AnsiballZ compiles every module_utils file a
    module imports on each run, so a task that does not wait does not pay for it (docs/performance.md)."""
    from ansible_collections.modelarts.training.plugins.module_utils import waiter  # pylint: disable=import-outside-toplevel

    return waiter


# How the door names a job by its key, for messages (text.name_key; the event source uses it too).
describe = name_key


# -- endpoint tokens ----------------------------------------------------------------------------


def mask_endpoint_tokens(details):
    """Mask, in place, every ``token`` inside ``details['endpoints']``; return the values masked.

    ``jupyter_lab.token``, ``tensorboard.token`` and ``mindstudio_insight.token`` open the job's
    notebook and dashboards: they are access credentials, so they leave the collection only when
    the user asks for them (``include_endpoint_tokens``).
    """
    return _endpoint_tokens(details, mask=True)


def endpoint_token_values(details):
    """The endpoint tokens of ``details`` without masking them (they are masked in diagnostics all the same)."""
    return _endpoint_tokens(details, mask=False)


def _endpoint_tokens(details, mask):
    found = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key != "token":
                    walk(value)
                elif isinstance(value, str) and value and value != MASK:
                    found.append(value)
                    if mask:
                        node[key] = MASK
                elif mask and value is not None and not isinstance(value, str):
                    node[key] = MASK
        elif isinstance(node, list):
            for entry in node:
                walk(entry)

    if isinstance(details, dict):
        walk(details.get("endpoints"))
    return found


def _keep_tokens(tokens, found):
    """Add ``found`` to ``tokens`` (a dict used as an ordered set): each distinct token once, however often the jobs
    are read, so that what a long wait or a source that never ends keeps does not grow with its rounds."""
    if tokens is not None:
        for value in found:
            tokens.setdefault(value, None)


def _mask_item(item, include_tokens, tokens=None):
    if not isinstance(item, dict):
        return []
    if include_tokens:
        _keep_tokens(tokens, endpoint_token_values(item.get("details")))
        return []
    found = mask_endpoint_tokens(item.get("details"))
    # Kept for diagnostics: a job's log may print its notebook token.
    _keep_tokens(tokens, found)
    if found:
        if item.get("failure_reason"):
            item["failure_reason"] = redact(item["failure_reason"], found)
        item["schema_errors"] = [dict(error, message=redact(error.get("message"), found)) for error in item.get("schema_errors") or []]
    return found


def keep_paths(details, paths):
    """Only the dotted ``paths`` of ``details`` (object keys; a path that is not there is skipped), nested as in the document.

    ``[]`` keeps nothing. Large documents cost Ansible about 1 ms per KB of result, so a playbook that
    only needs a few fields keeps only those (see docs/performance.md).
    """
    kept = {}
    if not isinstance(details, dict):
        return kept
    for path in paths:
        parts = [part for part in str(path).split(".") if part]
        value = details
        for part in parts:
            value = value.get(part, _ABSENT) if isinstance(value, dict) else _ABSENT
            if value is _ABSENT:
                break
        if value is _ABSENT or not parts:
            continue
        target = kept
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        target[parts[-1]] = value
    return kept


_ABSENT = object()


def fetch_item(client, key, validate="strict", fail_on=DEFAULT_FAIL_ON, deadline=None, include_tokens=False, tokens=None):
    """GET one job (v2 id or v1 key), validate the raw document, normalise it and mask its endpoint tokens.

    Raises ``ModelArtsError`` for API failures (a ``jobs.WrongJobError`` when the answer is another job's document)
    and ``SchemaValidationError`` under ``validate=strict`` (its item masked too).  ``tokens``, a dict used as an
    ordered set, receives the endpoint tokens found.
    """
    try:
        # The answer is checked against the question (expect): another job's document is never this job's item.
        if isinstance(key, tuple):
            response = client.get_job_version(key[1], key[2], deadline=deadline)
            api, expect, operation = "v1", key[1:], "get training job %s version %s" % (label(key[1]), label(key[2]))
        else:
            response = client.get_training_job(key, deadline=deadline)
            api, expect, operation = "v2", key, "get training job %s" % label(key)
        item = build_item(
            response.data, api, validate=validate, fail_on=fail_on, job_ref=name_key(key), expect=expect, operation=operation, request_id=response.request_id
        )
    except SchemaValidationError as error:
        _mask_error(error, include_tokens, tokens)
        raise
    _mask_item(item, include_tokens, tokens)
    return item


def search_item(document, key, validate="strict", fail_on=DEFAULT_FAIL_ON, include_tokens=False, tokens=None):
    """The item of one search document of the v2 job ``key``, validated, normalised and masked like a GET's.

    Raises ``SchemaValidationError`` under ``validate=strict``, and ``jobs.WrongJobError`` for a document of another job
    (the phase source then GETs the job).
    """
    item = build_item(document, "v2", validate=validate, fail_on=fail_on, job_ref=name_key(key), expect=key, operation="search training jobs by id")
    _mask_item(item, include_tokens, tokens)
    return item


def phase_source(
    client,
    keys,
    acted,
    fetch,
    settled=(),
    validate="strict",
    fail_on=DEFAULT_FAIL_ON,
    max_concurrency=DEFAULT_MAX_CONCURRENCY,
    clock=time.monotonic,
    include_tokens=False,
    tokens=None,
    search=None,
    name_pages=None,
    workspace_id=None,
):
    """The ``observer`` phase source for watching ``keys`` through ``client``: how a wait or the event source learns
    phases (bulk search or one GET per job).  ``acted`` are the phases whose item must be a GET's, ``settled`` those
    whose GET may come in a later round (``observer``); ``fetch(keys, deadline)`` is the caller's GET of many jobs
    (``{key: item or exception}``, as :func:`fetch_item` builds them).  ``search``: the :class:`Search` the jobs were
    selected by, which (``name_pages`` requests the last time) may read their phases in fewer requests than by id;
    ``workspace_id``: the workspace the searches by id look in (the jobs' own, found there)."""
    from ansible_collections.modelarts.training.plugins.module_utils import observer  # pylint: disable=import-outside-toplevel

    def build(document, key):
        return search_item(document, key, validate=validate, fail_on=fail_on, include_tokens=include_tokens, tokens=tokens)

    def named(deadline, pages):
        from ansible_collections.modelarts.training.plugins.module_utils.search import documents_by_id  # pylint: disable=import-outside-toplevel

        return documents_by_id(client.search_training_jobs(search, deadline=deadline, pages=pages))

    def by_id(ids, deadline):
        return client.search_training_jobs_by_id(ids, deadline=deadline, workspace_id=workspace_id)

    return observer.phase_source(
        keys,
        fetch,
        by_id,
        build,
        acted,
        settled,
        max_concurrency=max_concurrency,
        clock=clock,
        # The newest job alone is followed by its id: a search of every match would read more than it.
        named=named if search is not None and not search.latest else None,
        name_pages=name_pages,
    )


def _mask_error(error, include_tokens, tokens=None):
    found = _mask_item(error.item, include_tokens, tokens)
    if found:
        error.errors = [dict(entry, message=redact(entry.get("message"), found)) for entry in error.errors]
        error.args = (redact(str(error), found),)


def unseen_item(key, error):
    """The item of a job that could not be read: its last state where the error holds one, and the error.

    A schema failure under ``validate=strict`` carries the normalised item (so the job's phase is
    still shown); other errors leave identity only.
    """
    known = getattr(error, "item", None)
    if isinstance(known, dict):
        return dict(known, error=str(error))
    item = dict((name, None) for name in ITEM_KEYS)
    item.update(terminal=False, completed=False, failed=False, schema_errors=[], error=str(error), diagnostics=None)
    if isinstance(key, tuple) and key[0] == "v1":
        item.update(id=key[1], version_id=key[2], api_version="v1")
    elif isinstance(key, tuple):
        item.update(api_version="v2")
    else:
        item.update(id=key, api_version="v2")
    return item


class QueryResult(object):
    """The outcome of a query.

    ``items`` holds one item per job in the order asked (an :func:`unseen_item` for a job never
    fetched); ``ok`` says whether the call succeeded; ``msg`` explains a failure (None on success);
    ``job_messages`` has one line per job that is not done on a failure; ``errors`` maps keys to the
    exceptions that made it fail; ``wait`` is the ``WaitResult`` when waiting; ``warnings`` are
    texts to show the user; ``single`` says whether one job was asked for.
    """

    def __init__(self, items, ok, msg=None, errors=None, wait=None, job_messages=None, warnings=None, single=False):
        self.items = items
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
    fail_on=DEFAULT_FAIL_ON,
    wait=False,
    wait_for=DEFAULT_WAIT_FOR,
    wait_timeout=3600,
    wait_sleep=5,
    wait_sleep_max=60,
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
):
    """Fetch the jobs of ``keys`` concurrently over the client's one session; wait when asked.

    Without ``wait`` any error fails the call, and each request is bounded by the client's request
    budget.  With ``wait`` there is one deadline, ``wait_timeout`` seconds after ``start`` (a
    ``clock`` reading, default now), for the whole call; only the last look, right at the deadline,
    may run ``grace`` seconds past it (default: one ``request_timeout``).  Transient errors and a few
    not-founds right after creation are tolerated, and any job reaching a ``fail_on`` phase ends the
    wait at once.  ``initial`` may hold items (or errors) already known from a name search made
    after ``start``, keyed like ``keys``; ``search`` is then that :class:`Search`, and ``name_pages`` the requests it took;
    ``workspace_id`` the workspace bulk searches by id look in.  Those items are taken by the rule of every round
    (``observer.adopt``): with ``wait`` a job in a phase the wait acts on is read by its GET in the first round; without it
    every job is (the caller acts on whatever phase it gets), so what comes back is never a search's word.
    """
    keys = list(dict.fromkeys(keys))
    start = clock() if start is None else start

    def fetch_one(key, when):
        return fetch_item(client, key, validate=validate, fail_on=fail_on, deadline=when, include_tokens=include_tokens, tokens=tokens)

    def poll(some, when):
        return fetch_concurrently(some, fetch_one, max_concurrency=max_concurrency, deadline=when, clock=clock)

    if not wait:
        known = {}
        if initial:
            # The search only chose the jobs.  A call that does not wait hands back every item it reads, so its caller
            # acts on every phase: by the rule of every round (observer.adopt) each job the search found is left to its
            # own GET, sent here with the others' (max_concurrency at a time) - a search never reports a job's phase.
            every = set(PHASES) | set(item.get("phase") for item in initial.values() if isinstance(item, dict))
            known = phase_source(client, [], every, poll).adopt(initial)
        missing = [key for key in keys if key not in known]
        known.update(poll(missing, None) if missing else {})
        errors = dict((key, value) for key, value in known.items() if isinstance(value, BaseException))
        items = [unseen_item(key, known[key]) if key in errors else known[key] for key in keys]
        return QueryResult(items, not errors, _errors_message(errors) if errors else None, errors, job_messages=[str(exc) for exc in errors.values()])

    if grace is None:
        grace = float(client.params["request_timeout"])
    acted = set(wait_for) | set(fail_on or ()) | set(TERMINAL_PHASES)
    source = phase_source(
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

    if initial:
        # A name search's items, by the rule of every round: a job it shows in a phase the wait acts on is judged on
        # its own GET, which the first round sends at once (a search never decides a wait).
        initial = source.adopt(initial)
    outcome = _waiter().wait_for_jobs(
        keys,
        source.observe,
        wait_for,
        fail_on,
        wait_timeout,
        wait_sleep,
        wait_sleep_max,
        clock=clock,
        sleeper=sleeper,
        initial=initial,
        terminal_phases=TERMINAL_PHASES,
        start=start,
        grace=grace,
        throttled=throttled,
        unconfirmed=lambda: source.unconfirmed,
    )
    # The items the search gave are made as complete as a GET's (within the same bound as the last round).
    outcome.complete(source.complete(start + wait_timeout + grace))
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


def keys_for_search(
    client, search, validate="strict", fail_on=DEFAULT_FAIL_ON, deadline=None, include_tokens=False, tokens=None, pages=None, created_since=None, newest=None
):
    """Keys and items of the v2 jobs the :class:`Search` ``search`` selects (every page of the search API, or the newest
    match alone with ``latest``); a name alone is searched as ``Search(name=...)``.

    Returns ``(keys, found)``: ``found[key]`` is the job's item, or the ``SchemaValidationError`` of a
    document that breaks the schema under ``validate=strict`` - one bad document never hides the
    others.  A document without a readable id, or whose id is not a training job id (:data:`JOB_ID_PATTERN`: the
    service's text never becomes a key, a URL or an event's id), cannot be keyed and is reported under
    ``("search", n)``.  ``pages``, a list, receives how many requests the search took.  ``created_since`` (epoch ms):
    only the jobs created since then, about (``search.jobs_matching``); ``newest``, a list, receives the latest
    ``metadata.create_time`` the answers hold.
    """
    if not isinstance(search, Search):
        search = Search(name=search)
    documents = client.search_training_jobs(search, deadline=deadline, pages=pages, created_since=created_since)
    return _keyed(documents, search, newest, validate=validate, fail_on=fail_on, include_tokens=include_tokens, tokens=tokens)


def _keyed(documents, search, newest=None, first_index=0, validate="strict", fail_on=DEFAULT_FAIL_ON, include_tokens=False, tokens=None):
    """``(keys, found)`` of search ``documents`` (see :func:`keys_for_search`); ``first_index`` numbers the first one."""
    if newest is not None:
        times = [document["metadata"].get("create_time") for document in documents if isinstance(document, dict) and isinstance(document.get("metadata"), dict)]
        times = [value for value in times if isinstance(value, (int, float)) and not isinstance(value, bool)]
        if times:
            newest.append(max(times))
    found = {}
    for index, document in enumerate(documents, first_index):
        ref = _document_ref(document, index)
        try:
            item = build_item(document, "v2", validate=validate, fail_on=fail_on, job_ref=ref)
        except SchemaValidationError as error:
            _mask_error(error, include_tokens, tokens)
            known = error.item.get("id") if isinstance(error.item, dict) else None
            if known is not None and not JOB_ID_PATTERN.fullmatch(known):
                found[("search", index)] = UnidentifiedJobError(index, search, error.item, job_id=known)
            else:
                found[v2_key(known) if known is not None else ("search", index)] = error
            continue
        _mask_item(item, include_tokens, tokens)
        if item["id"] is not None and JOB_ID_PATTERN.fullmatch(item["id"]):
            found[v2_key(item["id"])] = item
        else:
            # Under validate warn or off the item is built all the same; without an id it can be neither
            # keyed nor polled again, and dropping it could hide a Failed job from a gate.
            found[("search", index)] = UnidentifiedJobError(index, search, item, job_id=item["id"])
    return list(found), found


keys_for_name = keys_for_search


class UnidentifiedJobError(Exception):
    """A name search returned a job whose document has no readable ``metadata.id``: it cannot be followed.

    ``item`` is what the document says (its phase included), so the job still shows in the result.
    Neither ``transient`` nor ``not_found``: it ends a wait as an error, and fails a call that does not wait.
    """

    transient = False
    not_found = False

    def __init__(self, index, search, item, job_id=None):
        phase = item.get("phase") if isinstance(item, dict) else None
        if isinstance(search, Search) and (search.tags or search.workspace_id is not None or search.name is None):
            what = "the jobs %s" % search.describe()
        else:
            what = "the name '%s'" % label(search.name if isinstance(search, Search) else search)
        problem = "no readable metadata.id" if job_id is None else "metadata.id %r, which is not a training job id" % label(job_id, 80)
        super().__init__(
            "search result %d for %s (phase %s) has %s, so the job cannot be identified or followed"
            % (index, what, label(phase) if phase else "unknown", problem)
        )
        # What the document says of the job, its phase included, but never the id it cannot be followed by: no
        # result, event or message carries the service's text as a job's id (nor the document that holds it).
        self.item = dict(item, id=None, details=None) if isinstance(item, dict) and job_id is not None else item


def _document_ref(document, index):
    metadata = document.get("metadata") if isinstance(document, dict) else None
    job_id = metadata.get("id") if isinstance(metadata, dict) else None
    return name_key(job_id) if isinstance(job_id, str) else "search result %d" % index


# -- the door -------------------------------------------------------------------------------------


class Query(object):
    """One configured query: typed options, one client, and the calls every plugin needs.

    ``levels`` are the entry point's option values, highest precedence first (see
    ``options.resolve``); the environment comes last; ``has_wait_for`` is false for an entry point without a
    ``wait_for`` option (see ``resolve``).  Raises ``ConnectionConfigError`` (a
    :class:`MissingLibraryError` for a missing library) before any request.
    """

    def __init__(self, levels, selection=None, environ=None, clock=time.monotonic, sleeper=time.sleep, has_wait_for=True, **client_kwargs):
        self.settings = resolve(levels, environ, has_wait_for=has_wait_for)
        if not HAS_REQUESTS:
            raise MissingLibraryError("requests", REQUESTS_IMPORT_ERROR)
        if self.settings.validate != "off" and not HAS_JSONSCHEMA:
            raise MissingLibraryError("jsonschema", JSONSCHEMA_IMPORT_ERROR, " (or set validate to off)")
        self.selection = selection
        self.clock = clock
        self.sleeper = sleeper
        client_kwargs.setdefault("pool_size", self.settings.max_concurrency)
        client_kwargs.setdefault("origins", self.settings.origins)
        self.client = ModelArtsClient(self.settings.connection, clock=clock, environ=environ, **client_kwargs)
        self.warnings = []
        # Endpoint tokens of the jobs read so far, each once (a dict as an ordered set): masked in diagnostics whatever
        # include_endpoint_tokens says.  A source that never ends reads the same jobs round after round: this holds
        # their distinct tokens, not one entry per item built.
        self.endpoint_tokens = {}
        self._masking = (None, None)  # (what it was built from, text.Secrets): rebuilt only when that changes
        if not self.settings.connection["validate_certs"]:
            self.warnings.append("validate_certs is false: the TLS certificates of %s are not verified" % self.client.endpoint)

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
        values.append(proxy_secret(self.settings.connection.get("proxy")))
        return [value for value in values if value]

    def redact(self, text):
        """``text`` with every secret this query knows masked (IAM tokens issued since included)."""
        return self.client.redact(text)

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
        return dict(validate=settings.validate, fail_on=settings.fail_on, include_tokens=settings.include_endpoint_tokens, tokens=self.endpoint_tokens)

    def fetch(self, keys, deadline=None):
        """``{key: item or exception}`` for ``keys``, fetched concurrently; never raises for one job."""
        options = self._item_options()

        def fetch_one(key, when):
            return fetch_item(self.client, key, deadline=when, **options)

        return fetch_concurrently(keys, fetch_one, max_concurrency=self.settings.max_concurrency, deadline=deadline, clock=self.clock)

    def search(self, search, deadline=None, pages=None, created_since=None, newest=None):
        """``(keys, found)`` for the v2 jobs of ``search`` (a :class:`Search`, or a name): ``found[key]`` is an item or the
        schema error of that one job (``pages``, a list, receives how many requests the search took; ``created_since`` and
        ``newest``: what is new since a listing, see :func:`keys_for_search`)."""
        return keys_for_search(self.client, search, deadline=deadline, pages=pages, created_since=created_since, newest=newest, **self._item_options())

    def search_pages(self, search, pages=None):
        """``(keys, found, newest, last)`` of the v2 jobs of ``search`` a page at a time (a generator; ``keys`` and ``found``
        as :meth:`search` gives them, ``newest`` the latest ``create_time`` of the page or None, ``last`` whether it is the
        last page): every match however many, one page held at a time (``pages``, a list, receives how many requests it
        took)."""
        index = 0
        counts = {}
        for documents in self.client.search_pages(search, pages=pages, counts=counts):
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
        failed = [item for item in items if isinstance(item, dict) and item.get("api_version") == "v2" and item.get("phase") in settings.fail_on]
        for item in items:
            if isinstance(item, dict):
                item["diagnostics"] = None
        if not settings.diagnostics or not failed:
            return {}
        diagnostics = _diagnostics()
        limit = self.clock() + float(self.client.params["request_timeout"])
        secrets = self.masking_secrets()
        diagnostics.diagnose(
            self.client,
            failed,
            settings.fail_on,
            log_lines=settings.log_lines,
            secrets=secrets,
            max_concurrency=settings.max_concurrency,
            deadline=limit if deadline is None else min(limit, deadline),
            clock=self.clock,
        )
        return dict((id(item), diagnostics.summary(item)) for item in failed if item.get("diagnostics"))

    def acted(self):
        """The phases a job is judged in on its own GET only, never on a search's word: this query's ``wait_for`` and
        ``fail_on`` phases and every final phase (the event source's ``wait_for`` is the final phases outside ``fail_on``)."""
        settings = self.settings
        return set(settings.wait_for) | set(settings.fail_on) | set(TERMINAL_PHASES)

    def phase_source(self, keys, acted=None, workspace_id=None):
        """The phase source (``observer``) for watching ``keys``: ``observe(keys)`` once a round, answered as one GET per job would be.

        ``acted`` are the phases whose item must come from the job's own GET (:meth:`fetch`; default: :meth:`acted`);
        ``workspace_id`` the workspace the bulk searches look in (default: the selection's).
        """
        settings = self.settings
        if workspace_id is None and self.selection is not None:
            workspace_id = self.selection.workspace_id
        return phase_source(
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
        source = self.phase_source([])  # no jobs to search: GetPhases, for its rule (adopt) and its GETs
        source.adopt(dict((key, item) for key, item in found.items() if isinstance(item, dict)))
        due = [key for key in found if key in source.due]
        answers = source.observe(due, deadline) if due else {}
        return dict((key, answers.get(key, found[key])) for key in found)

    def judge(self, observation, poll_number, not_found_tolerance=None):
        """The waiter's verdict on one observation (see ``waiter.judge``), with this query's phases.

        ``not_found_tolerance`` defaults to ``waiter.DEFAULT_NOT_FOUND_TOLERANCE``.
        """
        waiter = _waiter()
        if not_found_tolerance is None:
            not_found_tolerance = waiter.DEFAULT_NOT_FOUND_TOLERANCE
        return waiter.judge(observation, poll_number, self.settings.wait_for, self.settings.fail_on, TERMINAL_PHASES, not_found_tolerance)

    # -- what the module and the lookup call ----------------------------------------------------

    def _find_named(self, name, start, pages=None):
        """``(keys, found)`` of the jobs of the :class:`Search` ``name`` (see :meth:`search`; ``pages`` receives each
        search's requests).  The selection is made here, once: with ``latest`` the newest match is the job waited on.

        Without ``wait``, one search.  With it, a search no job matches yet is not an answer (a misspelt name
        must never open a gate): the search is repeated on the waiter's schedule until a job matches, and a
        :class:`ModelArtsError` saying no job did ends the call at the deadline.  As for
        the jobs' own polls, the search at the deadline (the only one when ``wait_timeout`` is 0) may
        run one ``request_timeout`` past it, and transient errors are tolerated until then (not one from a host that has
        never answered: ``ModelArtsError.unreached``).
        """
        settings = self.settings
        if not settings.wait:
            return self.search(name, None, pages)
        waiter = _waiter()
        deadline = start + settings.wait_timeout
        grace = float(self.client.params["request_timeout"])
        interval, cap = settings.wait_sleep, max(settings.wait_sleep, settings.wait_sleep_max)
        last = settings.wait_timeout <= 0
        searches, failure = 0, None
        while True:
            searches += 1
            try:
                keys, found = self.search(name, deadline + grace if last else deadline, pages)
                failure = None
            except ModelArtsError as error:
                if not error.transient or error.unreached:
                    raise
                if error.not_sent:
                    # The deadline passed before this search could be sent: no search was made, and none failed.
                    searches -= 1
                    keys, found = [], {}
                else:
                    keys, found, failure = [], {}, error
            if keys:
                return keys, found
            now = self.clock()
            remaining = deadline - now
            if last or remaining <= 0:
                text = "no training job %s was found after waiting %.1fs (wait_timeout %s, %d search%s)" % (
                    name.describe(window=True) if isinstance(name, Search) else "named '%s'" % label(name),
                    now - start,
                    settings.wait_timeout,
                    searches,
                    "" if searches == 1 else "es",
                )
                if failure is not None:
                    text += "; the last search failed: %s" % failure
                elif isinstance(name, Search) and name.coverage():
                    text += "; %s" % name.coverage()
                raise ModelArtsError(text, operation="search training jobs %s" % (name.describe() if isinstance(name, Search) else "named '%s'" % label(name)))
            nap = waiter.nap_length(interval, now, deadline)
            self.sleeper(nap)
            last = nap >= remaining
            interval = waiter.next_interval(interval, cap)

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
                return QueryResult([], False, str(error), {"search": error}, warnings=warnings, single=selection.single)
            warnings.extend(str(value) for value in initial.values() if isinstance(value, UnidentifiedJobError))
            if not keys and selection.search.coverage():
                warnings.append("no training job %s was found: %s" % (selection.search.describe(), selection.search.coverage()))
        result = query_jobs(
            self.client,
            keys,
            wait=settings.wait,
            wait_for=settings.wait_for,
            wait_timeout=settings.wait_timeout,
            wait_sleep=settings.wait_sleep,
            wait_sleep_max=settings.wait_sleep_max,
            max_concurrency=settings.max_concurrency,
            initial=initial,
            clock=self.clock,
            sleeper=self.sleeper,
            start=start,
            search=selection.search,
            name_pages=pages[-1] if pages else None,
            workspace_id=selection.workspace_id,
            **self._item_options(),
        )
        result.single = selection.single
        grace = float(self.client.params["request_timeout"])
        notes = self.diagnose(result.items, start + settings.wait_timeout + grace if settings.wait else None)
        if notes and result.wait is not None and not result.ok:
            by_key = dict((key, notes[id(item)]) for key, item in zip(keys, result.items) if notes.get(id(item)))
            result.msg = result.wait.message(limit=MESSAGE_JOBS_SHOWN, notes=by_key)
            result.job_messages = [result.wait.job_message(key, by_key.get(key)) for key in result.wait.unsatisfied_keys()]
        search = selection.search
        if search is not None and not search.latest and len(keys) > 1 and settings.wait and not result.ok and result.msg:
            # A reused name (or tags every run carries): every match was waited on, an older failed run included.
            result.msg += "; the search %s matched %d jobs and each was waited on: set latest: true to wait on the newest only" % (
                search.describe(),
                len(keys),
            )
        result.warnings = warnings
        if settings.details_paths is not None:
            for item in result.items:
                if "details" in item:
                    item["details"] = keep_paths(item["details"], settings.details_paths)
        if settings.validate == "warn":
            for item in result.items:
                for problem in item.get("schema_errors") or []:
                    result.warnings.append("training job %s: %s: %s" % (label(item.get("id")), problem.get("path"), problem.get("message")))
        return result


def run(levels, selection, environ=None, **kwargs):
    """Build a :class:`Query`, run it and close it: the whole call for the module and the lookup."""
    with Query(levels, selection, environ=environ, **kwargs) as query:
        return query.run()
