# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One deadline end to end: the module against the emulator's throttle and delay faults.

With ``wait_timeout: T`` the task must end within ``T`` plus one ``request_timeout`` (plus the
start-up of ansible-playbook): before the fix, a throttled service with ``Retry-After: 300`` kept
a ``wait_timeout: 3`` task alive for minutes.  The bounds below are deliberately loose: they
separate "ends at the deadline" from "hangs", they do not measure speed (docs/reliability.md and
benchmarks/fault_soak.py do).
"""

import time
import uuid

import pytest

WAIT_TIMEOUT = 3
REQUEST_TIMEOUT = 4
STARTUP_ALLOWANCE = 25


@pytest.mark.parametrize(
    "fault",
    [
        {"type": "throttle", "retry_after": 300},
        {"type": "delay", "seconds": 60},
        {"type": "error", "status": 503},
    ],
)
def test_waiting_module_ends_at_its_deadline(emulator, run_playbook, fault):
    job_id = emulator.add_job(id=str(uuid.uuid4()), name="deadline-%s" % fault["type"], phase="Running")
    emulator.add_fault(job=job_id, count=-1, **fault)
    task = dict(
        emulator.connection("aksk"),
        training_job_id=job_id,
        wait=True,
        wait_timeout=WAIT_TIMEOUT,
        wait_sleep=1,
        request_timeout=REQUEST_TIMEOUT,
        connect_timeout=2,
    )
    plays = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {"name": "wait", "modelarts.training.modelarts_training_job_info": task, "register": "job", "ignore_errors": True},
                {"name": "show", "ansible.builtin.debug": {"msg": "MSG={{ job.msg }}"}},
            ],
        }
    ]
    started = time.monotonic()
    result = run_playbook(plays, timeout=600)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stdout + result.stderr
    assert "timed out after" in result.stdout, result.stdout
    assert elapsed < WAIT_TIMEOUT + REQUEST_TIMEOUT + STARTUP_ALLOWANCE, "the task outlived its deadline: %.1fs" % elapsed
