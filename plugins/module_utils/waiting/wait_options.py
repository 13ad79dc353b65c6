# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The wait's options: their table (documented by the modelarts.training.wait doc fragment), the rules a set of them
must meet, and ``WaitSettings``, the typed part the door resolves them into.  Light on purpose: the door reads this
file on every call (its argument specs), while ``waiter.py`` is imported only by a call that waits."""

from __future__ import annotations

from collections import namedtuple

from ansible_collections.modelarts.training.plugins.module_utils.job.phases import DEFAULT_FAIL_ON, DEFAULT_WAIT_FOR, PHASES, TERMINAL_PHASES

PHASE_CHOICES = list(PHASES)
# The phases a job never leaves, in the vocabulary's order.
FINAL_PHASES = [phase for phase in PHASES if phase in TERMINAL_PHASES]
DEFAULT_WAIT_TIMEOUT = 3600

# How to wait; documented by the modelarts.training.wait doc fragment.
WAIT_OPTIONS = {
    "wait": {"type": "bool", "default": False},
    "wait_for": {"type": "list", "elements": "str", "choices": PHASE_CHOICES, "default": list(DEFAULT_WAIT_FOR)},
    "fail_on": {"type": "list", "elements": "str", "choices": PHASE_CHOICES, "default": list(DEFAULT_FAIL_ON)},
    "wait_timeout": {"type": "int", "default": DEFAULT_WAIT_TIMEOUT},
    "wait_sleep": {"type": "float", "default": 5.0},
    "wait_sleep_max": {"type": "float", "default": 60.0},
}


class WaitSettings(namedtuple("WaitSettings", ("wait", "wait_for", "fail_on", "timeout", "sleep", "sleep_max"))):
    """The wait of one call, as resolved at the door (the part is immutable): whether to wait, the phases that end it well
    (``wait_for``) and badly (``fail_on``), its timeout and its polling interval and cap, in seconds."""

    __slots__ = ()


def wait_option_problems(wait_for, fail_on, timeout, sleep, sleep_max, not_found_tolerance=0):
    """Return a list of problems with the wait options (empty when they are usable)."""
    problems = []
    if not wait_for:
        problems.append("wait_for must name at least one phase")
    overlap = sorted(set(wait_for or ()) & set(fail_on or ()))
    if overlap:
        problems.append("wait_for and fail_on must not share phases, both contain: %s" % ", ".join(overlap))
    if timeout is None or timeout < 0:
        problems.append("wait_timeout must be 0 or more seconds, got %r" % (timeout,))
    if sleep is None or sleep <= 0:
        problems.append("wait_sleep must be more than 0 seconds, got %r" % (sleep,))
    if sleep_max is None or sleep_max <= 0:
        problems.append("wait_sleep_max must be more than 0 seconds, got %r" % (sleep_max,))
    if not_found_tolerance is None or not_found_tolerance < 0:
        problems.append("not_found_tolerance must be 0 or more, got %r" % (not_found_tolerance,))
    return problems


# -- a job that stopped making progress: stall -------------------------------------------------------------------

STALL_REQUIRE = ["all", "any"]
STALL_MAX_MINUTES = 1440
DEFAULT_STALL_IDLE_BELOW = 1.0
DEFAULT_STALL_GRACE_MINUTES = 10
# The option ``stall`` (a dict, unset: no stall check); its values are checked by check_stall, whichever entry point
# gave them (the module's argument spec types them, the lookup's keywords and the event source's arguments arrive as
# they were written).
STALL_OPTIONS = {
    "idle_minutes": {"type": "int"},
    "idle_below": {"type": "float", "default": DEFAULT_STALL_IDLE_BELOW},
    "quiet_minutes": {"type": "int"},
    "service": {"type": "bool", "default": True},
    "grace_minutes": {"type": "int", "default": DEFAULT_STALL_GRACE_MINUTES},
    "require": {"type": "str", "choices": STALL_REQUIRE, "default": "all"},
}


class StallSettings(namedtuple("StallSettings", ("idle_minutes", "idle_below", "quiet_minutes", "service", "grace_minutes", "require"))):
    """The stall check of one call, as the door's ``stall_checks.check_stall`` builds it (immutable): ``idle_minutes`` and
    ``quiet_minutes`` (whole minutes, or None when that signal is not asked for), ``idle_below`` (percent), ``service``
    (whether the service's own hang verdict counts), ``grace_minutes`` and ``require`` (``all`` or ``any``)."""

    __slots__ = ()
