# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filters ``gate_options`` and ``gate_variables``: a role's variables checked by the role itself, after its record.

ansible-core validates a role's variables against ``meta/argument_specs.yml`` in a task it puts before the role's first
task (``ansible/playbook/role/__init__.py``, ``_create_validation_task``): a refusal there ends the play before the role
can write anything - the ``training_job_gate`` role's decision record kept an earlier run's ``open`` (issue 56, item 10) -
and prints the whole spec on one line, with no "did you mean" (issue 60, item 3).  So the role's spec states as
``type: raw`` (without ``elements`` or ``choices``, which ansible-core checks even then) each option a wrong value could
fail, its description saying the expected type, and the role keeps the real ones beside it (``types``): these filters
read the spec (the same file, cached by its path and modification time), lay the real types over it and check the
variables with ansible-core's own ``ArgumentSpecValidator``; an option whose check is the module's (``check: metrics``,
``check: baseline``) is checked by the door's ``door/metric_checks`` (and ``stall`` by ``door/stall_checks``) instead,
the module's message under the role's variable name.

A variable whose value is the omit placeholder (``"{{ x | default(omit) }}"``) is unset, as a module option is: it takes
the spec's default, or none.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.parsing.yaml.loader import AnsibleLoader

from ansible_collections.modelarts.training.plugins.module_utils.door.metric_checks import check_baseline, check_metric
from ansible_collections.modelarts.training.plugins.module_utils.door.stall_checks import check_stall
from ansible_collections.modelarts.training.plugins.module_utils.door.options import ConnectionConfigError, unknown_names
from ansible_collections.modelarts.training.plugins.module_utils.text import describe_typed

OMIT_PREFIX = "__omit_place_holder__"  # ansible-core up to 2.18 templates omit to this prefix and a hash
_SPECS = {}
_TYPE_NAMES = {"str": "a string", "int": "an integer", "float": "a number", "bool": "a boolean", "list": "a list", "dict": "a dict", "path": "a path"}
_PLURALS = {"str": "strings", "int": "integers", "float": "numbers", "bool": "booleans", "dict": "dicts", "path": "paths"}


def is_omit(value):
    """Whether ``value`` is ansible-core's omit placeholder: ``Omit`` (2.19 and later) or its token string (2.16 to 2.18)."""
    return type(value).__name__ == "_OmitType" or (isinstance(value, str) and value.startswith(OMIT_PREFIX))


def _spec(role_path, entry="main"):
    if not isinstance(role_path, str) or not role_path:
        raise AnsibleFilterError("modelarts.training.gate_variables: the role's path must be a string")
    path = os.path.join(role_path, "meta", "argument_specs.yml")
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError as error:
        raise AnsibleFilterError("modelarts.training.gate_variables: cannot read %s: %s" % (path, error.strerror))
    if _SPECS.get((path, entry), (None,))[0] != stamp:
        with open(path, encoding="utf-8") as handle:
            data = AnsibleLoader(handle.read()).get_single_data() or {}
        options = ((data.get("argument_specs") or {}).get(entry) or {}).get("options") or {}
        _SPECS[(path, entry)] = (stamp, options)
    return _SPECS[(path, entry)][1]


def gate_options(role_path, entry="main"):
    """The names of the options of the role's entry point ``entry``, in the spec's order."""
    return list(_spec(role_path, entry))


def _plain(value):
    """Omit placeholders dropped from dicts and lists, at any depth, as a module option's would be."""
    if isinstance(value, Mapping):
        return dict((key, _plain(item)) for key, item in value.items() if not is_omit(item))
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value if not is_omit(item)]
    return value


def _values(given, options):
    if not isinstance(given, Mapping):
        raise AnsibleFilterError("modelarts.training.gate_variables: the input must be a mapping of variable names to values")
    missing = [name for name in options if name not in given]
    if missing:
        # The role lists its options' values by name (a lookup per option is slow at every reference): one added to the
        # spec must be added there too.
        raise AnsibleFilterError(
            "modelarts.training.gate_variables: the input lacks the option%s %s of the spec" % ("s" if len(missing) > 1 else "", ", ".join(missing))
        )
    values = {}
    for name, spec in options.items():
        value = given.get(name)
        values[name] = spec.get("default") if value is None or is_omit(value) else _plain(value)
    return values


def _expected(spec):
    text = _TYPE_NAMES.get(spec.get("type"), spec.get("type") or "any value")
    if spec.get("elements"):
        text += " of %s" % _PLURALS.get(spec["elements"], spec["elements"])
    if spec.get("choices"):
        text += ", %s %s" % ("each one of" if spec.get("type") == "list" else "one of", ", ".join(str(choice) for choice in spec["choices"]))
    return text


def _choices_hint(value, spec):
    choices = [str(choice) for choice in spec.get("choices") or ()]
    given = value if isinstance(value, list) else [value]
    found = unknown_names([str(item) for item in given], choices)
    return "; ".join("%s: did you mean %s" % (name, hint.replace("did you mean ", "")) if hint else "%s is none of them" % name for name, hint in found)


def _module_check(name, value, check):
    """The module's own check of ``metrics``, ``baseline`` or ``stall``, its message under the role's variable ``name``."""
    try:
        if check == "metrics" and isinstance(value, list):
            # A baseline may come from elsewhere (a production record): whether an improvement bound has one is the module's call.
            for index, entry in enumerate(value):
                check_metric(entry, index, True)
        elif check == "baseline" and isinstance(value, Mapping) and value:
            check_baseline(dict(value))
        elif check == "stall" and isinstance(value, Mapping):
            check_stall(dict(value), "stall")
    except ConnectionConfigError as error:
        text = str(error)
        return name + text[len(check) :] if text.startswith(check) else "%s: %s" % (name, text)
    return ""


def gate_variables(given, role_path, types=None, prefix="", entry="main", check=True):
    """The role's variables: ``args`` (each option of the spec, unset or omit as its default, named without ``prefix``)
    and ``problem`` (the first variable that does not fit its real type, one line naming it, its value and what is
    expected; '' when none, or when ``check`` is false: the values alone)."""
    if types is not None and not isinstance(types, Mapping):
        raise AnsibleFilterError("modelarts.training.gate_variables: types must be a mapping of option names to their real spec")
    options = _spec(role_path, entry)
    values = _values(given, options)
    for name, spec in options.items() if check else ():
        typed = dict(spec, **dict((types or {}).get(name) or {}))
        check = typed.pop("check", None)
        if check:
            typed.pop("options", None)
        value = values[name]
        if value is None:
            continue
        problem = _module_check(name, value, check) if check else ""
        if problem:
            return _answer(values, problem, prefix)
        typed.pop("default", None)
        result = ArgumentSpecValidator({name: typed}).validate({name: value})
        if result.error_messages:
            hint = _choices_hint(value, typed) if typed.get("choices") and "must be one" in " ".join(result.error_messages) else ""
            problem = "%s: expected %s, got %s" % (name, _expected(typed), describe_typed(value))
            if hint:
                problem += " (%s)" % hint
            elif typed.get("options"):
                problem += " (%s)" % result.error_messages[0]
            return _answer(values, problem, prefix)
    return _answer(values, "", prefix)


def _answer(values, problem, prefix):
    args = dict((name[len(prefix) :] if prefix and name.startswith(prefix) else name, value) for name, value in values.items())
    return {"args": args, "problem": problem}


class FilterModule(object):
    """modelarts.training filters."""

    def filters(self):
        return {"gate_options": gate_options, "gate_variables": gate_variables}
