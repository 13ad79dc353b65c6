# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action of ``modelarts_training_job_info``: the task in the controller's worker when it runs there.

When the task's connection is ``local`` (``hosts: localhost``, ``delegate_to: localhost``, the gate role, AWX and
EDA controller jobs) the collection's code is already installed on this machine with its bytecode, and nothing needs
to be built, shipped and started: the worker runs ``module_utils.door.job_info.run`` itself, with the module's argument
spec and rules (``ArgumentSpecValidator``), the environment the module would have seen (the controller's with the
task's ``environment:`` on top, handed to the door as a mapping; ``os.environ`` is never changed) and the result
formatted as ``AnsibleModule`` formats it (``invocation``, ``warnings``, no_log values and secrets masked).

Everywhere else the module runs exactly as it would without this plugin: another connection, ``async``, ``become``,
a task ``environment:`` setting a variable the door does not read through its mapping (HTTPS_PROXY,
REQUESTS_CA_BUNDLE, HOME...), a controller without ``requests`` or ``jsonschema``, or the variable
``modelarts_training_in_process`` false. See docs/module.md and docs/performance.md.
"""

from __future__ import annotations

import json
import math
import os

from ansible import constants as C
from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.parameters import remove_values
from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.errors import UnsupportedError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.release import __version__ as ANSIBLE_CORE_VERSION
from ansible.utils.display import Display
from ansible.utils.vars import merge_hash

from ansible_collections.modelarts.training.plugins.module_utils.door import job_info
from ansible_collections.modelarts.training.plugins.module_utils.door.query import MissingLibraryError

try:
    # ansible-core 2.19+: a module's arguments travel in a serialization profile.
    from ansible.module_utils.common.json import Direction, get_module_decoder, get_module_encoder

    AnsibleJSONEncoder = None
except ImportError:  # ansible-core 2.16-2.18: AnsibleJSONEncoder there, json.loads in the module
    from ansible.module_utils.common.json import AnsibleJSONEncoder

    Direction = get_module_decoder = get_module_encoder = None

try:
    # ansible-core 2.19+ turns a module's failure into an error summary as it parses the module's answer.
    from ansible._internal._errors._captured import AnsibleModuleCapturedError
except ImportError:  # ansible-core 2.16 to 2.18
    AnsibleModuleCapturedError = None

IN_PROCESS_VARIABLE = "modelarts_training_in_process"
# ansible-core 2.21+: whether a module's result carries ``invocation`` (before 2.21 it always does).
INJECT_INVOCATION = "INJECT_INVOCATION"
# ansible-core 2.16-2.20 mark a module's parsed answer with ``_ansible_parsed``; 2.21 keeps that on the task, not in the result.
MARKS_PARSED = tuple(int(part) for part in ANSIBLE_CORE_VERSION.split(".")[:2]) < (2, 21)


# The module declares no METADATA: ansible-core sends its arguments in the legacy serialization profile.
MODULE_PROFILE = "legacy"


class _ToTheModule(Exception):
    """The task's arguments cannot travel as the module's do: the module's way runs and says so in its own words."""


def as_the_module_receives(args):
    """``args`` as the module receives them: encoded as ansible-core encodes a module's arguments and decoded as
    ``AnsibleModule`` decodes them - plain dicts, lists, str, int, float, bool and None, keys always strings (``{2024: q4}``
    is ``{"2024": "q4"}``), tuples and sets lists, dates ISO text, template trust and origins dropped, vaulted values
    decrypted.  Raises :class:`_ToTheModule` for a value that JSON cannot carry (bytes, a tuple as a key...)."""
    try:
        if get_module_encoder is None:  # ansible-core 2.16-2.18
            return json.loads(json.dumps(args, cls=AnsibleJSONEncoder, vault_to_text=True))
        text = json.dumps(args, cls=get_module_encoder(MODULE_PROFILE, Direction.CONTROLLER_TO_MODULE))
        return json.loads(text, cls=get_module_decoder(MODULE_PROFILE, Direction.CONTROLLER_TO_MODULE))
    except (TypeError, ValueError) as error:
        raise _ToTheModule() from error


def _prepare_process():
    """What every in-process task would build for itself and may share, built once as ansible-core loads this plugin in
    the controller's main process (its strategy does, to learn the action's class, before it forks the worker that runs
    the task): the workers inherit it.  ``job_info.prepare`` (the schemas' compiled checks, the TLS contexts of the
    default trust store) and the serialization profile of the module's arguments (``as_the_module_receives``).  A task
    builds whatever is missing itself, and reports any problem then."""
    try:
        job_info.prepare()
        as_the_module_receives({"training_job_id": "prepare"})
    except Exception:  # pylint: disable=broad-except  # never a reason for the plugin not to load
        pass


_prepare_process()


class ActionModule(ActionBase):
    """Run the task in process on a local connection, else execute the module."""

    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp  # tmp no longer has any effect
        task_vars = task_vars or {}
        environ = self._in_process_environment(task_vars)
        if environ is not None:
            try:
                return merge_hash(result, self._run_in_process(environ, task_vars))
            except MissingLibraryError:
                # The controller lacks a library the module may have where it runs: the module says so itself.
                pass
            except _ToTheModule:
                pass
        return merge_hash(result, self._run_module(task_vars))

    # -- which way -----------------------------------------------------------------------------------

    def _in_process_environment(self, task_vars):
        """The environment the module would see when the task may run in this process, else None."""
        value = task_vars.get(IN_PROCESS_VARIABLE, True)
        value = self._templar.template(value)
        try:
            wanted = boolean(value, strict=True)
        except TypeError:
            raise AnsibleActionFail("%s must be a boolean, got %r" % (IN_PROCESS_VARIABLE, to_text(value)[:80])) from None
        if not wanted or self._task.async_val or self._play_context.become:
            return None
        if getattr(self._connection, "transport", None) != "local":
            return None
        task_environment = {}
        self._compute_environment_string(task_environment)
        environ = dict(os.environ)
        for name, item in task_environment.items():
            name, item = to_text(name), to_text(item)
            # A variable a library reads from the process itself (proxies, CA bundles, HOME...) needs the module's process.
            if not name.startswith(job_info.DOOR_ENVIRONMENT_PREFIXES) and os.environ.get(name) != item:
                return None
            environ[name] = item
        return environ

    # -- the module, as ansible.builtin.normal runs it -----------------------------------------------

    def _run_module(self, task_vars):
        wrap_async = self._task.async_val and not self._connection.has_native_async
        result = self._execute_module(task_vars=task_vars, wrap_async=wrap_async)
        if not wrap_async:
            # remove a temporary path we created
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    # -- in this process, as AnsibleModule would answer ----------------------------------------------

    def _run_in_process(self, environ, task_vars=None):
        # Path options are expanded against the environment the module would see, not this worker's os.environ.
        keywords = job_info.spec_keywords(environ)
        args = as_the_module_receives(self._task.args)
        validation = ArgumentSpecValidator(**keywords).validate(args)
        params = dict(args)
        params.update(validation.validated_parameters)
        no_log_values = set(getattr(validation, "_no_log_values", ()))
        if validation.error_messages:
            msg = validation.errors.msg
            if isinstance(validation.errors[0], UnsupportedError):
                msg = job_info.unsupported_message("Unsupported parameters for (%s) module: %s" % (self._task.action, msg), args)
            return _formatted(dict(failed=True, msg=msg), params, no_log_values, (), _invocation_wanted(task_vars))
        outcome = job_info.run(validation.validated_parameters, environ, notify=_shown_at_once)
        no_log_values.update(outcome.secrets)
        result = dict(outcome.result)
        if outcome.failed:
            result.update(failed=True, msg=outcome.msg)
        return _formatted(result, params, no_log_values, outcome.warnings, _invocation_wanted(task_vars))


def _shown_at_once(text):
    """Show a warning the task gives while it still waits (a name that matches nothing yet) now, not when the task ends:
    ansible-core 2.19+ holds a task's ``display.warning`` until then, so it is displayed as a warning line is (the
    worker's display hands it to the controller's at once); it is in the task's ``warnings`` too."""
    display = Display()
    display.display("[WARNING]: %s" % text, color=C.COLOR_WARN, stderr=True)


def _invocation_wanted(task_vars):
    """Whether the module's result would carry ``invocation``: always before ansible-core 2.21, then as
    ``INJECT_INVOCATION`` (``ansible_inject_invocation``) says, read as the module's way reads it."""
    if INJECT_INVOCATION not in C.config.get_configuration_definitions():
        return True
    return bool(C.config.get_config_value(INJECT_INVOCATION, variables=task_vars or {}))


# The keys whose values are the jobs' items: a few MB at 200 full-size jobs, plain JSON data read from the service.
ITEM_KEYS = ("training_jobs", "training_job")
_PLAIN_SCALARS = (str, int, bool, type(None))
# How remove_values reads True, False and None (their str()), where their JSON text differs.
_CONSTANT_WORDS = ("True", "False", "None")


def _plain(value):
    """Whether ``value`` is JSON data of exact types only: dicts with str keys, lists, str, int, finite float, bool, None."""
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            for key in node:
                if type(key) is not str:  # pylint: disable=unidiomatic-typecheck
                    return False
            stack.extend(node.values())
        elif kind is list:
            stack.extend(node)
        elif kind is float:
            if not math.isfinite(node):
                return False
        elif kind not in _PLAIN_SCALARS:
            return False
    return True


def _item_without_no_log_values(item, texts, no_log_values, copy):
    """``remove_values(item, no_log_values)`` for one item, scanned once: an item of plain JSON data whose JSON text
    holds none of the values (as JSON writes them: ``texts``) has nothing ``remove_values`` would change, so it is
    kept as it is (``copy``: a copy of it, decoded from that text); any other goes through ``remove_values`` itself."""
    if _plain(item):
        text = json.dumps(item, ensure_ascii=False)
        if not any(value in text for value in texts):
            return json.loads(text) if copy else item
    return remove_values(item, no_log_values)


def _without_no_log_values(result, no_log_values):
    """``remove_values(result, no_log_values)``, equal to it value for value, without its copy of every item.

    ``remove_values`` walks every value of the result in Python to replace the no_log values it finds, which at 200
    full-size jobs is most of the task's own time (docs/performance.md, issue 40).  A string holding a no_log value
    holds it in its JSON text too, as a number's ``str()`` is its JSON text: so an item whose JSON text (one C-speed
    pass) holds none of them is left as it is, and only the rest of the result - and an item that does hold one, or
    holds any other type than plain JSON data - is handed to ``remove_values``.  A value found by mistake (in a key,
    across two strings) only sends that item the slow way."""
    strings = [to_text(value, errors="surrogate_or_strict") for value in no_log_values]
    if any(value in word for value in strings for word in _CONSTANT_WORDS):
        # A value inside "True", "False" or "None": ansible-core before 2.19 masks such a boolean or None, which JSON
        # writes otherwise (true, false, null) - remove_values itself decides, for the whole result.
        return remove_values(result, no_log_values)
    texts = [json.dumps(value, ensure_ascii=False)[1:-1] for value in strings]
    rest = remove_values(dict((key, value) for key, value in result.items() if key not in ITEM_KEYS), no_log_values)
    cleaned = {}
    for key, value in result.items():
        if key == "training_jobs" and type(value) is list:  # pylint: disable=unidiomatic-typecheck
            cleaned[key] = [_item_without_no_log_values(item, texts, no_log_values, copy=False) for item in value]
        elif key == "training_job":
            # Its own copy, as remove_values makes one: it is the first item of training_jobs.
            cleaned[key] = _item_without_no_log_values(value, texts, no_log_values, copy=True)
        elif key in ITEM_KEYS:
            cleaned[key] = remove_values(value, no_log_values)
        else:
            cleaned[key] = rest[key]
    return cleaned


def _formatted(result, params, no_log_values, warnings, invocation=True):
    """``result`` as ``AnsibleModule._return_formatted`` returns it: the invocation (when the module's would carry
    it), the warnings, no_log values masked (booleans and None kept)."""
    result = dict(result)
    if invocation:
        result["invocation"] = dict(module_args=params)
    if warnings:
        result["warnings"] = list(warnings)
    preserved = dict((key, value) for key, value in result.items() if value is None or isinstance(value, bool))
    result = _without_no_log_values(result, no_log_values)
    result.update(preserved)
    # What ActionBase._parse_returned_data does with the answer of a module.
    if AnsibleModuleCapturedError is not None:
        AnsibleModuleCapturedError.normalize_result_exception(result)
    if MARKS_PARSED:
        result["_ansible_parsed"] = True
    return result
