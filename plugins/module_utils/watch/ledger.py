# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watch's ledger: what was reported, what a start takes as its starting point, and the state file.

It answers three questions for the judge - does the state file know this job (:meth:`Ledger.resume`), is this first
observation a starting point rather than an event (:meth:`Ledger.is_starting_point`), and what a job was reported at
(:meth:`Ledger.record`) - and it saves what was handed over (:meth:`Ledger.delivered`) to the state file
(``watch_state.StateFile``), never before: a kill at any instant loses no transition and repeats only what was in
flight.  What the file covers (:meth:`Ledger.covered`) moves only over jobs that were taken care of.
"""

from __future__ import annotations

from ansible_collections.modelarts.training.plugins.module_utils.job.phases import TERMINAL_PHASES
from ansible_collections.modelarts.training.plugins.module_utils.watch.events import (
    CREATED_SINCE_MARGIN_MS,
    NAME,
    SourceError,
    created_ms,
    item_of,
)

# What a first round that found nothing records as covered: when it started, less this (the host's clock may run ahead).
EMPTY_LISTING_MARGIN_MS = 15 * 60 * 1000
# During a first round, the state file is written at most this often (what a kill repeats: what was handed over since).
LISTING_SAVE_SECONDS = 2.0


class Ledger(object):
    """What the watch reported and where it starts.

    ``startup``: ``all`` or ``changes``; ``searched``: whether a search selects the jobs (else ``training_job_ids``);
    ``state``: the :class:`~watch_state.StateFile`, or None; ``clock`` monotonic seconds.  ``lister`` (set by the
    watcher for a search) says whether the first round is over, what it listed and the newest creation time seen."""

    def __init__(self, startup, searched, state, clock):
        self.startup = startup
        self.searched = searched
        self.state = state
        self.clock = clock
        self.lister = None
        # Each job's last reported phase (or starting point), as the state file will hold it.
        self.recorded = dict(state.jobs) if state is not None else {}
        # Each Running job's last reported stall, by its start (ISO), as the state file will hold it (argument stall).
        self.stalls = dict(state.stalls) if state is not None else {}
        # The jobs a search listed that are not recorded yet, with their creation times (ms): covered stays below them.
        self.pending = {}
        self.last_save = None

    # -- what the judge asks ---------------------------------------------------------------------------------------

    def resume(self, key, job):
        """Start ``job`` (a ``JobState``) from the phase the state file recorded for ``key``, when it did: no event while
        that phase holds."""
        phase = self.recorded.get(key) if isinstance(key, str) else None
        if phase is not None and not job.seen:
            job.seen, job.phase = True, phase

    def knows(self, key):
        """Whether the state file (or this run) recorded ``key``."""
        return key in self.recorded

    def is_starting_point(self, key, item, job):
        """Whether the first observation of ``key`` (``item``; ``job`` its state) is the starting point - recorded, no
        event - rather than an event: ``startup: changes`` only.

        With ``training_job_ids``, a job read at its first attempt; one whose first reads failed (503s, not found yet)
        may have finished meanwhile and gives its first observation.  With a search, a job of the first round created
        before what the state file covered (or any job of the first round, without one); a job created since is new."""
        if self.startup != "changes":
            return False
        if not self.searched:
            return job is not None and job.polls <= 1
        if self.lister is None or self.lister.listed:
            return False
        covered = self.state.covered if self.state is not None else None
        created = created_ms(item.get("create_time")) if isinstance(item, dict) else None
        return covered is None or created is None or created < covered - CREATED_SINCE_MARGIN_MS

    def record(self, key, phase):
        """Note ``phase`` as what ``key`` was reported at (or started from); written with the next save."""
        if isinstance(key, str) and phase is not None:
            self.recorded[key] = phase
            self.pending.pop(key, None)
            if phase in TERMINAL_PHASES:
                self.stalls.pop(key, None)  # a finished job stalls no more

    def forget(self, key):
        """``key`` is no longer returned by the selection: the file keeps nothing of it."""
        self.recorded.pop(key, None)
        self.pending.pop(key, None)
        self.stalls.pop(key, None)

    def listed(self, keys, found, skip=()):
        """Note each job a search listed (``found``: its answers) that is not recorded yet, with its creation time: what
        the file covers stays below it until it is (:meth:`covered`).  ``skip``: keys already done with."""
        for key in keys:
            if isinstance(key, str) and key not in self.recorded and key not in skip:
                item = item_of(found.get(key))
                created = created_ms(item.get("create_time")) if isinstance(item, dict) else None
                self.pending[key] = 0 if created is None else created

    def first_round_over(self, listed, complete):
        """The first round of a search is over, having listed ``listed`` (keys).  With ``complete`` (every job of the
        selection: ``startup: all``) the file keeps no other job; otherwise (``startup: changes``, which lists the unfinished
        and the new jobs only) it drops the finished jobs it did not list: they are older than what it covers, so a later
        start takes them as starting points anyway."""
        for key in list(self.recorded):
            if key not in listed and (complete or self.recorded[key] in TERMINAL_PHASES):
                self.forget(key)

    # -- saving ---------------------------------------------------------------------------------------------------

    def delivered(self, events):
        """The ``events`` were handed over (they left ansible-rulebook's queue, or it acknowledged them): record their
        phases (and the start of each stall reported) and save the state file.  Only then is a transition taken as
        reported, so a kill before this repeats it (same ``event_id``) rather than losing it."""
        for event in events:
            body = event.get("modelarts") if isinstance(event, dict) else None
            item = body.get("training_job") if isinstance(body, dict) else None
            if isinstance(item, dict) and body.get("phase") is not None:
                self.record(item.get("id"), body["phase"])
                if body.get("stalled") is True and isinstance(item.get("id"), str) and isinstance(body.get("progress"), dict):
                    self.stalls[item["id"]] = body["progress"].get("since")
        self.save()

    def covered(self):
        """What the state file says the search has covered (epoch ms): after a restart, a job the file does not know that
        was created before it is a starting point (``startup: changes``), any other is new.

        It moves only over what this run took care of: once the first round is over, to the newest job it listed (or to
        when it started, less :data:`EMPTY_LISTING_MARGIN_MS`, when it found none), and never past a listed job that was
        not yet reported, saved or taken as a starting point (its confirming GET failed, its event is still on its way):
        a kill then must not make it a starting point of the next run."""
        covered = self.state.covered
        lister = self.lister
        if lister is not None and lister.listed:
            covered = lister.newest if lister.newest is not None else max(0, lister.started - EMPTY_LISTING_MARGIN_MS)
        if self.pending:
            floor = max(0, min(self.pending.values()) - 1)
            covered = floor if covered is None else min(covered, floor)
        return covered

    def save(self):
        """Write what was reported to the state file (when there is one and it changed).

        During a first round it is written at most every :data:`LISTING_SAVE_SECONDS`: the file holds every job listed,
        and writing it whole for every page of a long listing would cost more than the listing."""
        if self.state is None:
            return
        now = self.clock()
        listing = self.lister is not None and not self.lister.listed
        if listing and self.last_save is not None and now - self.last_save < LISTING_SAVE_SECONDS:
            return
        self.last_save = now
        self.state.jobs = self.recorded
        self.state.stalls = dict((key, since) for key, since in self.stalls.items() if key in self.recorded and isinstance(since, str))
        self.state.covered = self.covered()
        try:
            self.state.save()
        except OSError as error:
            raise SourceError("%s: state_file %s cannot be written: %s" % (NAME, self.state.path, error.strerror or error)) from None
