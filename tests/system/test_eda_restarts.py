# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 37: an event source you can restart - ``startup``, ``state_file`` and ``event_id`` against the emulator.

Through the staged source's ``main()`` (as ansible-rulebook calls it) and through the real ansible-rulebook.  Jobs
move one phase per poll (GET), so what the source sees does not depend on the machine's speed.
"""

import asyncio
import json
import os
import stat
import uuid

import pytest

from eda_helpers import connection_args, load_source, run_rulebook, source_events, unique_id


@pytest.fixture
def src(collection_root):
    return load_source(collection_root)


def run(coroutine, limit=90):
    return asyncio.run(asyncio.wait_for(coroutine, limit))


def transitions(events):
    return [(e["modelarts"]["training_job"]["id"], e["modelarts"]["previous_phase"], e["modelarts"]["phase"]) for e in events]


def tag_searches(emulator, since=0):
    entries = emulator.requests(since=since, path="/training-job-searches")
    return [entry for entry in entries if entry["method"] == "POST" and (entry.get("body") or {}).get("tags")]


def test_startup_changes_reports_no_finished_job_and_lists_them_in_a_page_per_50(src, emulator):
    tag = {"restart-changes": uuid.uuid4().hex[:8]}
    emulator.add_jobs([{"name": "done-{n:03d}", "count": 200, "created_ago": "2h", "stagger": "20s", "phase": "Completed", "tags": tag}])
    running = [unique_id("changes-live") for _ in range(3)]
    emulator.add_jobs(
        [{"id": job, "name": "changes-live", "created_ago": "1h", "tags": tag, "timeline": [{"phase": "Running", "polls": 2}, "Completed"]} for job in running]
    )
    seen = emulator.requests()
    mark = seen[-1]["seq"] if seen else 0
    args = dict(connection_args(emulator), tags=tag, interval=0.3, startup="changes")

    def all_done(events):
        return {job for job, _previous, phase in transitions(events) if phase == "Completed"} >= set(running)

    events = run(source_events(src, args, all_done))
    assert sorted(transitions(events)) == sorted((job, "Running", "Completed") for job in running)
    # The first round: the tag's pages (203 jobs: 5 pages), and no GET for a finished job.
    offsets = [entry["body"]["offset"] for entry in tag_searches(emulator, mark)]
    # 203 matching jobs: the first round is 5 pages (within 200/50 + 5 requests); each later round starts again at page 0.
    assert offsets[:6] == [0, 1, 2, 3, 4, 0], offsets[:10]
    gets = [entry for entry in emulator.requests(since=mark, path="/training-jobs/") if entry["method"] == "GET"]
    assert {entry["path"].rsplit("/", 1)[-1] for entry in gets} <= set(running), "no GET for a job that was finished at start"
    for entry in events:
        assert uuid.UUID(entry["modelarts"]["event_id"]).version == 5


def test_two_runs_without_a_state_file_give_the_same_event_id(src, emulator):
    job = unique_id("restart-same-id")
    emulator.add_jobs([{"id": job, "name": "same-id", "phase": "Completed"}])
    args = dict(connection_args(emulator), training_job_ids=[job], interval=0.2, stop_when_done=True)
    first = run(source_events(src, args, lambda events: len(events) >= 1))
    second = run(source_events(src, args, lambda events: len(events) >= 1))
    assert transitions(first) == transitions(second) == [(job, None, "Completed")]
    assert first[0]["modelarts"]["event_id"] == second[0]["modelarts"]["event_id"]


def test_the_state_file_resumes_from_what_was_reported(src, emulator, tmp_path):
    done, live = unique_id("restart-done"), unique_id("restart-live")
    emulator.add_jobs(
        [
            {"id": done, "name": "resume", "phase": "Completed"},
            {"id": live, "name": "resume", "timeline": [{"phase": "Running", "polls": 2}, "Completed"]},
        ]
    )
    state = tmp_path / "state" / "watch.json"
    state.parent.mkdir(mode=0o700)
    args = dict(connection_args(emulator), training_job_ids=[done, live], interval=0.2, state_file=str(state))
    first = run(source_events(src, args, lambda events: len(events) >= 2))
    assert sorted(transitions(first)) == sorted([(done, None, "Completed"), (live, None, "Running")])
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o600
    recorded = json.loads(state.read_text())["jobs"]
    assert recorded == {done: "Completed", live: "Running"}
    assert os.path.getsize(state) < 400 * len(recorded)
    # The next run: the finished job gives nothing; the running one's change while down is one event from Running.
    second = run(source_events(src, dict(args, stop_when_done=True), lambda events: len(events) >= 1))
    assert transitions(second) == [(live, "Running", "Completed")]
    third = run(source_events(src, dict(args, stop_when_done=True), lambda events: False, wait=3))
    assert third == []


@pytest.mark.parametrize("case", ["another selection", "corrupt"])
def test_a_state_file_that_does_not_fit_stops_the_source_at_start(src, emulator, tmp_path, caplog, case):
    job = unique_id("restart-refused")
    emulator.add_jobs([{"id": job, "name": "refused", "phase": "Completed"}])
    state = tmp_path / "watch.json"
    if case == "corrupt":
        state.write_text('{"version": 1, "jobs": ')
    else:
        other = dict(connection_args(emulator), training_job_ids=[unique_id("restart-other")], interval=0.2, state_file=str(state))
        run(source_events(src, other, lambda events: False, wait=2))
        assert state.exists()
    before = state.read_bytes()
    args = dict(connection_args(emulator), training_job_ids=[job], interval=0.2, state_file=str(state))
    queue = asyncio.Queue()
    with pytest.raises(src["SourceConfigError"]) as caught:
        run(src["main"](queue, args))
    message = str(caught.value)
    assert str(state) in message and ("another selection" in message if case != "corrupt" else "cannot be read" in message)
    assert "training_job_ids" in message or case == "corrupt"
    assert "Traceback" not in message and queue.empty()
    assert state.read_bytes() == before


def test_the_shipped_playbook_skips_an_event_it_deployed_already(emulator, ansible_env, tmp_path):
    """Two runs of the shipped rulebook without a state file report the finished job twice with the same event_id: the
    gate_deployment playbook deploys once and skips the repeat."""
    job = unique_id("restart-deploy")
    emulator.add_jobs([{"id": job, "name": "restart-deploy", "phase": "Completed"}])
    env = dict(ansible_env, TMPDIR=str(tmp_path), **emulator.env())
    variables = {"training_job_ids": [job], "poll_interval": 0.3, "stop_when_done": True}
    outputs = []
    for _run in range(2):
        result = run_rulebook(env, tmp_path, "modelarts.training.deploy_on_completed", variables, shutdown_delay=60, timeout=150)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        outputs.append(result.stdout)
    releases = list((tmp_path / "modelarts-releases").glob("release-*.json"))
    assert len(releases) == 1, outputs[1][-3000:]
    assert "was deployed already" in outputs[1]
    ids = (tmp_path / "modelarts-releases" / "deployed-event-ids").read_text().split()
    assert len(ids) == 1 and uuid.UUID(ids[0]).version == 5
