# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 56, items 8, 9 and 13: the regex matcher's child and the timers of a call - in the user's shape.

* 8: as a module (AnsiballZ), a task's ``timeout:`` ends the task and ansible-core leaves the module running; whatever
  then ends the module without a chance to clean up (an operator's ``kill -9``, the host's OOM killer, a job runner's
  cleanup) ends its regex matcher too, which a catastrophic pattern kept at 100% CPU until the call's deadline.
* 9: in a controller holding descriptors of 1024 and more (a long-lived execution environment), the matcher still
  answers: ``select.select`` refused such descriptors and the metric read failed.
* 13: a huge ``wait_timeout`` (2**32 s, 10**12 s; interface.md sets no upper bound) is a deadline far away, never a
  timer the platform refuses (``signal.alarm``'s int, a lock's or a condition's ``TIMEOUT_MAX``, a socket timeout):
  a job that completes at once, with a metric read by a regex, passes in the controller's process and as a module.
"""

import os
import signal
import textwrap
import time

import pytest

from test_metrics import ACC, CATASTROPHIC, PATHOLOGICAL_LOG, WAYS, epochs, info, new_id, play, run, save

HUGE = [2**32, 10**12]
# How long "gone eventually" may take: the matcher ends at once; this only bounds a loaded machine.
GONE_WITHIN = 60
# The module's and the matcher's command lines (matching.CHILD); a process is this test's by MARK in its environment.
MODULE = b"AnsiballZ_modelarts_training_job_info"
MATCHER = b"patterns = [re.compile("


def marked(mark):
    """``{pid: command line}`` of the running processes whose environment holds ``MODELARTS_TEST_MARK=<mark>``."""
    found = {}
    wanted = b"MODELARTS_TEST_MARK=" + mark.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as handle:
                if wanted not in handle.read().split(b"\0"):
                    continue
            with open("/proc/%s/cmdline" % name, "rb") as handle:
                command = handle.read()
            with open("/proc/%s/stat" % name, "rb") as handle:
                if handle.read().rsplit(b")", 1)[-1].split()[0] == b"Z":
                    continue
        except OSError:
            continue
        found[int(name)] = command
    return found


def matchers(mark):
    return [pid for pid, command in marked(mark).items() if MATCHER in command]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_a_module_killed_after_its_task_timed_out_leaves_no_matcher_spinning(emulator, run_playbook, tmp_path):
    job = new_id()
    emulator.add_job(id=job, name="pathological", phase="Completed", **PATHOLOGICAL_LOG)
    task = info("catastrophic", "result", training_job_id=job, wait=True, wait_timeout=3600, metrics=[CATASTROPHIC])
    # Long enough for the module to start on a loaded machine (its matcher then spins until the call's deadline).
    task["timeout"] = 15
    mark = new_id()
    try:
        results, _output = run(run_playbook, tmp_path, play(emulator, [task, save(tmp_path, "result")]), False, env={"MODELARTS_TEST_MARK": mark})
        result = results["result"]
        assert result["failed"] and ("Timed out after 15 second" in result["msg"] or "time frame (15)" in result["msg"]), result
        ends = time.monotonic() + GONE_WITHIN
        while not matchers(mark) and time.monotonic() < ends:
            time.sleep(0.2)
        left = marked(mark)
        modules = [pid for pid, command in left.items() if MODULE in command and MATCHER not in command]
        assert modules and matchers(mark), "ansible-core left the module and its matcher running: %s" % left
        for pid in modules:
            os.kill(pid, signal.SIGKILL)
        ends = time.monotonic() + GONE_WITHIN
        while matchers(mark) and time.monotonic() < ends:
            time.sleep(0.2)
        assert matchers(mark) == [], "the matcher outlived the module that started it"
    finally:
        for pid in marked(mark):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


# Loaded by ansible-playbook at its start: the controller then holds 1,100 descriptors, which its workers inherit.
MANY_DESCRIPTORS = textwrap.dedent(
    """
    import os
    import resource

    from ansible.plugins.callback import CallbackBase

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200 and (hard == resource.RLIM_INFINITY or hard >= 1200):
        resource.setrlimit(resource.RLIMIT_NOFILE, (1200, hard))
    HELD = [os.open(os.devnull, os.O_RDONLY) for _index in range(1100)]


    class CallbackModule(CallbackBase):
        CALLBACK_VERSION = 2.0
        CALLBACK_TYPE = "aggregate"
        CALLBACK_NAME = "many_descriptors"
        CALLBACK_NEEDS_ENABLED = True
    """
)


def test_a_controller_with_descriptors_over_1024_reads_a_metric_by_regex(emulator, run_playbook, tmp_path):
    plugins = tmp_path / "callbacks"
    plugins.mkdir()
    (plugins / "many_descriptors.py").write_text(MANY_DESCRIPTORS)
    env = {"ANSIBLE_CALLBACK_PLUGINS": str(plugins), "ANSIBLE_CALLBACKS_ENABLED": "many_descriptors"}
    job = new_id()
    emulator.add_job(id=job, name="quick", phase="Completed", metric_lines=epochs(0.80, 0.91))
    metric = {"name": "val_accuracy", "regex": ACC, "min": 0.9}
    tasks = [info("read", "read", training_job_id=job, metrics=[metric]), save(tmp_path, "read")]
    results, output = run(run_playbook, tmp_path, play(emulator, tasks), True, env=env)
    assert "Traceback" not in output, output[-4000:]
    result = results["read"]
    assert not result.get("failed"), (result.get("msg"), result.get("training_job", {}).get("metrics"))
    assert result["training_job"]["metrics_ok"] is True and result["training_job"]["metrics"]["val_accuracy"]["value"] == 0.91


@WAYS
@pytest.mark.parametrize("wait_timeout", HUGE, ids=["2**32", "10**12"])
def test_a_huge_wait_timeout_is_a_far_deadline_not_an_overflow(emulator, run_playbook, tmp_path, in_process, wait_timeout):
    job = new_id()
    emulator.add_job(id=job, name="quick", phase="Completed", metric_lines=epochs(0.80, 0.91))
    metric = {"name": "val_accuracy", "regex": ACC, "min": 0.9}
    tasks = [
        info("wait", "waited", training_job_id=job, wait=True, wait_timeout=wait_timeout, metrics=[metric]),
        info("read", "read", training_job_id=job, wait_timeout=wait_timeout, metrics=[metric]),
        save(tmp_path, "waited", "read"),
    ]
    results, output = run(run_playbook, tmp_path, play(emulator, tasks), in_process)
    for name in ("waited", "read"):
        result = results[name]
        assert not result.get("failed"), (result.get("msg"), result.get("training_job", {}).get("metrics"))
        assert result["training_job"]["metrics_ok"] is True, result["training_job"]["metrics"]
        assert result["training_job"]["metrics"]["val_accuracy"]["value"] == 0.91
    assert "Traceback" not in output and "Overflow" not in output, output[-4000:]
