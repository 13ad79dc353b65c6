# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action of ``modelarts_training_job_info``: the task in the controller's worker when it runs there.

When the task's connection is ``local`` (``hosts: localhost``, ``delegate_to: localhost``, the gate role, AWX and
EDA controller jobs) the collection's code is already installed on this machine with its bytecode, and nothing needs
to be built, shipped and started: the worker runs ``module_utils.job_info.run`` itself, with the module's argument
spec and rules (``ArgumentSpecValidator``), the environment the module would have seen (the controller's with the
task's ``environment:`` on top, handed to the door as a mapping; ``os.environ`` is never changed) and the result
formatted as ``AnsibleModule`` formats it (``invocation``, ``warnings``, no_log values and secrets masked).

Everywhere else the module runs exactly as it would without this plugin: another connection, ``async``, ``become``,
a task ``environment:`` setting a variable the door does not read through its mapping (HTTPS_PROXY,
REQUESTS_CA_BUNDLE, HOME...), a controller without ``requests`` or ``jsonschema``, or the variable
``modelarts_training_in_process`` false. See docs/module.md and docs/performance.md.
"""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.parameters import remove_values
from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.errors import UnsupportedError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.modelarts.training.plugins.module_utils import job_info
from ansible_collections.modelarts.training.plugins.module_utils.query import MissingLibraryError

try:
    # ansible-core 2.19+ turns a module's failure into an error summary as it parses the module's answer.
    from ansible._internal._errors._captured import AnsibleModuleCapturedError
except ImportError:  # ansible-core 2.18
    AnsibleModuleCapturedError = None

IN_PROCESS_VARIABLE = "modelarts_training_in_process"


def plain(value):
    """``value`` as the module would receive it through JSON: plain dicts, lists, str, int, float, bool and None
    (no template trust or origin carried along; a vaulted value decrypted)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, dict):
        return dict((plain(key), plain(item)) for key, item in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(item) for item in value]
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if hasattr(value, "_ciphertext") or type(value).__name__ in ("EncryptedString", "AnsibleVaultEncryptedUnicode"):
        return to_text(value)
    return value


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
                return merge_hash(result, self._run_in_process(environ))
            except MissingLibraryError:
                # The controller lacks a library the module may have where it runs: the module says so itself.
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

    def _run_in_process(self, environ):
        keywords = job_info.spec_keywords()
        args = plain(self._task.args)
        validation = ArgumentSpecValidator(**keywords).validate(args)
        params = dict(args)
        params.update(validation.validated_parameters)
        no_log_values = set(getattr(validation, "_no_log_values", ()))
        if validation.error_messages:
            msg = validation.errors.msg
            if isinstance(validation.errors[0], UnsupportedError):
                msg = job_info.unsupported_message("Unsupported parameters for (%s) module: %s" % (self._task.action, msg), args)
            return _formatted(dict(failed=True, msg=msg), params, no_log_values, ())
        outcome = job_info.run(validation.validated_parameters, environ)
        no_log_values.update(outcome.secrets)
        result = dict(outcome.result)
        if outcome.failed:
            result.update(failed=True, msg=outcome.msg)
        return _formatted(result, params, no_log_values, outcome.warnings)


def _formatted(result, params, no_log_values, warnings):
    """``result`` as ``AnsibleModule._return_formatted`` returns it: the invocation, the warnings, no_log values masked
    (booleans and None kept)."""
    result = dict(result)
    result["invocation"] = dict(module_args=params)
    if warnings:
        result["warnings"] = list(warnings)
    preserved = dict((key, value) for key, value in result.items() if value is None or isinstance(value, bool))
    result = remove_values(result, no_log_values)
    result.update(preserved)
    # What ActionBase._parse_returned_data does with the answer of a module.
    if AnsibleModuleCapturedError is not None:
        AnsibleModuleCapturedError.normalize_result_exception(result)
    result["_ansible_parsed"] = True
    return result
