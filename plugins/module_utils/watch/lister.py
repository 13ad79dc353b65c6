# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watch's lister: what a watch by ``name`` and/or ``tags`` asks the search.

The first round follows the unfinished jobs first (the search with a ``phase`` filter), so that the size of the
history never delays the news: with ``startup: changes`` before anything else, then only what is new: the jobs
created since the state file's listing covered, or without one the newest job alone (the point from which jobs are
new) - finished jobs are never listed one by one for ``changes``. With ``startup: all`` it lists every job (a page at
a time, those already listed skipped), the unfinished ones asked for once the listing is longer than four pages. Each
later round asks for what was created since the newest job seen and for the selection's unfinished jobs (a job
tagged, moved or renamed into the selection while it runs), the two searches at once. Pages come one at a time, so
memory holds a page and the ids seen, however many jobs match; a failed request is asked again
(``search.PageFailed``).
"""

from __future__ import annotations

import threading

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.service.search import PageFailed
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import Search
from ansible_collections.modelarts.training.plugins.module_utils.watch.events import (
    CREATED_SINCE_MARGIN_MS,
    UNFINISHED_PHASES,
    JobState,
    logger,
    message_of,
    refuses_caller,
)

SEARCH_ERRORS = (ModelArtsError, ConnectionConfigError)
# ``startup: all``: a listing longer than this many pages (200 jobs) has its unfinished jobs asked for after them, before
# the rest; a shorter one is over before that search would have told anything.
PAGES_BEFORE_UNFINISHED = 4


class Lister(object):
    """The searches of one watch.

    ``search``: the ``selection.Search``; ``query``: the door (``search_pages``, ``search``, ``redact``); ``startup``;
    ``covered``: what the state file's listing covered (epoch ms) or None; ``clock`` monotonic and ``wall`` epoch
    seconds."""

    def __init__(self, search, query, startup, covered, clock, wall):
        self.search = search
        self.query = query
        self.startup = startup
        self.covered = covered
        self.wall = wall
        self.state = JobState(clock())  # the search's schedule and failures
        self.newest = None  # the newest create_time (epoch ms) any search returned: what is new comes after it
        self.started = None  # when the first round started (epoch ms, this host's clock)
        self.listed = False  # the first round is over
        self.complete = False  # the first round listed every job of the selection
        self.listed_keys = set()  # what the first round listed
        self.unfinished_off = False  # the service refused the phase filter for good
        self._pages = None
        self._ahead = None  # the next page, asked for while the last one is handled: (thread, box)

    def seen(self, newest):
        """Note ``newest`` (epoch ms, or None), the newest create_time of an answer."""
        if newest is not None:
            self.newest = max(newest, self.newest or newest)

    # -- the first round ------------------------------------------------------------------------------------------

    def next_page(self):
        """The first round's next page: ``(keys, found, last)``, a ``search.PageFailed`` (asked again at the next call),
        or None once the round is over.  The page after it is asked for at once, in a helper thread, while the caller
        handles this one (its GETs, its events): the listing's requests and the reads of its jobs overlap."""
        if self._pages is None:
            self.started = int(self.wall() * 1000)
            self._pages = self._first_round()
        page = self._take()
        if page is None or isinstance(page, PageFailed):
            return page
        keys, found, newest = page
        self.seen(newest)
        self.listed_keys.update(key for key in keys if isinstance(key, str))
        self._ahead = self._fetch_ahead()
        return keys, found

    def _take(self):
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return next(self._pages, None)
        thread, box = ahead
        thread.join()
        if "error" in box:
            raise box["error"]
        return box.get("page")

    def _fetch_ahead(self):
        box = {}

        def run():
            try:
                box["page"] = next(self._pages, None)
            except BaseException as error:  # pylint: disable=broad-except  # handed to the caller's thread by _take
                box["error"] = error

        thread = threading.Thread(target=run, name="listing-ahead", daemon=True)
        thread.start()
        return thread, box

    def _first_round(self):
        """The pages of the first round (a generator).  ``startup: changes``: the unfinished jobs, then only what is new (or
        every job when the service refuses the ``phase`` filter).  ``startup: all``: every job, the unfinished ones asked
        for once the listing has gone past its first ``PAGES_BEFORE_UNFINISHED`` pages, before the rest of it."""
        if self.startup == "all":
            self.complete = True
            listed = 0
            for page in self._stage(self.search):
                yield page
                if not isinstance(page, PageFailed):
                    listed += 1
                    if listed == PAGES_BEFORE_UNFINISHED:
                        yield from self._unfinished_pages()
            return
        yield from self._unfinished_pages()
        if self.unfinished_off:
            self.complete = True
            yield from self._stage(self.search)
        else:
            yield from self._new_since_covered()

    def _unfinished_pages(self):
        for page in self._stage(self.search.in_phases(UNFINISHED_PHASES)):
            if isinstance(page, PageFailed) and not getattr(page.error, "transient", False) and not refuses_caller(page.error):
                self._refused(page.error)
                return
            # A refusal of the credentials or their permissions is every search's: the watcher stops on it, with its message alone.
            yield page

    def _stage(self, search):
        for page in self.query.search_pages(search, resume_on=SEARCH_ERRORS):
            if isinstance(page, PageFailed):
                yield page
                continue
            keys, found, newest, _last = page
            yield keys, found, newest

    def _new_since_covered(self):
        """``startup: changes``: the jobs created since the state file's listing covered, or, without one, since the newest
        job (asked for alone first) - each less the margin later rounds ask with, so that what they bring back was seen
        here; one request while fewer than a page are new."""
        since = None if self.covered is None else self.covered - CREATED_SINCE_MARGIN_MS
        if since is None:
            only = Search(name=self.search.name, tags=self.search.tags, latest=True, workspace_id=self.search.workspace_id)
            page = yield from self._asked(only, None)
            if page[2] is None:
                return
            since = page[2] - CREATED_SINCE_MARGIN_MS
        yield from self._asked(self.search, since)

    def _asked(self, search, since):
        """One whole search (``query.search``) as a page, asked again after a failure; the page, once yielded."""
        while True:
            newest = []
            try:
                keys, found = self.query.search(search, None, None, since, newest)
            except SEARCH_ERRORS as error:
                yield PageFailed(error)
                continue
            page = keys, found, (newest[0] if newest else None)
            yield page
            return page

    def _refused(self, error):
        self.unfinished_off = True
        logger.warning(
            "the search for the unfinished jobs %s was refused (%s): the first round lists every job, and a job that starts to match after its "
            "creation is no longer picked up",
            self.search.describe(),
            message_of(error, self.query.redact),
        )

    def over(self):
        """The first round is over."""
        self.listed = True
        self._pages = None

    # -- later rounds -----------------------------------------------------------------------------------------------

    def later(self):
        """``(keys, found, complete, joined)`` of a later round: the jobs created since the newest seen (every job, while none was) and the
        selection's unfinished jobs, the two searches at once (a round takes the longer of them, not both).  Raises the
        error of the search for new jobs; the unfinished jobs' search failing is skipped for a round (a refusal for good
        turns it off, with one warning).  ``complete``: no job was seen yet, so the search was for every job; ``joined``: the
        keys only the unfinished jobs' search returned (older than the newest seen: they started to match since)."""
        since = None if self.newest is None else self.newest - CREATED_SINCE_MARGIN_MS
        unfinished = {}
        helper = threading.Thread(target=lambda: unfinished.setdefault("answer", self._unfinished()), name="unfinished-search", daemon=True)
        if since is not None:
            helper.start()
        newest = []
        try:
            keys, found = self.query.search(self.search, None, None, since, newest)
        finally:
            if since is not None:
                helper.join()
        self.seen(newest[0] if newest else None)
        answer = unfinished.get("answer", ([], {}))
        if isinstance(answer, BaseException):
            raise answer
        more, answers = answer
        joined = [key for key in more if key not in found]
        for key in joined:
            keys.append(key)
            found[key] = answers[key]
        return keys, found, since is None, joined

    def _unfinished(self):
        """``(keys, found)`` of the selection's jobs the service shows unfinished (its search with a ``phase`` filter); the
        error itself when the service refused the credentials or their permissions (:func:`watch_events.refuses_caller`)."""
        if self.unfinished_off:
            return [], {}
        try:
            return self.query.search(self.search.in_phases(UNFINISHED_PHASES))
        except SEARCH_ERRORS as error:
            if refuses_caller(error):
                return error  # raised by later(): it stops the source, as the search for new jobs would
            if getattr(error, "transient", False):
                logger.info("the search for the unfinished jobs %s failed this round: %s", self.search.describe(), message_of(error, self.query.redact))
            else:
                self._refused(error)
            return [], {}
