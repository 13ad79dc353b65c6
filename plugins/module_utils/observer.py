# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the phases of watched jobs are learned, behind one interface: a *phase source*.

The wait loop (``query.query_jobs`` over ``waiter``) and the event source ask a phase source
``observe(keys, deadline)`` once a round and get ``{key: item or exception}``, as one GET per job
would give.  Which way the phases were learned is the source's business:

* :class:`GetPhases`: one GET per job (``fanout``), every item a full document.
* :class:`SearchPhases`: one search request per :data:`search.MAX_IDS` v2 jobs
  (``POST .../training-job-searches`` with an ``id`` filter), and a GET only where the answer needs
  the job's own document: a job whose searched phase is one the caller acts on (``acted``: the wait's
  ``wait_for``, ``fail_on`` and final phases; the event source's ``fail_on``), a job the search did not
  return (deleted, not visible yet, another workspace, a filter the service reads otherwise), a search
  document that breaks the schema, and v1 jobs (no search).  A search that fails for good (a 4xx such
  as a missing ``trainJob:list`` permission, a refused filter, or an answer holding jobs that were not
  asked for: a service that does not filter by id) turns the source into one GET per job for the rest
  of the call, so correctness never depends on the search; a throttled or failing search (retried by the
  client first) gives its error to each job of that request, like a failed GET.

``complete(deadline)`` GETs the jobs whose last item came from a search, so that a result ends with
every item as complete as one GET per job leaves it.  ``batch`` is how many jobs one request reads:
the event source groups its rounds by it.  :func:`phase_source` picks one: a single job is one GET a
round either way, and the search would only add a GET at the end, so it keeps the plain GET.
"""

from __future__ import annotations

import time

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.fanout import DeadlineExceeded, fetch_concurrently
from ansible_collections.modelarts.training.plugins.module_utils.search import MAX_IDS
from ansible_collections.modelarts.training.plugins.module_utils.validation import SchemaValidationError

# The fewest v2 jobs a bulk search is used for (see phase_source).
SEARCH_MIN_JOBS = 2


def chunks(keys, size):
    """``keys`` in consecutive lists of at most ``size``."""
    keys = list(keys)
    return [keys[index : index + size] for index in range(0, len(keys), size)]


class GetPhases(object):
    """One GET per job: ``fetch(keys, deadline)`` -> ``{key: item or exception}`` (``query``'s fetch)."""

    batch = 1

    def __init__(self, fetch):
        self._fetch = fetch

    def observe(self, keys, deadline=None):
        """``{key: item or exception}`` for ``keys``, each from its own GET."""
        return self._fetch(list(keys), deadline)

    def complete(self, deadline=None):
        """Nothing to complete: every item is a GET's.  ``{}``."""
        return {}

    def forget(self, keys):
        """Nothing is remembered per job."""


class SearchPhases(object):
    """Phases from the search API, :data:`search.MAX_IDS` jobs a request, with GETs only where needed (module docstring).

    ``search(ids, deadline)`` -> ``{id: document}`` (the client's ``search_training_jobs_by_id``);
    ``build(document, key)`` -> item, masked (raises ``SchemaValidationError`` under ``validate=strict``);
    ``fetch(keys, deadline)`` -> ``{key: item or exception}`` (one GET per job, concurrently);
    ``acted``: the phases whose item must be a GET's.
    """

    def __init__(self, search, build, fetch, acted, max_concurrency=16, clock=time.monotonic):
        # pylint: disable=too-many-arguments
        self._search = search
        self._build = build
        self._fetch = fetch
        self.acted = frozenset(acted)
        self._max_concurrency = max_concurrency
        self._clock = clock
        self.partial = set()  # keys whose last item came from a search
        self.disabled = None  # the error that turned the search off for this call, if any

    @property
    def batch(self):
        """Jobs one request reads: :data:`search.MAX_IDS`, or 1 once the search is off (then every job is a GET)."""
        return MAX_IDS if self.disabled is None else 1

    def observe(self, keys, deadline=None):
        """``{key: item or exception}`` for ``keys``, in their order."""
        keys = list(dict.fromkeys(keys))
        searchable = [key for key in keys if isinstance(key, str)] if self.disabled is None else []
        answers = {}
        groups = chunks(searchable, MAX_IDS)
        if groups:
            found = fetch_concurrently(
                list(range(len(groups))),
                lambda index, when: self._search(groups[index], when),
                max_concurrency=self._max_concurrency,
                deadline=deadline,
                clock=self._clock,
            )
            for index, group in enumerate(groups):
                answers.update(self._read(group, found[index]))
        need_get = [key for key in keys if key not in answers]
        if need_get:
            answers.update(self._fetch(need_get, deadline))
            self.partial.difference_update(need_get)
        return dict((key, answers[key]) for key in keys)

    def _read(self, group, found):
        """What one search request says of its ``group``: items to keep, errors for all; jobs left out are not in it."""
        if isinstance(found, DeadlineExceeded):
            return dict((key, DeadlineExceeded(key)) for key in group)  # never sent: each job says so, by its own name
        if isinstance(found, BaseException):
            if self._gives_up(found):
                self.disabled = found
                return {}
            return dict((key, found) for key in group)
        kept = {}
        for key in group:
            document = found.get(key)
            if document is None:
                continue
            try:
                item = self._build(document, key)
            except SchemaValidationError:
                continue  # the job's own GET says what is wrong with it (or that nothing is)
            if item.get("phase") in self.acted or item.get("phase") is None:
                continue
            kept[key] = item
            self.partial.add(key)
        return kept

    @staticmethod
    def _gives_up(error):
        """Whether a failed search means the search cannot serve this call (then GETs do): an error that is neither
        transient nor the fan-out's own (a request never sent) - a 4xx such as a refused filter or permission."""
        return isinstance(error, ModelArtsError) and not error.transient

    def complete(self, deadline=None):
        """``{key: item or exception}`` from a GET of every job whose last item came from a search."""
        keys = sorted(self.partial, key=str)
        if not keys:
            return {}
        results = self._fetch(keys, deadline)
        self.partial.difference_update(key for key, value in results.items() if isinstance(value, dict))
        return results

    def forget(self, keys):
        """Stop remembering ``keys`` (jobs no longer watched)."""
        self.partial.difference_update(keys)


def phase_source(keys, fetch, search, build, acted, max_concurrency=16, clock=time.monotonic):
    """The phase source for watching ``keys``: :class:`SearchPhases` from :data:`SEARCH_MIN_JOBS` v2 jobs, else :class:`GetPhases`.

    Calls per round for ``n`` v2 jobs: ``n`` GETs, or ``ceil(n / 10)`` searches plus a GET for each job
    reaching an acted phase (a GET it gets either way); the search adds a GET per job still watched when
    the result is completed.  For one job both cost one call a round, so the GET, with nothing to
    complete, is never worse; from two jobs on the search costs fewer calls every round it is not the last.
    """
    v2 = [key for key in keys if isinstance(key, str)]
    if len(v2) >= SEARCH_MIN_JOBS:
        return SearchPhases(search, build, fetch, acted, max_concurrency=max_concurrency, clock=clock)
    return GetPhases(fetch)
