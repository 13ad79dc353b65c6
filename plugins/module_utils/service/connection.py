# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The connection options and the two typed parts the door resolves them into.

:data:`CONNECTION_OPTIONS` (connection and credentials, documented by the ``modelarts.training.connection`` doc
fragment), the credential kinds (their rules are checked at the door: ``door/connection_checks.py``), and how a value is named in messages
(:func:`describe`, :func:`where`).  ``options.resolve`` (the door) reads the option values once and builds from them
a :class:`Connection` (how to reach the service: endpoints, project, region, TLS, proxy, timeouts, retries, body
limits) and a :class:`CredentialSource` (the credential kind and its values); the rooms of this package receive
these parts, never the option values by name.  Both are immutable and their ``repr`` shows no secret.
"""

from __future__ import annotations

import collections
import os
import re

from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.text import LEVEL_ENVIRONMENT, LEVEL_VARIABLE, boolean_word

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

# The lookup reads modelarts_<option> inventory variables.
VARIABLE_PREFIX = "modelarts_"


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


def blank(value):
    """Whether ``value`` is unset: None, or a string of blanks."""
    return value is None or (isinstance(value, str) and not value.strip())


def to_bool(value, name, level):
    """A strict boolean: ``True``/``False`` or one of Ansible's boolean words; anything else is an error."""
    found = boolean_word(value)
    if found is not None:
        return found
    shown = repr(value) if isinstance(value, (str, int, float)) and name not in SECRET_OPTIONS else "a %s" % type(value).__name__
    raise ConnectionConfigError("%s must be a boolean (true or false), got %s" % (where(name, level), shown))


# -- the parts --------------------------------------------------------------------------------------------------

# What a client needs to reach the service, and where its credentials come from: the fields of the two parts.
CONNECTION_FIELDS = tuple(name for name in CONNECTION_OPTIONS if name not in CREDENTIAL_OPTIONS + OIDC_TUNING_OPTIONS + AGENCY_OPTIONS)
CREDENTIAL_FIELDS = CREDENTIAL_OPTIONS + OIDC_TUNING_OPTIONS + AGENCY_OPTIONS
SECRET_SHOWN = "********"


def _fields(part, fields, given, positional):
    values = dict(zip(fields, positional))
    unknown = set(given) - set(fields)
    if len(positional) > len(fields) or unknown or set(values) & set(given):
        raise TypeError("%s takes the fields %s" % (part, ", ".join(fields)))
    values.update(given)
    return values


def _shown_fields(part, fields, secret=()):
    shown = []
    for name, value in zip(fields, part):
        if value is not None:
            shown.append("%s=%s" % (name, SECRET_SHOWN if name in secret else repr(value)))
    return "%s(%s)" % (type(part).__name__, ", ".join(shown))


class Connection(collections.namedtuple("_ConnectionFields", CONNECTION_FIELDS)):
    """How one call reaches the service: the hosts (``endpoint``, ``iam_endpoint``, ``sts_endpoint``), ``project_id`` and ``region``, TLS
    (``validate_certs``, ``ca_bundle``), the ``proxy``, the timeouts, the retries and the body limit
    (``max_response_bytes``) - one attribute per connection option of :data:`CONNECTION_FIELDS`.

    Built once by the door (``options.resolve``); immutable.  A field not given is unset (None) or takes the option's
    default; a blank string is unset, ``region`` and ``project_id`` are stripped.  The ``repr`` masks the proxy's
    ``user:password``.
    """

    __slots__ = ()

    def __new__(cls, *positional, **given):
        values = _fields("Connection", CONNECTION_FIELDS, given, positional)
        for name in CONNECTION_FIELDS:
            value = values.get(name)
            if isinstance(value, str) and (name in CREDENTIAL_TEXT_OPTIONS or not value):
                value = value.strip() or None
            if value is None:
                value = CONNECTION_OPTIONS[name][0].get("default")
            values[name] = value
        return super(Connection, cls).__new__(cls, **values)

    def __repr__(self):
        text = _shown_fields(self, CONNECTION_FIELDS)
        secret = proxy_secret(self.proxy)
        return text.replace(secret, SECRET_SHOWN) if secret else text


class CredentialSource(collections.namedtuple("_CredentialFields", ("kind",) + CREDENTIAL_FIELDS)):
    """Where one call's credentials come from: the credential ``kind`` (one of :data:`CREDENTIAL_KINDS`, or
    :data:`DEFAULT_KIND`) and the values of its options - AK/SK and token, password, credentials file, federated and
    OIDC identity, the OIDC exchange's tuning and the agency assumed on top - one attribute per option.

    Built once by the door (``options.resolve``); immutable.  Text is stripped and a blank value is unset (None).  The
    ``repr`` shows which secrets are set, never their values.
    """

    __slots__ = ()

    def __new__(cls, *positional, **given):
        values = _fields("CredentialSource", ("kind",) + CREDENTIAL_FIELDS, given, positional)
        for name in ("kind",) + CREDENTIAL_FIELDS:
            value = values.get(name)
            if isinstance(value, str):
                value = value.strip() or None
            values[name] = value
        values["kind"] = values["kind"] or DEFAULT_KIND
        return super(CredentialSource, cls).__new__(cls, **values)

    def secrets(self):
        """The secret values given (``secret_key``, ``security_token``, ``auth_token``, ``password``, ``oidc_id_token``)."""
        return tuple(value for name, value in zip(("kind",) + CREDENTIAL_FIELDS, self) if name in SECRET_OPTIONS and value)

    def __repr__(self):
        return _shown_fields(self, ("kind",) + CREDENTIAL_FIELDS, SECRET_OPTIONS)
