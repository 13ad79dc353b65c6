# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter ``unknown_options``: the keys of a mapping that are not options of ``modelarts_training_job_info``.

The role ``training_job_gate`` hands the module ``training_job_gate_connection`` as ``module_defaults``, where ansible-core
would report a misspelt key as an unsupported parameter of the module, after the role had started.  The role asks this
filter first and refuses the key by its own name, with the closest option: the rule of ``module_utils.door.options.unknown_names``,
the one the module's own unknown options, the lookup's keywords and the role's variables are checked with.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.modelarts.training.plugins.module_utils.door.job_info import unknown_options as unknown_text


def unknown_options(value, taken=None):
    """``unknown option regoin (did you mean region?)`` for the keys of ``value`` the module does not know ('' when none)."""
    if not isinstance(value, Mapping):
        raise AnsibleFilterError("modelarts.training.unknown_options: the input must be a mapping of module options")
    if taken is not None and not isinstance(taken, Mapping):
        raise AnsibleFilterError("modelarts.training.unknown_options: taken must be a mapping of option names to hints")
    return unknown_text([str(name) for name in value], dict((str(k), str(v)) for k, v in (taken or {}).items()))


class FilterModule(object):
    """modelarts.training filters."""

    def filters(self):
        return {"unknown_options": unknown_options}
