# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark callback: record the wall time of every task, from its start to the start of the next one.

Enabled by the benchmark with ``ANSIBLE_CALLBACK_PLUGINS=benchmarks/callback_plugins`` and
``ANSIBLE_CALLBACKS_ENABLED=task_timer``; it appends one JSON line per task to the file named by
the environment variable ``TASK_TIMER_OUTPUT``. The clock is ``time.perf_counter`` in the
controller's main process, so a task's time includes the worker fork, templating (and so any
lookup), module transfer and execution, the result's return and its handling by the stdout
callback, but not the start-up of ``ansible-playbook`` itself.

The timer implements no method that receives a task result, on purpose: ansible-core hands every
callback plugin that implements one (``v2_runner_on_ok``, ``v2_runner_item_on_ok``, ...) its own deep
copy of the result, stripped of internal keys (``TaskQueueManager.send_callback``), so a timer
listening for results would add one more copy of every result to the time it measures (0.165 s
for the 2.9 MB result of 200 full-size jobs, docs/performance.md). A task ends when the next task
starts; the last one at the play's statistics, where a failure is seen. ``TASK_TIMER_MODE=results``
restores the result-listening timer, to measure that difference.
"""

from __future__ import annotations

import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = r"""
name: task_timer
type: aggregate
short_description: Write per-task wall times as JSON lines (benchmarks only)
description:
  - Appends C({"task", "seconds", "status", "items"}) per task to the file named by E(TASK_TIMER_OUTPUT).
requirements:
  - enabled in ANSIBLE_CALLBACKS_ENABLED
"""


class CallbackModule(CallbackBase):
    """Time each task of a play run against a single host."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_timer"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        self._output = os.environ.get("TASK_TIMER_OUTPUT")
        self._task = None
        self._started = None
        if os.environ.get("TASK_TIMER_MODE") == "results":
            # Set before CallbackBase.__init__, which lists the methods a plugin implements: listening
            # for results makes ansible-core copy every result once more for this plugin.
            self.v2_runner_on_ok = lambda result: self._finish(time.perf_counter(), "ok")
            self.v2_runner_on_failed = lambda result, ignore_errors=False: self._finish(time.perf_counter(), "failed")
        super().__init__(*args, **kwargs)

    def _finish(self, now, status):
        if self._task is None:
            return
        record = {"task": self._task, "seconds": now - self._started, "status": status}
        self._task = None
        if self._output:
            with open(self._output, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")

    def v2_playbook_on_task_start(self, task, is_conditional):
        """The previous task ended (a single-host play stops at a failure, so it ended ok); this one starts."""
        now = time.perf_counter()
        self._finish(now, "ok")
        self._task = task.get_name()
        self._started = now

    def v2_playbook_on_stats(self, stats):
        """The play ended: so did its last task, failed if the host has a failure."""
        failed = any(stats.failures.values()) or any(stats.dark.values())
        self._finish(time.perf_counter(), "failed" if failed else "ok")
