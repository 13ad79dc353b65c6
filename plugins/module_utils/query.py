# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Query training jobs and optionally wait for them: the one pipeline behind every plugin.

client request -> JSON-schema validation -> normalised item -> (waiter polls again) -> result.
The module, the lookup and the event source call :func:`query_jobs` (or
:func:`fetch_item`) and only translate the result into their own shape.
"""

from __future__ import annotations

import time

from ansible_collections.modelarts.training.plugins.module_utils.errors import label
from ansible_collections.modelarts.training.plugins.module_utils.fanout import DEFAULT_MAX_CONCURRENCY, fetch_concurrently
from ansible_collections.modelarts.training.plugins.module_utils.jobs import DEFAULT_FAIL_ON, DEFAULT_WAIT_FOR, ITEM_KEYS, TERMINAL_PHASES, build_item
from ansible_collections.modelarts.training.plugins.module_utils.waiter import wait_for_jobs

MESSAGE_JOBS_SHOWN = 20


def v2_key(job_id):
    """The key of a v2 job: its id."""
    return str(job_id)


def v1_key(job_id, version_id):
    """The key of a legacy v1 job version."""
    return ("v1", int(job_id), int(version_id))


def describe(key):
    """Human name of a key, for messages: ``3f7a...`` or ``v1 job 10 version 2``."""
    if isinstance(key, tuple):
        return "v1 job %s version %s" % (key[1], key[2])
    return label(key)


def fetch_item(client, key, validate="strict", fail_on=DEFAULT_FAIL_ON, deadline=None):
    """GET one job (v2 id or v1 key), validate and normalise it into an item.

    Raises ``ModelArtsError`` for API failures and ``SchemaValidationError``
    under ``validate=strict``.
    """
    if isinstance(key, tuple):
        response = client.get_job_version(key[1], key[2], deadline=deadline)
        return build_item(response.data, "v1", validate=validate, fail_on=fail_on, job_ref=describe(key))
    response = client.get_training_job(key, deadline=deadline)
    return build_item(response.data, "v2", validate=validate, fail_on=fail_on, job_ref=describe(key))


def unseen_item(key, error):
    """The item of a job that could not be read: its last state where the error holds one, and the error.

    A schema failure under ``validate=strict`` carries the normalised item (so
    the job's phase is still shown); other errors leave identity only.
    """
    known = getattr(error, "item", None)
    if isinstance(known, dict):
        return dict(known, error=str(error))
    item = dict((name, None) for name in ITEM_KEYS)
    item.update(terminal=False, completed=False, failed=False, schema_errors=[], error=str(error))
    if isinstance(key, tuple):
        item.update(id=key[1], version_id=key[2], api_version="v1")
    else:
        item.update(id=key, api_version="v2")
    return item


class QueryResult(object):
    """The outcome of :func:`query_jobs`.

    ``items`` holds one item per job in the order asked (an :func:`unseen_item`
    for a job never fetched); ``ok`` says whether the call succeeded; ``msg``
    explains a failure (None on success); ``job_messages`` has one line per
    job that is not done on a failure; ``errors`` maps keys to the exceptions
    that made it fail; ``wait`` is the ``WaitResult`` when waiting.
    """

    def __init__(self, items, ok, msg=None, errors=None, wait=None, job_messages=None):
        self.items = items
        self.ok = ok
        self.msg = msg
        self.errors = errors or {}
        self.wait = wait
        self.job_messages = job_messages or []

    def first_error(self):
        """The first exception behind a failure, or None."""
        return next(iter(self.errors.values()), None)


def _errors_message(errors):
    shown = list(errors.items())[:MESSAGE_JOBS_SHOWN]
    text = "; ".join(str(exc) for _key, exc in shown)
    if len(errors) > len(shown):
        text += "; and %d more" % (len(errors) - len(shown))
    if len(errors) > 1:
        text = "%d training jobs could not be read: %s" % (len(errors), text)
    return text


def query_jobs(client, keys, validate="strict", fail_on=DEFAULT_FAIL_ON, wait=False, wait_for=DEFAULT_WAIT_FOR,
               wait_timeout=3600, wait_sleep=5, wait_sleep_max=60, max_concurrency=DEFAULT_MAX_CONCURRENCY,
               initial=None, clock=time.monotonic, sleeper=time.sleep, start=None):
    """Fetch the jobs of ``keys`` concurrently over the client's one session; wait when asked.

    Without ``wait`` any error fails the call.  With ``wait`` there is one
    deadline, ``wait_timeout`` seconds after ``start`` (a ``clock`` reading,
    default now), for the whole call; transient errors and a few not-founds
    right after creation are tolerated, and any job reaching a ``fail_on``
    phase ends the wait at once.  ``initial`` may hold items already known
    (from a name search, made after ``start``), keyed like ``keys``.
    """
    keys = list(dict.fromkeys(keys))
    start = clock() if start is None else start
    deadline = start + wait_timeout if wait else None

    def fetch_one(key, when):
        return fetch_item(client, key, validate=validate, fail_on=fail_on, deadline=when)

    def poll(some, when):
        return fetch_concurrently(some, fetch_one, max_concurrency=max_concurrency, deadline=when, clock=clock)

    if not wait:
        known = dict(initial or {})
        missing = [key for key in keys if key not in known]
        known.update(poll(missing, deadline) if missing else {})
        errors = dict((key, value) for key, value in known.items() if isinstance(value, BaseException))
        items = [unseen_item(key, known[key]) if key in errors else known[key] for key in keys]
        return QueryResult(items, not errors, _errors_message(errors) if errors else None, errors,
                           job_messages=[str(exc) for exc in errors.values()])

    outcome = wait_for_jobs(keys, poll, wait_for, fail_on, wait_timeout, wait_sleep, wait_sleep_max, clock=clock, sleeper=sleeper,
                            initial=initial, terminal_phases=TERMINAL_PHASES, start=start)
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


def keys_for_name(client, name, validate="strict", fail_on=DEFAULT_FAIL_ON, deadline=None):
    """Keys and items of the v2 jobs named exactly ``name`` (every page of the search API)."""
    documents = client.search_training_jobs(name, deadline=deadline)
    initial = {}
    for document in documents:
        item = build_item(document, "v2", validate=validate, fail_on=fail_on)
        if item["id"] is not None:
            initial[v2_key(item["id"])] = item
    return list(initial), initial
