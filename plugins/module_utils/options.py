# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one definition of the connection and authentication options.

Modules build their ``argument_spec`` from :func:`connection_argument_spec`;
lookup plugins and the event source read the same names (and the same
environment variables) through :data:`CONNECTION_OPTIONS`.  Credential rules
live in :func:`check_credentials` so every entry point fails the same way,
before any request is sent.
"""

from __future__ import annotations

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_REQUEST_TIMEOUT = 30.0
DEFAULT_BACKOFF_RETRIES = 4
DEFAULT_BACKOFF_DELAY = 1.0
DEFAULT_BACKOFF_MAX_DELAY = 30.0

# name -> (spec for AnsibleModule, environment variable or None)
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
    "endpoint": ({"type": "str"}, "HUAWEICLOUD_MODELARTS_ENDPOINT"),
    "iam_endpoint": ({"type": "str"}, "HUAWEICLOUD_SDK_IAM_ENDPOINT"),
    "validate_certs": ({"type": "bool", "default": True}, "HUAWEICLOUD_VALIDATE_CERTS"),
    "ca_bundle": ({"type": "path"}, "HUAWEICLOUD_CA_BUNDLE"),
    "proxy": ({"type": "str"}, None),
    "connect_timeout": ({"type": "float", "default": DEFAULT_CONNECT_TIMEOUT}, None),
    "request_timeout": ({"type": "float", "default": DEFAULT_REQUEST_TIMEOUT}, None),
    "backoff_retries": ({"type": "int", "default": DEFAULT_BACKOFF_RETRIES}, None),
    "backoff_delay": ({"type": "float", "default": DEFAULT_BACKOFF_DELAY}, None),
    "backoff_max_delay": ({"type": "float", "default": DEFAULT_BACKOFF_MAX_DELAY}, None),
}

SECRET_OPTIONS = ("secret_key", "security_token", "auth_token", "password")


class ConnectionConfigError(Exception):
    """A connection or credential setting is wrong; raised before any request.

    The message names the options and their environment variables, never a value.
    """


def connection_argument_spec():
    """Return a fresh ``argument_spec`` dict of the connection options for ``AnsibleModule``.

    Options with an environment variable get ``fallback=(env_fallback, [VAR])``.
    """
    # Imported here so this file stays importable where ansible is not (the
    # event source runs inside ansible-rulebook, which may lack ansible-core).
    from ansible.module_utils.basic import env_fallback

    spec = {}
    for name, (option, env) in CONNECTION_OPTIONS.items():
        entry = dict(option)
        if env:
            entry["fallback"] = (env_fallback, [env])
        spec[name] = entry
    return spec


def describe(name):
    """``name`` followed by its environment variable, for messages: ``access_key (HUAWEICLOUD_SDK_AK)``."""
    env = CONNECTION_OPTIONS[name][1]
    return "%s (%s)" % (name, env) if env else name


def _describe_all(names):
    return ", ".join(describe(name) for name in names)


# kind -> (options that select it, options it requires)
CREDENTIAL_KINDS = (
    ("aksk", ("access_key", "secret_key", "security_token"), ("access_key", "secret_key")),
    ("auth_token", ("auth_token",), ("auth_token",)),
    ("password", ("username", "password", "domain_name"), ("username", "password", "domain_name")),
)


def check_credentials(params):
    """Return the credential kind of ``params``: ``aksk``, ``auth_token`` or ``password``.

    Raises :class:`ConnectionConfigError` when no kind or more than one kind is
    set, when a kind is incomplete, when ``security_token`` comes without an
    AK/SK pair, or when neither ``region`` nor the endpoints allow finding the
    service.  Messages name options and environment variables only.
    """
    present = [kind for kind, names, _required in CREDENTIAL_KINDS if any(params.get(name) for name in names)]
    if not present:
        raise ConnectionConfigError(
            "no credentials: set access_key and secret_key (HUAWEICLOUD_SDK_AK, HUAWEICLOUD_SDK_SK), "
            "or auth_token (HUAWEICLOUD_SDK_AUTH_TOKEN), or username, password and domain_name "
            "(HUAWEICLOUD_USERNAME, HUAWEICLOUD_PASSWORD, HUAWEICLOUD_DOMAIN_NAME)")
    if len(present) > 1:
        groups = ["/".join(n for n in names if params.get(n)) for kind, names, _required in CREDENTIAL_KINDS if kind in present]
        raise ConnectionConfigError(
            "conflicting credentials: %s are set together; use exactly one kind (AK/SK, auth_token, or username/password/domain_name), "
            "and check the HUAWEICLOUD_* environment variables too" % " and ".join(groups))
    kind = present[0]
    names, required = [(names, required) for each, names, required in CREDENTIAL_KINDS if each == kind][0]
    missing = [name for name in required if not params.get(name)]
    if missing:
        given = [name for name in names if params.get(name)]
        raise ConnectionConfigError("incomplete credentials: %s set but %s missing" % (_describe_all(given), _describe_all(missing)))
    if not params.get("region") and not params.get("endpoint"):
        raise ConnectionConfigError("set %s or %s to say which ModelArts endpoint to call" % (describe("region"), describe("endpoint")))
    if not params.get("project_id") and not params.get("region"):
        raise ConnectionConfigError(
            "set %s, or %s so that the project can be looked up in IAM" % (describe("project_id"), describe("region")))
    _check_numbers(params)
    _check_urls(params)
    return kind


def _check_urls(params):
    schemes = {"endpoint": ("https://", "http://"), "iam_endpoint": ("https://", "http://"),
               "proxy": ("https://", "http://", "socks5://", "socks5h://", "socks4://")}
    for name, allowed in schemes.items():
        value = params.get(name)
        if value and not str(value).lower().startswith(allowed):
            raise ConnectionConfigError("%s must be a URL starting with %s" % (describe(name), " or ".join(allowed)))


def _check_numbers(params):
    for name in ("connect_timeout", "request_timeout"):
        value = params.get(name)
        if value is not None and not value > 0:
            raise ConnectionConfigError("%s must be a number of seconds greater than 0, got %r" % (name, value))
    for name in ("backoff_retries", "backoff_delay", "backoff_max_delay"):
        value = params.get(name)
        if value is not None and value < 0:
            raise ConnectionConfigError("%s must not be negative, got %r" % (name, value))
