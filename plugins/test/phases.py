# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jinja tests on a training job's phase: completed, terminal, failed.

Each accepts an item returned by the module or the lookup, or a phase string.
An unknown phase string is an error rather than a quiet ``false``, so that a
typo such as ``Complete`` cannot silently keep a gate shut or, worse, be
mistaken for a decision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ansible.errors import AnsibleFilterError

from ansible_collections.modelarts.training.plugins.module_utils.job.phases import DEFAULT_FAIL_ON, PHASES, TERMINAL_PHASES


def _kind(value):
    """How a message names what a test was given: the public kind, never an internal class such as
    ``_AnsibleLazyTemplateList``."""
    if value is None:
        return "none (an undefined or null value)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, Sequence) or isinstance(value, (set, frozenset)):
        return "a list"
    public = [cls.__name__ for cls in type(value).__mro__ if not cls.__name__.startswith("_")]
    return "a %s" % (public[0] if public else "value")


def _phase(value, test):
    if isinstance(value, Mapping):
        if "phase" not in value:
            if "training_job" in value or "training_jobs" in value:
                raise AnsibleFilterError(
                    "modelarts.training.%s: got the registered result of modelarts_training_job_info, not a job; test its .training_job"
                    " (result.training_job is modelarts.training.%s), or one of its .training_jobs" % (test, test)
                )
            raise AnsibleFilterError("modelarts.training.%s: the item has no 'phase' key; pass an item of the training_job lookup or module" % test)
        phase = value["phase"]
    elif isinstance(value, str):
        phase = value
    elif isinstance(value, Sequence) or isinstance(value, (set, frozenset)):
        raise AnsibleFilterError(
            "modelarts.training.%s: got a list of %d, not one job; test one item (jobs[0] is modelarts.training.%s), or pick the items with"
            " select (jobs | select('modelarts.training.%s') | list)" % (test, len(value), test, test)
        )
    else:
        raise AnsibleFilterError("modelarts.training.%s: expected a training job item or a phase string, got %s" % (test, _kind(value)))
    if phase is not None and phase not in PHASES:
        raise AnsibleFilterError("modelarts.training.%s: unknown phase %r; expected one of %s" % (test, phase, ", ".join(PHASES)))
    return phase


def completed(value):
    """True when the job's phase is Completed."""
    return _phase(value, "completed") == "Completed"


def terminal(value):
    """True when the job's phase is final: Completed, Failed, Terminated or Abnormal."""
    return _phase(value, "terminal") in TERMINAL_PHASES


def failed(value, fail_on=None):
    """True when the job's phase is in ``fail_on`` (default Failed, Abnormal, Terminated)."""
    phases = DEFAULT_FAIL_ON if fail_on is None else fail_on
    if isinstance(phases, str) or not all(isinstance(p, str) for p in phases):
        raise AnsibleFilterError("modelarts.training.failed: the fail phases must be a list of phase names")
    unknown = [p for p in phases if p not in PHASES]
    if unknown:
        raise AnsibleFilterError(
            "modelarts.training.failed: unknown phase %s in the fail phases; expected one of %s" % (", ".join(map(repr, unknown)), ", ".join(PHASES))
        )
    return _phase(value, "failed") in phases


class TestModule(object):
    """The collection's Jinja tests."""

    def tests(self):
        return {"completed": completed, "terminal": terminal, "failed": failed}
