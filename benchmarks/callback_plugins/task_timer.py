# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark callback: record the wall time of every task, from task start to its last host result.

Enabled by the benchmark with ``ANSIBLE_CALLBACK_PLUGINS=benchmarks/callback_plugins`` and
``ANSIBLE_CALLBACKS_ENABLED=task_timer``; it appends one JSON line per task to the file named by
the environment variable ``TASK_TIMER_OUTPUT``. The clock is ``time.perf_counter`` in the
controller's main process, so a task's time includes the worker fork, templating (and so any
lookup), module transfer and execution, and the result's return, but not the start-up of
``ansible-playbook`` itself.
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
        super().__init__(*args, **kwargs)
        self._output = os.environ.get("TASK_TIMER_OUTPUT")
        self._task = None
        self._started = None
        self._items = 0

    def _start(self, task):
        self._task = task.get_name()
        self._started = time.perf_counter()
        self._items = 0

    def _finish(self, status):
        if self._task is None:
            return
        record = {"task": self._task, "seconds": time.perf_counter() - self._started, "status": status, "items": self._items}
        self._task = None
        if self._output:
            with open(self._output, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")

    def v2_playbook_on_task_start(self, task, is_conditional):
        """Note the start of a task."""
        self._start(task)

    def v2_runner_item_on_ok(self, result):
        """Count loop items."""
        self._items += 1

    def v2_runner_on_ok(self, result):
        """The host finished the task."""
        self._finish("ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        """The host failed the task."""
        self._finish("failed")

    def v2_runner_on_skipped(self, result):
        """The host skipped the task."""
        self._finish("skipped")

    def v2_runner_on_unreachable(self, result):
        """The host was unreachable."""
        self._finish("unreachable")
