# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one definition of every option, and the one place where option values are read.

Three tables: :data:`CONNECTION_OPTIONS` (connection and credentials, documented by the
``modelarts.training.connection`` doc fragment), :data:`WAIT_OPTIONS` (the ``modelarts.training.wait``
fragment) and :data:`QUERY_OPTIONS` (validation, concurrency, endpoint tokens).

:func:`resolve` turns the values an entry point was given into typed settings.  An entry point hands
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
import re
from types import MappingProxyType

from ansible_collections.modelarts.training.plugins.module_utils.errors import ConfigError, ConnectionConfigError  # noqa: F401  (re-exported)
from ansible_collections.modelarts.training.plugins.module_utils.text import (  # noqa: F401  (re-exported: the door's names)
    LEVEL_ARGUMENT,
    LEVEL_ENVIRONMENT,
    LEVEL_KEYWORD,
    LEVEL_OPTION,
    LEVEL_VARIABLE,
    expand_path,
    expand_user,
    level_text,
    unknown_names,
    unknown_text,
)
from ansible_collections.modelarts.training.plugins.module_utils.job.phases import DEFAULT_FAIL_ON, DEFAULT_WAIT_FOR, PHASES, TERMINAL_PHASES  # noqa: F401
from ansible_collections.modelarts.training.plugins.module_utils.results.metric_options import (  # noqa: F401  (re-exported: the door's names)
    BASELINE_OPTIONS,
    DEFAULT_METRIC_LINES,
    FT_METRIC_GROUPS,
    IMPROVEMENT_BOUNDS,
    MAX_METRIC_LINES,
    METRIC_BOUNDS,
    METRIC_ENTRY_OPTIONS,
    METRIC_GOALS,
    METRIC_PICKS,
    METRIC_SOURCES,
    METRICS_OPTIONS,
    MetricSettings,
)
from ansible_collections.modelarts.training.plugins.module_utils.waiting.wait_options import (  # noqa: F401  (re-exported: the door's names)
    DEFAULT_WAIT_TIMEOUT,
    FINAL_PHASES,
    PHASE_CHOICES,
    WAIT_OPTIONS,
    WaitSettings,
    wait_option_problems,
)

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_REQUEST_TIMEOUT = 30.0
DEFAULT_BACKOFF_RETRIES = 4
DEFAULT_BACKOFF_DELAY = 1.0
DEFAULT_BACKOFF_MAX_DELAY = 30.0
# Job documents are kilobytes; a long job's node_count_metrics can reach a few MiB.
DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024

# name -> (spec, environment variable or None).  The spec is AnsibleModule's, except that a
# "default" here is applied by resolve() after the environment was read (see connection_argument_spec).
CONNECTION_OPTIONS = {
    "region": ({"type": "str"}, "HUAWEICLOUD_SDK_REGION"),
    "project_id": ({"type": "str"}, "HUAWEICLOUD_SDK_PROJECT_ID"),
    # An access key id is an identifier, not a secret; no_log=False says so explicitly.
    "access_key": ({"type": "str", "no_log": False}, "HUAWEICLOUD_SDK_AK"),
    "secret_key": ({"type": "str", "no_log": True}, "HUAWEICLOUD_SDK_SK"),
    "security_token": ({"type": "str", "no_log": True}, "HUAWEICLOUD_SDK_SECURITY_TOKEN"),
    "auth_token": ({"type": "str", "no_log": True}, "HUAWEICLOUD_SDK_AUTH_TOKEN"),
    "username": ({"type": "str"}, "HUAWEICLOUD_USERNAME"),
    "password": ({"type": "str", "no_log": True}, "HUAWEICLOUD_PASSWORD"),
    "domain_name": ({"type": "str"}, "HUAWEICLOUD_DOMAIN_NAME"),
    # Sources the collection obtains credentials from and renews (credential_sources.py).  The SDK's credentials
    # file sits below every level, the environment included: HUAWEICLOUD_SDK_CREDENTIALS_FILE is read by
    # the default chain (credential_sources.default_chain), so the option has no environment variable here.
    "credentials_file": ({"type": "path"}, None),
    "idp_id": ({"type": "str"}, "HUAWEICLOUD_SDK_IDP_ID"),
    "id_token_file": ({"type": "path"}, "HUAWEICLOUD_SDK_ID_TOKEN_FILE"),
    "oidc_provider_urn": ({"type": "str"}, "HUAWEICLOUD_OIDC_PROVIDER_URN"),
    "oidc_agency_urn": ({"type": "str"}, "HUAWEICLOUD_OIDC_AGENCY_URN"),
    "oidc_token_file": ({"type": "path"}, "HUAWEICLOUD_OIDC_TOKEN_FILE"),
    "oidc_id_token": ({"type": "str", "no_log": True}, "HUAWEICLOUD_OIDC_ID_TOKEN"),
    "oidc_session_name": ({"type": "str"}, "HUAWEICLOUD_OIDC_SESSION_NAME"),
    "oidc_duration_seconds": ({"type": "int"}, "HUAWEICLOUD_OIDC_DURATION_SECONDS"),
    # An agency assumed on top of any source; agency_duration defaults to 3600 s where it is used.
    "agency_name": ({"type": "str"}, None),
    "agency_domain_name": ({"type": "str"}, None),
    "agency_duration": ({"type": "int"}, None),
    "endpoint": ({"type": "str"}, "HUAWEICLOUD_MODELARTS_ENDPOINT"),
    "iam_endpoint": ({"type": "str"}, "HUAWEICLOUD_SDK_IAM_ENDPOINT"),
    "sts_endpoint": ({"type": "str"}, "HUAWEICLOUD_SDK_STS_ENDPOINT"),
    "validate_certs": ({"type": "bool", "default": True}, "HUAWEICLOUD_VALIDATE_CERTS"),
    "ca_bundle": ({"type": "path"}, "HUAWEICLOUD_CA_BUNDLE"),
    # Shown in results for debugging; its user:password part is masked everywhere (see proxy_secret).
    "proxy": ({"type": "str", "no_log": False}, None),
    "connect_timeout": ({"type": "float", "default": DEFAULT_CONNECT_TIMEOUT}, None),
    "request_timeout": ({"type": "float", "default": DEFAULT_REQUEST_TIMEOUT}, None),
    "backoff_retries": ({"type": "int", "default": DEFAULT_BACKOFF_RETRIES}, None),
    "backoff_delay": ({"type": "float", "default": DEFAULT_BACKOFF_DELAY}, None),
    "backoff_max_delay": ({"type": "float", "default": DEFAULT_BACKOFF_MAX_DELAY}, None),
    "max_response_bytes": ({"type": "int", "default": DEFAULT_MAX_RESPONSE_BYTES}, None),
}

SECRET_OPTIONS = ("secret_key", "security_token", "auth_token", "password", "oidc_id_token")
# Values that become part of a header, a URL or a request body: surrounding whitespace is dropped (a
# YAML "|" block or a file read into a variable ends in a newline; every SDK strips it) and any
# control character left is refused, so no value can split a header or reach a message escaped
# where masking would not recognise it.
CREDENTIAL_TEXT_OPTIONS = (
    "region",
    "project_id",
    "access_key",
    "secret_key",
    "security_token",
    "auth_token",
    "username",
    "password",
    "domain_name",
    "idp_id",
    "oidc_provider_urn",
    "oidc_agency_urn",
    "oidc_id_token",
    "oidc_session_name",
    "agency_name",
    "agency_domain_name",
)
# A region is a name, never a host: it is spliced into default endpoint host names.
REGION_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")

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

# The lookup reads modelarts_<option> inventory variables.
VARIABLE_PREFIX = "modelarts_"

_TRUE = frozenset(("yes", "on", "t", "1", "y", "true"))
_FALSE = frozenset(("false", "f", "off", "no", "0", "n"))


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


def describe(name):
    """``name`` followed by its environment variable, for messages: ``access_key (HUAWEICLOUD_SDK_AK)``."""
    env = CONNECTION_OPTIONS[name][1] if name in CONNECTION_OPTIONS else None
    return "%s (%s)" % (name, env) if env else name


def where(name, level):
    """Name an option together with the place its value came from: ``validate_certs (variable modelarts_validate_certs)``."""
    if level == LEVEL_ENVIRONMENT:
        return "%s (environment variable %s)" % (name, CONNECTION_OPTIONS[name][1])
    if level == LEVEL_VARIABLE:
        return "%s (variable %s%s)" % (name, VARIABLE_PREFIX, name)
    return "%s (%s)" % (name, level)


# A CA file is read as PEM (ssl's load_verify_locations): without this line it holds no certificate ssl can use.
PEM_CERTIFICATE = b"-----BEGIN CERTIFICATE-----"
MAX_CA_BUNDLE_BYTES = 64 * 1024 * 1024


def ca_bundle_problem(path):
    """What is wrong with ``path`` as ``ca_bundle`` (a PEM file of CA certificates), said after the option's name; or None."""
    shown = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in str(path))[:300]
    if os.path.isdir(path):
        return "%s is a directory: give the PEM file of the CA certificates to trust" % shown
    if not os.path.exists(path):
        return "no such file or directory: %s" % shown
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CA_BUNDLE_BYTES)
    except OSError as error:
        return "%s cannot be read: %s" % (shown, error.strerror or type(error).__name__)
    if PEM_CERTIFICATE not in data:
        return "%s holds no PEM certificate (no -----BEGIN CERTIFICATE----- line): give the CA certificates in PEM form" % shown
    return None


def _describe_all(names):
    return ", ".join(describe(name) for name in names)


# kind -> (options that select it, options it requires).  Options that only tune a kind (OIDC_TUNING_OPTIONS) select
# none: a runner's HUAWEICLOUD_OIDC_SESSION_NAME beside its AK/SK, or a task's oidc_session_name, changes no kind.
CREDENTIAL_KINDS = (
    ("aksk", ("access_key", "secret_key", "security_token"), ("access_key", "secret_key")),
    ("auth_token", ("auth_token",), ("auth_token",)),
    ("password", ("username", "password", "domain_name"), ("username", "password", "domain_name")),
    ("credentials_file", ("credentials_file",), ("credentials_file",)),
    ("federated", ("idp_id", "id_token_file"), ("idp_id", "id_token_file")),
    ("oidc", ("oidc_provider_urn", "oidc_agency_urn", "oidc_token_file", "oidc_id_token"), ("oidc_provider_urn", "oidc_agency_urn")),
)
# How an OIDC exchange is made, taken option by option like region or timeouts; used only when the kind is OIDC.
OIDC_TUNING_OPTIONS = ("oidc_session_name", "oidc_duration_seconds")
# Kinds whose exchanges go to IAM (the endpoint must be known), and kinds that may learn the project and
# the IAM endpoint from what they read (the credentials file, the default chain).
IAM_KINDS = ("password", "federated")
SELF_DESCRIBING_KINDS = ("credentials_file", "default")
# With no credential option at any level, the collection looks for credentials where hosts keep them.
DEFAULT_KIND = "default"
AGENCY_OPTIONS = ("agency_name", "agency_domain_name", "agency_duration")
OIDC_TOKEN_OPTIONS = ("oidc_id_token", "oidc_token_file")
CREDENTIAL_OPTIONS = tuple(name for _kind, names, _required in CREDENTIAL_KINDS for name in names)


KINDS_HELP = (
    "access_key and secret_key (HUAWEICLOUD_SDK_AK, HUAWEICLOUD_SDK_SK), or auth_token (HUAWEICLOUD_SDK_AUTH_TOKEN), or username, password and "
    "domain_name (HUAWEICLOUD_USERNAME, HUAWEICLOUD_PASSWORD, HUAWEICLOUD_DOMAIN_NAME), or credentials_file (HUAWEICLOUD_SDK_CREDENTIALS_FILE), or idp_id and "
    "id_token_file "
    "(HUAWEICLOUD_SDK_IDP_ID, HUAWEICLOUD_SDK_ID_TOKEN_FILE), or oidc_provider_urn, oidc_agency_urn and oidc_token_file (HUAWEICLOUD_OIDC_*)"
)


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


def check_credentials(params, level=None, origins=None):
    """Return the credential kind of ``params``: one of :data:`CREDENTIAL_KINDS`, or :data:`DEFAULT_KIND` when none is named.

    Raises :class:`ConnectionConfigError` when more than one kind is set, when a kind is incomplete, or
    when neither ``region`` nor the endpoints allow finding the services.  ``level`` says where the
    credentials came from, for the messages, and ``origins`` (option -> level) where each other value did.  Messages name
    options and environment variables only.
    """
    present = [kind for kind, names, _required in CREDENTIAL_KINDS if any(params.get(name) for name in names)]
    source = " (%s)" % level_text(level) if level else ""
    if len(present) > 1:
        groups = ["/".join(n for n in names if params.get(n)) for kind, names, _required in CREDENTIAL_KINDS if kind in present]
        raise ConnectionConfigError(
            "conflicting credentials%s: %s are set together; use exactly one kind at one level: %s" % (source, " and ".join(groups), KINDS_HELP)
        )
    kind = present[0] if present else DEFAULT_KIND
    if present:
        names, required = [(names, required) for each, names, required in CREDENTIAL_KINDS if each == kind][0]
        missing = [name for name in required if not params.get(name)]
        if kind == "oidc" and not params.get("oidc_token_file") and not params.get("oidc_id_token"):
            missing.append("oidc_token_file")
        if missing:
            given = [name for name in names if params.get(name)]
            raise ConnectionConfigError("incomplete credentials%s: %s set but %s missing" % (source, _describe_all(given), _describe_all(missing)))
    for name in CREDENTIAL_TEXT_OPTIONS:
        check_text(name, params.get(name))
    if not params.get("region") and not params.get("endpoint"):
        raise ConnectionConfigError("set %s or %s to say which ModelArts endpoint to call" % (describe("region"), describe("endpoint")))
    if kind not in SELF_DESCRIBING_KINDS and not params.get("project_id") and not params.get("region"):
        raise ConnectionConfigError("set %s, or %s so that the project can be looked up in IAM" % (describe("project_id"), describe("region")))
    needs_iam = kind in IAM_KINDS or params.get("agency_name")
    if needs_iam and not params.get("region") and not params.get("iam_endpoint"):
        what = "password authentication asks IAM for a token" if kind == "password" else "these credentials are obtained from IAM"
        raise ConnectionConfigError("%s: set %s, or %s to say which IAM endpoint to call" % (what, describe("region"), describe("iam_endpoint")))
    _check_numbers(params, origins or {})
    _check_urls(params, origins or {})
    return kind


def check_text(name, value, level=None):
    """Refuse a control character in a value that becomes a header, a URL or a body (never echoing the value),
    and a ``region`` that is not a region name; ``level`` says where the value came from, for the message."""
    if not isinstance(value, str):
        return
    named = where(name, level) if level else describe(name)
    if CONTROL_CHARACTERS.search(value):
        raise ConnectionConfigError(
            "%s contains a control character (such as a line break inside the value); a credential or identifier is one line of printable text" % named
        )
    if name == "project_id" and value and not value.strip("."):
        raise ConnectionConfigError("%s is a path segment of every request and cannot be %r" % (named, value))
    if name == "region" and not REGION_PATTERN.fullmatch(value):
        raise ConnectionConfigError(
            "%s must be a region name such as cn-north-4 (lowercase letters and digits in dash-separated parts), got %s; "
            "to call another host, set endpoint and iam_endpoint" % (named, _shown(value))
        )


def _shown(value):
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in value)
    return repr(text if len(text) <= 80 else text[:80] + "...")


def _named(name, origins):
    # A value's option and where it came from when that is known, else the option and its environment variable.
    return where(name, origins[name]) if name in origins else describe(name)


def _check_urls(params, origins):
    schemes = {
        "endpoint": ("https://", "http://"),
        "iam_endpoint": ("https://", "http://"),
        "sts_endpoint": ("https://", "http://"),
        "proxy": ("https://", "http://", "socks5://", "socks5h://", "socks4://"),
    }
    for name, allowed in schemes.items():
        value = params.get(name)
        if value and not str(value).lower().startswith(allowed):
            raise ConnectionConfigError("%s must be a URL starting with %s" % (_named(name, origins), " or ".join(allowed)))


def _check_numbers(params, origins):
    for name in ("connect_timeout", "request_timeout", "max_response_bytes"):
        value = params.get(name)
        if value is not None and not value > 0:
            raise ConnectionConfigError("%s must be greater than 0, got %r" % (_named(name, origins), value))
    for name in ("backoff_retries", "backoff_delay", "backoff_max_delay"):
        value = params.get(name)
        if value is not None and value < 0:
            raise ConnectionConfigError("%s must not be negative, got %r" % (_named(name, origins), value))


def proxy_secret(proxy):
    """The ``user:password`` part of a proxy URL (to be masked wherever it could show), or None.

    It is everything between ``://`` and the LAST ``@``: a password written raw may hold ``/``, ``@``,
    ``#``, ``?`` or ``:`` (``http://user:pa/ss@proxy:3128``).
    """
    if not proxy or "@" not in str(proxy):
        return None
    userinfo = str(proxy).split("://", 1)[-1].rpartition("@")[0]
    return userinfo or None


# A password this short is not masked on its own (its user:password still is): it would mask common words.
PROXY_PASSWORD_MASKED_FROM = 4


def proxy_secrets(proxy):
    """Every form of a proxy URL's credentials to mask: ``user:password`` as written and percent-decoded, the
    password alone (when at least 4 characters) both ways, and the ``Proxy-Authorization`` value sent."""
    userinfo = proxy_secret(proxy)
    if not userinfo:
        return []
    import base64  # pylint: disable=import-outside-toplevel  # only proxies with credentials need it
    from urllib.parse import unquote  # pylint: disable=import-outside-toplevel

    values = [userinfo, unquote(userinfo)]
    password = userinfo.partition(":")[2]
    values.extend(value for value in (password, unquote(password)) if len(value) >= PROXY_PASSWORD_MASKED_FROM)
    user, _sep, secret = unquote(userinfo).partition(":")
    values.append(base64.b64encode(("%s:%s" % (user, secret)).encode("latin-1", "replace")).decode("ascii"))
    unique = []
    for value in values:
        if value not in unique:
            unique.append(value)
    return unique


# -- reading values ------------------------------------------------------------------------------


def _blank(value):
    return value is None or (isinstance(value, str) and not value.strip())


def to_bool(value, name, level):
    """A strict boolean: ``True``/``False`` or one of Ansible's boolean words; anything else is an error."""
    if isinstance(value, bool):
        return value
    key = value.strip().lower() if isinstance(value, str) else value
    if not isinstance(key, (bool, dict, list)):
        try:
            if key in _TRUE or key == 1:
                return True
            if key in _FALSE or key == 0:
                return False
        except TypeError:
            pass
    shown = repr(value) if isinstance(value, (str, int, float)) and name not in SECRET_OPTIONS else "a %s" % type(value).__name__
    raise ConnectionConfigError("%s must be a boolean (true or false), got %s" % (where(name, level), shown))


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


class Settings(object):
    """One call's options after :func:`resolve`, immutable once built: typed parts, each handed to the room that needs it.

    - ``service``: how to reach the service (``service.connection.Connection``: endpoints, project, region, TLS,
      proxy, timeouts, retries, body limits) and ``credentials``: where the credentials come from
      (``service.connection.CredentialSource``: the kind and its values).  The client is built from these two.
    - ``waiting``: the wait (``waiting.waiter.WaitSettings``); ``results``: the metrics and the baseline.
    - ``kind`` (the credential kind), ``origins`` (option -> the level its value came from, for messages).

    The door's own view, never handed below it: ``connection`` (the resolved connection options by name, read-only)
    and one read-only attribute per wait and query option (``settings.wait_timeout``).
    """

    _PARTS = ("service", "credentials", "waiting", "results")

    def __init__(self, connection, kind, origins, others, **parts):
        values = dict(others)
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


def resolve(levels, environ=None, has_wait_for=True):
    """Merge ``levels`` (``[(level name, {option: raw value})]``, highest first) and the environment into :class:`Settings`.

    Unknown keys in a level are ignored (the entry points own their other options).  An entry point
    with no ``wait_for`` option (``has_wait_for=False``: the event source, which follows every job to a
    final phase) gets as ``wait_for`` the final phases outside ``fail_on``, and ``fail_on`` may name any
    phase, ``Completed`` included.  Raises
    :class:`ConnectionConfigError` naming the option and its origin for a value of the wrong type,
    for conflicting or missing credentials, and for unusable numbers.
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
    results = MetricSettings(tuple(others["metrics"]) if isinstance(others["metrics"], list) else others["metrics"], others["baseline"])
    return Settings(connection, kind, origins, others, waiting=waiting, results=results)


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
