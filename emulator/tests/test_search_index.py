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
