# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A search that compares only creation times takes its matches as a slice of the jobs kept in order (state.v2_scope,
routes._created_between): the same jobs, in the same order, as testing every job, whatever the jobs and the clock."""

import json
import random

import pytest

from modelarts_emulator import routes
from modelarts_emulator.state import EmulatorState

WORKSPACE = "a" * 32
TAGS = ({"team": "vision"}, {"team": "speech"}, {"team": "vision", "stage": "nightly"}, {})


class _Match:
    def __init__(self, project_id):
        self.project_id = project_id

    def group(self, _name):
        return self.project_id


class _Exchange:
    def __init__(self, body):
        self.body = json.dumps(body).encode()


def _state(seed):
    """Jobs created before and after now, several in one millisecond, in two workspaces, with and without tags, some
    hidden by 404 polls (some of those polled past them)."""
    rng = random.Random(seed)
    state = EmulatorState(scenario={})
    specs = []
    for n in range(120):
        spec = {"id": "job-%03d" % n, "name": "n-%d" % (n % 7), "phase": "Completed", "tags": rng.choice(TAGS)}
        if rng.random() < 0.2:
            spec["workspace_id"] = WORKSPACE
        if rng.random() < 0.15:
            spec["created_at"] = "%ds" % rng.randint(1, 600)  # in the future
        else:
            spec["created_ago"] = "%ds" % rng.choice((30, 30, 60, 3600, 86400, 40 * 86400, rng.randint(1, 90 * 86400)))
        if rng.random() < 0.1:
            spec["not_found_polls"] = 2
        specs.append(spec)
    state.add_jobs(specs)
    now = state.now()
    for job in state.jobs:
        if job.lifecycle.not_found_polls and rng.random() < 0.5:
            for _poll in range(2):
                job.lifecycle.poll(now)
    return state, rng


def _search(state, body, project_id, monkeypatch, general):
    if general:
        monkeypatch.setattr(routes, "_create_time_bounds", lambda filters: None)
    else:
        monkeypatch.undo()
    monkeypatch.setattr(routes, "_modelarts_prelude", lambda *args, **kwargs: None)
    response = routes.v2_search(state, _Exchange(body), _Match(project_id))
    document = response.document
    return document["total"], [item["metadata"]["id"] for item in document["items"]]


@pytest.mark.parametrize("seed", range(6))
def test_a_search_by_creation_time_finds_what_testing_every_job_finds(monkeypatch, seed):
    state, rng = _state(seed)
    project_id = state.jobs[0].project_id
    now_ms = int(state.now() * 1000)
    bodies = [{}, {"order": "asc"}, {"workspace_id": WORKSPACE}, {"tags": [{"key": "team", "values": ["vision"]}]}]
    bodies.append({"tags": [{"key": "team", "values": ["vision", "speech"]}, {"key": "stage"}], "order": "asc"})
    for _window in range(12):
        low = now_ms - rng.randint(0, 60 * 86400 * 1000)
        high = rng.choice((now_ms, now_ms + 600000, low + rng.randint(0, 30 * 86400 * 1000)))
        window = [{"key": "create_time", "operator": "between", "value": [str(low), str(high)]}]
        bodies.append({"filters": window, "order": rng.choice(("asc", "desc"))})
        # A tag search's window spans at most 31 days.
        tag_window = [{"key": "create_time", "operator": "between", "value": [str(low), str(low + rng.randint(0, 30 * 86400 * 1000))]}]
        bodies.append({"filters": tag_window, "tags": [{"key": "team", "values": ["vision"]}]})
    # Bounds that are jobs' own creation times: both ends are included.
    created = sorted(int(job.lifecycle.created_at * 1000) for job in state.jobs)
    for _window in range(6):
        low, high = sorted(rng.sample(created, 2))
        bodies.append({"filters": [{"key": "create_time", "operator": "between", "value": [str(low), str(high)]}]})
    bodies.append({"filters": [{"key": "create_time", "operator": "between", "value": ["x", "1"]}]})
    checked = 0
    for body in bodies:
        for offset in range(3):
            query = dict(body, offset=offset, limit=rng.choice((7, 50)))
            fast = _search(state, query, project_id, monkeypatch, general=False)
            each = _search(state, query, project_id, monkeypatch, general=True)
            assert fast == each, query
            checked += fast[0]
    assert checked > 0, "the searches found jobs"


def test_the_kept_order_follows_a_job_retagged_moved_or_removed(monkeypatch):
    state, _rng = _state(7)
    project_id = state.jobs[0].project_id
    body = {"tags": [{"key": "team", "values": ["vision"]}], "limit": 50}
    before = _search(state, body, project_id, monkeypatch, general=False)
    outsider = next(job for job in state.jobs if job.tags.get("team") == "speech" and job.workspace_id == "0" and job.lifecycle.visible(state.now()))
    state.update_job(outsider.key, tags={"team": "vision"})
    after = _search(state, body, project_id, monkeypatch, general=False)
    assert after[0] == before[0] + 1 and outsider.v2_id in after[1]
    assert after == _search(state, body, project_id, monkeypatch, general=True)
    state.update_job(outsider.key, workspace_id=WORKSPACE)
    assert _search(state, body, project_id, monkeypatch, general=False) == before
    state.remove_job(before[1][0])
    assert _search(state, body, project_id, monkeypatch, general=False)[0] == before[0] - 1


def _moving_state(seed):
    """Jobs that settled long ago, jobs moving on the clock (some to stay Running), jobs moving with their polls, jobs
    created later or hidden by 404 polls, in two workspaces, with and without tags."""
    rng = random.Random(seed)
    state = EmulatorState(scenario={})
    specs = []
    for n in range(150):
        spec = {"id": "job-%03d" % n, "name": "n-%d" % (n % 5), "tags": rng.choice(TAGS)}
        kind = rng.random()
        if kind < 0.4:
            spec["phase"] = rng.choice(("Completed", "Completed", "Failed", "Terminated", "Abnormal", "Running", "Pending"))
        elif kind < 0.8:
            steps = [{"phase": phase, "seconds": rng.choice((0, 1, 5, 30, 120))} for phase in rng.sample(("Creating", "Pending", "Running"), rng.randint(1, 3))]
            steps.append(rng.choice(("Completed", "Failed", "Running", "Terminating", "Abnormal")))
            spec["timeline"] = steps
        else:
            spec["timeline"] = [{"phase": "Pending", "polls": rng.randint(1, 3)}, {"phase": "Running", "polls": rng.randint(1, 3)}, "Completed"]
        if rng.random() < 0.2:
            spec["workspace_id"] = WORKSPACE
        if rng.random() < 0.1:
            spec["created_at"] = "%ds" % rng.randint(1, 200)  # in the future
        else:
            spec["created_ago"] = "%ds" % rng.choice((0, 10, 60, 3600, rng.randint(1, 20 * 86400)))
        if rng.random() < 0.1:
            spec["not_found_polls"] = 1
        specs.append(spec)
    state.add_jobs(specs)
    return state, rng


def _phase_search(state, body, project_id, monkeypatch, indexed):
    """``(total, ids)`` of a search, through the phase index or (``indexed`` false) testing every job of the project."""
    with monkeypatch.context() as patch:
        patch.setattr(routes, "_modelarts_prelude", lambda *args, **kwargs: None)
        if not indexed:
            patch.setattr(routes, "_phases_allowed", lambda filters: None)
        document = routes.v2_search(state, _Exchange(body), _Match(project_id)).document
    return document["total"], [item["metadata"]["id"] for item in document["items"]]


@pytest.mark.parametrize("seed", range(6))
def test_a_search_by_phase_finds_what_testing_every_job_finds(monkeypatch, seed):
    """The phase index (state.PhaseIndex) leaves out only jobs that cannot be in the phases asked for: the same total and
    items as testing every job, as the clock moves, polls move jobs on and jobs are retagged or removed."""
    state, rng = _moving_state(seed)
    # The emulator's clock stands still but for state.advance: the two searches of a query see the same moment, however
    # long the first took on a loaded machine (real time moved a job with a step of 0 or 1 s between them).
    frozen = state.now() - state.clock_offset
    monkeypatch.setattr(state, "now", lambda: frozen + state.clock_offset)
    project_id = state.jobs[0].project_id
    unfinished = ["Creating", "Pending", "Running", "Terminating"]
    phase_filters = [
        [{"key": "phase", "operator": "in", "value": unfinished}],
        [{"key": "phase", "operator": "in", "value": ["Completed"]}],
        [{"key": "phase", "operator": "not", "value": ["Completed", "Failed"]}],
        [{"key": "phase", "operator": "like", "value": ["ing"]}],
        [{"key": "phase", "operator": "in", "value": ["Running"]}, {"key": "phase", "operator": "not", "value": ["Running"]}],
        [{"key": "phase", "operator": "in", "value": unfinished}, {"key": "name", "operator": "like", "value": ["n-3"]}],
    ]
    checked = 0
    for moment in range(10):
        if moment:
            state.advance(rng.choice((0.001, 0.5, 3, 20, 90)))
        now_ms = int(state.now() * 1000)
        for job in rng.sample(state.jobs, 15):
            job.lifecycle.poll(state.now())
        if moment == 5:
            state.update_job(state.jobs[3].key, tags={"team": "vision"})
            state.remove_job(state.jobs[7].key)
        for filters in phase_filters:
            since = [{"key": "create_time", "operator": "between", "value": [str(now_ms - rng.randint(0, 7 * 86400 * 1000)), str(now_ms)]}]
            for body in ({"filters": filters}, {"filters": filters + since, "order": "asc"}, {"filters": filters, "workspace_id": WORKSPACE}):
                body = dict(body, tags=[{"key": "team", "values": ["vision"]}]) if rng.random() < 0.3 else body
                query = dict(body, offset=rng.randint(0, 1), limit=rng.choice((5, 50)))
                fast = _phase_search(state, query, project_id, monkeypatch, indexed=True)
                each = _phase_search(state, query, project_id, monkeypatch, indexed=False)
                assert fast == each, query
                checked += fast[0]
    assert checked > 0, "the searches found jobs"


def test_a_search_for_unfinished_jobs_peeks_only_at_jobs_that_may_be_unfinished(monkeypatch):
    """The point of the index: among 2,000 jobs that finished long ago and 3 that run, a search for the unfinished
    phases looks at the 3 (and none of the others' timelines)."""
    state = EmulatorState(scenario={})
    state.add_jobs([{"name": "done-{n}", "count": 2000, "phase": "Completed", "created_ago": "1h"}])
    state.add_jobs([{"name": "live-%d" % n, "timeline": [{"phase": "Running", "seconds": 600}, "Completed"]} for n in range(3)])
    project_id = state.jobs[0].project_id
    peeked = []
    for job in state.jobs:
        original = job.lifecycle.peek
        monkeypatch.setattr(job.lifecycle, "peek", lambda now, original=original, job=job: peeked.append(job.name) or original(now))
    body = {"filters": [{"key": "phase", "operator": "in", "value": ["Creating", "Pending", "Running", "Terminating"]}], "limit": 50}
    total, ids = _phase_search(state, body, project_id, monkeypatch, indexed=True)
    assert total == 3 and len(ids) == 3
    assert sorted(set(peeked)) == ["live-0", "live-1", "live-2"]
