# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watch's schedule: when each job (and the search) is polled next.

Once an ``interval`` each, spread over the interval a batch (what one request reads) at a time, one round-trip early so
that an answer - not a request - comes within the interval, an interval later after a round the service throttled, and
with a backoff after tolerated errors.  It reads and sets the ``due`` and ``failures`` of the jobs' states
(``watch_events.JobState``); which jobs exist is the judge's business, what they are the judge's too.
"""

from __future__ import annotations

import collections
import logging

from ansible_collections.modelarts.training.plugins.module_utils.watch.events import backoff_delay, logger

ROUND_TRIPS_KEPT = 5


class Schedule(object):
    """When the watched jobs and the search are due.

    ``interval`` seconds between polls; ``backoff_cap`` the longest backoff (``backoff_max_delay``); ``clock`` monotonic
    seconds; ``throttled()`` how many answers so far were HTTP 429 (the client's count); ``redact`` masks a log line."""

    def __init__(self, interval, backoff_cap, clock, throttled, redact):
        self.interval = interval
        self.backoff_cap = backoff_cap
        self.clock = clock
        self._throttled = throttled
        self._seen_throttled = throttled()
        self.redact = redact
        # A poll starts this much early so that its answer, not its start, lands within one interval.
        self.lead = 0.0
        self.round_trips = collections.deque(maxlen=ROUND_TRIPS_KEPT)

    def spread(self, jobs, batch, now):
        """Spread the first polls of ``jobs`` (``{key: JobState}``) over one interval, a batch at a time, so that the
        requests of a round go out evenly rather than all at once; each job is still polled once an interval."""
        keys = list(jobs)
        groups = (len(keys) + batch - 1) // batch
        if groups < 2:
            return
        for index, key in enumerate(keys):
            jobs[key].due = now + self.interval * (index // batch) / groups

    def due_keys(self, jobs, started, batch):
        """The jobs to poll now: those due, and - when one request reads a batch of jobs - the soonest due of the others
        to fill the last batch (polled early at no extra request), never one in backoff."""
        keys = [key for key, state in jobs.items() if state.due <= started]
        short = -len(keys) % batch
        if keys and short:
            others = sorted((state.due, index) for index, (key, state) in enumerate(jobs.items()) if state.due > started and not state.failures)
            ordered = list(jobs)
            keys += [ordered[index] for _due, index in others[:short]]
        return keys

    def next_round(self, started):
        """When the next round of what started at ``started`` is due: one round-trip early (the slowest of the last few,
        as round-trips jitter), at most half an interval early, so a slow round cannot turn into back-to-back polling."""
        self.round_trips.append(self.clock() - started)
        self.lead = min(max(self.round_trips), self.interval / 2.0)
        return started + self.interval - self.lead

    def throttled_delay(self, jobs):
        """One ``interval`` when the service throttled requests (HTTP 429) since the last round, else 0: the next poll of
        the round's ``jobs`` waits that much more, so rounds slow down under throttling instead of hammering."""
        before, self._seen_throttled = self._seen_throttled, self._throttled()
        if self._seen_throttled <= before:
            return 0.0
        logger.info("the service throttled requests (HTTP 429): the next poll of %d job(s) waits one interval more", jobs)
        return self.interval

    def polled(self, jobs, keys, started):
        """``keys`` of ``jobs`` were polled in the round that started at ``started``: due again one round later (a read that
        failed is given its backoff afterwards, by :meth:`retry`)."""
        due = self.next_round(started) + self.throttled_delay(len(keys))
        for key in keys:
            state = jobs.get(key)
            if state is not None:
                state.due = due

    def searched(self, state, started):
        """The search (its ``state``) ran a round that started at ``started``: due again one round later."""
        state.due = self.next_round(started) + self.throttled_delay(1)

    def retry(self, state, text, level=logging.WARNING):
        """A tolerated error for ``state`` (a job's or the search's): poll again after the backoff, saying so in the log."""
        state.failures += 1
        delay = backoff_delay(self.interval, state.failures, self.backoff_cap)
        state.due = self.clock() + delay
        logger.log(level, "%s; retrying in %.1fs (attempt %d)", self.redact(text), delay, state.failures)
        return state.due

    def next_due(self, jobs, search_state=None):
        """Monotonic time of the next poll: the search's when there is one (one search a round reads every job), else the
        soonest job's (an interval from now when none is left)."""
        if search_state is not None:
            return search_state.due
        dues = [state.due for state in jobs.values()]
        return min(dues) if dues else self.clock() + self.interval
