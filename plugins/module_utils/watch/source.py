# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Watching training jobs for the event source: its arguments and :class:`Watcher`, which has the watch's rooms call
each other - the schedule (``watch_schedule.Schedule``: when each job and the search are due), the lister
(``watch_lister.Lister``: what a watch by name or tags asks the search), the judge (``watch_judge.Judge``: answers into
events, the jobs watched, finished and dropped; with ``stall`` its stall room, ``watch_stalls.Stalls``: one event per
stall of a Running job) and the ledger (``watch_ledger.Ledger``: what was reported, the starting point, the state file).

The event source (``extensions/eda/plugins/event_source/training_job_phase.py``) is an adapter over this module: it
hands its arguments to :func:`build_watcher`, runs :meth:`Watcher.round` in a worker thread on the watcher's schedule
and puts the events it returns on ansible-rulebook's queue.  Everything here is synchronous and testable without
ansible-rulebook: the door (``query.Query``) does the requests, ``clock`` is monotonic seconds.
"""

from __future__ import annotations

import time

from ansible_collections.modelarts.training.plugins.module_utils.door.options import (
    CONNECTION_OPTIONS,
    METRICS_OPTIONS,
    QUERY_OPTIONS,
    WAIT_OPTIONS,
    check_known,
    convert,
    to_bool,
    where,
)
from ansible_collections.modelarts.training.plugins.module_utils.text import LEVEL_ARGUMENT
from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.job.phases import TERMINAL_PHASES
from ansible_collections.modelarts.training.plugins.module_utils.door.query import ModelArtsError, Query, check_job_id, describe, v2_key
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import Search, check_workspace_id
from ansible_collections.modelarts.training.plugins.module_utils.door.selection_checks import parse_tags
from ansible_collections.modelarts.training.plugins.module_utils.watch.events import (  # noqa: F401  # pylint: disable=unused-import
    CREATED_SINCE_MARGIN_MS,
    NAME,
    UNFINISHED_PHASES,
    JobState,
    SourceConfigError,
    SourceError,
    event_item,
    logger,
    make_event,
    make_invalid_event,
    message_of,
    start_logger,
)
from ansible_collections.modelarts.training.plugins.module_utils.service.search import PageFailed
from ansible_collections.modelarts.training.plugins.module_utils.watch.judge import Judge
from ansible_collections.modelarts.training.plugins.module_utils.watch.ledger import Ledger
from ansible_collections.modelarts.training.plugins.module_utils.watch.lister import Lister
from ansible_collections.modelarts.training.plugins.module_utils.watch.schedule import Schedule
from ansible_collections.modelarts.training.plugins.module_utils.watch.stalls import Stalls, progress_reader
from ansible_collections.modelarts.training.plugins.module_utils.watch.state import StateFile, StateFileError, event_id  # noqa: F401  # pylint: disable=unused-import
from ansible_collections.modelarts.training.plugins.module_utils.waiting.waiter import JOB_TOLERATED
from ansible_collections.modelarts.training.plugins.module_utils.door.stall_checks import check_stall

DEFAULT_INTERVAL = 10.0
# The source's own arguments; everything else it accepts is the door's.
SOURCE_ARGUMENTS = ("training_job_ids", "name", "tags", "workspace_id", "interval", "stop_when_done", "startup", "state_file")
# ansible-rulebook's own source arguments, accepted and left to it: ``feedback: true`` asks it for a feedback queue.
RULEBOOK_ARGUMENTS = ("feedback",)
STARTUP_CHOICES = ("all", "changes")
# metrics and baseline are the module's: an event into Completed carries what the job produced (Watcher.measured);
# stall too: a Running job that stopped making progress gives one event per stall (watch_stalls.Stalls).
DOOR_ARGUMENTS = tuple(CONNECTION_OPTIONS) + tuple(QUERY_OPTIONS) + ("fail_on",) + tuple(METRICS_OPTIONS) + ("stall",)
# The wait options are the module's and the lookup's: the source follows every job to a final phase.
WAIT_HINTS = dict((name, "the source has no wait options; it follows each job to a final phase") for name in WAIT_OPTIONS if name != "fail_on")
SEARCH_ERRORS = (ModelArtsError, ConnectionConfigError)


def _blank(value):
    return value is None or value == [] or (isinstance(value, str) and not value.strip())


def _id_list(value):
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)):
        raise SourceConfigError("%s: %s must be a list of job ids or a comma-separated string" % (NAME, where("training_job_ids", LEVEL_ARGUMENT)))
    ids = []
    for index, entry in enumerate(value):
        if not isinstance(entry, (str, int)) or isinstance(entry, bool):
            raise SourceConfigError("%s: %s must hold job id strings, got a %s" % (NAME, where("training_job_ids", LEVEL_ARGUMENT), type(entry).__name__))
        text = str(entry).strip()
        if text:
            try:
                ids.append(check_job_id(text, "training_job_ids[%d] (argument)" % index))
            except ConnectionConfigError as error:
                raise SourceConfigError("%s: %s" % (NAME, error)) from None
    return list(dict.fromkeys(ids))


class Arguments(object):
    """The source's own arguments (``training_job_ids``, or ``name`` and/or ``tags`` with ``workspace_id``, ``interval``,
    ``stop_when_done``), checked.

    Unknown arguments are refused here, before the door sees the rest; ``eda_*`` keys are ansible-rulebook's own.
    """

    def __init__(self, args):
        try:
            check_known(
                (key for key in args if not str(key).startswith("eda_")), SOURCE_ARGUMENTS + DOOR_ARGUMENTS + RULEBOOK_ARGUMENTS, "argument", hints=WAIT_HINTS
            )
        except ConnectionConfigError as error:
            raise SourceConfigError("%s: %s; see the DOCUMENTATION of the source or docs/event_source.md" % (NAME, error)) from None
        has_ids = not _blank(args.get("training_job_ids"))
        has_name = not _blank(args.get("name"))
        try:
            tags = parse_tags(args.get("tags"), "tags (argument)")
            workspace_id = check_workspace_id(args.get("workspace_id"), "workspace_id (argument)")
        except ConnectionConfigError as error:
            raise SourceConfigError("%s: %s" % (NAME, error)) from None
        if has_ids == (has_name or bool(tags)):
            raise SourceConfigError("%s: set exactly one of training_job_ids, or name and/or tags" % NAME)
        self.ids = _id_list(args["training_job_ids"]) if has_ids else []
        if has_ids and not self.ids:
            raise SourceConfigError("%s: training_job_ids holds no job id" % NAME)
        self.name = None
        if has_name:
            if not isinstance(args["name"], (str, int)) or isinstance(args["name"], bool):
                raise SourceConfigError("%s: %s must be a string, got a %s" % (NAME, where("name", LEVEL_ARGUMENT), type(args["name"]).__name__))
            self.name = str(args["name"])
        self.workspace_id = workspace_id
        # The search that selects the jobs (None: training_job_ids).
        self.search = Search(name=self.name, tags=tags, workspace_id=workspace_id) if (has_name or tags) else None
        self.interval = DEFAULT_INTERVAL
        self.stop_when_done = False
        try:
            if not _blank(args.get("interval")):
                self.interval = convert("interval", {"type": "float"}, args["interval"], LEVEL_ARGUMENT)
            if not _blank(args.get("stop_when_done")):
                self.stop_when_done = to_bool(args["stop_when_done"], "stop_when_done", LEVEL_ARGUMENT)
            # Checked here, before the door and any request: the message names the argument and its key.
            self.stall = check_stall(args.get("stall"))
        except ConnectionConfigError as error:
            raise SourceConfigError("%s: %s" % (NAME, error)) from None
        if not self.interval > 0:
            raise SourceConfigError(
                "%s: %s must be a number of seconds greater than 0, got %r" % (NAME, where("interval", LEVEL_ARGUMENT), args.get("interval"))
            )
        self.startup = "all" if _blank(args.get("startup")) else args["startup"]
        if self.startup not in STARTUP_CHOICES:
            raise SourceConfigError("%s: %s must be one of %s, got %r" % (NAME, where("startup", LEVEL_ARGUMENT), ", ".join(STARTUP_CHOICES), self.startup))
        self.state_file = None
        if not _blank(args.get("state_file")):
            if not isinstance(args["state_file"], str):
                raise SourceConfigError("%s: %s must be a path, got a %s" % (NAME, where("state_file", LEVEL_ARGUMENT), type(args["state_file"]).__name__))
            self.state_file = args["state_file"]
        self.tags = tags

    def selection(self, endpoint):
        """What the watch selects, as a state file records it (the project is added once known)."""
        return {
            "training_job_ids": sorted(self.ids) or None,
            "name": self.name,
            "tags": sorted([key, sorted(values)] for key, values in self.tags) or None,
            "workspace_id": self.workspace_id,
            "endpoint": endpoint,
            "project_id": None,
        }


class Watcher(object):
    """One watch: the rooms that call each other, and its rounds.

    ``query`` is the door (``module_utils.door.query.Query``); ``state`` the ``watch_state.StateFile`` or None; ``clock``
    monotonic seconds.  A round with ``training_job_ids`` polls the jobs due (a search per 10 jobs, or a GET each: the
    door's phase source); with ``name``/``tags`` the first rounds take the lister's first round a page at a time (the
    unfinished jobs first; the jobs already listed are polled by id while it goes on) and each later round what is new,
    what is unfinished and the watched jobs by id.
    """

    def __init__(self, arguments, query, clock=time.monotonic, state=None):
        self.arguments = arguments
        self.query = query
        self.clock = clock
        self.state = state
        self.schedule = Schedule(arguments.interval, float(query.settings.service.backoff_max_delay), clock, lambda: query.client.throttled, query.redact)
        self.ledger = Ledger(arguments.startup, arguments.search is not None, state, clock)
        self.judge = Judge(query, self.ledger, self.schedule, query.settings.validate, clock)
        # The stall check as the door resolved it (the arguments checked it first, for the order of the messages).
        stall = query.settings.stall
        if stall is not None:
            self.judge.stalls = Stalls(stall, progress_reader(query, stall, query.settings.max_concurrency), self.ledger, query.redact_value)
        self.lister = None
        if arguments.search is not None:
            self.lister = self.ledger.lister = Lister(
                arguments.search, query, arguments.startup, state.covered if state is not None else None, clock, time.time
            )
        now = clock()
        for job_id in arguments.ids:
            self.judge.watch(v2_key(job_id))
        # How phases are learned (one GET per job, or a search per batch of jobs): the door decides.
        self.source = query.phase_source(list(self.jobs), workspace_id=arguments.workspace_id) if self.jobs else None
        if self.source is not None:
            self.schedule.spread(self.jobs, getattr(self.source, "batch", 1), now)
        self.by_id = None  # the phase source of the jobs a search selected
        self.said_empty = False  # whether the log said, once, that the search has found no job yet
        self.said_started = False  # whether the start line (:meth:`started_line`) was logged
        self.prepare_state = JobState(now)

    # -- what the rooms hold, as the source and its tests read it --------------------------------------------------

    @property
    def jobs(self):
        return self.judge.jobs

    @property
    def finished(self):
        return self.judge.finished

    @property
    def dropped(self):
        return self.judge.dropped

    @property
    def search_state(self):
        return self.lister.state if self.lister is not None else None

    @property
    def listed(self):
        """Whether the first round of a search is over (always false with ``training_job_ids``)."""
        return self.lister is not None and self.lister.listed

    @property
    def newest(self):
        return self.lister.newest if self.lister is not None else None

    def redact(self, text):
        """``text`` with every secret the door knows masked (IAM tokens issued since start-up included)."""
        return self.query.redact(text)

    def observe(self, key, item):
        """The judge's event (or None) for one readable answer about ``key``."""
        return self.judge.observe(key, item)

    def record_error(self, key, error):
        """The judge's event (or None) for one failed read of ``key``."""
        return self.judge.record_error(key, error)

    def invalid(self, key, error):
        """The judge's event (or None) for a document of ``key`` that cannot be trusted."""
        return self.judge.invalid(key, error)

    def record_search_error(self, error):
        """The judge's verdict on a failed search of this watch."""
        return self.judge.record_search_error(self.lister.state, error, self.lister.search)

    def searched(self, keys, found, complete=True):
        """Events for what a search returned for ``keys`` (``found``, GETs already applied); with ``complete`` (every job
        of the selection), the watched jobs it did not return are no longer watched."""
        self.lister.state.failures = self.lister.state.polls = 0
        events = self.judge.answered([key for key in keys if not self.judge.done_with(key)], found, searched=True)
        for key in [key for key in self.jobs if key not in found] if complete else []:
            logger.info("training job %s is no longer returned by the search for jobs %s: no longer watched", describe(key), self.arguments.search.describe())
            del self.jobs[key]
            self.ledger.forget(key)
        return events

    def diagnosed(self, events):
        """The events with their jobs' ``diagnostics`` (the judge's)."""
        return self.judge.diagnosed(events)

    def round_keys(self, started):
        """The jobs due now (the schedule's), filled to the phase source's batch."""
        return self.schedule.due_keys(self.jobs, started, getattr(self.source, "batch", 1))

    def _schedule(self, started, keys):
        self.schedule.polled(self.jobs, keys, started)

    def _next_round(self, started):
        return self.schedule.next_round(started)

    def delivered(self, events):
        """The ``events`` were handed over: the ledger records them and saves the state file."""
        self.ledger.delivered(events)

    def done(self):
        """Whether no job is left to poll (never with a search: a matching job may appear later)."""
        return self.arguments.search is None and not self.jobs

    def next_due(self):
        """Monotonic time of the next poll."""
        return self.schedule.next_due(self.jobs, self.search_state)

    # -- rounds ------------------------------------------------------------------------------------------------------

    def prepare(self):
        """Resolve what every request needs (the project id) before the first poll, judging errors like a poll's.

        Returns None once resolved, or the monotonic time to try again after a tolerated error; raises
        :class:`SourceError` when it cannot succeed.
        """
        state = self.prepare_state
        try:
            project_id = self.query.client.resolve_project_id()
        except SEARCH_ERRORS as error:  # a configuration error is never tolerated: a SourceError
            state.polls += 1
            message = message_of(error, self.redact)
            verdict, _reason = self.query.judge(error, state.polls)
            if verdict != JOB_TOLERATED or getattr(error, "not_found", False):
                raise SourceError("%s: %s" % (NAME, message)) from None
            return self.schedule.retry(state, message)
        if self.state is not None:
            try:
                self.state.check_project(project_id)
            except StateFileError as error:
                raise SourceError("%s: %s" % (NAME, error)) from None
        return None

    def round(self, started):
        """One round of polls (blocking: the source runs it in a worker thread); the events it gives, in order."""
        if self.lister is None:
            events = self._poll(self.source, started)
        elif not self.lister.listed:
            events = self._listing_round(started)
        else:
            events = self._later_round(started)
        if not self.said_started and self._first_round_done():
            self.said_started = True
            start_logger().info("%s", self.started_line())
        return self.measured(self.judge.diagnosed(self.judge.stalled(events)))

    def _first_round_done(self):
        """Whether the first round is over: a search's first listing, or a first answer (or a final error) for every id."""
        if self.lister is not None:
            return self.lister.listed
        return all(state.polls > 0 for state in self.jobs.values())

    def started_line(self):
        """The one line the source logs at ansible-rulebook's default verbosity once its first round is over: what it
        watches (the selection), how many jobs the first round found, ``startup`` and the state file."""
        arguments = self.arguments
        if self.lister is not None:
            found = len(self.lister.listed_keys)
            what = "training jobs %s" % arguments.search.describe()
            counted = "the first round found %d job%s%s, %d still watched" % (
                found,
                "" if found == 1 else "s",
                "" if self.lister.complete else " (unfinished or new: startup changes lists no finished job)",
                len(self.jobs),
            )
        else:
            read = len([key for key in arguments.ids if key in self.finished or (key in self.jobs and self.jobs[key].seen)])
            what = "training job%s %s" % ("" if len(arguments.ids) == 1 else "s", ", ".join(describe(key) for key in arguments.ids))
            counted = "the first round found %d of %d, %d still watched" % (read, len(arguments.ids), len(self.jobs))
        return "watching %s every %ss at %s (startup: %s; state file: %s): %s" % (
            what,
            arguments.interval,
            self.query.client.endpoint,
            arguments.startup,
            arguments.state_file if arguments.state_file is not None else "none, every start follows startup",
            counted,
        )

    def measured(self, events):
        """The events, with ``metrics`` and ``metrics_ok`` in the items of those into Completed (the door's
        ``read_metrics``: the round's jobs at once, each job's sources and the baseline's once, within one
        ``request_timeout``) and null in the others; unchanged when the source has no ``metrics``."""
        if self.query.metrics is None:
            return events
        completed = []
        for event in events:
            item = event.get("modelarts", {}).get("training_job")
            if isinstance(item, dict):
                item["metrics"] = item["metrics_ok"] = None
                if event["modelarts"].get("phase") == "Completed":
                    completed.append(item)
        if completed:
            measured = self.query.read_metrics(completed)
            for warning in measured.warnings:
                logger.warning("%s", warning)
            for line in measured.job_messages():
                # A WARNING: ansible-rulebook shows it at its default verbosity, as the rule that did not deploy says nothing.
                logger.warning("not fit to ship: %s", line)
        return events

    def _poll(self, source, started, keys=None):
        """Events of the watched jobs due now (or ``keys``), read by ``source``; they are due again one round later."""
        keys = self.schedule.due_keys(self.jobs, started, getattr(source, "batch", 1)) if keys is None else keys
        if not keys:
            return []
        results = source.observe(keys)
        self.schedule.polled(self.jobs, keys, started)
        return self.judge.answered(keys, results)

    def _by_id(self, watched):
        """The phase source reading the watched jobs of a search by id: kept from round to round (a search by id the
        service refused for good stays off), made again when one GET per job gave way to two jobs or more."""
        source = self.by_id
        if source is None or (len(watched) >= 2 and source.batch == 1 and getattr(source, "disabled", None) is None):
            source = self.by_id = self.query.phase_source(watched, workspace_id=self.arguments.workspace_id)
        return source

    def _take_in(self, keys, found):
        """Events for what a search returned for ``keys`` (``found``): a job the search shows in a final or ``fail_on``
        phase is judged on its own GET (``Query.settle``), when its answer could give an event - not a job whose phase is
        the one reported, nor a starting point."""
        keys = [key for key in keys if not self.judge.done_with(key)]
        self.ledger.listed(keys, found)
        shown = dict((key, found[key]) for key in keys if self.judge.may_report(key, found[key]))
        found.update(self.query.settle(shown))
        return self.judge.answered(keys, found, searched=True)

    def _listing_round(self, started):
        """One page of the lister's first round, its events - and those of the watched jobs due meanwhile, read by id, so
        that a change of a job already listed is reported during the listing, not after it.  The next page is due at once."""
        lister = self.lister
        page = lister.next_page()
        if isinstance(page, PageFailed):
            # The listing keeps its place and asks for that page again when the search is next due (after the backoff).
            self.judge.record_search_error(lister.state, page.error, lister.search)
            return []
        lister.state.failures = lister.state.polls = 0
        if page is None:
            self._first_round_over()
            self.schedule.searched(lister.state, started)
            return []
        keys, found = page
        fresh = [key for key in keys if key not in self.jobs]
        events = self._take_in(fresh, found)
        # Read just now: due one interval after this round started, as if polled.
        for key in fresh:
            if key in self.jobs:
                self.jobs[key].due = started + self.arguments.interval
        watched = [key for key in self.jobs if key not in fresh]
        if watched:
            events += self._poll(self._by_id(watched), started, self.schedule.due_keys(dict((key, self.jobs[key]) for key in watched), started, 10))
        lister.state.due = self.clock()
        return events

    def _first_round_over(self):
        """The lister's first round is over: what it listed is every job the selection holds (``startup: all``) or its
        unfinished and new jobs (``changes``), and the state keeps no other; a job the state file recorded unfinished that
        it did not list is read by id (it may have finished while the source was down)."""
        lister = self.lister
        lister.over()
        listed = lister.listed_keys
        if not listed and not self.said_empty:
            self.said_empty = True
            coverage = self.arguments.search.coverage()
            logger.log(
                30 if coverage else 20,
                "no training job %s was found yet; the search runs every %ss%s",
                self.arguments.search.describe(),
                self.arguments.interval,
                " (%s)" % coverage if coverage else "",
            )
        if lister.complete:
            for key in [key for key in self.jobs if key not in listed]:
                logger.info(
                    "training job %s is no longer returned by the search for jobs %s: no longer watched", describe(key), self.arguments.search.describe()
                )
                del self.jobs[key]
        self.ledger.first_round_over(listed, lister.complete)
        for key, phase in list(self.ledger.recorded.items()):
            if phase not in TERMINAL_PHASES and key not in self.jobs and not self.judge.done_with(key):
                self.judge.watch(key)

    def _later_round(self, started):
        """A later round: what the lister's searches bring (new jobs, and jobs that started to match while unfinished),
        and the watched jobs by id (a search per 10 jobs, GETs where needed) - a round costs a few requests plus one per
        10 unfinished jobs, however many finished jobs the search matches."""
        lister = self.lister
        try:
            keys, found, complete, joined = lister.later()
        except SEARCH_ERRORS as error:
            self.judge.record_search_error(lister.state, error, lister.search)
            return []
        lister.state.failures = lister.state.polls = 0
        watched = [] if complete else list(self.jobs)
        fresh = keys if complete else [key for key in keys if key not in self.jobs]
        for key in joined:
            if key not in self.jobs and not self.judge.done_with(key):
                logger.info("training job %s now matches the search for jobs %s", describe(key), self.arguments.search.describe())
        events = self._take_in(fresh, found)
        if complete:
            # Every job the selection returns: the watched ones it no longer returns are forgotten (bounded state).
            for key in [key for key in self.jobs if key not in found]:
                logger.info(
                    "training job %s is no longer returned by the search for jobs %s: no longer watched", describe(key), self.arguments.search.describe()
                )
                del self.jobs[key]
            for key in [key for key in self.ledger.recorded if key not in found]:
                self.ledger.forget(key)
        if watched:
            events += self._poll(self._by_id(watched), started, watched)
        self.schedule.searched(lister.state, started)
        return events

    def finish(self):
        """The watch is over: it ends with an error naming the jobs it dropped, or says which jobs finished."""
        # Dropped jobs end the source even with stop_when_done false: idling would hide the error.
        if self.dropped:
            lines = "; ".join("%s: %s" % (describe(key), text) for key, text in self.dropped.items())
            raise SourceError("%s: stopped after %d training job(s) could not be read: %s" % (NAME, len(self.dropped), lines))
        logger.info("every watched training job is finished (%s)", ", ".join("%s %s" % (describe(key), phase) for key, phase in self.finished.items()))


def build_watcher(args, environ=None, clock=time.monotonic, **query_kwargs):
    """Check ``args``, open the door with them and return ``(watcher, query)``; :class:`SourceConfigError` when they are wrong.

    ``environ`` (default ``os.environ``) is the environment the door reads below the arguments.
    """
    if not isinstance(args, dict):
        raise SourceConfigError("%s: the arguments must be a mapping" % NAME)
    arguments = Arguments(args)
    door = dict((key, value) for key, value in args.items() if key in DOOR_ARGUMENTS)
    try:
        # The door sizes the HTTP pool to max_concurrency; nothing smaller is passed here.
        # The source has no wait_for: it follows every job to a final phase, and fail_on only says which count as failed.
        # A baseline search looks in the watch's workspace unless the baseline names its own.
        query = Query([(LEVEL_ARGUMENT, door)], environ=environ, clock=clock, has_wait_for=False, baseline_workspace_id=arguments.workspace_id, **query_kwargs)
    except ConnectionConfigError as error:
        raise SourceConfigError("%s: %s" % (NAME, error)) from None
    state = None
    if arguments.state_file is not None:
        try:
            state = StateFile(arguments.state_file, arguments.selection(query.client.endpoint))
        except StateFileError as error:
            query.close()
            raise SourceConfigError("%s: %s" % (NAME, error)) from None
    return Watcher(arguments, query, clock=clock, state=state), query
