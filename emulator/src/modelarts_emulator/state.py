# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulator's shared state: accounts, jobs, faults, tokens, settings and the request log."""

import bisect
import copy
import math
import secrets
import threading
import time

from . import accounts as accounts_mod
from . import tags as tags_mod
from .faults import FaultStore
from .iam import TokenStore
from .requestlog import RequestLog
from .scenario import ScenarioError, build_jobs

DEFAULT_SETTINGS = {
    "token_lifetime": 86400.0,  # seconds; IAM tokens last 24 h
    "clock_skew_tolerance": 900.0,  # seconds; the gateway rejects X-Sdk-Date further off than 15 min
    "signature_check": True,  # verify AK/SK signatures (off only for experiments)
    "search_counts_as_poll": False,  # whether a job appearing in a search result counts as a poll
    "max_search_limit": 50,
    "search_offset": "page",  # how the search reads offset: "page" (a page index, the SDK's model) or "item" (an item offset)
    # How a search sorted by create_time lists jobs created in the same millisecond: "id" (by id, in the order asked) or
    # "added" (in the order they were added, whatever the order asked: a service whose index has no second key).
    "search_ties": "id",
    "credential_lifetime": 3600.0,  # seconds every issued temporary credential lives (exchanges.py); short to test renewal
    "idp_id": "emulator-idp",  # the identity provider trusted for federated id tokens
    "pod_token": "emulator-pod-identity-token",  # what the pod identity endpoint expects in Authorization
    "metadata_token_api": True,  # False: PUT /meta-data/latest/api/token answers 404 (older hosts)
}


def _boolean(value):
    if isinstance(value, str):
        if value.strip().lower() in ("1", "true", "yes", "on"):
            return True
        if value.strip().lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError("not a boolean: %r" % value)
    return bool(value)


SEARCH_OFFSET_READINGS = ("page", "item")


def _search_offset(value):
    if value not in SEARCH_OFFSET_READINGS:
        raise ValueError("search_offset must be page or item, got %r" % (value,))
    return value


SEARCH_TIE_ORDERS = ("id", "added")


def _search_ties(value):
    if value not in SEARCH_TIE_ORDERS:
        raise ValueError("search_ties must be id or added, got %r" % (value,))
    return value


SETTING_TYPES = {
    "token_lifetime": float,
    "clock_skew_tolerance": float,
    "signature_check": _boolean,
    "search_counts_as_poll": _boolean,
    "max_search_limit": int,
    "search_offset": _search_offset,
    "search_ties": _search_ties,
    "credential_lifetime": float,
    "idp_id": str,
    "pod_token": str,
    "metadata_token_api": _boolean,
}


class Scope:
    """The jobs one workspace and set of tag conditions select, oldest first (by creation time in ms, then id):
    ``created_ms``, their creation times in ms (for bisect); ``may_hide``, the indices of those a GET answers 404 for
    their first polls (``not_found_polls``), which a search sees only once those polls are over.  :meth:`in_phases`
    answers a search with a phase filter without peeking at every job (the scope's :class:`PhaseIndex`, built once)."""

    __slots__ = ("jobs", "created_ms", "may_hide", "_phases")

    def __init__(self, jobs, created_ms, may_hide):
        self.jobs = jobs
        self.created_ms = created_ms
        self.may_hide = may_hide
        self._phases = None

    def in_phases(self, phases, now_ms):
        """The jobs of the scope that may be in one of ``phases`` at ``now_ms``, oldest first: every job that is, and
        the jobs whose phase may still change (a caller tests each with the filter itself)."""
        if self._phases is None:
            self._phases = PhaseIndex(self.jobs)
        return [self.jobs[index] for index in self._phases.candidates(phases, now_ms)]


class PhaseIndex:
    """Where the jobs of a scope end up: a job whose timeline has reached its last step (on the clock) stays in that
    step's phase for good, so a search for some phases needs to look only at the settled jobs of those phases and at
    the jobs still moving, not at every job.  Built from the jobs' timelines alone (nothing observed), so it stays true
    whatever the clock or the polls do; a scope, and so its index, is made anew when a job is added, removed or changed.
    """

    __slots__ = ("_settle_ms", "_by_settle", "_settled")

    def __init__(self, jobs):
        order = sorted((job.lifecycle.settles_at_ms(), index) for index, job in enumerate(jobs))
        self._settle_ms = [settle for settle, _index in order]
        self._by_settle = [index for _settle, index in order]
        settled = {}  # the last step's phase -> the jobs whose timeline ends there on the clock
        for settle, index in order:
            if settle != math.inf:
                settled.setdefault(jobs[index].lifecycle.steps[-1].phase, []).append(index)
        self._settled = settled

    def candidates(self, phases, now_ms):
        """Indices (ascending) of the jobs that may be in one of ``phases`` at ``now_ms``: every job not settled by then,
        and those whose timeline ends in one of them (settled in it by then, or still moving and so counted already)."""
        found = set(self._by_settle[bisect.bisect_right(self._settle_ms, now_ms) :])
        for phase in phases:
            found.update(self._settled.get(phase, ()))
        return sorted(found)


class EmulatorState:
    """Everything the handlers read and change. Methods are thread-safe."""

    def __init__(self, scenario=None, overrides=None, settings=None):
        self._lock = threading.RLock()
        self.started_at = time.time()
        self.clock_offset = 0.0
        self.faults = FaultStore()
        self.tokens = TokenStore()
        # exchanges.py: the secret id tokens are signed with (a new one each run) and the metadata session tokens issued.
        self.id_token_secret = secrets.token_bytes(32)
        self.metadata_tokens = set()
        self.log = RequestLog()
        self._overrides = dict(overrides or {})
        self._cli_settings = dict(settings or {})
        self._initial = copy.deepcopy(scenario or {})
        self.settings = {}
        self.directory = None
        self.jobs = []
        self._v2 = {}
        self._v1 = {}
        self._by_creation = {}  # project id -> its v2 jobs by (creation time, id): searches walk it (v2_jobs_by_creation)
        self._scopes = {}  # (project, workspace, tag conditions) -> Scope, until a job is added, removed or changed (v2_scope)
        self._added = 0
        self.load(self._initial)

    # Clock -------------------------------------------------------------------------------------------
    def now(self):
        """Emulator time (epoch seconds): real time plus any offset set through the control API."""
        return time.time() + self.clock_offset

    def advance(self, seconds):
        """Move the emulator clock forward (lifecycles and token expiry; not the signature skew check)."""
        with self._lock:
            self.clock_offset += float(seconds)
            return self.clock_offset

    # Loading -----------------------------------------------------------------------------------------
    def load(self, scenario):
        """(Re)load a scenario: accounts, settings, jobs and faults. Clears tokens and the request log."""
        scenario = copy.deepcopy(scenario or {})
        if not isinstance(scenario, dict):
            raise ScenarioError("a scenario must be a mapping")
        unknown = set(scenario) - {"settings", "accounts", "jobs", "faults", "description"}
        if unknown:
            raise ScenarioError("unknown top-level scenario keys: %s" % ", ".join(sorted(unknown)))
        specs = scenario.get("accounts") or accounts_mod.default_accounts()
        specs = accounts_mod.apply_overrides(copy.deepcopy(specs), self._overrides)
        try:
            directory = accounts_mod.Directory(specs)
        except (KeyError, TypeError) as exc:
            raise ScenarioError("invalid accounts: missing %s" % exc) from None
        settings = dict(DEFAULT_SETTINGS)
        for source in (scenario.get("settings") or {}, self._cli_settings):
            for key, value in source.items():
                if value is None:
                    continue
                if key not in SETTING_TYPES:
                    raise ScenarioError("unknown setting %r" % key)
                settings[key] = SETTING_TYPES[key](value)
        origin = self.now()
        directory.start_clocks(origin)
        jobs = build_jobs(scenario.get("jobs"), directory, origin)
        with self._lock:
            self.directory = directory
            self.settings = settings
            self.jobs = []
            self._v2 = {}
            self._v1 = {}
            self._by_creation = {}
            self._scopes = {}
            self._added = 0  # jobs added since the load (add_jobs): with len(jobs), ordinals never repeat
            self.faults.clear()
            self.tokens.clear()
            self.log.clear()
            for job in jobs:
                self._add(job)
            for fault in scenario.get("faults") or []:
                self.faults.add(fault)

    def reset(self, scenario=None):
        """Back to the scenario the emulator started with (or load ``scenario``), with a fresh clock."""
        with self._lock:
            self.clock_offset = 0.0
            self.load(self._initial if scenario is None else scenario)

    def _add(self, job):
        if job.v2_id and (job.project_id, job.v2_id) in self._v2:
            raise ScenarioError("duplicate v2 job id %s" % job.v2_id)
        if job.has_v1 and (job.project_id, job.v1_job_id, job.v1_version_id) in self._v1:
            raise ScenarioError("duplicate v1 job %s version %s" % (job.v1_job_id, job.v1_version_id))
        self.jobs.append(job)
        if job.v2_id:
            self._v2[(job.project_id, job.v2_id)] = job
            self._by_creation.pop(job.project_id, None)
            self._scopes = {}
        if job.has_v1:
            self._v1[(job.project_id, job.v1_job_id, job.v1_version_id)] = job
        for fault in job.job_faults:
            self.faults.add(fault, job.key)

    def _remove(self, job):
        self.jobs = [j for j in self.jobs if j is not job]
        self._v2.pop((job.project_id, job.v2_id), None)
        self._by_creation.pop(job.project_id, None)
        self._scopes = {}
        self._v1.pop((job.project_id, job.v1_job_id, job.v1_version_id), None)
        self.faults.clear(job.key)

    def add_jobs(self, specs, replace=False):
        """Add jobs (scenario syntax); existing jobs with the same id are replaced. Return the new jobs."""
        with self._lock:
            # Ordinals never repeat, so a job added again under a name (the nightly job) gets a new id.
            jobs = build_jobs(specs, self.directory, self.now(), first_ordinal=len(self.jobs) + 100000 + self._added)
            self._added += len(jobs)
            if replace:
                for job in list(self.jobs):
                    self._remove(job)
            for job in jobs:
                # The jobs this one replaces, looked up by id (adding thousands of jobs stays linear).
                olds = []
                if job.v2_id:
                    olds.append(self._v2.get((job.project_id, job.v2_id)))
                if job.has_v1:
                    olds.append(self._v1.get((job.project_id, job.v1_job_id, job.v1_version_id)))
                for old in dict.fromkeys(old for old in olds if old is not None):
                    self._remove(old)
                self._add(job)
            return jobs

    def update_job(self, key, tags=None, workspace_id=None, name=None):
        """Tag, move or rename the job ``key`` (a v2 job: its tags are replaced); return it, or None when unknown.

        Raises ValueError naming what is wrong with a value.  The job keeps its id, creation time and lifecycle."""
        if tags is not None:
            tags = tags_mod.job_tags(tags, "job %s:" % key)
        if workspace_id is not None:
            problem = tags_mod.check_workspace(workspace_id)
            if problem:
                raise ValueError(problem)
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError("name must be a non-empty string, got %r" % (name,))
        with self._lock:
            job = next((job for job in self.jobs if job.key == key), None)
            if job is None:
                return None
            if tags is not None:
                job.tags = tags
            if workspace_id is not None:
                job.workspace_id = workspace_id
            if name is not None:
                job.name = name
            self._scopes = {}
            return job

    def remove_job(self, key):
        """Remove a job by key (v2 id or ``job_id/version_id``); return whether it existed."""
        with self._lock:
            for job in list(self.jobs):
                if job.key == key:
                    self._remove(job)
                    return True
            return False

    # Lookups -----------------------------------------------------------------------------------------
    def v2_job(self, project_id, job_id):
        """Return the v2 job with that id in that project, or None."""
        return self._v2.get((project_id, job_id))

    def v1_job(self, project_id, job_id, version_id):
        """Return the v1 job version, or None."""
        return self._v1.get((project_id, job_id, version_id))

    def job_by_key(self, key):
        """Return the job whose key (v2 id or ``job_id/version_id``) is ``key``, or None."""
        with self._lock:
            return next((job for job in self.jobs if job.key == key), None)

    def v2_jobs_in(self, project_id):
        """Return the project's v2 jobs (a copy of the list)."""
        with self._lock:
            return [j for j in self.jobs if j.project_id == project_id and j.v2_id]

    def v2_jobs_by_creation(self, project_id):
        """Return the project's v2 jobs sorted by (creation time in ms, id), oldest first: the list a search walks.

        Kept until a job of the project is added or removed (a job's id and creation time never change), so a search of
        100,000 jobs does not sort them again.  The caller must not change the list."""
        with self._lock:
            ordered = self._by_creation.get(project_id)
            if ordered is None:
                ordered = [j for j in self.jobs if j.project_id == project_id and j.v2_id]
                ordered.sort(key=lambda job: (job.lifecycle.created_ms, job.v2_id))
                self._by_creation[project_id] = ordered
            return ordered

    def v2_scope(self, project_id, workspace_id, tag_conditions):
        """The project's v2 jobs a search of ``workspace_id`` with ``tag_conditions`` (tags.parse_tag_filters) can see,
        by (creation time in ms, id): a :class:`Scope`, kept until a job is added, removed or changed."""
        key = (project_id, workspace_id, tuple((tag, None if values is None else frozenset(values)) for tag, values in tag_conditions))
        with self._lock:
            scope = self._scopes.get(key)
            if scope is None:
                jobs = [
                    job
                    for job in self.v2_jobs_by_creation(project_id)
                    if job.workspace_id == workspace_id and (not tag_conditions or tags_mod.tags_match(job.tags, tag_conditions))
                ]
                created_ms = [job.lifecycle.created_ms for job in jobs]
                may_hide = [index for index, job in enumerate(jobs) if job.lifecycle.not_found_polls > 0]
                if len(self._scopes) >= 64:
                    self._scopes = {}
                scope = self._scopes[key] = Scope(jobs, created_ms, may_hide)
            return scope

    def update_settings(self, values):
        """Change settings at run time; return the new settings."""
        with self._lock:
            for key, value in values.items():
                if key not in SETTING_TYPES:
                    raise ValueError("unknown setting %r (known: %s)" % (key, ", ".join(sorted(SETTING_TYPES))))
                self.settings[key] = SETTING_TYPES[key](value)
            return dict(self.settings)
