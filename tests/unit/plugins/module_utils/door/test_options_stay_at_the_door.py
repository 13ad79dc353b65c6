# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 58: options are read at the door only.  The structure test refuses a ``params`` argument below the door; this
test proves the rule at run time, whatever the names: a task's options - and every list and dict inside them (the
metric entries, the baseline, stall, v1_jobs) - are handed to the door as watched containers that note each read made
from a file below the door (``plugins/module_utils/<package>/`` outside ``door/``; for the event source, outside its
own door for its arguments, ``watch/source.py``), and so is every read of the resolved ``Settings`` (the door's view
and its parts: a room receives its part, never the settings).  Then whole calls run over a scripted transport - a wait
with metrics and a baseline on a Completed job, a wait with ``stall`` on a Running one, a search by name and tags, the
lookup's two levels, the event source's rounds - and no read may come from below the door."""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.door.options import Settings
from ansible_collections.modelarts.training.plugins.module_utils.door.query import Query, select
from ansible_collections.modelarts.training.plugins.module_utils.text import LEVEL_KEYWORD, LEVEL_OPTION, LEVEL_VARIABLE
from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fakes import FakeClock, FakeResponse

PROJECT = "0" * 32
MODULE_UTILS = os.sep + os.path.join("plugins", "module_utils") + os.sep
DOORS = (MODULE_UTILS + "door" + os.sep, MODULE_UTILS + os.path.join("watch", "source.py"))


class Reads(object):
    """Where the watched containers were read from below the door: ``["package/file.py:line (how)", ...]``."""

    def __init__(self):
        self.below = []

    def note(self, how):
        frame = sys._getframe(2)  # pylint: disable=protected-access  # the caller of the watched method
        path = frame.f_code.co_filename
        if MODULE_UTILS in path and not any(door in path for door in DOORS):
            self.below.append("%s:%d (%s)" % (path.split(MODULE_UTILS, 1)[1], frame.f_lineno, how))


def watched(value, reads):
    """``value`` with every dict and list in it watched by ``reads``."""
    if isinstance(value, dict):
        return WatchedDict(((key, watched(item, reads)) for key, item in value.items()), reads)
    if isinstance(value, list):
        return WatchedList((watched(item, reads) for item in value), reads)
    return value


class WatchedDict(dict):
    """A dict that notes every read made from below the door."""

    def __init__(self, items, reads):
        super().__init__(items)
        self.reads = reads

    def __getitem__(self, key):
        self.reads.note("[%r]" % (key,))
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.reads.note("get(%r)" % (key,))
        return super().get(key, default)

    def __contains__(self, key):
        self.reads.note("%r in" % (key,))
        return super().__contains__(key)

    def __iter__(self):
        self.reads.note("iter")
        return super().__iter__()

    def keys(self):
        self.reads.note("keys()")
        return super().keys()

    def items(self):
        self.reads.note("items()")
        return super().items()

    def values(self):
        self.reads.note("values()")
        return super().values()

    def copy(self):
        self.reads.note("copy()")
        return super().copy()


class WatchedList(list):
    """A list that notes every read made from below the door."""

    def __init__(self, items, reads):
        super().__init__(items)
        self.reads = reads

    def __getitem__(self, index):
        self.reads.note("[%r]" % (index,))
        return super().__getitem__(index)

    def __iter__(self):
        self.reads.note("iter")
        return super().__iter__()

    def __len__(self):
        self.reads.note("len")
        return super().__len__()


def document(job_id, phase, name="train", tags=None, created=1767225600000):
    return {
        "kind": "job",
        "metadata": {"id": job_id, "name": name, "create_time": created, "tags": tags or []},
        "status": {"phase": phase, "start_time": 1767225660000, "duration": 60000, "tasks": ["worker-0"]},
        "algorithm": {"engine": {"engine_name": "PyTorch"}},
        "spec": {"resource": {"flavor_id": "modelarts.p3.large.public", "node_count": 1}},
    }


class Service(object):
    """A scripted ModelArts: each job's GET, its log, its metrics and the search; anything else a 404 in the service's form."""

    def __init__(self, jobs):
        self.jobs = jobs
        self.calls = []

    def request(self, method, url, **kwargs):
        self.calls.append((method, url))
        path = url.split("?", 1)[0]
        if method == "POST" and path.endswith("/training-job-searches"):
            found = [self.jobs[key] for key in sorted(self.jobs)]
            return FakeResponse(200, {"total": len(found), "count": len(found), "items": found})
        for job_id, job in self.jobs.items():
            if path.endswith("/training-jobs/%s" % job_id):
                return FakeResponse(200, job)
            if "/training-jobs/%s/logs/" % job_id in path:
                return FakeResponse(200, {"content": "epoch 3 acc=0.91\n", "end_line": 1, "full_size": 18})
            if "/training-jobs/%s/metrics/" % job_id in path:
                return FakeResponse(200, {"metrics": [{"metric": "gpuUtil", "value": [90.0] * 10}]})
        return FakeResponse(404, {"error_code": "ModelArts.0404", "error_msg": "not found"})

    def close(self):
        pass


CONNECTION = {"region": "cn-north-4", "project_id": PROJECT, "auth_token": "tok-0123456789", "backoff_retries": 0}


@pytest.fixture
def reads(monkeypatch):
    """The reads noted in this test: of the watched options, and of every ``Settings`` (its view and its parts)."""
    noted = Reads()
    original = Settings.__getattr__

    def noting(settings, name):
        noted.note("settings.%s" % name)
        return original(settings, name)

    monkeypatch.setattr(Settings, "__getattr__", noting)
    return noted


def run(task, jobs, reads, levels=None):
    given = watched(dict(CONNECTION, **task), reads)
    clock = FakeClock()
    session = Service(jobs)
    options = dict(environ={}, clock=clock, sleeper=clock.sleep, session=session, sleep=clock.sleep, utcnow=clock.utcnow)
    with Query(levels or [(LEVEL_OPTION, given)], select(given), **options) as query:
        result = query.run()
    return result, session


CASES = {
    "wait, metrics and a baseline on a Completed job": (
        {
            "training_job_id": "job-1",
            "wait": True,
            "wait_timeout": 60,
            "metrics": [{"name": "acc", "source": "log", "regex": "acc=([0-9.]+)", "min": 0.5, "min_improvement": 0.0}],
            "baseline": {"training_job_id": "prod-1"},
        },
        {"job-1": document("job-1", "Completed"), "prod-1": document("prod-1", "Completed", name="prod", created=1767139200000)},
    ),
    "wait with stall on a Running job": (
        {"training_job_ids": ["job-2"], "wait": True, "wait_timeout": 0, "stall": {"idle_minutes": 5, "quiet_minutes": 5, "require": "any"}},
        {"job-2": document("job-2", "Running")},
    ),
    "a search by name and tags, the newest": (
        {"name": "train", "tags": {"team": "vision"}, "latest": True, "fail_on": ["Failed"], "diagnostics": True},
        {"job-3": document("job-3", "Failed", tags=[{"key": "team", "value": "vision"}])},
    ),
    "v1_jobs beside training_job_ids": (
        {"training_job_ids": ["job-4"], "v1_jobs": [{"job_id": 10, "version_id": 2}]},
        {"job-4": document("job-4", "Completed")},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_no_file_below_the_door_reads_the_options(case, reads):
    task, jobs = CASES[case]
    result, session = run(task, jobs, reads)
    assert session.calls, "the call made no request: the rooms below the door did not run"
    assert result.items, result.msg
    if "metrics" in task:
        assert result.items[0]["metrics"]["acc"]["baseline_value"] == 0.91, "the metric and the baseline's were read"
    if "stall" in task:
        assert result.items[0]["progress"]["signals"]["idle"]["tasks"], "the progress of the Running job was read"
    assert not reads.below, "options read below the door: %s" % "; ".join(reads.below)


def test_the_watch_sees_a_read_from_below_the_door():
    """The check can fail: a room handed an option's value as given (here tags as a list of pairs, which
    job/selection.Search iterates) is noted with its file; a read from elsewhere (this test) is not."""
    from ansible_collections.modelarts.training.plugins.module_utils.job.selection import Search  # pylint: disable=import-outside-toplevel

    reads = Reads()
    given = watched({"tags": [["team", ["vision"]]]}, reads)
    assert given["tags"] and not reads.below, "a read from the test (not below the door) is not noted"
    Search(name="n", tags=given["tags"])
    assert reads.below and all(entry.startswith("job" + os.sep + "selection.py:") for entry in reads.below), reads.below


def test_the_lookups_two_levels_are_read_at_the_door_only(reads):
    """The lookup's shape: keywords over inventory variables (two levels), a term's selection."""
    keywords = watched({"wait": True, "wait_timeout": 60, "metrics": [{"name": "acc", "source": "log", "regex": "acc=([0-9.]+)", "min": 0.5}]}, reads)
    variables = watched(dict(CONNECTION, validate_certs=True), reads)
    jobs = {"job-6": document("job-6", "Completed")}
    result, session = run({"training_job_id": "job-6"}, jobs, reads, levels=[(LEVEL_KEYWORD, keywords), (LEVEL_VARIABLE, variables)])
    assert session.calls and result.items[0]["metrics"]["acc"]["value"] == 0.91, result.msg
    assert not reads.below, "options read below the door: %s" % "; ".join(reads.below)


def test_the_event_sources_rounds_read_its_arguments_at_its_door_only(reads):
    """The event source: its arguments (with metrics and stall) read by its own door and the door's, never by the watch's
    rooms (judge, ledger, stalls) nor by the rooms below the door, over the rounds that report a completion."""
    from ansible_collections.modelarts.training.plugins.module_utils.watch.source import build_watcher  # pylint: disable=import-outside-toplevel

    args = watched(
        dict(
            CONNECTION,
            training_job_ids=["job-7", "job-8"],
            interval=5,
            metrics=[{"name": "acc", "source": "log", "regex": "acc=([0-9.]+)", "min": 0.5}],
            stall={"idle_minutes": 5},
        ),
        reads,
    )
    clock = FakeClock()
    session = Service({"job-7": document("job-7", "Completed"), "job-8": document("job-8", "Running")})
    watcher, query = build_watcher(args, environ={}, clock=clock, session=session, sleep=clock.sleep, utcnow=clock.utcnow)
    with query:
        watcher.prepare()
        events = []
        for _round in range(3):
            events += watcher.round(clock())
            clock.sleep(5)
    assert [event["modelarts"]["phase"] for event in events if event["modelarts"]["training_job"]["id"] == "job-7"][-1:] == ["Completed"], events
    assert not reads.below, "options read below the door: %s" % "; ".join(reads.below)
