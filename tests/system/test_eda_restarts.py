# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 37: an event source you can restart - ``startup``, ``state_file`` and ``event_id`` against the emulator.

Through the staged source's ``main()`` (as ansible-rulebook calls it) and through the real ansible-rulebook.  Jobs
move one phase per poll (GET), so what the source sees does not depend on the machine's speed.
"""

import asyncio
import json
import os
import random
import re
import signal
import stat
import subprocess
import time
import uuid

import pytest

from eda_helpers import BIN, connection_args, event_lines, load_source, rulebook_inputs, run_rulebook, source_events, unique_id


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


def test_startup_changes_reports_no_finished_job_and_lists_none_of_them(src, emulator):
    tag = {"restart-changes": uuid.uuid4().hex[:8]}
    emulator.add_jobs([{"name": "done-{n:03d}", "count": 200, "created_ago": "2h", "stagger": "20s", "phase": "Completed", "tags": tag}])
    running = [unique_id("changes-live") for _number in range(3)]
    emulator.add_jobs(
        [{"id": job, "name": "changes-live", "created_ago": "1h", "tags": tag, "timeline": [{"phase": "Running", "polls": 2}, "Completed"]} for job in running]
    )
    mark = emulator.mark()
    args = dict(connection_args(emulator), tags=tag, interval=0.3, startup="changes")

    def all_done(events):
        return {job for job, _previous, phase in transitions(events) if phase == "Completed"} >= set(running)

    events = run(source_events(src, args, all_done))
    assert sorted(transitions(events)) == sorted((job, "Running", "Completed") for job in running)
    # The first round (issue 49): the unfinished jobs (one page: 3 jobs) and the newest, never the finished jobs page by
    # page - no search asks past page 0 - and no GET for a finished job.
    offsets = [entry["body"]["offset"] for entry in tag_searches(emulator, mark)]
    assert set(offsets) == {0}, offsets[:10]
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


def test_the_state_file_resumes_from_what_was_reported(src, modelarts_emulator, tmp_path):
    # modelarts_emulator: the test moves the clock, which that fixture sets back after the test (the session's emulator
    # serves the worker's other tests).
    emulator = modelarts_emulator
    done, live = unique_id("restart-done"), unique_id("restart-live")
    emulator.add_jobs(
        [
            {"id": done, "name": "resume", "phase": "Completed"},
            # Running for an hour of the emulator's clock: it completes when the test moves the clock, not by speed.
            {"id": live, "name": "resume", "timeline": [{"phase": "Running", "seconds": 3600}, "Completed"]},
        ]
    )
    state = tmp_path / "state" / "watch.json"
    state.parent.mkdir(mode=0o700)
    args = dict(connection_args(emulator), training_job_ids=[done, live], interval=0.2, state_file=str(state))
    # The source saves once ansible-rulebook (here: this reader) took the events off the queue: wait for the file too.
    first = run(source_events(src, args, lambda events: len(events) >= 2 and state.exists(), wait=5))
    assert sorted(transitions(first)) == sorted([(done, None, "Completed"), (live, None, "Running")])
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o600
    recorded = json.loads(state.read_text())["jobs"]
    assert recorded == {done: "Completed", live: "Running"}
    assert os.path.getsize(state) < 400 * len(recorded)
    # The next run: the finished job gives nothing; the running one's change while down is one event from Running.
    emulator.advance_clock(3601)
    # stop_when_done: main() ends once both jobs are finished, after it saved what it reported.
    second = run(source_events(src, dict(args, stop_when_done=True), lambda events: False, wait=30))
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
        # A watch by name (ids added to or removed from a watch by ids keep the file: test_review_47_restarts.py).
        other = dict(connection_args(emulator), name=unique_id("restart-other"), interval=0.2, state_file=str(state))
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
    """Two runs of the shipped rulebook without a state file (``state_file: ""``) report the finished job twice with the
    same event_id: the gate_deployment playbook deploys once and skips the repeat (it records the jobs it deployed)."""
    job = unique_id("restart-deploy")
    emulator.add_jobs([{"id": job, "name": "restart-deploy", "phase": "Completed"}])
    env = dict(ansible_env, TMPDIR=str(tmp_path), **emulator.env())
    variables = {"training_job_ids": [job], "poll_interval": 0.3, "stop_when_done": True, "state_file": ""}
    outputs = []
    for _run in range(2):
        result = run_rulebook(env, tmp_path, "modelarts.training.deploy_on_completed", variables, shutdown_delay=60, timeout=150)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        outputs.append(result.stdout)
    releases = list((tmp_path / "modelarts-releases").glob("release-*.json"))
    assert len(releases) == 1, outputs[1][-3000:]
    assert "was deployed already" in outputs[1]
    assert (tmp_path / "modelarts-releases" / "deployed-training-jobs").read_text().split() == [job]


RESTARTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rulebooks", "observe_restarts.yml")
EVENT_ID = re.compile(r"'event_id': '([0-9a-f-]{36})'")


def start_rulebook(env, workdir, variables, number):
    """ansible-rulebook in its own process group (so a kill takes its JVM and workers too), output to files."""
    workdir = str(workdir)
    inventory, vars_file = rulebook_inputs(workdir, variables)
    out = open(os.path.join(workdir, "run-%d.out" % number), "w")
    command = [os.path.join(BIN, "ansible-rulebook"), "--rulebook", RESTARTS, "-i", inventory, "--vars", vars_file, "--print-events"]
    command += ["--shutdown-delay", "1"]
    process = subprocess.Popen(command, env=env, cwd=workdir, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return process, out


# One step of the emulator's clock: the jobs of the SIGKILL test move only when the test moves that clock.
STEP = 3600


def test_sigkill_at_random_moments_loses_no_final_transition_and_repeats_only_what_was_in_flight(modelarts_emulator, ansible_env, tmp_path):
    """ansible-rulebook's whole process group is killed (SIGKILL) at random moments, six times, while ten jobs finish at
    staggered times and three were finished before the start; each restart uses the same state_file.

    The jobs live on the emulator's clock, which the test moves one step at a random moment of each killed run, before
    its kill: every job starts to run at the second step and two reach their final phase at each step from the third to
    the seventh, which the run after the sixth kill makes as it starts - so every killed run sees transitions (or misses
    them while it is down) and the source cannot finish before its sixth kill, however fast or slow the machine runs (the
    sixth step, in a killed run, once left the source time to see its last jobs finish and end before its kill).

    What reached the rules is read from ``--print-events`` (ansible-rulebook prints an event when its rule set takes it off
    the source's queue, before the source saves it as reported) and from the rule's own line."""
    emulator = modelarts_emulator
    randomness = random.Random(os.environ.get("RESTART_SEED", "37"))
    before = [unique_id("kill-before") for _number in range(3)]
    live = [unique_id("kill-live") for _number in range(10)]
    jobs = [{"id": job, "name": "kill-before", "phase": "Completed"} for job in before]
    for index, job in enumerate(live):
        final = "Failed" if index % 4 == 3 else "Completed"
        running = {"phase": "Running", "seconds": STEP * (1 + index // 2)}
        jobs.append({"id": job, "name": "kill-live", "timeline": [{"phase": "Pending", "seconds": 2 * STEP}, running, final]})
    emulator.add_jobs(jobs)
    finals = dict((job, "Completed") for job in before)
    finals.update((job, "Failed" if index % 4 == 3 else "Completed") for index, job in enumerate(live))
    state = tmp_path / "state" / "watch.json"
    state.parent.mkdir(mode=0o700)
    variables = {"training_job_ids": before + live, "interval": 0.3, "state_file": str(state)}
    env = dict(ansible_env, PYTHONUNBUFFERED="1", **emulator.env())
    runs = []  # per run: (killed, {event_id: (job, previous, phase)} from the printed events)
    recorded = {}  # the state file's jobs when the run started
    kills = 0
    for number in range(20):
        process, out = start_rulebook(env, tmp_path, variables, number)
        killed = False
        try:
            if kills < 6:
                # Random moments of this run: the clock's step, then the kill. The JVM's start-up takes seconds, so some
                # steps and kills come before any event: the run after it then sees what changed while it was down.
                kill_at = randomness.uniform(2.0, 12.0)
                step_at = randomness.uniform(0.5, kill_at - 0.5)
                try:
                    process.wait(timeout=step_at)
                except subprocess.TimeoutExpired:
                    pass
                emulator.advance_clock(STEP)
                try:
                    process.wait(timeout=kill_at - step_at)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(timeout=30)
                    killed = True
                    kills += 1
            else:
                emulator.advance_clock(STEP)
                process.wait(timeout=180)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
            out.close()
        text = (tmp_path / ("run-%d.out" % number)).read_text()
        assert not re.search(r"^Traceback \(most recent call last\):$", text, re.M), text[-3000:]
        received = dict((line[3], tuple(line[:3])) for line in event_lines(text) if len(line) >= 4)
        for identity in EVENT_ID.findall(text):
            received.setdefault(identity, None)
        # Each run goes on from the state the run before it left: a job's first event has the recorded phase as its
        # previous phase, and a job recorded in its final phase gives no event at all.
        for job in set(line[0] for line in event_lines(text)):
            first = next(line for line in event_lines(text) if line[0] == job)
            assert recorded.get(job) != finals[job], "run %d reported %s again, recorded %s" % (number, job, recorded.get(job))
            assert first[1] == str(recorded.get(job)), "run %d started %s from %s, recorded %s" % (number, job, first[1], recorded.get(job))
        recorded = json.loads(state.read_text())["jobs"] if state.exists() else {}
        runs.append((killed, received, text))
        if not killed:
            assert process.returncode == 0, text[-3000:]
            break
    assert kills == 6, "only %d kills before the source finished" % kills
    transitions_by_id = {}
    for _killed, received, _text in runs:
        for identity, transition in received.items():
            if transition is not None:
                assert transitions_by_id.setdefault(identity, transition) == transition, "one event_id, two transitions"
    # The event ids the rules received, printed by ansible-rulebook (--print-events) or by the rule.
    reached = set().union(*(set(received) for _killed, received, _text in runs))
    # Every job's transition into its final phase reached the rules, once or again with the same event_id.
    for job, phase in finals.items():
        ids = [identity for identity, transition in transitions_by_id.items() if transition[0] == job and transition[2] == phase]
        assert len(ids) == 1, (job, phase, ids)
        assert ids[0] in reached
    # A run repeats only what the run before it had in flight when it was killed: nothing older.
    for number, (_killed, received, _text) in enumerate(runs):
        for identity in received:
            earlier = [index for index in range(number) if identity in runs[index][1]]
            if earlier:
                # In flight at a kill: reported by a run that was killed, and by no run since but killed ones.
                assert all(runs[index][0] for index in range(earlier[0], number)), "event %s of run %d was reported again in run %d" % (
                    identity,
                    earlier[0],
                    number,
                )
    assert json.loads(state.read_text())["jobs"] == finals


@pytest.mark.parametrize("how", ["tagged", "moved into the workspace"])
def test_a_job_that_starts_to_match_after_60_newer_ones_is_reported_in_the_same_run(src, emulator, how):
    tag = {"late-match": uuid.uuid4().hex[:8]}
    workspace = uuid.uuid4().hex
    args = dict(connection_args(emulator), tags=tag, interval=0.3)
    if how != "tagged":
        args["workspace_id"] = workspace
    emulator.add_jobs(
        [
            dict(
                {"name": "newer-{n:02d}", "count": 60, "created_ago": "2h", "stagger": "1m", "phase": "Completed", "tags": tag},
                **({} if how == "tagged" else {"workspace_id": workspace}),
            )
        ]
    )
    old = emulator.add_job(
        name="older", created_ago="5h", timeline=[{"phase": "Running", "polls": 3}, "Completed"], **({} if how == "tagged" else {"tags": tag})
    )
    changed = []

    def until(events):
        if len(events) >= 60 and not changed:
            # Every newer job was reported: the first listing is over; now the old job starts to match.
            changed.append(emulator.update_job(old, **({"tags": tag} if how == "tagged" else {"workspace_id": workspace})))
        return any(transition == (old, "Running", "Completed") for transition in transitions(events))

    events = run(source_events(src, args, until))
    mine = [transition for transition in transitions(events) if transition[0] == old]
    assert mine == [(old, None, "Running"), (old, "Running", "Completed")]
    assert len({transition[0] for transition in transitions(events)}) == 61


def test_a_watch_over_10001_matching_jobs_starts_and_emits(src, emulator):
    """More jobs than one whole-answer search returns (200 pages of 50): the listing goes on a page at a time."""
    tag = {"many": uuid.uuid4().hex[:8]}
    emulator.add_jobs([{"name": "many-{n:05d}", "count": 10001, "created_ago": "1h", "stagger": "200s", "phase": "Completed", "tags": tag}])
    live = emulator.add_job(name="many-live", created_ago="10d", tags=tag, timeline=[{"phase": "Running", "polls": 2}, "Completed"])
    args = dict(connection_args(emulator), tags=tag, interval=0.3, startup="changes")
    # No event comes before the listing of 201 pages is over: the bound is for a hang (two make test at once took over 240 s).
    events = run(source_events(src, args, bool, wait=900), limit=1000)
    assert transitions(events) == [(live, "Running", "Completed")]


FEEDBACK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rulebooks", "observe_feedback.yml")
FILTERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "event_filters")


def start_feedback_rulebook(env, workdir, variables, number):
    """ansible-rulebook with persistence (``--persistence-id`` and an H2 database file, ``drools_db_file_path``), which is
    what gives a ``feedback: true`` source its feedback queue; the test's event filters in ``--filter-dir``."""
    workdir = str(workdir)
    inventory, vars_file = rulebook_inputs(workdir, variables)
    out = open(os.path.join(workdir, "feedback-%d.out" % number), "w")
    command = [os.path.join(BIN, "ansible-rulebook"), "--rulebook", FEEDBACK, "-i", inventory, "--vars", vars_file, "--print-events"]
    command += ["--shutdown-delay", "1", "--persistence-id", "modelarts-feedback-test", "--filter-dir", FILTERS]
    process = subprocess.Popen(command, env=env, cwd=workdir, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return process, out


def wait_for(process, output, condition, what, limit=240):
    """Wait (polling files, not timing anything) until ``condition()`` holds; fail with the output if ``process`` ended
    first or ``limit`` seconds went by."""
    for _tick in range(int(limit / 0.1)):
        if condition():
            return
        if process.poll() is not None and not condition():
            break
        time.sleep(0.1)
    raise AssertionError("%s did not happen; ansible-rulebook's output:\n%s" % (what, output.read_text()[-4000:]))


def test_with_feedback_the_state_file_records_a_transition_only_once_ansible_rulebook_acknowledged_it(src, modelarts_emulator, ansible_env, tmp_path):
    """``feedback: true`` under ansible-rulebook with persistence: the state file records what the rules engine
    acknowledged on the feedback queue, not what was put on the source's queue.

    The test's ``withhold_ack`` filter lets the rules receive one job's ``Completed`` event but keeps ansible-rulebook's
    acknowledgement of it from the source (so the moment between the two lasts as long as the test needs, whatever the
    machine's speed).  The rules print that event, the state file still holds the job at ``Running``; the whole process
    group is killed (SIGKILL); the restart with the same state file reports the transition again, with the same
    ``event_id``, and records it once acknowledged."""
    emulator = modelarts_emulator
    # The collection's own event_id (watch.py's), through the staged source.
    event_id_of = src["build_watcher"].__globals__["event_id"]
    done, live = unique_id("feedback-done"), unique_id("feedback-live")
    emulator.add_jobs(
        [
            {"id": done, "name": "feedback", "phase": "Completed"},
            # Running for an hour of the emulator's clock: it completes when the test moves the clock.
            {"id": live, "name": "feedback", "timeline": [{"phase": "Running", "seconds": STEP}, "Completed"]},
        ]
    )
    state = tmp_path / "state" / "watch.json"
    state.parent.mkdir(mode=0o700)
    variables = {
        "training_job_ids": [done, live],
        "interval": 0.3,
        "state_file": str(state),
        # ansible-rulebook's persistence on an embedded H2 database file (its rules engine's state across restarts).
        "drools_db_file_path": str(tmp_path / "drools" / "eda"),
    }
    env = dict(ansible_env, PYTHONUNBUFFERED="1", WITHHOLD_ACK_JOB=live, WITHHOLD_ACK_PHASE="Completed", **emulator.env())

    def recorded():
        try:
            return json.loads(state.read_text())["jobs"]
        except (OSError, ValueError, KeyError):
            return {}

    process, out = start_feedback_rulebook(env, tmp_path, variables, 0)
    output = tmp_path / "feedback-0.out"
    try:
        # The first round's two events are acknowledged, then recorded.
        wait_for(process, output, lambda: recorded() == {done: "Completed", live: "Running"}, "the first round's record")
        # ansible-rulebook prints an event (--print-events) before its rules engine takes it and acknowledges it: what the
        # state file records was printed before.
        first = set(EVENT_ID.findall(output.read_text()))
        assert {event_id_of(done, None, "Completed"), event_id_of(live, None, "Running")} <= first, output.read_text()[-3000:]
        emulator.advance_clock(STEP)

        def completed_reached_the_rules():
            return any(line[:3] == (live, "Running", "Completed") for line in event_lines(output.read_text()))

        wait_for(process, output, completed_reached_the_rules, "the rules' line for %s Running -> Completed" % live)
        # The rules have the event; ansible-rulebook's acknowledgement never reaches the source: not recorded.
        assert recorded() == {done: "Completed", live: "Running"}
        withheld = [line for line in event_lines(output.read_text()) if line[:3] == (live, "Running", "Completed")]
        assert len(withheld) == 1 and withheld[0][3] not in first
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        out.close()
    assert recorded() == {done: "Completed", live: "Running"}, "the kill lost or recorded nothing more"
    # The restart, acknowledging everything: the transition the rules had without acknowledging it comes again, with the
    # same event_id; the job finished before it is not reported; the source ends (stop_when_done) once it saved.
    env.pop("WITHHOLD_ACK_JOB")

    def restart(number):
        process, out = start_feedback_rulebook(env, tmp_path, variables, number)
        try:
            process.wait(timeout=240)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
            out.close()
        return process, (tmp_path / ("feedback-%d.out" % number)).read_text()

    process, text = restart(1)
    if process.returncode != 0 and "Failed to initialize HA mode" in text:
        # ansible-rulebook's own H2 database may not survive the SIGKILL (met once in CI under load: H2's LobStorageMap
        # failing to load the HA stats, so ansible-rulebook does not start). That is its persistence, not the source's
        # state file this test is about: start again with the broken database moved aside, as an operator would.
        drools = tmp_path / "drools"
        drools.rename(tmp_path / "drools-broken-by-the-kill")
        drools.mkdir()
        process, text = restart(2)
    assert process.returncode == 0, text[-3000:]
    assert not re.search(r"^Traceback \(most recent call last\):$", text, re.M), text[-3000:]
    # What the source put on the queue this run (--print-events prints each event its rules engine receives): that
    # transition alone, with the same event_id.
    assert EVENT_ID.findall(text) == [withheld[0][3]], text[-3000:]
    assert tuple(withheld[0][:3]) in [tuple(line[:3]) for line in event_lines(text)]
    # ansible-rulebook's own persistence may run again, after the restart, an action of the killed run (seen: the rule of
    # live's first event): a repeat with its event_id, which a playbook drops (gate_deployment does).
    assert {line[3] for line in event_lines(text)} <= first | {withheld[0][3]}
    assert recorded() == {done: "Completed", live: "Completed"}


def test_a_job_tagged_after_it_finished_is_reported_at_the_next_start_with_startup_all(src, emulator, tmp_path):
    """docs/event_source.md, "A finished job that starts to match": a later round does not find it (no search tells it
    from a job that always matched, short of listing every match); the next start's listing does, and with
    ``startup: all`` a job the state file does not know gives its first observation - once."""
    tag = {"late-finished": uuid.uuid4().hex[:8]}
    emulator.add_jobs([{"name": "late-newer-{n:02d}", "count": 60, "created_ago": "2h", "stagger": "1m", "phase": "Completed", "tags": tag}])
    old = emulator.add_job(name="late-old", created_ago="5h", phase="Completed")
    state = tmp_path / "state" / "watch.json"
    state.parent.mkdir(mode=0o700)
    args = dict(connection_args(emulator), tags=tag, interval=0.3, state_file=str(state))
    first = run(source_events(src, args, lambda events: len(events) >= 60 and len(json.loads(state.read_text())["jobs"]) == 60 if state.exists() else False))
    assert len(first) == 60 and old not in {job for job, _previous, _phase in transitions(first)}
    emulator.update_job(old, tags=tag)
    second = run(source_events(src, args, lambda events: len(events) >= 1 and json.loads(state.read_text())["jobs"].get(old) == "Completed", wait=10))
    assert transitions(second) == [(old, None, "Completed")]
    third = run(source_events(src, args, lambda events: False, wait=3))
    assert third == []
