# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The door's check of the ``stall`` option: the dict a module task, a lookup or an event source gave, read key by key
and turned into ``waiting.wait_options.StallSettings`` before any request - the part the waiting rooms receive."""

from __future__ import annotations

from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.text import number_word, boolean_word, describe_value, unknown_names, unknown_text
from ansible_collections.modelarts.training.plugins.module_utils.waiting.wait_options import (
    DEFAULT_STALL_GRACE_MINUTES,
    DEFAULT_STALL_IDLE_BELOW,
    STALL_MAX_MINUTES,
    STALL_OPTIONS,
    STALL_REQUIRE,
    StallSettings,
)


def _stall_minutes(value, where, lowest):
    if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        value = int(value.strip())
    if isinstance(value, float) and not isinstance(value, bool) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not lowest <= value <= STALL_MAX_MINUTES:
        raise ConnectionConfigError("%s must be a whole number of minutes from %d to %d, got %s" % (where, lowest, STALL_MAX_MINUTES, describe_value(value)))
    return value


def _stall_percent(value, where):
    number = number_word(value)
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not 0 <= number <= 100:  # NaN fails the range
        raise ConnectionConfigError("%s must be a number of percent from 0 to 100, got %s" % (where, describe_value(value)))
    return float(number)


def _stall_bool(value, where):
    found = boolean_word(value)
    if found is None:
        raise ConnectionConfigError("%s must be a boolean (true or false), got %s" % (where, describe_value(value)))
    return found


def check_stall(value, name="stall"):
    """The option ``stall`` as given by the module, the lookup or the event source: None (no stall check) or a dict,
    returned as :class:`StallSettings`; ``ConnectionConfigError`` naming ``<name>.<key>`` otherwise.  ``name`` is the
    option as the user wrote it (the role's ``training_job_gate_stall``).  A key given as None takes its default."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ConnectionConfigError(
            "%s must be a dict (idle_minutes, idle_below, quiet_minutes, service, grace_minutes, require), got %s" % (name, describe_value(value))
        )
    found = unknown_names(list(value), list(STALL_OPTIONS))
    if found:
        raise ConnectionConfigError("%s: %s" % (name, unknown_text(found, "key")))
    given = dict((key, entry) for key, entry in value.items() if entry is not None)
    idle = _stall_minutes(given["idle_minutes"], name + ".idle_minutes", 1) if "idle_minutes" in given else None
    quiet = _stall_minutes(given["quiet_minutes"], name + ".quiet_minutes", 1) if "quiet_minutes" in given else None
    below = _stall_percent(given["idle_below"], name + ".idle_below") if "idle_below" in given else DEFAULT_STALL_IDLE_BELOW
    service = _stall_bool(given["service"], name + ".service") if "service" in given else True
    grace = _stall_minutes(given["grace_minutes"], name + ".grace_minutes", 1) if "grace_minutes" in given else DEFAULT_STALL_GRACE_MINUTES
    require = given.get("require", "all")
    if require not in STALL_REQUIRE:
        raise ConnectionConfigError("%s.require must be all or any, got %s" % (name, describe_value(require)))
    if idle is None and quiet is None and not service:
        raise ConnectionConfigError(
            "%s asks for no signal: give %s.idle_minutes or %s.quiet_minutes, or leave %s.service true (the service's own hang verdict)"
            % (name, name, name, name)
        )
    return StallSettings(idle, below, quiet, service, grace, require)
