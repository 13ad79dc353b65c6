# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 59's Done-when in the shapes tests/system/test_issue_59_stall.py leaves to this file: the lookup with ``wait``
and the role (``training_job_gate_stall``) on a hung job (it fails within one ``quiet_minutes`` window plus one poll,
never at the timeout) and on the jobs that are never stalled - busy, preprocessing (idle accelerators, a growing log,
``require: all``), inside its grace, restarted after an old ``JobHanged``, only ``-1`` samples - each of which completes
during the wait and ends ``Completed``; and, on the module, a ``403`` on the metrics call and a CPU flavour giving a
``problems`` line and never a stall.  The jobs are the emulator's ``activity`` jobs (docs/emulator.md); the clock moves
one emulator minute per poll of the job (as the per-poll ``ClockMover`` of test_issue_59_stall.py), so the minutes hold
however slowly the machine runs the playbook."""

import pytest

from modelarts_emulator.client import ClockMover
from plays import info, new_id, play, rescued_gate, run, save

STALL = {"idle_minutes": 5, "quiet_minutes": 5}
# The hung job: busy for 13 minutes, then idle and silent, still Running for hours; the wait starts at 12 minutes.
HANG_AT, HUNG_FROM = 13, 12


def hours():
    return [{"phase": "Running", "seconds": 36000}, "Completed"]


def running(minutes):
    """Running ``minutes`` from the job's first start, then Completed."""
    return [{"phase": "Running", "seconds": minutes * 60}, "Completed"]


# name: (the job's scenario keys, the emulator minute at which the wait starts).  Each completes during the wait, a
# poll a minute, after more than one quiet_minutes window of polls.
NEVER_STALLED = {
    "busy": ({"timeline": running(25), "activity": {}}, 12),
    # Accelerators idle, the log growing: require all (the default) needs both.
    "preprocessing": ({"timeline": running(25), "activity": {"util": "idle"}}, 12),
    # Hung from its first minute, but completes (9.5 minutes) inside its 10-minute grace.
    "grace": ({"timeline": [{"phase": "Running", "seconds": 570}, "Completed"], "activity": {"hang_at": "1m"}}, 0),
    # Hung at 10 minutes, the service's JobHanged at 35, rescheduled at 40 and busy again until 60: the verdict is older
    # than its last start; the wait starts at 46 and runs past the restart's grace.
    "restarted": (
        {
            "timeline": [{"phase": "Running", "seconds": 2400}, {"phase": "Running", "restart": True, "seconds": 1200}, "Completed"],
            "activity": {"hang_at": "10m", "service_hang": {"at": "35m"}},
        },
        46,
    ),
    # Only -1 averages and a log silent from 13 minutes: the idle signal cannot be read, so require all never holds.
    "only-minus-one": ({"timeline": running(25), "activity": {"samples": "none", "hang_at": "13m"}}, 12),
}


def add_hung(emulator, name):
    job = new_id()
    emulator.add_job(id=job, name=name, created_ago=0, timeline=hours(), activity={"hang_at": "%dm" % HANG_AT})
    emulator.advance_clock(HUNG_FROM * 60)  # out of its grace, busy for one more minute
    return job


def add_shape(emulator, shape):
    scenario, start = NEVER_STALLED[shape]
    job = new_id()
    emulator.add_job(id=job, name="stall-" + shape, created_ago=0, **scenario)
    if start:
        emulator.advance_clock(start * 60)
    return job


def quiet_minutes_in(msg):
    """The minutes of ``no log line for N minutes`` in a stall's message."""
    assert "no log line for " in msg, msg
    return int(msg.split("no log line for ")[1].split(" minute")[0])


def assert_stalled_within_one_window_plus_one_poll(msg, mover):
    assert "stopped making progress" in msg and "the service still reports Running" in msg, msg
    assert "gpuUtil at most" in msg and "on every task for 5 minutes" in msg, msg
    assert "timed out" not in msg, msg
    # The window (5), one poll (one emulator minute, or the longest the clock moved at once on a loaded machine), and
    # one minute for a poll's reads seeing the clock before or after its move.
    assert STALL["quiet_minutes"] <= quiet_minutes_in(msg) <= STALL["quiet_minutes"] + mover.longest + 1, (msg, mover.longest)


def lookup_task(register, job, **options):
    """A debug task templating ``query(training_job, job, wait=true, ...)``; its failure registered, not fatal."""
    options = dict({"wait": True, "wait_sleep": 0.5, "wait_sleep_max": 0.5, "stall": STALL}, **options)
    keywords = ", ".join("%s=%r" % item for item in sorted(options.items()))
    expression = "{{ query('modelarts.training.training_job', '%s', %s) }}" % (job, keywords)
    return {"name": register, "ansible.builtin.debug": {"msg": expression}, "register": register, "ignore_errors": True}


def gate(job, timeout):
    return rescued_gate(
        "gate",
        {
            "training_job_gate_ids": [job],
            "training_job_gate_timeout": timeout,
            "training_job_gate_poll": 0.5,
            "training_job_gate_stall": STALL,
            "training_job_gate_fact": "gated",
        },
        jobs="{{ training_job_gate_result.training_jobs | default([]) }}",
    )


def gate_play(emulator, tmp_path, job, timeout):
    """The gate on ``job``, then ``gated`` (the role's fact, set only when it opens) and the gate's outcome saved.  The role
    passes no wait_sleep_max: module_defaults keeps its polls half a second apart, one emulator minute each."""
    return play(
        emulator,
        [gate(job, timeout), {"ansible.builtin.set_fact": {"gated": "{{ gated | default(None) }}"}}, save(tmp_path, "gate", "gated")],
        wait_sleep_max=0.5,
    )


# The lookup with wait.


def test_the_lookup_fails_a_hung_job_within_one_quiet_window_plus_one_poll(modelarts_emulator, run_playbook, tmp_path):
    emulator = modelarts_emulator
    job = add_hung(emulator, "stall-lookup-hung")
    task = lookup_task("looked", job, wait_timeout=3600)
    with ClockMover(emulator, job, per_poll=True, wait_first=False) as mover:
        results, _output = run(run_playbook, tmp_path, play(emulator, [task, save(tmp_path, "looked")]), env=emulator.env("aksk"))
    looked = results["looked"]
    assert looked["failed"], looked
    assert job in looked["msg"] or "stall-lookup-hung" in looked["msg"], looked["msg"]
    assert_stalled_within_one_window_plus_one_poll(looked["msg"], mover)


@pytest.mark.parametrize("shape", sorted(NEVER_STALLED))
def test_the_lookup_never_stalls_these_jobs_and_they_end_completed(modelarts_emulator, run_playbook, tmp_path, shape):
    emulator = modelarts_emulator
    job = add_shape(emulator, shape)
    task = lookup_task("looked", job, wait_timeout=120)
    with ClockMover(emulator, job, per_poll=True, wait_first=False):
        results, _output = run(run_playbook, tmp_path, play(emulator, [task, save(tmp_path, "looked")]), env=emulator.env("aksk"))
    looked = results["looked"]
    assert not looked.get("failed"), looked.get("msg")
    (item,) = looked["msg"]
    assert item["phase"] == "Completed" and item["progress"] is None, item
    # The wait ran through more than one quiet_minutes window of polls before the job completed.
    assert item["polls"] > STALL["quiet_minutes"] + 1, item["polls"]


# Controls: without what keeps each of these jobs from stalling (require all, the grace), the same job stalls - so the
# test above is not passing because the signals never hold.
LIFTED = {
    "preprocessing": {"require": "any"},
    # Three-minute windows: the signals hold well before it completes at 9.5 minutes, even on a loaded machine.
    "grace": {"grace_minutes": 1, "idle_minutes": 3, "quiet_minutes": 3},
    "only-minus-one": {"require": "any"},
}


@pytest.mark.parametrize("shape", sorted(LIFTED))
def test_the_lookup_stalls_the_same_job_once_its_guard_is_lifted(modelarts_emulator, run_playbook, tmp_path, shape):
    emulator = modelarts_emulator
    job = add_shape(emulator, shape)
    task = lookup_task("looked", job, wait_timeout=120, stall=dict(STALL, **LIFTED[shape]))
    with ClockMover(emulator, job, per_poll=True, wait_first=False):
        results, _output = run(run_playbook, tmp_path, play(emulator, [task, save(tmp_path, "looked")]), env=emulator.env("aksk"))
    looked = results["looked"]
    assert looked.get("failed") and "stopped making progress" in looked["msg"], looked.get("msg")


# The role: training_job_gate_stall.


def test_the_role_closes_the_gate_on_a_hung_job_within_one_quiet_window_plus_one_poll(modelarts_emulator, run_playbook, tmp_path):
    emulator = modelarts_emulator
    job = add_hung(emulator, "stall-gate-hung")
    with ClockMover(emulator, job, per_poll=True, wait_first=False) as mover:
        results, _output = run(run_playbook, tmp_path, gate_play(emulator, tmp_path, job, 3600))
    closed = results["gate"]
    assert closed["opened"] is False, closed
    assert closed["msg"].startswith("training_job_gate: closed:"), closed["msg"]
    assert_stalled_within_one_window_plus_one_poll(closed["msg"], mover)
    (item,) = closed["jobs"]
    assert item["phase"] == "Running" and item["progress"]["stalled"] is True, item["progress"]
    assert item["polls"] <= HANG_AT - HUNG_FROM + STALL["quiet_minutes"] + 3, "the hang, the window, a poll and a minute's jitter"
    assert item["waited_seconds"] < 120, item["waited_seconds"]


@pytest.mark.parametrize("shape", sorted(NEVER_STALLED))
def test_the_role_never_closes_the_gate_on_a_stall_for_these_jobs_and_opens_when_they_complete(modelarts_emulator, run_playbook, tmp_path, shape):
    emulator = modelarts_emulator
    job = add_shape(emulator, shape)
    with ClockMover(emulator, job, per_poll=True, wait_first=False):
        results, _output = run(run_playbook, tmp_path, gate_play(emulator, tmp_path, job, 120))
    assert results["gate"] == {"opened": True}, results["gate"]
    (item,) = results["gated"]
    assert item["phase"] == "Completed" and item["progress"] is None, item
    assert item["polls"] > STALL["quiet_minutes"] + 1, item["polls"]


# The module: a signal that cannot be read is a problems line, never a stall.

UNREADABLE = {
    "forbidden": ({"activity": {"hang_at": "%dm" % HANG_AT, "fault": "forbidden"}}, "its metrics could not be read"),
    "cpu": ({"flavor": "cpu", "activity": {"hang_at": "%dm" % HANG_AT}}, "reports no gpuUtil or npuUtil (a CPU flavour?)"),
}


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_an_unreadable_metric_is_a_problems_line_and_never_a_stall(modelarts_emulator, run_playbook, tmp_path, case):
    emulator = modelarts_emulator
    scenario, words = UNREADABLE[case]
    job = new_id()
    emulator.add_job(id=job, name="stall-" + case, created_ago=0, timeline=hours(), **scenario)
    emulator.advance_clock(HANG_AT * 60)  # hung from now on
    # Two-minute windows: the quiet signal holds after a few polls, however slowly the machine polls in 8 seconds.
    stall = {"idle_minutes": 2, "quiet_minutes": 2}
    task = info("wait", "waited", training_job_id=job, wait=True, wait_timeout=8, wait_sleep=0.5, wait_sleep_max=0.5, stall=stall)
    with ClockMover(emulator, job, per_poll=True, wait_first=False):
        results, _output = run(run_playbook, tmp_path, play(emulator, [task, save(tmp_path, "waited")]))
    waited = results["waited"]
    assert waited["failed"] and "timed out" in waited["msg"] and "stopped making progress" not in waited["msg"], waited["msg"]
    progress = waited["training_jobs"][0]["progress"]
    assert progress["stalled"] is False, progress
    # The log fell silent (the other signal held): only the unreadable metric kept the job from stalling.
    assert progress["signals"]["quiet"]["held"] is True, progress
    assert progress["signals"]["idle"]["held"] is False, progress
    lines = [line for line in progress["problems"] if line.startswith("idle: task") and words in line]
    assert lines, progress["problems"]
    if case == "forbidden":
        assert any("403" in line or "ModelArts.2771" in line for line in lines), lines
