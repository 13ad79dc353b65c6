# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The credential sources that obtain credentials from a service or a file, imported only when a task uses one.

* :class:`Password`: an IAM token for a user's password (``POST /v3/auth/tokens``);
* :class:`CredentialsFile`: the SDK's INI file, section ``[basic]``: static AK/SK, or a federated identity;
* :class:`Federated`: a CI id token: IAM ``/v3.0/OS-AUTH/id-token/tokens``, then ``/v3.0/OS-CREDENTIAL/securitytokens``;
* :class:`OidcSts`: an OIDC id token through STS: ``/v5/agencies/assume-with-oidc``;
* :class:`PodIdentity`: CCE pod identity: ``POST $HC_CONTAINER_CREDENTIALS_FULL_URI``;
* :class:`InstanceMetadata`: the agency of an ECS/BMS instance, from its metadata service;
* :class:`Agency`: an agency assumed with any other provider's credentials (IAM ``assume_role``).

:func:`default_chain` finds a provider when no credentials are given (the credentials file, then pod
identity, then instance metadata); :func:`provider_for` builds the provider of every kind but given AK/SK
or token without an agency, which ``credentials.provider_for`` builds without importing this file.
What every provider shares (:class:`~credentials.Credentials`, :class:`~credentials.Transport`,
:class:`~credentials.Provider`, renewal) is in ``credentials.py``; the same rules hold here: providers
call through the transport, remember every secret before anything could show it, and name files,
options and variables in messages, never values.
"""

from __future__ import annotations

import configparser
import datetime
import os
import re
import threading

from ansible_collections.modelarts.training.plugins.module_utils.service.credentials import (
    ENV_CREDENTIALS_FILE,
    Credentials,
    CredentialsConfigError,
    RENEW_MARGIN,
    NoCredentialsError,
    Provider,
    Renewing,
    as_utc,
    named_option,
    required,
    static_provider,
)
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.service.iam import parse_iso8601
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import CONTROL_CHARACTERS, describe, to_bool
from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.text import expand_user
from ansible_collections.modelarts.training.plugins.module_utils.text import json_type_name, label

# What to check when IAM refuses the password flow (HTTP 401): the three values, with their variables.
PASSWORD_REFUSED_HINT = (
    "IAM refused the password flow: check domain_name (HUAWEICLOUD_DOMAIN_NAME), the account name; username (HUAWEICLOUD_USERNAME),"
    " an IAM user of that account; password (HUAWEICLOUD_PASSWORD); and that the user may use the project of region or project_id"
)
# IAM's assume_role accepts 15 minutes to 24 hours.
AGENCY_DURATION = 3600
AGENCY_DURATION_RANGE = (900, 86400)
# The SDK asks IAM for 6-hour temporary credentials in exchange for a federated token.
FEDERATED_DURATION = 6 * 3600
# STS v5 assume-with-oidc: the SDK's defaults and the service's range.
OIDC_SESSION_NAME = "oidc-sts-session"
OIDC_DURATION = 3600
OIDC_DURATION_RANGE = (900, 43200)

METADATA_ENDPOINT = "http://169.254.169.254"
METADATA_TOKEN_PATH = "/meta-data/latest/api/token"
METADATA_KEY_PATH = "/openstack/latest/securitykey"
METADATA_TOKEN_TTL = 6 * 3600
# After the service said it has no session tokens (404, 405, 503), ask again only this much later.
METADATA_NO_TOKEN_RECHECK = 24 * 3600
METADATA_TOKEN_FALLBACK = (404, 405, 503)
METADATA_NO_AGENCY = "Please configure Cloud Service Agency first"
# The connect timeout of the one look at the metadata service when no credentials were given.
METADATA_PROBE_TIMEOUT = 1.0
# A probe's whole request (connect, send, answer): a host that accepts and never answers costs no more.
METADATA_PROBE_WITHIN = 2.0

ENV_OIDC_ID_TOKEN = "HUAWEICLOUD_OIDC_ID_TOKEN"
ENV_OIDC_SESSION_NAME = "HUAWEICLOUD_OIDC_SESSION_NAME"
ENV_OIDC_DURATION = "HUAWEICLOUD_OIDC_DURATION_SECONDS"
ENV_POD_URI = "HC_CONTAINER_CREDENTIALS_FULL_URI"
ENV_POD_TOKEN_FILE = "HC_CONTAINER_AUTHORIZATION_TOKEN_FILE"
ENV_METADATA_ENDPOINT = "HUAWEICLOUD_METADATA_ENDPOINT"
# true: the default chain never looks at the instance metadata (like botocore's AWS_EC2_METADATA_DISABLED).
ENV_METADATA_DISABLED = "HUAWEICLOUD_METADATA_DISABLED"

CREDENTIALS_SECTION = "basic"
JSON_TYPE = "application/json;charset=UTF-8"

_DIGITS = re.compile(r"[0-9]+")
_ACCESS_FIELDS = ("access", "accessKeyId", "access_key_id")
_SECRET_FIELDS = ("secret", "secretAccessKey", "secret_access_key")
_TOKEN_FIELDS = ("securitytoken", "securityToken", "security_token")
_EXPIRY_FIELDS = ("expires_at", "expiration")


def metadata_endpoint(environ=None):
    """The instance metadata service: ``HUAWEICLOUD_METADATA_ENDPOINT`` or ``http://169.254.169.254``."""
    environ = os.environ if environ is None else environ
    value = (environ.get(ENV_METADATA_ENDPOINT) or "").strip() or METADATA_ENDPOINT
    _check_url(value, ENV_METADATA_ENDPOINT)
    return value.rstrip("/")


def metadata_disabled(environ=None):
    """Whether ``HUAWEICLOUD_METADATA_DISABLED`` switches the instance metadata source off: a boolean, or an error naming it."""
    environ = os.environ if environ is None else environ
    value = (environ.get(ENV_METADATA_DISABLED) or "").strip()
    if not value:
        return False
    try:
        return to_bool(value, ENV_METADATA_DISABLED, None)
    except ConnectionConfigError:
        raise CredentialsConfigError("%s must be a boolean (true or false), got %r" % (ENV_METADATA_DISABLED, label(value, 40))) from None


# -- helpers -------------------------------------------------------------------------------------------------------


def _check_url(value, named):
    if not isinstance(value, str) or not value.lower().startswith(("https://", "http://")) or CONTROL_CHARACTERS.search(value):
        raise CredentialsConfigError("%s must be a URL starting with https:// or http://" % named)


def _one_line(value, what):
    """``value`` stripped; a control character inside refuses it (it would split a header)."""
    text = value.strip()
    if CONTROL_CHARACTERS.search(text):
        raise CredentialsConfigError("%s contains a control character (such as a line break inside the value); it must be one line of printable text" % what)
    return text


def _token_from_file(transport, path, what, deadline=None):
    """A token read from ``path`` now (files are rotated: they are read again at every exchange), stripped and remembered."""
    token = transport.read_text(path, what, deadline=deadline)
    if token.strip():
        transport.remember_secret(token.strip())
    token = _one_line(token, "%s: %s" % (what, label(path, 300)))
    if not token:
        raise CredentialsConfigError("%s: %s is empty" % (what, label(path, 300)))
    return token


def _header(headers, name):
    if not headers:
        return None
    value = headers.get(name)
    if value is None and isinstance(headers, dict):
        lowered = name.lower()
        for key, item in headers.items():
            if str(key).lower() == lowered:
                return item
    return value


def _iam(transport, hint=None):
    base = (hint or getattr(transport, "iam_endpoint", "") or "").rstrip("/")
    if not base:
        raise CredentialsConfigError("these credentials are obtained from IAM: set %s, or %s" % (describe("region"), describe("iam_endpoint")))
    return base


def _sts(transport):
    base = (getattr(transport, "sts_endpoint", "") or "").rstrip("/")
    if not base:
        raise CredentialsConfigError("these credentials are obtained from STS: set %s" % describe("sts_endpoint"))
    return base


def _answer_error(operation, response, problem):
    """What is wrong with a credential answer: the call that answered and ``problem``, never a value of the answer."""
    call = getattr(response, "call", None)
    text = "%s: the answer%s %s" % (operation, " of %s" % call if call else "", problem)
    status = getattr(response, "status", None)
    request_id = getattr(response, "request_id", None)
    if request_id:
        text += " [request id %s]" % label(request_id, 80)
    return ModelArtsError(text, operation=operation, status=status, request_id=request_id)


def _expiry(value):
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        return None
    try:
        return as_utc(parse_iso8601(value))
    except (ValueError, OverflowError):
        return None


def credentials_from_answer(transport, response, operation, source, project_id=None, iam_endpoint=None):
    """The temporary credentials in an answer of IAM, STS, pod identity or instance metadata.

    The SDK's shapes: the object itself or under ``credential``/``credentials``, with ``access``/``accessKeyId``/
    ``access_key_id``, ``secret``/``secretAccessKey``/``secret_access_key``, ``securitytoken``/``securityToken``/
    ``security_token`` and ``expires_at``/``expiration``.  The secrets are remembered before anything is checked.
    """
    data = response.data
    if isinstance(data, dict):
        if "credential" in data:
            data = data["credential"]
        elif "credentials" in data:
            data = data["credentials"]
    if data is None:
        raise _answer_error(operation, response, "is empty")
    if not isinstance(data, dict):
        raise _answer_error(operation, response, "holds no credential object (it is a JSON %s)" % json_type_name(data))
    found = {}
    for field, names in (("access key", _ACCESS_FIELDS), ("secret key", _SECRET_FIELDS), ("security token", _TOKEN_FIELDS)):
        value = next((data[name] for name in names if data.get(name) not in (None, "")), None)
        if value is not None and not isinstance(value, str):
            raise _answer_error(operation, response, "has a %s that is not a string (a JSON %s)" % (field, json_type_name(value)))
        if value is not None and field != "access key":
            transport.remember_secret(value)
        found[field] = value
    for field in ("access key", "secret key"):
        if not found[field]:
            raise _answer_error(operation, response, "has no %s" % field)
    for field, value in found.items():
        if value is not None and (CONTROL_CHARACTERS.search(value) or value != value.strip()):
            raise _answer_error(operation, response, "has a %s with whitespace or a control character in it" % field)
    expiry = next((data[name] for name in _EXPIRY_FIELDS if data.get(name) not in (None, "")), None)
    return Credentials(
        access_key=found["access key"],
        secret_key=found["secret key"],
        security_token=found["security token"],
        expires_at=_expiry(expiry),
        source=source,
        project_id=project_id,
        iam_endpoint=iam_endpoint,
    )


def _positive_int(value, what, bounds=None):
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        number = int(value.strip())
    else:
        number = None
    if number is None or number <= 0:
        raise CredentialsConfigError("%s must be a whole number of seconds" % what)
    if bounds and not bounds[0] <= number <= bounds[1]:
        raise CredentialsConfigError("%s must be between %d and %d seconds, got %d" % (what, bounds[0], bounds[1], number))
    return number


class Password(Provider):
    """An IAM token for a user's password (``POST /v3/auth/tokens``), scoped to ``project_id`` or to the project named ``region``.

    The token's scope names the project: it is given as the ``project_id`` hint.
    """

    def __init__(self, username, password, domain_name, project_id=None, region=None):
        self.username = username
        self._password = password
        self.domain_name = domain_name
        self.project_id = project_id
        self.region = region
        self.name = "IAM user %s (username, password, domain_name)" % label(username)

    @classmethod
    def from_options(cls, source, connection=None, environ=None, home=None):
        """The provider of ``source`` (``username``, ``password``, ``domain_name``) and ``connection`` (``project_id``, ``region``)."""
        username, password, domain_name = required(
            "password", ("username", source.username), ("password", source.password), ("domain_name", source.domain_name)
        )
        project_id, region = (connection.project_id, connection.region) if connection is not None else (None, None)
        return cls(username, password, domain_name, project_id=project_id, region=region)

    def obtain(self, transport, deadline):
        transport.remember_secret(self._password)
        if self.project_id:
            scope = {"id": self.project_id}
        elif self.region:
            scope = {"name": self.region}
        else:
            raise CredentialsConfigError(
                "password authentication asks IAM for a token scoped to a project: set %s or %s" % (describe("region"), describe("project_id"))
            )
        user = {"name": self.username, "password": self._password, "domain": {"name": self.domain_name}}
        body = {"auth": {"identity": {"methods": ["password"], "password": {"user": user}}, "scope": {"project": scope}}}
        operation = "get an IAM token for user %s" % label(self.username)
        url = _iam(transport) + "/v3/auth/tokens"
        try:
            response = transport.call("POST", url, headers={"Content-Type": JSON_TYPE}, body=body, operation=operation, deadline=deadline)
        except ModelArtsError as error:
            if error.status == 401:
                error.args = ("%s (%s)" % (error.args[0], PASSWORD_REFUSED_HINT),)
            raise
        token = _header(response.headers, "X-Subject-Token")
        if not token:
            raise _answer_error(operation, response, "has no X-Subject-Token header")
        transport.remember_secret(token)
        info = response.data.get("token") if isinstance(response.data, dict) else None
        info = info if isinstance(info, dict) else {}
        project = info.get("project")
        hint = project.get("id") if isinstance(project, dict) and isinstance(project.get("id"), str) else None
        return Credentials(auth_token=token, expires_at=_expiry(info.get("expires_at")), source=self.name, project_id=self.project_id or hint)


class Federated(Provider):
    """A CI id token exchanged at IAM, as the SDK's ``FederalAccessor`` does.

    ``POST {iam}/v3.0/OS-AUTH/id-token/tokens`` (header ``X-Idp-Id``, body ``{"auth": {"id_token": {"id": ...}}}``)
    answers an unscoped token in ``X-Subject-Token``; ``POST {iam}/v3.0/OS-CREDENTIAL/securitytokens`` with method
    ``token`` turns it into temporary AK/SK for 6 hours.  Both calls are anonymous.  The id token file is read
    again at every exchange (CI systems rotate it).
    """

    def __init__(self, idp_id, id_token_file, iam_endpoint=None, project_id=None, token_option=None, duration=FEDERATED_DURATION):
        self.idp_id = idp_id
        self.id_token_file = id_token_file
        self.iam_endpoint = iam_endpoint
        self.project_id = project_id
        self.token_option = token_option or named_option("id_token_file")
        self.duration = duration
        self.name = "federated identity provider %s (idp_id)" % label(idp_id)

    @classmethod
    def from_options(cls, source, connection=None, environ=None, home=None):
        """The provider of ``source`` (``idp_id``, ``id_token_file``)."""
        idp_id, token_file = required("federated identity", ("idp_id", source.idp_id), ("id_token_file", source.id_token_file))
        return cls(idp_id, token_file)

    def obtain(self, transport, deadline):
        id_token = _token_from_file(transport, self.id_token_file, self.token_option, deadline)
        base = _iam(transport, self.iam_endpoint)
        operation = "exchange the id token of %s at identity provider %s for an IAM token" % (self.token_option, label(self.idp_id))
        headers = {"X-Idp-Id": self.idp_id, "Content-Type": JSON_TYPE}
        response = transport.call(
            "POST",
            base + "/v3.0/OS-AUTH/id-token/tokens",
            headers=headers,
            body={"auth": {"id_token": {"id": id_token}}},
            operation=operation,
            deadline=deadline,
        )
        token = _header(response.headers, "X-Subject-Token")
        if not token:
            raise _answer_error(operation, response, "has no X-Subject-Token header")
        transport.remember_secret(token)
        operation = "get temporary credentials for the IAM token of identity provider %s" % label(self.idp_id)
        body = {"auth": {"identity": {"methods": ["token"], "token": {"id": token, "duration_seconds": self.duration}}}}
        response = transport.call(
            "POST", base + "/v3.0/OS-CREDENTIAL/securitytokens", headers={"Content-Type": JSON_TYPE}, body=body, operation=operation, deadline=deadline
        )
        return credentials_from_answer(transport, response, operation, self.name, project_id=self.project_id, iam_endpoint=self.iam_endpoint)


class OidcSts(Provider):
    """An OIDC id token exchanged at STS v5 (``POST {sts}/v5/agencies/assume-with-oidc``, anonymous).

    The inline ``id_token`` wins over ``token_file``; the file is read again at every exchange.
    """

    def __init__(self, provider_urn, agency_urn, id_token=None, token_file=None, session_name=OIDC_SESSION_NAME, duration=OIDC_DURATION, token_option=None):
        if not id_token and not token_file:
            raise CredentialsConfigError("OIDC through STS needs an id token: set %s or %s" % (named_option("oidc_token_file"), ENV_OIDC_ID_TOKEN))
        self.provider_urn = provider_urn
        self.agency_urn = agency_urn
        self._id_token = id_token
        self.token_file = token_file
        self.session_name = session_name or OIDC_SESSION_NAME
        self.duration = duration or OIDC_DURATION
        self.token_option = token_option or named_option("oidc_token_file")
        self.name = "OIDC agency %s through STS (oidc_agency_urn)" % label(agency_urn)

    @classmethod
    def from_options(cls, source, connection=None, environ=None, home=None):
        """The provider of ``source`` (``oidc_provider_urn``, ``oidc_agency_urn``, ``oidc_id_token`` or
        ``oidc_token_file``, ``oidc_session_name``, ``oidc_duration_seconds``)."""
        provider_urn, agency_urn = required("OIDC", ("oidc_provider_urn", source.oidc_provider_urn), ("oidc_agency_urn", source.oidc_agency_urn))
        # options.resolve has read the HUAWEICLOUD_OIDC_* variables below the user's levels, and paired the
        # inline token with the token file by level; the inline token wins over a file of the same level.
        duration = source.oidc_duration_seconds
        return cls(
            provider_urn,
            agency_urn,
            id_token=source.oidc_id_token,
            token_file=source.oidc_token_file,
            session_name=source.oidc_session_name or OIDC_SESSION_NAME,
            duration=_positive_int(duration, describe("oidc_duration_seconds"), OIDC_DURATION_RANGE) if duration is not None else OIDC_DURATION,
        )

    def obtain(self, transport, deadline):
        if self._id_token:
            transport.remember_secret(self._id_token)
            id_token = _one_line(self._id_token, ENV_OIDC_ID_TOKEN)
        else:
            id_token = _token_from_file(transport, self.token_file, self.token_option, deadline)
        body = {
            "provider_urn": self.provider_urn,
            "agency_urn": self.agency_urn,
            "agency_session_name": self.session_name,
            "id_token": id_token,
            "duration_seconds": self.duration,
        }
        operation = "assume agency %s with an OIDC id token at STS" % label(self.agency_urn)
        url = _sts(transport) + "/v5/agencies/assume-with-oidc"
        response = transport.call("POST", url, headers={"Content-Type": JSON_TYPE}, body=body, operation=operation, deadline=deadline)
        return credentials_from_answer(transport, response, operation, self.name)


class PodIdentity(Provider):
    """CCE pod identity: ``POST`` to ``HC_CONTAINER_CREDENTIALS_FULL_URI`` with the token file's contents as ``Authorization``.

    The token file is read again at every exchange (the kubelet rotates it).  The service is the pod's own: it is
    reached directly, never through a proxy (``direct=True``).
    """

    def __init__(self, uri, token_file):
        _check_url(uri, ENV_POD_URI)
        self.uri = uri
        self.token_file = token_file
        self.name = "CCE pod identity (%s)" % ENV_POD_URI

    def obtain(self, transport, deadline):
        token = _token_from_file(transport, self.token_file, ENV_POD_TOKEN_FILE, deadline)
        headers = {"Authorization": token, "Content-Type": "application/json"}
        operation = "get pod identity credentials from %s" % ENV_POD_URI
        # The pod's own credential service: never through a proxy (the token and the credentials would cross it).
        response = transport.call("POST", self.uri, headers=headers, body={}, operation=operation, deadline=deadline, direct=True)
        return credentials_from_answer(transport, response, operation, self.name)


class InstanceMetadata(Provider):
    """The agency of an ECS or BMS instance, from its metadata service.

    ``PUT /meta-data/latest/api/token`` (``X-Metadata-Token-Ttl-Seconds: 21600``) first; a 404, 405 or 503
    there means the service has no session tokens, and the key is asked for without one.  Then
    ``GET /openstack/latest/securitykey`` (``X-Metadata-Token`` when there is a token); a 401 that is not
    "configure an agency" gets a new session token and one more try.  The service is the instance's own,
    whatever address ``HUAWEICLOUD_METADATA_ENDPOINT`` gives it: it is reached directly, never through a proxy
    (``direct=True``).
    """

    def __init__(self, endpoint=METADATA_ENDPOINT):
        _check_url(endpoint, ENV_METADATA_ENDPOINT)
        self.endpoint = endpoint.rstrip("/")
        self.name = "ECS/BMS agency (instance metadata at %s)" % label(self.endpoint)
        self._lock = threading.Lock()
        self._token = None
        self._token_until = None

    def obtain(self, transport, deadline):
        return self._fetch(transport, deadline, None)

    def probe(self, transport, deadline):
        """One quick look (a short connect timeout, no retries): when no credentials were given at all."""
        return self._fetch(transport, deadline, METADATA_PROBE_TIMEOUT)

    def _fetch(self, transport, deadline, quick_timeout):
        with self._lock:
            token = self._session_token(transport, deadline, quick_timeout, force=False)
            try:
                response = self._security_key(transport, deadline, quick_timeout, token)
            except ModelArtsError as error:
                if error.status != 401 or no_agency(error):
                    raise
                token = self._session_token(transport, deadline, quick_timeout, force=True)
                response = self._security_key(transport, deadline, quick_timeout, token)
        return credentials_from_answer(transport, response, "get the instance's agency credentials from %s" % self.endpoint, self.name)

    def _session_token(self, transport, deadline, quick_timeout, force):
        now = transport.utcnow()
        if not force and self._token_until is not None and now < self._token_until:
            return self._token
        operation = "get a session token from the instance metadata service at %s" % self.endpoint
        try:
            response = transport.call(
                "PUT",
                self.endpoint + METADATA_TOKEN_PATH,
                headers={"X-Metadata-Token-Ttl-Seconds": str(METADATA_TOKEN_TTL)},
                operation=operation,
                deadline=deadline,
                connect_timeout=quick_timeout,
                retry=False,
                expect="text",
                within=quick_timeout and METADATA_PROBE_WITHIN,
                direct=True,
            )
        except ModelArtsError as error:
            if force or error.status not in METADATA_TOKEN_FALLBACK:
                raise
            self._token = None
            self._token_until = now + datetime.timedelta(seconds=METADATA_NO_TOKEN_RECHECK)
            return None
        token = response.data.strip() if isinstance(response.data, str) else ""
        if token:
            transport.remember_secret(token)
            if CONTROL_CHARACTERS.search(token):
                raise _answer_error(operation, response, "holds a session token with a control character in it")
        self._token = token or None
        self._token_until = now + datetime.timedelta(seconds=METADATA_TOKEN_TTL - RENEW_MARGIN)
        return self._token

    def _security_key(self, transport, deadline, quick_timeout, token):
        headers = {"X-Metadata-Token": token} if token else {}
        return transport.call(
            "GET",
            self.endpoint + METADATA_KEY_PATH,
            headers=headers,
            operation="get the instance's agency credentials from %s" % self.endpoint,
            deadline=deadline,
            connect_timeout=quick_timeout,
            retry=quick_timeout is None,
            within=quick_timeout and METADATA_PROBE_WITHIN,
            direct=True,
        )


def no_agency(error):
    """True when the metadata service says the instance has no agency."""
    return any(METADATA_NO_AGENCY in (text or "") for text in (error.error_msg, getattr(error, "unshown_body", None), str(error)))


class CredentialsFile(Provider):
    """The SDK's credentials file (INI, section ``[basic]``), read again at every obtain.

    ``ak`` and ``sk`` (``security_token`` optional) are used as they are; ``idp_id`` and ``id_token_file`` make a
    :class:`Federated` exchange (they win over ``ak``/``sk``, as in the SDK).  ``project_id`` and
    ``iam_endpoint`` become hints of the credentials.
    """

    def __init__(self, path, option=None):
        self.path = path
        self.option = option or named_option("credentials_file")
        self.name = "credentials file %s" % label(path, 300)

    def read(self, transport, deadline=None):
        """The ``[basic]`` section as a dict (values stripped, blank ones left out)."""
        text = transport.read_text(self.path, self.option, deadline=deadline)
        parser = configparser.ConfigParser(interpolation=None)
        where = "%s: %s" % (self.option, label(self.path, 300))
        try:
            parser.read_string(text)
        except configparser.Error as exc:
            # The parser's own message quotes the offending line, which may hold a secret: only its number is shown.
            line = getattr(exc, "lineno", None) or (exc.errors[0][0] if getattr(exc, "errors", None) else None)
            raise CredentialsConfigError("%s is not an INI file (%s%s)" % (where, type(exc).__name__, " at line %s" % line if line else "")) from None
        if not parser.has_section(CREDENTIALS_SECTION):
            raise CredentialsConfigError("%s has no [%s] section" % (where, CREDENTIALS_SECTION))
        profile = {}
        for key, value in parser.items(CREDENTIALS_SECTION):
            if value is not None and value.strip():
                if key in ("sk", "security_token"):
                    transport.remember_secret(value.strip())
                profile[key] = _one_line(value, "%s: %s in [%s]" % (where, key, CREDENTIALS_SECTION))
        return profile

    @classmethod
    def from_options(cls, source, connection=None, environ=None, home=None):
        """The provider of ``source`` (``credentials_file``)."""
        (path,) = required("file", ("credentials_file", source.credentials_file))
        return cls(path)

    def obtain(self, transport, deadline):
        profile = self.read(transport, deadline)
        where = "%s: %s" % (self.option, label(self.path, 300))
        iam_endpoint = profile.get("iam_endpoint")
        if iam_endpoint:
            _check_url(iam_endpoint, "%s: iam_endpoint in [%s]" % (where, CREDENTIALS_SECTION))
        project_id = profile.get("project_id")
        if profile.get("idp_id") and profile.get("id_token_file"):
            federated = Federated(
                profile["idp_id"],
                profile["id_token_file"],
                iam_endpoint=iam_endpoint,
                project_id=project_id,
                token_option="id_token_file in [%s] of %s" % (CREDENTIALS_SECTION, self.name),
            )
            federated.name = "federated identity provider %s (idp_id in %s)" % (label(profile["idp_id"]), self.name)
            return federated.obtain(transport, deadline)
        if profile.get("ak") and profile.get("sk"):
            return Credentials(
                access_key=profile["ak"],
                secret_key=profile["sk"],
                security_token=profile.get("security_token"),
                source=self.name,
                project_id=project_id,
                iam_endpoint=iam_endpoint,
            )
        given = [key for key in ("ak", "sk", "idp_id", "id_token_file") if profile.get(key)]
        raise CredentialsConfigError(
            "%s: [%s] needs ak and sk, or idp_id and id_token_file (%s)"
            % (where, CREDENTIALS_SECTION, "it sets only %s" % " and ".join(given) if given else "it sets none of them")
        )


class Agency(Provider):
    """An agency assumed with another provider's credentials: IAM ``POST /v3.0/OS-CREDENTIAL/securitytokens``, method ``assume_role``.

    The base credentials (renewed on their own schedule) sign the call; a 401 renews them once.  The
    agency's credentials belong to the delegating account: the base's project hint is not passed on.
    """

    def __init__(self, base, agency_name, domain_name, duration=AGENCY_DURATION):
        if not agency_name or not domain_name:
            raise CredentialsConfigError("assuming an agency needs agency_name and agency_domain_name (the account that created the agency)")
        self.agency_name = agency_name
        self.domain_name = domain_name
        self.duration = _positive_int(duration, "agency_duration", AGENCY_DURATION_RANGE)
        self.base = base if isinstance(base, Renewing) else Renewing(base)
        self.name = "agency %s of account %s (agency_name) with %s" % (label(agency_name), label(domain_name), self.base.provider.name)

    def obtain(self, transport, deadline):
        signer = self.base.current(transport, deadline)
        try:
            response = self._assume(transport, deadline, signer)
        except ModelArtsError as error:
            if error.status != 401:
                raise
            renewed = self.base.refused(transport, signer, deadline)
            if renewed is signer:
                raise
            signer = renewed
            response = self._assume(transport, deadline, signer)
        return credentials_from_answer(transport, response, self._operation(), self.name, iam_endpoint=signer.iam_endpoint)

    def _operation(self):
        return "assume agency %s of account %s" % (label(self.agency_name), label(self.domain_name))

    def _assume(self, transport, deadline, signer):
        role = {"domain_name": self.domain_name, "agency_name": self.agency_name, "duration_seconds": self.duration}
        body = {"auth": {"identity": {"methods": ["assume_role"], "assume_role": role}}}
        url = _iam(transport, signer.iam_endpoint) + "/v3.0/OS-CREDENTIAL/securitytokens"
        return transport.call("POST", url, headers={"Content-Type": JSON_TYPE}, body=body, operation=self._operation(), deadline=deadline, sign_with=signer)


class Probing(Provider):
    """The last source of the default chain: instance metadata, first looked at once with a short connect timeout.

    When that look fails, :class:`NoCredentialsError` lists every source tried and why it was skipped; once
    the service has answered, it is asked as any provider is (with the client's timeouts and retries).
    """

    def __init__(self, metadata, skipped):
        self.metadata = metadata
        self.skipped = list(skipped)
        self.name = metadata.name
        self._served = False

    def obtain(self, transport, deadline):
        if self._served:
            return self.metadata.obtain(transport, deadline)
        try:
            credentials = self.metadata.probe(transport, deadline)
        except ModelArtsError as error:
            raise NoCredentialsError(self.skipped + [("instance metadata", self._reason(error))]) from None
        self._served = True
        return credentials

    def _reason(self, error):
        where = self.metadata.endpoint
        if error.status is None:
            # How far the probe got: no connection at all, or a connection that brought no answer in time.
            if error.connected is False:
                return "nothing answered at %s (no connection: not an ECS or BMS instance, or its metadata service is unreachable)" % where
            if error.connected:
                return (
                    "%s accepted the connection but answered too slowly (no answer within %gs: the metadata service is overloaded, "
                    "or what listens there is not one; check HUAWEICLOUD_METADATA_ENDPOINT)" % (where, METADATA_PROBE_WITHIN)
                )
            text = str(error)
            prefix = "%s: " % error.operation if error.operation else ""
            return "no answer from %s (%s)" % (where, label(text[len(prefix) :] if prefix and text.startswith(prefix) else text, 200))
        if error.status == 401 and no_agency(error):
            return "the instance at %s has no agency (configure one for the ECS or BMS instance)" % where
        if 200 <= error.status < 300:
            # The answer's problem as the error names it (never a byte of the answer), without the operation before it.
            text = str(error)
            prefix = "%s: " % error.operation if error.operation else ""
            return text[len(prefix) :] if prefix and text.startswith(prefix) else "the answer of %s holds no usable credentials" % where
        return "%s answered HTTP %s%s" % (where, error.status, " %s" % label(error.error_code, 40) if error.error_code else "")


class NothingServes(Provider):
    """The end of a default chain whose every source was skipped: :class:`NoCredentialsError`, without a request."""

    name = "no credentials"

    def __init__(self, skipped):
        self.skipped = list(skipped)

    def obtain(self, transport, deadline):
        raise NoCredentialsError(self.skipped)


# -- choosing a provider -------------------------------------------------------------------------------------------


def default_chain(environ=None, home=None):
    """The provider when no credentials are given: the credentials file, then pod identity, then instance metadata.

    ``HUAWEICLOUD_METADATA_DISABLED=true`` leaves the instance metadata out: then nothing is probed, and the
    provider raises :class:`NoCredentialsError` saying so.

    Only local facts decide here (variables, whether a file exists); the metadata service is looked at when
    the returned provider first obtains.  A source that is set up but unusable (a variable naming a missing
    file, one pod identity variable without the other) is an error, not a reason to fall through to the
    next source.  Raises :class:`CredentialsConfigError`; the returned provider raises
    :class:`NoCredentialsError` when nothing serves.
    """
    environ = os.environ if environ is None else environ
    home = expand_user("~", environ) if home is None else home
    skipped = []
    env_file = (environ.get(ENV_CREDENTIALS_FILE) or "").strip()
    if env_file:
        if not os.path.exists(expand_user(env_file, environ)):
            raise CredentialsConfigError("%s names %s, which does not exist" % (ENV_CREDENTIALS_FILE, label(env_file, 300)))
        return CredentialsFile(env_file, option=ENV_CREDENTIALS_FILE)
    home_file = os.path.join(home, ".huaweicloud", "credentials") if home and home != "~" else None
    if home_file and os.path.exists(home_file):
        return CredentialsFile(home_file, option="the default credentials file")
    skipped.append(
        (
            "credentials file",
            "%s is not set and %s" % (ENV_CREDENTIALS_FILE, "%s does not exist" % label(home_file, 300) if home_file else "there is no home directory"),
        )
    )
    uri = (environ.get(ENV_POD_URI) or "").strip()
    token_file = (environ.get(ENV_POD_TOKEN_FILE) or "").strip()
    if uri or token_file:
        if not (uri and token_file):
            given, missing = (ENV_POD_URI, ENV_POD_TOKEN_FILE) if uri else (ENV_POD_TOKEN_FILE, ENV_POD_URI)
            raise CredentialsConfigError("CCE pod identity: %s is set but %s is not; set both, or neither" % (given, missing))
        return PodIdentity(uri, token_file)
    skipped.append(("CCE pod identity", "%s and %s are not set" % (ENV_POD_URI, ENV_POD_TOKEN_FILE)))
    if metadata_disabled(environ):
        return NothingServes(skipped + [("instance metadata", "%s is true" % ENV_METADATA_DISABLED)])
    return Probing(InstanceMetadata(metadata_endpoint(environ)), skipped)


def _given(source, connection=None, environ=None, home=None):
    return static_provider(source)


# One entry per credential kind: the source that builds its provider from the credential source and the connection.
SOURCES = {
    "aksk": _given,
    "auth_token": _given,
    "password": Password.from_options,
    "credentials_file": CredentialsFile.from_options,
    "federated": Federated.from_options,
    "oidc": OidcSts.from_options,
    "default": lambda source, connection=None, environ=None, home=None: default_chain(environ, home),
}


def provider_for(source, connection=None, environ=None, home=None):
    """The provider of the credential source ``source`` (a ``connection.CredentialSource``: its ``kind``, a key of
    :data:`SOURCES`, and its values), wrapped in :class:`Agency` when ``agency_name`` is set.

    ``source`` is what ``options.resolve`` merged with the environment (``access_key``, ``idp_id``, ``oidc_token_file``,
    ``oidc_id_token``, ``agency_name``...); ``connection`` (a ``connection.Connection``) gives a password's project and
    region; ``environ`` gives the default chain's variables (the credentials file, pod identity, the metadata endpoint).
    The client builds given AK/SK or a token without an agency with ``credentials.static_provider`` alone, without
    importing this file.
    """
    environ = os.environ if environ is None else environ
    build = SOURCES.get(source.kind)
    if build is None:
        raise CredentialsConfigError("unknown credential kind %r; expected one of %s" % (source.kind, ", ".join(SOURCES)))
    base = build(source, connection, environ, home)
    if source.agency_name is None:
        stray = [name for name, value in (("agency_domain_name", source.agency_domain_name), ("agency_duration", source.agency_duration)) if value is not None]
        if stray:
            raise CredentialsConfigError("%s set without agency_name; set agency_name to assume an agency" % " and ".join(stray))
        return base
    if source.agency_domain_name is None:
        raise CredentialsConfigError("agency_name is set without agency_domain_name, the name of the account that created the agency")
    duration = source.agency_duration
    return Agency(base, source.agency_name, source.agency_domain_name, AGENCY_DURATION if duration is None else duration)
