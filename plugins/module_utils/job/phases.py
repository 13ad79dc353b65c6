# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The phase vocabulary of training jobs: the one place that defines phases and what they mean.

* ``PHASES``: the v2 API's ``status.phase`` values, in the order the API documents them.
* ``TERMINAL_PHASES``: phases a job never leaves.
* ``FAILURE_PHASES``: phases that always explain themselves with a ``failure_reason``.
* ``DEFAULT_WAIT_FOR`` / ``DEFAULT_FAIL_ON``: the defaults of the ``wait_for``/``fail_on`` options.
* ``V1_STATUS_TABLE``: the legacy v1 API's integer statuses 0-22 and the phase each one maps to
  (``V1_STATUS_NAMES``/``V1_STATUS_PHASES`` are views of it).  ``hacking/render_v1_status_table.py``
  renders it for ``docs/module.md``.

Plain data without imports, so tools can load this file by path.
"""

from __future__ import annotations

__all__ = [
    "PHASES",
    "TERMINAL_PHASES",
    "FAILURE_PHASES",
    "DEFAULT_WAIT_FOR",
    "DEFAULT_FAIL_ON",
    "V1_STATUS_TABLE",
    "V1_STATUS_NAMES",
    "V1_STATUS_PHASES",
]

PHASES = ("Creating", "Pending", "Running", "Failed", "Completed", "Terminating", "Terminated", "Abnormal")
TERMINAL_PHASES = ("Failed", "Completed", "Terminated", "Abnormal")
# Phases that always explain themselves with a failure_reason, whatever fail_on says.
FAILURE_PHASES = ("Failed", "Abnormal")
DEFAULT_WAIT_FOR = ("Completed",)
DEFAULT_FAIL_ON = ("Failed", "Abnormal", "Terminated")

# v1 integer status -> (name, v2 phase, why).  The rules behind the choices:
# * Only COMPLETED (10) maps to Completed: CHECK_RUNNING_COMPLETED (20) says a pre-run check
#   finished, not the training, so it waits as Pending.
# * Every *_FAILED status maps to a fail_on phase (Failed, or Abnormal for DELETE_FAILED,
#   an operation on the job rather than the training), so none can open a deployment gate.
#   SUBMIT_MODEL_FAILED/DEPLOY_SERVICE_FAILED fail even if training itself finished: the
#   artefact the gate protects was not produced.
# * UNKNOWN (0) and LOST (14) mean the service lost track of the job; like v2's secondary
#   phases Unknown/Lost they are Abnormal: never success, and a wait ends at once.
# * KILLED/CANCELED are stops by a user, i.e. Terminated (in the default fail_on).
V1_STATUS_TABLE = (
    (0, "UNKNOWN", "Abnormal", "the service lost track of the job; never success"),
    (1, "INIT", "Creating", "initialising"),
    (2, "IMAGE_CREATING", "Creating", "building the image"),
    (3, "IMAGE_FAILED", "Failed", "image build failed"),
    (4, "SUBMIT_TRYING", "Creating", "being submitted"),
    (5, "SUBMIT_FAILED", "Failed", "submission failed"),
    (6, "DELETE_FAILED", "Abnormal", "a delete failed; the job state is not trustworthy"),
    (7, "WAITING", "Pending", "queued for resources"),
    (8, "RUNNING", "Running", "running"),
    (9, "KILLING", "Terminating", "being stopped"),
    (10, "COMPLETED", "Completed", "training finished successfully (the only success)"),
    (11, "FAILED", "Failed", "training failed"),
    (12, "KILLED", "Terminated", "stopped"),
    (13, "CANCELED", "Terminated", "cancelled"),
    (14, "LOST", "Abnormal", "the service lost the job"),
    (15, "SCALING", "Running", "running, changing node count"),
    (16, "SUBMIT_MODEL_FAILED", "Failed", "model submission failed; no model to deploy"),
    (17, "DEPLOY_SERVICE_FAILED", "Failed", "service deployment failed"),
    (18, "CHECK_INIT", "Creating", "pre-run check initialising"),
    (19, "CHECK_RUNNING", "Creating", "pre-run check running"),
    (20, "CHECK_RUNNING_COMPLETED", "Pending", "pre-run check done; training has not finished"),
    (21, "CHECK_FAILED", "Failed", "pre-run check failed"),
    (22, "MOUNT_FAILED", "Failed", "storage mount failed"),
)
V1_STATUS_NAMES = {code: name for code, name, _phase, _why in V1_STATUS_TABLE}
V1_STATUS_PHASES = {code: phase for code, _name, phase, _why in V1_STATUS_TABLE}
