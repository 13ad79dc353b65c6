# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The task ``modelarts_training_job_info``, whichever way it runs.

The module (``plugins/modules``, shipped by AnsiballZ) and the action plugin of the same name
(``plugins/action``, which runs the task in the controller's worker when its connection is local) are
two thin shells over this file: the one argument spec with its option rules, and :func:`run`, which
turns validated parameters into the task's result through the door (``query.Query``). Neither shell
adds a key of its own: the module hands the outcome to ``exit_json``/``fail_json``, the action plugin
formats it the way ``AnsibleModule`` does (``invocation``, ``warnings``, no_log masking).
"""

from __future__ import annotations

from ansible_collections.modelarts.training.plugins.module_utils.job import jobs
from ansible_collections.modelarts.training.plugins.module_utils.service import transport
from ansible_collections.modelarts.training.plugins.module_utils.service.credentials import MODULE_SOURCES_NOTE, NoCredentialsError
from ansible_collections.modelarts.training.plugins.module_utils.text import LEVEL_OPTION, expand_path
from ansible_collections.modelarts.training.plugins.module_utils.door.options import (
    ConnectionConfigError,
    connection_argument_spec,
    metrics_argument_spec,
    unknown_names,
    unknown_text,
    query_argument_spec,
    search_argument_spec,
    stall_argument_spec,
)
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import proxy_secrets
from ansible_collections.modelarts.training.plugins.module_utils.door.query import MissingLibraryError, Query, select

MUTUALLY_EXCLUSIVE = [("training_job_id", "training_job_ids", "name", "job_id"), ("training_job_id", "name", "job_id", "v1_jobs")]
REQUIRED_ONE_OF = [("training_job_id", "training_job_ids", "name", "tags", "job_id", "v1_jobs")]
REQUIRED_TOGETHER = [("job_id", "version_id")]

# The environment variables the task reads through the mapping handed to run() (options.resolve, the credential
# sources); every other variable (HTTPS_PROXY, REQUESTS_CA_BUNDLE, HOME...) is read by a library from the process.
DOOR_ENVIRONMENT_PREFIXES = ("HUAWEICLOUD_", "HC_CONTAINER_")


def prepare():
    """Build now, once for this process, what every task would otherwise build for itself and may share with the
    others: the schemas' compiled checks (``jobs.prepare``), the transport's classes and the TLS contexts of the default
    trust store (``transport.prepare``).  The action plugin calls it as ansible-core loads it in the controller's main
    process, so that the workers forked from there to run the tasks find them built (docs/performance.md).  Nothing a
    task must keep to itself is made: no credentials, no session or connection, no secret to mask; nor the argument
    spec, whose path type reads the task's own environment and whose list defaults become the task's parameters."""
    jobs.prepare()
    transport.prepare()


def argument_spec():
    """A fresh argument spec of the task: the connection, wait and query option tables and the job selection."""
    spec = connection_argument_spec()
    spec.update(query_argument_spec())
    spec.update(search_argument_spec())
    spec.update(metrics_argument_spec())
    spec.update(stall_argument_spec())
    spec.update(
        training_job_id=dict(type="str"),
        training_job_ids=dict(type="list", elements="str"),
        name=dict(type="str"),
        job_id=dict(type="int"),
        version_id=dict(type="int"),
        v1_jobs=dict(type="list", elements="dict", options=dict(job_id=dict(type="int", required=True), version_id=dict(type="int", required=True))),
    )
    return spec


def spec_keywords(environ=None):
    """The keywords of ``AnsibleModule`` and ``ArgumentSpecValidator`` for this task (check mode aside).

    ``environ``, for a validator outside the module's process (the action plugin's): the environment the module would
    see.  A ``type: path`` option is then checked by ansible-core's own string check and expanded against it
    (:func:`options.expand_path`), never against the validating process's ``os.environ`` (``check_type_path``'s).
    """
    spec = argument_spec()
    if environ is not None:
        _paths_from(spec, path_checker(environ))
    return dict(
        argument_spec=spec,
        mutually_exclusive=list(MUTUALLY_EXCLUSIVE),
        required_one_of=list(REQUIRED_ONE_OF),
        required_together=list(REQUIRED_TOGETHER),
    )


def path_checker(environ):
    """ansible-core's ``check_type_path`` with the variables and ``~`` of ``environ``; named ``path`` as the type is,
    so that a value it refuses gets the same message ("... unable to convert to path: ...")."""
    from ansible.module_utils.common.validation import check_type_str  # pylint: disable=import-outside-toplevel

    def path(value):
        return expand_path(check_type_str(value), environ)

    return path


def _paths_from(spec, checker):
    for option in spec.values():
        if option.get("type") == "path":
            option["type"] = checker
        if option.get("elements") == "path":
            option["elements"] = checker
        if isinstance(option.get("options"), dict):
            _paths_from(option["options"], checker)


def option_names():
    """Every option name of the task, aliases included."""
    names = []
    for name, spec in argument_spec().items():
        names.append(name)
        names.extend(spec.get("aliases") or ())
    return names


def unknown_options(names, taken=None):
    """``unknown option regoin (did you mean region?)`` for the names of ``names`` that are not options of the task ('' when
    every one is); ``taken`` (option -> hint) marks options a caller sets itself, reported with that hint instead."""
    taken = taken or {}
    found = unknown_names(names, [name for name in option_names() if name not in taken], hints=taken)
    return unknown_text(found, "option") if found else ""


def unsupported_message(msg, params):
    """``Unsupported parameters for (...) module: regoin (did you mean region?). Supported parameters include: ...``:
    ansible-core's message on unknown options with the closest option after each (the rule of the lookup's keywords,
    ``options.unknown_names``), a suboption's among its option's (``metrics.regx (did you mean regex?)``); any other
    message as it is."""
    head, sep, rest = msg.partition(" module: ")
    names, dot, tail = rest.partition(". Supported parameters include")
    if not sep or not dot:
        return msg
    hints = dict(unknown_names([name for name in params if not str(name).startswith("_ansible_")], option_names()))
    given = names.split(", ")
    spec = argument_spec()
    for name in given:
        # A suboption: ansible-core names it by its path (metrics.regx); the closest is among its option's suboptions.
        parent, dot_, child = name.rpartition(".")
        suboptions = (spec.get(parent) or {}).get("options") if dot_ else None
        if suboptions:
            hints.update(("%s.%s" % (parent, key), hint) for key, hint in unknown_names([child], list(suboptions)))
    shown = ["%s (%s)" % (name, hints[name]) if hints.get(name) else name for name in given]
    return head + sep + ", ".join(shown) + dot + tail


class Outcome(object):
    """What the task returns: ``result`` (every return key but ``failed``/``msg``), ``failed`` and ``msg``,
    ``warnings`` to show, and ``secrets``, the values to mask in all of it (as no_log option values are)."""

    def __init__(self, result, failed=False, msg=None, warnings=(), secrets=()):
        self.result = result
        self.failed = failed
        self.msg = msg
        self.warnings = list(warnings)
        self.secrets = [value for value in secrets if value]


def run(params, environ=None, notify=None):
    """The :class:`Outcome` of the task for validated ``params``; ``environ`` is the environment the task sees
    (``os.environ`` when None); ``notify``, a callable, is handed each warning a wait gives while it goes on (a name that
    matches nothing yet), at once - the warning is in the outcome's too. Raises ``query.MissingLibraryError`` before any
    request when a library is missing."""
    # The proxy URL stays visible for debugging; its user:password never is, however it is written (a raw '/' or '@' too).
    secrets = list(proxy_secrets(params.get("proxy")))
    try:
        query = Query([(LEVEL_OPTION, params)], select(params), environ=environ)
    except MissingLibraryError:
        raise
    except ConnectionConfigError as error:
        return Outcome({}, failed=True, msg=str(error), secrets=secrets)
    # Secrets read from the environment are as secret as no_log options.
    secrets.extend(query.secrets())
    query.notify = notify
    with query:
        outcome = query.run()
    # Credentials obtained during the call (temporary keys, issued tokens) are as secret as no_log options.
    secrets.extend(query.secrets())
    result = dict(changed=False, training_jobs=outcome.items)
    if outcome.single and outcome.items:
        result["training_job"] = outcome.items[0]
    if outcome.measured is not None:
        result["baseline_job"] = outcome.measured.baseline
    if outcome.ok:
        return Outcome(result, warnings=outcome.warnings, secrets=secrets)
    result.update(outcome.failure_fields())
    msg = outcome.msg
    if any(isinstance(error, NoCredentialsError) for error in (outcome.errors or {}).values()):
        msg = "%s (%s)" % (msg, MODULE_SOURCES_NOTE)
    result["job_messages"] = outcome.job_messages
    return Outcome(result, failed=True, msg=msg, warnings=outcome.warnings, secrets=secrets)
