# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter ``unknown_variables``: warn about variable names a role does not define, naming the one probably meant.

Ansible passes any variable to a role, so a misspelt ``training_job_gate_timout`` is silently ignored
and the gate waits the default hour.  The role hands this filter the names in scope with its prefix and
the names it defines (its argument spec and its own facts); the rule - which names are unknown and
which known name is closest - is ``module_utils.door.options.unknown_names``, the one the lookup's keywords
and the event source's arguments are checked with.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.modelarts.training.plugins.module_utils.door.options import unknown_names, unknown_text

display = Display()


def _names(value, what):
    if isinstance(value, str) or not hasattr(value, "__iter__") or not all(isinstance(name, str) for name in value):
        raise AnsibleFilterError("modelarts.training.unknown_variables: %s must be a list of variable names" % what)
    return list(value)


def unknown_variables(names, known, prefix="", source=""):
    """The names of ``names`` not in ``known``, sorted; a warning for each names the closest known one."""
    found = unknown_names(_names(names, "the input"), _names(known, "known"), prefix=prefix)
    head = "%s: " % source if source else ""
    for name, hint in found:
        display.warning("%s%s; it is not a variable of %s and has no effect" % (head, unknown_text([(name, hint)], "variable"), source or "this role"))
    return [name for name, _hint in found]


class FilterModule(object):
    """modelarts.training filters."""

    def filters(self):
        return {"unknown_variables": unknown_variables}
