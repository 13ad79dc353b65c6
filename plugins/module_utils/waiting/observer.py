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
  client first) gives its error to each job of that request, like a failed GET.  Jobs selected by a name
  are searched by that name instead (every page) while it takes fewer requests than by id.

``settled`` phases (the wait's ``wait_for`` phases that are final: a job never leaves them) need no GET in the
round the search shows them: the job is done in that round, as far as the search can tell, and stays
*unconfirmed* until its own GET reads it.  That GET fills the room a round's searches leave
(:meth:`SearchPhases.observe` answers for those jobs too, beyond the keys asked), so that no round costs more
than :func:`round_budget` calls (the searches of every watched job plus :data:`ROUND_HEADROOM` of them) for GETs
the caller could wait for; a GET that cannot wait (a job ending the wait, missing from the search, or an
unconfirmed job the caller asks about again: the waiter does so before it calls a wait satisfied) is sent
whatever the room.  So a gate opens on jobs' own GETs only, never on a search alone.

``adopt(items)`` takes items learned from a search outside the source (the name search a wait starts with) by the
rule of every round: it returns the items the caller may judge (search items in no acted phase, and those in a settled
phase, unconfirmed), and the source's next ``observe`` GETs the other jobs instead of searching them again - so a
search never decides a wait, in its first round either.  ``complete(deadline)`` GETs the jobs whose last item came
from a search, so that a result ends with every item as complete as one GET per job leaves it.  ``batch`` is how many jobs one request reads: the
event source groups its rounds by it.  :func:`phase_source` picks one: a single job is one GET a round either
way, and the search would only add a GET at the end, so it keeps the plain GET.
"""

from __future__ import annotations

import math
import time

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.service.fanout import DEFAULT_MAX_CONCURRENCY, DeadlineExceeded, fetch_concurrently
from ansible_collections.modelarts.training.plugins.module_utils.job.items import search_item
from ansible_collections.modelarts.training.plugins.module_utils.job.phases import DEFAULT_FAIL_ON
from ansible_collections.modelarts.training.plugins.module_utils.service.search import MAX_IDS, documents_by_id
from ansible_collections.modelarts.training.plugins.module_utils.job.validation import SchemaValidationError

# The fewest v2 jobs a bulk search is used for (see phase_source).
SEARCH_MIN_JOBS = 2

# What GETs that can wait may add to a round, as a share of the searches a round of every watched job costs.
ROUND_HEADROOM = 0.25


def round_budget(watched):
    """The most calls a round of watching ``watched`` v2 jobs spends, GETs that cannot wait aside: the searches of
    every job (:data:`search.MAX_IDS` a request) plus :data:`ROUND_HEADROOM` of them, at least one (25 for 200 jobs)."""
    searches = math.ceil(watched / MAX_IDS)
    return searches + max(1, math.ceil(searches * ROUND_HEADROOM))


def chunks(keys, size):
    """``keys`` in consecutive lists of at most ``size``."""
    keys = list(keys)
    return [keys[index : index + size] for index in range(0, len(keys), size)]


class _Source(object):
    """What both sources remember per job: which last items came from a search (``partial``), which of those
    jobs are done by that search alone (``unconfirmed``, in the order they were seen so), and which must be read by
    their own GET next (``due``: a search adopted them in a phase the caller acts on)."""

    def __init__(self, fetch, settled=(), acted=()):
        self._fetch = fetch
        self.settled = frozenset(settled)
        self.acted = frozenset(acted) - self.settled
        self.partial = set()  # keys whose last item came from a search
        self.unconfirmed = {}  # keys whose search item is in a settled phase, oldest first (a dict as an ordered set)
        self.due = set()  # keys whose next observation must be their GET's, not a search's

    def usable(self, item):
        """Whether a search's ``item`` may stand for the job's own GET in a round: the one rule of every round and of
        :meth:`adopt` - not when its phase is one the caller acts on (unless settled: then the job is unconfirmed) or
        cannot be read."""
        return isinstance(item, dict) and item.get("phase") is not None and item.get("phase") not in self.acted

    def _searched(self, key, item):
        self.partial.add(key)
        if item.get("phase") in self.settled:
            self.unconfirmed.setdefault(key, None)

    def _read(self, results):
        """Take GET answers: a job its GET read is no longer partial nor unconfirmed (a failed GET leaves it as it was)."""
        for key, value in results.items():
            if isinstance(value, dict):
                self.partial.discard(key)
                self.unconfirmed.pop(key, None)
        return results

    def adopt(self, items):
        """Take ``{key: item or exception}`` learned from a search outside the source (a name search) as search items,
        by the rule of every round: return those the caller may judge as they are; the other jobs of a v2 id (an item in
        an acted phase or without one, a document that broke the schema) are left out and ``due`` for their GET."""
        kept = {}
        for key, item in items.items():
            if self.usable(item):
                kept[key] = item
                self._searched(key, item)
            elif isinstance(key, str):
                self.due.add(key)
            else:
                kept[key] = item  # a result the search could not key (no readable id): no GET can read it
        return kept

    def complete(self, deadline=None):
        """``{key: item or exception}`` from a GET of every job whose last item came from a search."""
        keys = sorted(self.partial, key=str)
        if not keys:
            return {}
        return self._read(self._fetch(keys, deadline))

    def forget(self, keys):
        """Stop remembering ``keys`` (jobs no longer watched)."""
        for key in keys:
            self.partial.discard(key)
            self.unconfirmed.pop(key, None)
            self.due.discard(key)


class GetPhases(_Source):
    """One GET per job: ``fetch(keys, deadline)`` -> ``{key: item or exception}`` (``query``'s fetch)."""

    batch = 1

    def observe(self, keys, deadline=None):
        """``{key: item or exception}`` for ``keys``, each from its own GET."""
        keys = list(keys)
        self.due.difference_update(keys)
        return self._read(self._fetch(keys, deadline))


class SearchPhases(_Source):
    """Phases from the search API, :data:`search.MAX_IDS` jobs a request, with GETs only where needed (module docstring).

    ``search(ids, deadline)`` -> ``{id: document}`` (the client's ``search_training_jobs_by_id``);
    ``build(document, key)`` -> item, masked (raises ``SchemaValidationError`` under ``validate=strict``);
    ``fetch(keys, deadline)`` -> ``{key: item or exception}`` (one GET per job, concurrently);
    ``acted``: the phases whose item must be a GET's in the round they are seen; ``settled``: those whose GET can
    come in a later round; ``watched``: how many v2 jobs the calls of a round are budgeted for (:func:`round_budget`).
    """

    def __init__(self, search, build, fetch, acted, settled=(), watched=0, max_concurrency=16, clock=time.monotonic, named=None, name_pages=None):
        # pylint: disable=too-many-arguments
        super().__init__(fetch, settled, acted)
        self._search = search
        self._named = named
        self.name_pages = name_pages  # what a search of the watched name cost last (requests), None: not known yet
        self._build = build
        self.budget = round_budget(watched)
        self._max_concurrency = max_concurrency
        self._clock = clock
        self.disabled = None  # the error that turned the search off for this call, if any

    @property
    def batch(self):
        """Jobs one request reads: :data:`search.MAX_IDS`, or 1 once the search is off (then every job is a GET)."""
        return MAX_IDS if self.disabled is None else 1

    def observe(self, keys, deadline=None):
        """``{key: item or exception}`` for ``keys``, in their order, then for the unconfirmed jobs this round's room
        let it GET (jobs the caller took for done already, and asked no more about)."""
        keys = list(dict.fromkeys(keys))
        skipped = self.unconfirmed.keys() | self.due
        self.due.difference_update(keys)
        searchable = [key for key in keys if isinstance(key, str) and key not in skipped] if self.disabled is None else []
        answers = {}
        groups = chunks(searchable, MAX_IDS)
        spent = len(groups)
        if groups and self._named is not None and self.name_pages is not None and self.name_pages < len(groups):
            spent, answers = self._by_name(searchable, deadline)
        elif groups:
            found = fetch_concurrently(
                list(range(len(groups))),
                lambda index, when: self._search(groups[index], when),
                max_concurrency=self._max_concurrency,
                deadline=deadline,
                clock=self._clock,
            )
            for index, group in enumerate(groups):
                answers.update(self._kept(group, found[index]))
        need_get = [key for key in keys if key not in answers]
        room = self.budget - spent - len(need_get)
        confirm = [key for key in self.unconfirmed if key not in need_get][: max(0, room)]
        if need_get or confirm:
            answers.update(self._read(self._fetch(need_get + confirm, deadline)))
        return dict((key, answers[key]) for key in keys + [key for key in confirm if key not in keys])

    def _by_name(self, keys, deadline):
        """``(requests, {key: item or exception})``: what one search of the watched name (every page) says of ``keys``."""
        if deadline is not None and self._clock() >= deadline:
            return 0, self._kept(keys, DeadlineExceeded(keys[0]))
        pages = []
        try:
            found = self._named(deadline, pages)
        except Exception as error:  # pylint: disable=broad-except
            found = error  # each job's error, as for a failed search by id (a 4xx turns the search off)
        if pages:
            self.name_pages = pages[0]
        return (pages[0] if pages else 1), self._kept(keys, found)

    def _kept(self, group, found):
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
            except (SchemaValidationError, ModelArtsError):
                # A document that breaks the schema, or that is not the job's (jobs.WrongJobError): the job's own GET
                # says what is wrong with it (or that nothing is).
                continue
            if not self.usable(item):
                continue
            kept[key] = item
            self._searched(key, item)
        return kept

    @staticmethod
    def _gives_up(error):
        """Whether a failed search means the search cannot serve this call (then GETs do): an error that is neither
        transient nor the fan-out's own (a request never sent) - a 4xx such as a refused filter or permission."""
        return isinstance(error, ModelArtsError) and not error.transient


def phase_source(keys, fetch, search, build, acted, settled=(), max_concurrency=16, clock=time.monotonic, named=None, name_pages=None):
    """The phase source for watching ``keys``: :class:`SearchPhases` from :data:`SEARCH_MIN_JOBS` v2 jobs, else :class:`GetPhases`.

    Calls per round for ``n`` v2 jobs: ``n`` GETs, or ``ceil(n / 10)`` searches plus a GET for each job
    reaching an acted phase (a GET it gets either way, within :func:`round_budget` for a settled one); the
    search adds a GET per job still watched when the result is completed.  For one job both cost one call a
    round, so the GET, with nothing to complete, is never worse; from two jobs on the search costs fewer calls
    every round it is not the last.  ``settled`` phases (final ones among those waited for) are in ``acted`` or not:
    either way a job seen in one by a search is done, its GET to come (module docstring).

    When the jobs were selected by a name, ``named(deadline, pages)`` searches that name (every page; ``{id:
    document}``, ``pages`` receiving the requests it took) and ``name_pages`` is what that cost the last time: a round
    searches by name while that is fewer requests than the searches by id (4 pages of 50 for 200 jobs of one name,
    against 20), and by id once the jobs still watched take fewer.
    """
    v2 = [key for key in keys if isinstance(key, str)]
    if len(v2) >= SEARCH_MIN_JOBS:
        return SearchPhases(search, build, fetch, acted, settled, len(v2), max_concurrency=max_concurrency, clock=clock, named=named, name_pages=name_pages)
    return GetPhases(fetch, settled, acted)


def for_client(
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
    (``{key: item or exception}``, as ``items.fetch_item`` builds them).  ``search``: the :class:`Search` the jobs were
    selected by, which (``name_pages`` requests the last time) may read their phases in fewer requests than by id;
    ``workspace_id``: the workspace the searches by id look in (the jobs' own, found there)."""

    def build(document, key):
        return search_item(document, key, validate=validate, fail_on=fail_on, include_tokens=include_tokens, tokens=tokens)

    def named(deadline, pages):
        return documents_by_id(client.search_training_jobs(search, deadline=deadline, pages=pages))

    def by_id(ids, deadline):
        return client.search_training_jobs_by_id(ids, deadline=deadline, workspace_id=workspace_id)

    return phase_source(
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


def settle(source, found, deadline=None):
    """``found`` (``{key: item or exception}`` of a name search) with the rule of every round applied by ``source`` (a
    :class:`GetPhases` with no jobs: its rule, :meth:`_Source.adopt`, and its GETs): a job the search shows in an acted
    phase is answered by its own GET (an item, or the GET's error) instead - a search never decides what a job is.  A
    document that broke the schema stays as it is."""
    source.adopt(dict((key, item) for key, item in found.items() if isinstance(item, dict)))
    due = [key for key in found if key in source.due]
    answers = source.observe(due, deadline) if due else {}
    return dict((key, answers.get(key, found[key])) for key in found)
