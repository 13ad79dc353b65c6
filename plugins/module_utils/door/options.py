# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The door's options: the argument specs assembled from the rooms' tables, and the one place where option values are read.

Each table lives in the room that owns it: ``service/connection.py`` (connection and credentials, documented by the
``modelarts.training.connection`` doc fragment), ``waiting/wait_options.py`` (the ``modelarts.training.wait``
fragment), ``results/metric_options.py`` (metrics and baseline); :data:`QUERY_OPTIONS` (validation, concurrency,
endpoint tokens) and :data:`SEARCH_OPTIONS` are the door's own.  Their names stay importable from here.

:func:`resolve` turns the values an entry point was given into :class:`Settings`, made of typed parts (the
connection, the credential source, the wait, the metrics), each handed to the room that needs it.  An entry point hands
over its *levels*, highest precedence first - the module its task options (``module_defaults``
included), the lookup its keywords then its ``modelarts_*`` variables, the event source its arguments -
and the environment is the lowest level.  Each option takes its value from the highest level that sets
it; the credentials are taken as a whole from the highest level that names any credential option, so
a task's ``auth_token`` replaces the runner's ``HUAWEICLOUD_SDK_AK``/``_SK``, and two credential kinds
conflict only when they are given at the same level.  Values are converted strictly: a boolean is a
boolean (or one of Ansible's boolean words) or an error that names the option and where it came from.
"""

from __future__ import annotations

import math
import os
from types import MappingProxyType

from ansible_collections.modelarts.training.plugins.module_utils.job.selection import ReadOnlyList
from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.text import LEVEL_ENVIRONMENT, expand_user, level_text, unknown_names, unknown_text
from ansible_collections.modelarts.training.plugins.module_utils.results.metric_options import (
    BASELINE_OPTIONS,
    METRIC_BOUNDS,
    METRIC_ENTRY_OPTIONS,
    METRICS_OPTIONS,
    MetricSettings,
)
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import (
    CONNECTION_FIELDS,
    CONNECTION_OPTIONS,
    CREDENTIAL_FIELDS,
    CREDENTIAL_KINDS,
    CREDENTIAL_OPTIONS,
    CREDENTIAL_TEXT_OPTIONS,
    OIDC_TOKEN_OPTIONS,
    SECRET_OPTIONS,
    VARIABLE_PREFIX,
    Connection,
    CredentialSource,
    blank as _blank,
    ca_bundle_problem,
    to_bool,
    where,
)
from ansible_collections.modelarts.training.plugins.module_utils.door.connection_checks import check_credentials, check_text, option_named as _named
from ansible_collections.modelarts.training.plugins.module_utils.waiting.wait_options import (
    FINAL_PHASES,
    PHASE_CHOICES,
    STALL_OPTIONS,
    WAIT_OPTIONS,
    WaitSettings,
    wait_option_problems,
)
from ansible_collections.modelarts.training.plugins.module_utils.door.stall_checks import check_stall


DEFAULT_MAX_CONCURRENCY = 16
MAX_CONCURRENCY_LIMIT = 256
VALIDATE_CHOICES = ["strict", "warn", "off"]
DEFAULT_LOG_LINES = 30
MAX_LOG_LINES = 10000

# What every query shares besides waiting.
QUERY_OPTIONS = {
    "validate": {"type": "str", "choices": VALIDATE_CHOICES, "default": "strict"},
    "max_concurrency": {"type": "int", "default": DEFAULT_MAX_CONCURRENCY},
    "include_endpoint_tokens": {"type": "bool", "default": False},
    # None: details is the whole document; a list: only these dotted paths of it ([] drops it).
    "details_paths": {"type": "list", "elements": "str", "default": None},
    # Why a job failed: the service's events and log tails for items in a fail_on phase (diagnostics.py).
    "diagnostics": {"type": "bool", "default": True},
    "log_lines": {"type": "int", "default": DEFAULT_LOG_LINES},
}

SEARCH_OPTIONS = {
    "tags": {"type": "dict"},
    "latest": {"type": "bool", "default": False},
    "workspace_id": {"type": "str"},
}


def connection_argument_spec():
    """Return a fresh ``argument_spec`` dict of the connection options for ``AnsibleModule``.

    No environment fallbacks and no default for an option that has an environment variable: the
    environment is read by :func:`resolve`, after the task's own options, so that credentials given
    on the task replace the environment's as a whole and a bad value names its variable.
    """
    spec = {}
    for name, (option, env) in CONNECTION_OPTIONS.items():
        entry = dict(option)
        if env:
            entry.pop("default", None)
        spec[name] = entry
    return spec


def query_argument_spec():
    """Return a fresh ``argument_spec`` dict of the wait and query options for ``AnsibleModule``."""
    spec = dict((name, dict(option)) for name, option in WAIT_OPTIONS.items())
    spec.update((name, dict(option)) for name, option in QUERY_OPTIONS.items())
    for option in spec.values():
        if isinstance(option.get("default"), list):
            option["default"] = list(option["default"])
    return spec


def search_argument_spec():
    """Return a fresh ``argument_spec`` dict of the search options (:data:`SEARCH_OPTIONS`) for ``AnsibleModule``."""
    return dict((name, dict(option)) for name, option in SEARCH_OPTIONS.items())


def metrics_argument_spec():
    """Return a fresh ``argument_spec`` dict of ``metrics`` and ``baseline`` for ``AnsibleModule``, with their suboptions."""
    entry = dict((name, dict(option)) for name, option in METRIC_ENTRY_OPTIONS.items())
    baseline = dict((name, dict(option)) for name, option in BASELINE_OPTIONS.items())
    return {
        "metrics": {"type": "list", "elements": "dict", "default": [], "options": entry},
        "baseline": {"type": "dict", "options": baseline},
    }


def stall_argument_spec():
    """Return a fresh ``argument_spec`` dict of ``stall`` for ``AnsibleModule``, with its suboptions (checked further by
    ``stall_checks.check_stall`` in :func:`resolve`)."""
    suboptions = dict((name, dict(option)) for name, option in STALL_OPTIONS.items())
    return {"stall": {"type": "dict", "options": suboptions}}


def connection_params(params):
    """Every connection option of ``params``, as a client uses them: an empty string (a blank environment variable or
    AWX credential field) is "not set", as it is for the credential rules; credential text stripped; defaults filled."""
    values = dict((name, None if params.get(name) == "" else params.get(name)) for name in CONNECTION_OPTIONS)
    for name in CREDENTIAL_TEXT_OPTIONS:
        if isinstance(values[name], str):
            values[name] = values[name].strip() or None
    for name, (spec, _env) in CONNECTION_OPTIONS.items():
        if values[name] is None and "default" in spec:
            values[name] = spec["default"]
    return values


def service_parts(values, kind):
    """The two parts a client is built from, out of resolved connection option ``values`` (``connection_params``) and the
    credential ``kind``: ``(Connection, CredentialSource)``."""
    connection = Connection(**dict((name, values[name]) for name in CONNECTION_FIELDS))
    credentials = CredentialSource(kind, **dict((name, values[name]) for name in CREDENTIAL_FIELDS))
    return connection, credentials


def connection_parts(values, origins=None):
    """``(Connection, CredentialSource)`` from a plain dict of connection option ``values`` (missing ones take their defaults),
    the credential rules checked first (:func:`check_credentials`): for callers with no :class:`Settings` (tests,
    benchmarks).  ``options.resolve`` builds the same two parts as ``settings.service`` and ``settings.credentials``."""
    values = connection_params(values)
    return service_parts(values, check_credentials(values, None, origins))


# -- reading values ------------------------------------------------------------------------------


def _to_number(value, name, level, kind):
    if isinstance(value, bool):
        raise ConnectionConfigError("%s must be a number, got %r" % (where(name, level), value))
    try:
        number = float(value) if kind == "float" else value if isinstance(value, int) else float(str(value).strip())
    except (TypeError, ValueError):
        shown = repr(value) if isinstance(value, (str, int, float)) else "a %s" % type(value).__name__
        raise ConnectionConfigError("%s must be %s, got %s" % (where(name, level), "an integer" if kind == "int" else "a number", shown)) from None
    if kind == "int":
        if not float(number).is_integer():
            raise ConnectionConfigError("%s must be an integer, got %r" % (where(name, level), value))
        return int(number)
    if not math.isfinite(number):
        raise ConnectionConfigError("%s must be a finite number, got %r" % (where(name, level), value))
    return number


def _to_list(value, name, level, spec):
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, (list, tuple)):
        raise ConnectionConfigError("%s must be a list, got a %s" % (where(name, level), type(value).__name__))
    if spec.get("elements") == "str" and not all(isinstance(entry, str) for entry in value):
        raise ConnectionConfigError("%s must be a list of strings" % where(name, level))
    choices = spec.get("choices")
    unknown = [entry for entry in value if choices and entry not in choices]
    if unknown:
        raise ConnectionConfigError(
            "%s: unknown %s %s (%s); choose from %s"
            % (
                name,
                "phase" if choices is PHASE_CHOICES else "value",
                ", ".join(repr(entry) for entry in unknown),
                where(name, level).partition(" (")[2].rstrip(")"),
                ", ".join(choices),
            )
        )
    return list(value)


def convert(name, spec, value, level, environ=None):
    """``value`` (as given at ``level``) converted to the type of ``spec``, or :class:`ConnectionConfigError`; a path's
    ``~`` is the home of ``environ``, the environment the task sees (``os.environ`` when None)."""
    kind = spec.get("type", "str")
    if kind == "raw":
        return value
    if kind == "bool":
        return to_bool(value, name, level)
    if kind in ("int", "float"):
        return _to_number(value, name, level, kind)
    if kind == "list":
        return _to_list(value, name, level, spec)
    if not isinstance(value, str):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and name not in SECRET_OPTIONS:
            value = str(value)
        else:
            # Naming the type, not the value, keeps a mistyped secret out of the message.
            raise ConnectionConfigError("%s must be a string, got a %s" % (where(name, level), type(value).__name__))
    if name in CREDENTIAL_TEXT_OPTIONS:
        value = value.strip()
        check_text(name, value, level)
    choices = spec.get("choices")
    if choices and value not in choices:
        raise ConnectionConfigError("%s must be one of %s, got %r" % (where(name, level), ", ".join(choices), value))
    if kind == "path":
        return expand_user(value, environ)
    return value


def environment_level(environ=None):
    """The values the environment gives, keyed by option name (blank variables count as unset)."""
    environ = os.environ if environ is None else environ
    values = {}
    for name, (_spec, env) in CONNECTION_OPTIONS.items():
        if env and not _blank(environ.get(env)):
            values[name] = environ[env]
    return values


def check_known(given, known, what, hints=None):
    """Refuse names of ``given`` that are not in ``known``: :class:`ConnectionConfigError` naming each, with the closest known one.

    The one rule for options an entry point does not know (the lookup's keywords, the event source's
    arguments); ``what`` names them in the message (``keyword``, ``argument``).
    """
    found = unknown_names(given, known, hints=hints)
    if found:
        raise ConnectionConfigError(unknown_text(found, what))


def variable_names():
    """The ``modelarts_*`` variable of each connection option (the only variables the lookup reads)."""
    return dict((name, VARIABLE_PREFIX + name) for name in CONNECTION_OPTIONS)


def _frozen(value):
    """``value`` that cannot be changed: a list read-only (it still equals a list), a dict a read-only mapping."""
    if isinstance(value, list):
        return ReadOnlyList(_frozen(item) for item in value)
    if isinstance(value, dict):
        return MappingProxyType(dict((key, _frozen(item)) for key, item in value.items()))
    return value


class Settings(object):
    """One call's options after :func:`resolve`, immutable once built: typed parts, each handed to the room that needs it.

    - ``service``: how to reach the service (``service.connection.Connection``: endpoints, project, region, TLS,
      proxy, timeouts, retries, body limits) and ``credentials``: where the credentials come from
      (``service.connection.CredentialSource``: the kind and its values).  The client is built from these two.
    - ``waiting``: the wait (``waiting.wait_options.WaitSettings``: its phases as tuples); ``results``: the metrics and the
      baseline as checked (``results.metric_options.MetricSettings`` of ``Metric`` and ``Baseline``); ``stall``: the
      stall check (``waiting.wait_options.StallSettings``, or None when ``stall`` is not given).  Every part is immutable
      all through; the selection (``job.selection.Selection``) is built beside them by ``door/selection_checks.select``.
    - ``kind`` (the credential kind), ``origins`` (option -> the level its value came from, for messages).

    The door's own view, never handed below it: ``connection`` (the resolved connection options by name, read-only)
    and one read-only attribute per wait and query option (``settings.wait_timeout``).
    """

    _PARTS = ("service", "credentials", "waiting", "results", "stall")

    def __init__(self, connection, kind, origins, others, **parts):
        # The door's own view of its option values, frozen too (lists read-only, dicts read-only mappings); metrics and
        # baseline only as their checked part (results).
        values = dict((name, _frozen(value)) for name, value in others.items() if name not in METRICS_OPTIONS)
        state = dict(connection=MappingProxyType(dict(connection)), kind=kind, origins=MappingProxyType(dict(origins)), values=MappingProxyType(values))
        unknown = set(parts) - set(self._PARTS)
        if unknown:
            raise TypeError("unknown settings parts: %s" % ", ".join(sorted(unknown)))
        state.update((name, parts.get(name)) for name in self._PARTS)
        object.__setattr__(self, "_state", state)

    def __getattr__(self, name):
        state = object.__getattribute__(self, "_state")
        if name in state:
            return state[name]
        if name in state["values"]:
            return state["values"][name]
        raise AttributeError(name)

    def __setattr__(self, name, value):
        raise AttributeError("Settings are immutable once resolved: %s cannot be set" % name)

    def __delattr__(self, name):
        raise AttributeError("Settings are immutable once resolved: %s cannot be deleted" % name)


def resolve(levels, environ=None, has_wait_for=True, before_results=None):
    """Merge ``levels`` (``[(level name, {option: raw value})]``, highest first) and the environment into :class:`Settings`.

    Unknown keys in a level are ignored (the entry points own their other options).  An entry point
    with no ``wait_for`` option (``has_wait_for=False``: the event source, which follows every job to a
    final phase) gets as ``wait_for`` the final phases outside ``fail_on``, and ``fail_on`` may name any
    phase, ``Completed`` included.  Raises
    :class:`ConnectionConfigError` naming the option and its origin for a value of the wrong type,
    for conflicting or missing credentials, and for unusable numbers.  ``before_results(values)``, when given, is called
    with the values resolved so far just before ``metrics`` and ``baseline`` are checked (the last check).
    """
    levels = [(level, values or {}) for level, values in levels] + [(LEVEL_ENVIRONMENT, environment_level(environ))]
    connection = {}
    origins = {}

    def pick(name, spec):
        for level, values in levels:
            if name in values and not _blank(values[name]):
                origins[name] = level
                return convert(name, spec, values[name], level, environ)
        return list(spec["default"]) if isinstance(spec.get("default"), list) else spec.get("default")

    # The kind comes from the highest level that names any credential; its options then come, one
    # by one, from the highest level that sets them (a keyword secret_key over a variable's), except
    # security_token, which belongs to the access key it was issued with.  Other kinds are ignored.
    credential_level = next((level for level, values in levels if any(not _blank(values.get(name)) for name in CREDENTIAL_OPTIONS)), None)
    chosen = dict(levels).get(credential_level, {}) if credential_level else {}
    named_kinds = [names for _kind, names, _required in CREDENTIAL_KINDS if any(not _blank(chosen.get(n)) for n in names)]
    if len(named_kinds) > 1:
        # Two kinds at one level: the same message check_credentials gives, naming that level.
        check_credentials(dict((name, chosen.get(name)) for name in CREDENTIAL_OPTIONS), credential_level)
    kind_names = set(name for names in named_kinds for name in names)
    for name, (spec, _env) in CONNECTION_OPTIONS.items():
        if name not in CREDENTIAL_OPTIONS:
            connection[name] = pick(name, spec)
        elif name not in kind_names:
            connection[name] = None
        elif name in OIDC_TOKEN_OPTIONS:
            # The id token inline or in a file, as a pair from the highest level that gives either: a task's
            # token file is never replaced by a runner's inline HUAWEICLOUD_OIDC_ID_TOKEN.  Inline wins within a level.
            source = next((level for level, values in levels if any(not _blank(values.get(each)) for each in OIDC_TOKEN_OPTIONS)), None)
            value = dict(levels).get(source, {}).get(name) if source else None
            connection[name] = None if _blank(value) else convert(name, spec, value, source, environ)
            if connection[name] is not None:
                origins[name] = source
        elif name == "security_token":
            source = origins.get("access_key", credential_level)
            _check_token_level(levels, source)
            value = dict(levels).get(source, {}).get(name)
            connection[name] = None if _blank(value) else convert(name, spec, value, source, environ)
            if connection[name] is not None:
                origins[name] = source
        else:
            connection[name] = pick(name, spec)
    kind = check_credentials(connection, credential_level, origins)
    if connection["validate_certs"] and connection["ca_bundle"]:
        problem = ca_bundle_problem(connection["ca_bundle"])
        if problem:
            raise ConnectionConfigError("%s: %s" % (_named("ca_bundle", origins), problem))
    others = {}
    for table in (WAIT_OPTIONS, QUERY_OPTIONS, METRICS_OPTIONS):
        for name, spec in table.items():
            others[name] = pick(name, spec)
    if not has_wait_for:
        others["wait_for"] = [phase for phase in FINAL_PHASES if phase not in others["fail_on"]]
    _check_query(others, origins, has_wait_for)
    waiting = WaitSettings(
        others["wait"], tuple(others["wait_for"]), tuple(others["fail_on"]), others["wait_timeout"], others["wait_sleep"], others["wait_sleep_max"]
    )
    # stall: as written at the highest level that gives it, checked here before any request (a message naming stall.<key>).
    stall = check_stall(pick("stall", {"type": "raw"}))
    service, credentials = service_parts(connection_params(connection), kind)
    if before_results is not None:
        # The caller's own checks of what is resolved so far (Query: the libraries the call needs), before the metrics.
        before_results(others)
    # Last, as before issue 58 (the metrics were checked once the rest was): each entry named in a message, a value that
    # is not a list included.
    results = _metric_settings(others["metrics"], others["baseline"])
    return Settings(connection, kind, origins, others, service=service, credentials=credentials, waiting=waiting, results=results, stall=stall)


def _metric_settings(metrics, baseline):
    """``metrics`` and ``baseline`` checked into ``MetricSettings`` (``door/metric_checks.py``, imported only when one of
    them is given: it brings ``results/metrics.py``); an empty part otherwise."""
    if not metrics and baseline in (None, {}):
        return MetricSettings((), None)
    from ansible_collections.modelarts.training.plugins.module_utils.door import metric_checks  # pylint: disable=import-outside-toplevel

    return metric_checks.metric_settings(metrics, baseline)


def _check_token_level(levels, source):
    """A security_token is issued with one access key: it must come from the level that gives ``access_key``.

    A token at a level above that one (a task's token over the runner's AK/SK) would otherwise be dropped
    silently, or the runner's older token used in its place.
    """
    has_key = any(level == source and not _blank(values.get("access_key")) for level, values in levels)
    for level, values in levels:
        if not _blank(values.get("security_token")) and _blank(values.get("access_key")):
            raise ConnectionConfigError(
                "%s is set without access_key at the same level (access_key is %s); temporary credentials are one set: "
                "give access_key, secret_key and security_token together" % (where("security_token", level), level_text(source) if has_key else "not set")
            )
        if level == source:
            return


def _check_query(values, origins, has_wait_for=True):
    def named(name):
        return where(name, origins[name]) if name in origins else name

    concurrency = values["max_concurrency"]
    if not 1 <= concurrency <= MAX_CONCURRENCY_LIMIT:
        raise ConnectionConfigError("%s must be between 1 and %d, got %d" % (named("max_concurrency"), MAX_CONCURRENCY_LIMIT, concurrency))
    if not 0 <= values["log_lines"] <= MAX_LOG_LINES:
        raise ConnectionConfigError("%s must be between 0 and %d, got %d" % (named("log_lines"), MAX_LOG_LINES, values["log_lines"]))
    if not has_wait_for:
        return
    problems = wait_option_problems(values["wait_for"], values["fail_on"], values["wait_timeout"], values["wait_sleep"], values["wait_sleep_max"])
    problems.extend(unread_bound_problems(values["wait_for"], values.get("metrics")))
    if problems:
        raise ConnectionConfigError("; ".join(problems))


def unread_bound_problems(wait_for, metrics, wait_for_name="wait_for", metrics_name="metrics"):
    """A bound of ``metrics`` is checked on a Completed job only: with ``wait_for`` naming another phase, a job in that
    phase would meet the wait with its bounded metrics never read.  A bound not read is not a pass (fail closed), so the
    combination is refused before any request (issue 56, item 5)."""
    others = [phase for phase in (wait_for or ()) if phase != "Completed"]
    if not others or not isinstance(metrics, (list, tuple)):
        return []
    for index, entry in enumerate(metrics):
        if isinstance(entry, dict):
            bounds = [key for key in METRIC_BOUNDS if entry.get(key) is not None]
            if bounds:
                return [
                    "%s names %s while %s[%d] has a bound (%s): metrics are read and bounds checked on Completed jobs only, so a job "
                    "in %s would meet the wait with the bound never checked; wait for Completed alone when metrics have bounds"
                    % (wait_for_name, ", ".join(others), metrics_name, index, ", ".join(bounds), " or ".join(others))
                ]
    return []
