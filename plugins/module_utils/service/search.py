# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The search API (``POST /v2/{project_id}/training-job-searches``): every job with a name, whatever the paging.

Two questions are asked of it: every job a search selects - a name, tags, in a workspace, or only the newest of
them - (:func:`jobs_matching`; the search itself, its body and exact-name rule, is ``selection.Search``), and the jobs
with these ids (:func:`jobs_with_ids`, at most :data:`MAX_IDS` per request: how the phases of many jobs are polled in
bulk, in the workspace they were found in).
The client sends each page's request (signing, retries, deadline: the ``post(body, operation)`` it passes);
this module decides what to ask next and what the pages add up to.
"""

from __future__ import annotations

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.text import label


def _metadata_name(document):
    metadata = document.get("metadata")
    return metadata.get("name") if isinstance(metadata, dict) else None


def _metadata_id(document):
    """The readable ``metadata.id`` of a search result (a non-empty string), or None."""
    metadata = document.get("metadata") if isinstance(document, dict) else None
    job_id = metadata.get("id") if isinstance(metadata, dict) else None
    return job_id if isinstance(job_id, str) and job_id else None


def _items(response, what):
    """The ``items`` list of a search answer: a null list is an empty one (optional fields may be null), no list at all
    is an error naming ``what`` was asked."""
    items = response.data.get("items", False) if isinstance(response.data, dict) else False
    items = [] if items is None else items
    if not isinstance(items, list):
        raise ModelArtsError("%s: the answer has no 'items' list" % what, request_id=response.request_id)
    return items


def _repeats_most_of(items, ids):
    """Whether most of the identifiable documents of ``items`` are among ``ids``: a page read at an item offset."""
    known = [job_id for job_id in (_metadata_id(item) for item in items) if job_id is not None]
    return bool(known) and 2 * sum(1 for job_id in known if job_id in ids) > len(known)


def _create_time(document):
    metadata = document.get("metadata") if isinstance(document, dict) else None
    value = metadata.get("create_time") if isinstance(metadata, dict) else None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def newest_first(document):
    """The sort key, used with ``reverse=True``, of the one order the collection gives a search's jobs: the newest
    ``metadata.create_time`` first and, among jobs created in the same millisecond, the greatest ``metadata.id`` (compared as
    text) first.  ``latest`` keeps the first job of that order, and the results, the event source's first listing included,
    follow it - whatever order the service lists jobs created together in.  Documents without a readable time come
    after those with one, in the service's order (a stable sort)."""
    created = _create_time(document)
    if created is None:
        return (False, 0, "")
    return (True, created, _metadata_id(document) or "")


def jobs_named(post, name, page_size=50, max_pages=200, pages=None, max_bytes=None):
    """All v2 jobs whose name is exactly ``name`` (:func:`jobs_matching` of a search by that name alone)."""
    return jobs_matching(post, _NameOnly(name), page_size=page_size, max_pages=max_pages, pages=pages, max_bytes=max_bytes)


class _NameOnly(object):
    """A search by a name alone, in the default workspace (``selection.Search``'s interface, for callers with a name)."""

    latest = False

    def __init__(self, name):
        self.name = name

    def filters(self):
        return [{"key": "name", "operator": "like", "value": [self.name]}]

    def fields(self):
        return {}

    def matches(self, document):
        return _metadata_name(document) == self.name

    def describe(self):
        return "named '%s'" % label(self.name)


def jobs_matching(post, search, page_size=50, max_pages=200, pages=None, created_since=None, max_bytes=None):
    """All v2 jobs ``search`` selects (``selection.Search``: its ``filters()`` and ``fields()`` in every request, its
    ``matches()`` on every answer), in the order of :func:`newest_first`, following every page of the search API.  ``pages``,
    a list, receives the number of requests it took (what the next search will cost, about).

    With ``search.latest`` only the first match in that order is returned: pages are sorted by ``create_time``, newest
    first, so paging stops at the first page holding a match - unless that page ends with a job created in the same
    millisecond as its newest match: the service lists such jobs in an order of its own, so the pages go on while they
    do, and the tie is broken by :func:`newest_first` (the greatest id), never by where the service put a job.  With
    ``created_since`` (epoch milliseconds) paging stops after the first page reaching a job created before it (see
    :func:`pages_matching`).

    The answer is held whole, so it is bounded: a search still going after ``max_pages`` requests (``max_pages`` x
    ``page_size`` jobs: 10,000) is an error naming that limit and what to do, never a silently partial answer, and so
    are pages whose bodies together (each response's ``size``) pass ``max_bytes``.  A caller that handles a page at
    a time (the event source) reads :func:`pages_matching` instead, which has no such limit.
    """
    found = []
    counts = {}
    what = search.describe()
    read = [0, 0]  # bytes of the pages so far, requests

    def counted(body, operation):
        response = post(body, operation)
        read[0] += getattr(response, "size", 0) or 0
        read[1] += 1
        if max_bytes is not None and read[0] > max_bytes:
            raise ModelArtsError(
                "search training jobs %s: its %d pages so far hold %d bytes, more than the whole search may hold (%d bytes, 8 x max_response_bytes)%s "
                "(%d jobs seen), so the search was stopped rather than answer with part of the jobs; %s"
                % (what, read[1], read[0], max_bytes, _substrings(search), counts.get("seen", 0) + len(_items(response, what)), _narrowing(search)),
                request_id=response.request_id,
            )
        return response

    for page in pages_matching(counted, search, page_size=page_size, max_pages=max_pages, created_since=created_since, counts=counts):
        found.extend(page)
        if search.latest and found:
            newest = max(found, key=newest_first)
            last_created = counts.get("last_created")
            tied = last_created is not None and last_created == _create_time(newest)
            if counts["last"] or not tied:
                if pages is not None:
                    pages.append(counts["requests"])
                return [newest]
    if counts.get("capped"):
        raise ModelArtsError(
            "search training jobs %s: more than %d matching jobs (%d pages of %d), more than one search returns whole%s (%d jobs seen), so the search "
            "was stopped rather than answer with part of the jobs; %s"
            % (what, max_pages * page_size, max_pages, page_size, _substrings(search), counts.get("seen", 0), _narrowing(search))
        )
    if pages is not None:
        pages.append(counts.get("requests", 0))
    found.sort(key=newest_first, reverse=True)
    return found


def _substrings(search):
    return " (the service's name filter matches substrings)" if getattr(search, "name", None) is not None else ""


def _narrowing(search):
    """What a user can do about a search that selects too much."""
    hints = ["add latest: true for the newest match only"]
    hints.append("narrow the tags" if getattr(search, "tags", None) else "add tags")
    if getattr(search, "name", None) is not None:
        hints.append("use a more distinctive name")
    if getattr(search, "workspace_id", None) is None:
        hints.append("give a workspace_id")
    return ", ".join(hints[:-1]) + " or " + hints[-1]


# The newest jobs of a workspace the closest names to a name no job has are picked from: one page, one request.
NAMES_PAGE = 50


def names_in_workspace(post, workspace_id=None, page_size=NAMES_PAGE):
    """The distinct names of the ``page_size`` newest v2 jobs of a workspace (None: the default one), newest first: one
    request with no filter, whatever the workspace holds - what ``selection.closest_names`` picks the names closest to
    a misspelt one from (a job older than that page is not offered)."""
    body = {"offset": 0, "limit": page_size, "sort_by": "create_time", "order": "desc", "filters": []}
    if workspace_id is not None:
        body["workspace_id"] = workspace_id
    what = "list the names of the newest training jobs"
    names = []
    for document in _items(post(body, what), what)[:page_size]:
        name = _metadata_name(document) if isinstance(document, dict) else None
        if isinstance(name, str) and name and name not in names:
            names.append(name)
    return names


class PageFailed(object):
    """What :func:`pages_matching` yields, with ``resume_on``, in place of a page whose request failed: the ``error``.
    The next ``next()`` asks for the same page again, so a long listing keeps its place through a failed request."""

    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


def pages_matching(post, search, page_size=50, max_pages=None, pages=None, created_since=None, counts=None, resume_on=()):
    """The v2 jobs ``search`` selects, a page at a time: yields the list of each page's matching documents not seen on an
    earlier page, in the order of :func:`newest_first`.  Memory holds one page and the ids seen, however many jobs match; ``max_pages``
    (None: no limit) stops paging - ``counts["capped"]`` then says the search was not over.  ``counts``, a dict,
    receives ``requests``, ``seen`` (documents seen), ``last`` (whether the page yielded was the last) and
    ``last_created`` (the ``create_time`` of the page's last document, matching or not); ``pages``, a list, receives the number of requests at the end.
    ``resume_on`` (exception classes): a request failing with one of them yields a :class:`PageFailed` instead of
    raising, and the next ``next()`` asks for that page again - the pages already read are not read again.

    With ``created_since`` (epoch milliseconds) paging stops after the first page reaching a job created before it:
    what is new since a listing whose newest job was created then (the event source's rounds), in one request while
    fewer than ``page_size`` jobs were created since.

    The API's ``name`` filter matches substrings, so the exact match is applied here.  ``offset``
    is a page index in the SDK's model (0 = first page); an older edition of the API reference
    calls it an item offset.  Either reading gives every job once: the second request
    (``offset`` 1) tells them apart - read as an item offset it repeats all but the first job of
    the first page - and the offsets that follow are page indexes or item offsets accordingly.
    Documents are de-duplicated by ``metadata.id`` (jobs created while paging shift the pages);
    a document without a readable id is kept (``items.keys_for_search`` reports it), and under the
    item reading skipped where its position was seen already.  Paging stops at an empty or short page,
    once ``total`` documents were seen, or at a page that adds nothing new.  A page holding more documents than the
    ``limit`` asked is an error (a service that does not page as asked).
    """
    counts = {} if counts is None else counts
    ids = set()
    seen = 0  # documents seen: distinct ids, plus documents without one
    offset, item_offsets, covered = 0, False, 0  # covered: where the item reading's next unseen document is
    what = search.describe()
    request = 0
    while max_pages is None or request < max_pages:
        body = {"offset": offset, "limit": page_size, "sort_by": "create_time", "order": "desc", "filters": search.filters()}
        body.update(search.fields())
        try:
            response = post(body, "search training jobs %s (offset %d)" % (what, offset))
            counts["requests"] = request + 1
            items = _items(response, "search training jobs %s" % what)
        except resume_on as error:
            yield PageFailed(error)
            continue
        if len(items) > page_size:
            raise ModelArtsError(
                "search training jobs %s (offset %d): the answer holds %d documents for a limit of %d: the service does not page as asked, "
                "so the search was stopped" % (what, offset, len(items), page_size),
                request_id=response.request_id,
            )
        if request == 1 and _repeats_most_of(items, ids):
            item_offsets = True
        # Read at an item offset, the page starts inside what was seen: by id, and by position for id-less documents.
        repeated = covered - offset if item_offsets else 0
        fresh, older = 0, False
        page = []
        for position, document in enumerate(items):
            created = _create_time(document)
            if created_since is not None and created is not None and created < created_since:
                older = True
            job_id = _metadata_id(document)
            if (job_id is None and position < repeated) or (job_id is not None and job_id in ids):
                continue
            if job_id is not None:
                ids.add(job_id)
            fresh += 1
            if isinstance(document, dict) and search.matches(document):
                page.append(document)
        seen += fresh
        counts["seen"] = seen
        covered = max(covered, offset + len(items))
        total = response.data.get("total")
        if isinstance(total, bool) or not isinstance(total, int):
            total = None
        # The page that told the readings apart may hold nothing new (jobs created meanwhile shift it).
        stale = fresh == 0 and not (item_offsets and request == 1)
        last = not items or len(items) < page_size or stale or older or (total is not None and seen >= total)
        counts["last"] = last
        counts["last_created"] = _create_time(items[-1]) if items else None
        del items, response
        page.sort(key=newest_first, reverse=True)
        yield page
        if last:
            if pages is not None:
                pages.append(request + 1)
            return
        offset = covered if item_offsets else offset + 1
        request += 1
    counts["capped"] = True
    if pages is not None:
        pages.append(request)


def documents_by_id(documents):
    """``{id: document}`` of the ``documents`` with a readable ``metadata.id`` (the first of any id given twice)."""
    found = {}
    for document in documents:
        job_id = _metadata_id(document)
        if job_id is not None and job_id not in found:
            found[job_id] = document
    return found


# The most ids one filter takes (the Terraform provider's documentation of the search API; the emulator
# answers more with ModelArts.0101).
MAX_IDS = 10


def jobs_with_ids(post, ids, workspace_id=None):
    """``{id: document}`` for the v2 jobs among ``ids`` (at most :data:`MAX_IDS`) the search returns: one request.

    The filter is ``{"key": "id", "operator": "in", "value": ids}``; one page of 50 holds every answer.  The API
    reference lists ``in`` among the operators and the SDK's ``Filter`` model takes any key with a list of values;
    the ``id`` key and its cap of 10 values are the Terraform provider's documentation.  ``workspace_id``: the workspace
    the jobs were found in (a search sees one workspace; None: the default one).  A job the answer lacks is
    simply not in the result (the caller reads it another way); an answer holding a job that was not asked for
    means the service does not read the filter so, and is a ``ModelArtsError`` that is not transient (the caller
    then stops using the search) rather than a page of other jobs taken for an answer.
    """
    ids = list(dict.fromkeys(ids))
    if not 0 < len(ids) <= MAX_IDS:
        raise ValueError("jobs_with_ids takes 1 to %d ids, got %d" % (MAX_IDS, len(ids)))
    body = {"offset": 0, "limit": 50, "sort_by": "create_time", "order": "desc", "filters": [{"key": "id", "operator": "in", "value": ids}]}
    if workspace_id is not None:
        body["workspace_id"] = workspace_id
    response = post(body, "search %d training job%s by id" % (len(ids), "" if len(ids) == 1 else "s"))
    items = _items(response, "search training jobs by id")
    asked = set(ids)
    found = {}
    for document in items:
        job_id = _metadata_id(document)
        if job_id is not None and job_id not in asked:
            raise ModelArtsError(
                "search training jobs by id: the answer holds job %s, which was not asked for: the service does not filter by id as expected" % label(job_id),
                request_id=response.request_id,
            )
        if job_id is not None and job_id not in found:
            found[job_id] = document
    return found
