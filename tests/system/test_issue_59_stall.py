# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 59 in the user's shapes: ``stall`` on the module with ``wait``, the lookup and the role, against the emulator's
``activity`` jobs.  The jobs live on the emulator's clock; a thread moves it while a wait runs (the
``modelarts_emulator`` fixture sets it back after each test)."""

from modelarts_emulator.client import ClockMover
from plays import info, new_id, play, run, save

# While a wait runs: one emulator minute every quarter of a second.


def hours(phase="Running"):
    return [{"phase": phase, "seconds": 36000}, "Completed"]


def test_a_hung_job_fails_the_wait_within_one_quiet_window_plus_one_poll(modelarts_emulator, run_playbook, tmp_path):
    emulator = modelarts_emulator
    job = new_id()
    emulator.add_job(id=job, name="stall-hung", created_ago=0, timeline=hours(), activity={"hang_at": "13m"})
    emulator.advance_clock(12 * 60)  # out of its grace, busy for one more minute
    stall = {"idle_minutes": 5, "quiet_minutes": 5}
    task = info("wait", "hung", training_job_id=job, wait=True, wait_timeout=3600, wait_sleep=0.5, wait_sleep_max=0.5, stall=stall)
    with ClockMover(emulator, job, per_poll=True):
        results, _output = run(run_playbook, tmp_path, play(emulator, [task, save(tmp_path, "hung")]))
    hung = results["hung"]
    assert hung["failed"], hung
    msg = hung["msg"]
    assert "stopped making progress" in msg and "the service still reports Running" in msg, msg
    assert "gpuUtil at most" in msg and "on every task for 5 minutes" in msg and "no log line for" in msg, msg
    assert "timed out" not in msg, msg
    item = hung["training_jobs"][0]
    assert item["phase"] == "Running" and item["progress"]["stalled"] is True, item["progress"]
    # Within one quiet_minutes window plus one poll (a poll here is one emulator minute): never at wait_timeout.
    minutes = int(msg.split("no log line for ")[1].split(" minute")[0])
    assert 5 <= minutes <= 5 + 2, msg
    assert hung["training_jobs"][0]["polls"] <= 13 + 5 + 2, "the hang at 13 minutes, the window, a poll and the clock's lag"
    assert item["waited_seconds"] < 120, item["waited_seconds"]
    assert any("stopped making progress" in line for line in hung["job_messages"]), hung["job_messages"]


def test_jobs_that_make_progress_or_cannot_be_judged_are_never_stalled(modelarts_emulator, run_playbook, tmp_path):
    emulator = modelarts_emulator
    jobs = {
        "busy": ({"timeline": hours(), "activity": {}}),
        "preprocessing": ({"timeline": hours(), "activity": {"util": "idle"}}),
        "no-samples": ({"timeline": hours(), "activity": {"samples": "none", "hang_at": "50m"}}),
        "restarted": (
            {
                "timeline": [{"phase": "Running", "seconds": 2400}, {"phase": "Running", "restart": True, "seconds": 36000}, "Completed"],
                "activity": {"hang_at": "10m", "service_hang": {"at": "35m"}},
            }
        ),
    }
    ids = dict((name, new_id()) for name in jobs)
    for name, job in jobs.items():
        emulator.add_job(id=ids[name], name="stall-" + name, created_ago=0, **job)
    emulator.advance_clock(46 * 60)  # the restarted job runs again since 40m: its JobHanged (35m) is older than its last start
    stall = {"idle_minutes": 5, "quiet_minutes": 5}
    task = info("wait", "waited", training_job_ids=list(ids.values()), wait=True, wait_timeout=6, wait_sleep=0.5, wait_sleep_max=0.5, stall=stall)
    with ClockMover(emulator, ids["busy"]):
        results, _output = run(run_playbook, tmp_path, play(emulator, [task, save(tmp_path, "waited")]))
    waited = results["waited"]
    assert waited["failed"] and "timed out" in waited["msg"] and "stopped making progress" not in waited["msg"], waited["msg"]
    by_name = dict((item["name"], item) for item in waited["training_jobs"])
    for name in jobs:
        progress = by_name["stall-" + name]["progress"]
        assert progress is not None and progress["stalled"] is False, (name, progress)
    assert by_name["stall-preprocessing"]["progress"]["signals"]["idle"]["held"] is True, "idle accelerators, a growing log: require all"
    assert by_name["stall-preprocessing"]["progress"]["signals"]["quiet"]["held"] is False
    assert any("-1" in line for line in by_name["stall-no-samples"]["progress"]["problems"]), by_name["stall-no-samples"]["progress"]
    assert by_name["stall-restarted"]["progress"]["signals"]["service"]["held"] is False


def test_a_job_inside_its_grace_is_not_stalled_and_the_lookup_gives_progress(modelarts_emulator, run_playbook, tmp_path):
    emulator = modelarts_emulator
    hung, fresh = new_id(), new_id()
    emulator.add_job(id=hung, name="stall-lookup-hung", created_ago=0, timeline=hours(), activity={"hang_at": "11m"})
    emulator.advance_clock(30 * 60)
    emulator.add_job(id=fresh, name="stall-grace", created_ago=0, timeline=hours(), activity={"hang_at": "1m"})
    emulator.advance_clock(8 * 60)
    expression = "{{ lookup('modelarts.training.training_job', '%s', '%s', stall={'idle_minutes': 5}) }}" % (hung, fresh)
    tasks = [{"ansible.builtin.set_fact": {"found": expression}}, save(tmp_path, "found")]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks), env=emulator.env("aksk"))
    hung_item, fresh_item = results["found"]
    assert hung_item["progress"]["stalled"] is True and hung_item["progress"]["signals"]["idle"]["held"] is True, hung_item["progress"]
    assert hung_item["progress"]["signals"]["quiet"] is None
    assert fresh_item["progress"]["stalled"] is False, "inside its grace (10 minutes): never stalled"


def test_a_job_that_completes_during_the_wait_ends_completed(modelarts_emulator, run_playbook, tmp_path):
    emulator = modelarts_emulator
    job = new_id()
    emulator.add_job(id=job, name="stall-completes", created_ago=0, timeline=[{"phase": "Running", "seconds": 20 * 60}, "Completed"], activity={})
    emulator.advance_clock(12 * 60)
    task = info("wait", "done", training_job_id=job, wait=True, wait_timeout=120, wait_sleep=0.5, wait_sleep_max=0.5, stall={"quiet_minutes": 3})
    with ClockMover(emulator, job):
        results, _output = run(run_playbook, tmp_path, play(emulator, [task, save(tmp_path, "done")]))
    done = results["done"]
    assert not done.get("failed"), done.get("msg")
    assert done["training_job"]["phase"] == "Completed" and done["training_job"]["progress"] is None


def test_the_role_closes_the_gate_on_a_hung_job_with_the_stalls_words(modelarts_emulator, run_playbook, tmp_path):
    emulator = modelarts_emulator
    job = new_id()
    emulator.add_job(id=job, name="stall-gate", created_ago=0, timeline=hours(), activity={"hang_at": "13m"})
    emulator.advance_clock(12 * 60)
    role = {
        "block": [
            {
                "ansible.builtin.include_role": {"name": "modelarts.training.training_job_gate"},
                "vars": {
                    "training_job_gate_ids": [job],
                    "training_job_gate_timeout": 3600,
                    "training_job_gate_poll": 0.5,
                    "training_job_gate_stall": {"idle_minutes": 5, "quiet_minutes": 5},
                },
            }
        ],
        "rescue": [{"ansible.builtin.set_fact": {"closed": "{{ ansible_failed_result.msg }}"}}],
    }
    with ClockMover(emulator, job):
        results, _output = run(run_playbook, tmp_path, play(emulator, [role, save(tmp_path, "closed")]))
    closed = results["closed"]
    assert closed.startswith("training_job_gate: closed:"), closed
    assert "stopped making progress" in closed and "gpuUtil at most" in closed and "the service still reports Running" in closed, closed


def test_option_errors_name_the_option_before_any_request(emulator, run_playbook, tmp_path):
    job = new_id()
    cases = {
        "unknown": {"idle_minuts": 5},
        "minutes": {"idle_minutes": 0},
        "boolean": {"service": "maybe"},
        "nothing": {"service": False},
    }
    tasks = [info(name, name, training_job_id=job, stall=stall) for name, stall in cases.items()]
    lookups = dict(
        (
            "lookup_" + name,
            "{{ lookup('modelarts.training.training_job', '%s', stall=%r) }}" % (job, stall),
        )
        for name, stall in cases.items()
    )
    for name, expression in lookups.items():
        tasks.append({"name": name, "ansible.builtin.debug": {"msg": expression}, "register": name, "ignore_errors": True})
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks + [save(tmp_path, *(list(cases) + list(lookups)))]), env=emulator.env("aksk"))
    assert not emulator.requests(path=job), "no request for the job"
    assert "stall.idle_minuts (did you mean idle_minutes?)" in results["unknown"]["msg"], results["unknown"]["msg"]
    assert "stall.idle_minutes must be a whole number of minutes from 1 to 1440, got 0" in results["minutes"]["msg"]
    assert "service" in results["boolean"]["msg"] and "maybe" in results["boolean"]["msg"], results["boolean"]["msg"]
    assert "stall asks for no signal" in results["nothing"]["msg"], results["nothing"]["msg"]
    assert "idle_minuts (did you mean idle_minutes?)" in results["lookup_unknown"]["msg"], results["lookup_unknown"]["msg"]
    assert "stall.idle_minutes must be a whole number of minutes from 1 to 1440, got 0" in results["lookup_minutes"]["msg"]
    assert "stall.service must be a boolean (true or false), got 'maybe'" in results["lookup_boolean"]["msg"], results["lookup_boolean"]["msg"]
    assert "stall asks for no signal" in results["lookup_nothing"]["msg"]


def test_the_role_refuses_a_bad_stall_in_the_modules_words_under_its_variable(emulator, run_playbook, tmp_path):
    job = new_id()
    role = {
        "block": [
            {
                "ansible.builtin.include_role": {"name": "modelarts.training.training_job_gate"},
                "vars": {"training_job_gate_ids": [job], "training_job_gate_stall": {"idle_minutes": 0}},
            }
        ],
        "rescue": [{"ansible.builtin.set_fact": {"refused": "{{ ansible_failed_result.msg }}"}}],
    }
    results, _output = run(run_playbook, tmp_path, play(emulator, [role, save(tmp_path, "refused")]))
    assert "training_job_gate_stall.idle_minutes must be a whole number of minutes from 1 to 1440, got 0" in results["refused"], results["refused"]
    assert not emulator.requests(path=job), "refused before any request"
