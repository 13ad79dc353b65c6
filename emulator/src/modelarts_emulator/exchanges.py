# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where CI runners and cloud hosts get temporary credentials, with the official SDK's wire formats.

* ``POST /v3.0/OS-AUTH/id-token/tokens`` (header ``X-Idp-Id``, body ``{"auth": {"id_token": {"id": ...}}}``):
  a federated IAM token in ``X-Subject-Token`` for an id token this emulator issued;
* ``POST /v3.0/OS-CREDENTIAL/securitytokens``: temporary AK/SK for a token (method ``token``) or for an
  agency assumed with any valid credentials (method ``assume_role``, the request authenticated);
* ``POST /v5/agencies/assume-with-oidc`` (STS v5): temporary AK/SK for an id token;
* ``POST /pod-identity/credentials`` (what ``HC_CONTAINER_CREDENTIALS_FULL_URI`` names on a CCE node):
  ``Authorization`` is the pod's token;
* ``PUT /meta-data/latest/api/token`` then ``GET /openstack/latest/securitykey`` (instance metadata).

Every issued credential lives ``credential_lifetime`` seconds (a setting, short to test renewal), and the
gateway refuses it once expired.  Id tokens are HS256 JWTs signed with a secret of this run; the emulator
trusts only its own (``EmulatorState.mint_id_token``, control ``POST /_emulator/id-tokens``).  ``expires_at``
is written as the SDK parses it: ``%Y-%m-%dT%H:%M:%S.%fZ``.
"""

import base64
import hashlib
import hmac
import json
import secrets

from . import errors
from .gateway import authenticate
from .iam import iso8601
from .responses import Response, json_bytes

IDP_ID = "emulator-idp"
POD_TOKEN = "emulator-pod-identity-token"
ISSUER = "https://oidc.emulator.invalid"
AUDIENCE = "huaweicloud"
AGENCY_DURATION = (900, 86400)
OIDC_DURATION = (900, 43200)


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def mint_id_token(state, subject="ci-job", audience=AUDIENCE, lifetime=600.0, issuer=ISSUER):
    """An id token (JWT, HS256) this emulator trusts, as a CI system's OIDC issuer would write it."""
    now = state.now()
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = _b64(json.dumps({"iss": issuer, "sub": subject, "aud": audience, "iat": int(now), "exp": int(now + lifetime)}).encode())
    signature = hmac.new(state.id_token_secret, ("%s.%s" % (header, claims)).encode(), hashlib.sha256).digest()
    return "%s.%s.%s" % (header, claims, _b64(signature))


def _verify_id_token(state, token):
    """The claims of an id token this emulator issued; an IAM-shaped 400 otherwise."""
    try:
        header, claims, signature = str(token).strip().split(".")
        expected = hmac.new(state.id_token_secret, ("%s.%s" % (header, claims)).encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(_unb64(signature), expected):
            raise ValueError("bad signature")
        data = json.loads(_unb64(claims))
    except (ValueError, TypeError):
        raise _iam(400, "The id_token is invalid: its signature is not from a trusted identity provider.") from None
    if data.get("aud") != AUDIENCE:
        raise _iam(400, "The id_token is invalid: its audience is not %s." % AUDIENCE)
    if state.now() >= float(data.get("exp", 0)):
        raise _iam(400, "The id_token has expired.")
    return data


def _iam(status, message):
    return errors.ApiError(status, "IAM", message, errors.IAM)


def _json(exchange):
    try:
        payload = json.loads(exchange.body or b"{}")
    except ValueError:
        raise _iam(400, "The request body is not valid JSON.") from None
    if not isinstance(payload, dict):
        raise _iam(400, "The request body must be an object.")
    return payload


def _lifetime(state, requested=None):
    lifetime = float(state.settings["credential_lifetime"])
    return min(lifetime, float(requested)) if requested else lifetime


def _issue(state, exchange, account, source, requested=None):
    """A new temporary AK/SK in ``account``, logged (without secrets) under ``source``."""
    now = state.now()
    key = state.directory.issue_temporary_key(account, now + _lifetime(state, requested))
    exchange.caller = None
    exchange.issued = {"source": source, "ak": key["ak"], "expires_at": iso8601(key["expires_at"])}
    return key


def _iam_credential(key):
    return {"credential": {"access": key["ak"], "secret": key["sk"], "securitytoken": key["security_token"], "expires_at": iso8601(key["expires_at"])}}


def _primary(state):
    return state.directory.accounts[0]


def federated_token(state, exchange):
    """POST /v3.0/OS-AUTH/id-token/tokens: an IAM token for an id token of the trusted identity provider."""
    idp = (exchange.headers.get("x-idp-id") or "").strip()
    if idp != state.settings["idp_id"]:
        raise _iam(404, "The identity provider %s does not exist." % idp[:64])
    payload = _json(exchange)
    token = ((payload.get("auth") or {}).get("id_token") or {}).get("id")
    claims = _verify_id_token(state, token)
    account = _primary(state)
    record = state.tokens.issue(account, account.primary_user(), account.projects[0] if account.projects else None, state.now(), _lifetime(state))
    exchange.issued = {"source": "federated", "subject": claims.get("sub"), "expires_at": iso8601(record["expires_at"])}
    body = {"token": {"methods": ["mapped"], "expires_at": iso8601(record["expires_at"]), "issued_at": iso8601(record["issued_at"])}}
    return Response(201, json_bytes(body), headers={"X-Subject-Token": record["token"]})


def security_tokens(state, exchange):
    """POST /v3.0/OS-CREDENTIAL/securitytokens: temporary AK/SK for a token, or for an assumed agency."""
    identity = (_json(exchange).get("auth") or {}).get("identity") or {}
    methods = identity.get("methods") or []
    if methods == ["token"]:
        section = identity.get("token") or {}
        record = state.tokens.lookup(str(section.get("id") or exchange.headers.get("x-auth-token") or "").strip())
        if record is None or state.now() >= record["expires_at"]:
            raise _iam(401, "The token is invalid or has expired.")
        key = _issue(state, exchange, record["account"], "token", section.get("duration_seconds"))
    elif methods == ["assume_role"]:
        caller = authenticate(state, exchange)
        role = identity.get("assume_role") or {}
        duration = role.get("duration_seconds", 3600)
        if not isinstance(duration, int) or not AGENCY_DURATION[0] <= duration <= AGENCY_DURATION[1]:
            raise _iam(400, "duration_seconds must be between 900 and 86400.")
        target = state.directory.account_for_domain(str(role.get("domain_name") or ""))
        if target is None or not role.get("agency_name"):
            raise _iam(404, "The agency does not exist.")
        key = _issue(state, exchange, target, "assume_role by %s" % caller.kind, duration)
    else:
        raise _iam(400, 'methods must be ["token"] or ["assume_role"].')
    return Response(201, json_bytes(_iam_credential(key)))


def assume_with_oidc(state, exchange):
    """POST /v5/agencies/assume-with-oidc (STS v5): temporary AK/SK for an id token."""
    payload = _json(exchange)
    for name in ("provider_urn", "agency_urn", "agency_session_name", "id_token"):
        if not isinstance(payload.get(name), str) or not payload[name]:
            raise _iam(400, "%s is required." % name)
    duration = payload.get("duration_seconds", 3600)
    if not isinstance(duration, int) or not OIDC_DURATION[0] <= duration <= OIDC_DURATION[1]:
        raise _iam(400, "duration_seconds must be between 900 and 43200.")
    claims = _verify_id_token(state, payload["id_token"])
    key = _issue(state, exchange, _primary(state), "assume-with-oidc", duration)
    exchange.issued["subject"] = claims.get("sub")
    body = {
        "credentials": {
            "access_key_id": key["ak"],
            "secret_access_key": key["sk"],
            "security_token": key["security_token"],
            "expiration": iso8601(key["expires_at"]),
        }
    }
    return Response(200, json_bytes(body))


def pod_credentials(state, exchange):
    """POST /pod-identity/credentials: the pod's temporary AK/SK; ``Authorization`` is the pod's token."""
    if not hmac.compare_digest((exchange.headers.get("authorization") or "").strip().encode(), state.settings["pod_token"].encode()):
        raise _iam(401, "The pod identity token is invalid.")
    key = _issue(state, exchange, _primary(state), "pod identity")
    return Response(200, json_bytes(_iam_credential(key)["credential"]))


def metadata_token(state, exchange):
    """PUT /meta-data/latest/api/token: a session token as text (404 when the setting turns the token API off)."""
    if not state.settings["metadata_token_api"]:
        raise errors.ApiError(404, "NOT_FOUND", "Not Found", errors.IAM)
    token = secrets.token_urlsafe(32)
    state.metadata_tokens.add(token)
    return Response(200, token.encode(), content_type="text/plain")


def metadata_security_key(state, exchange):
    """GET /openstack/latest/securitykey: the instance agency's temporary AK/SK (IAM's shape)."""
    if state.settings["metadata_token_api"] and (exchange.headers.get("x-metadata-token") or "").strip() not in state.metadata_tokens:
        raise _iam(401, "The metadata session token is missing or invalid.")
    key = _issue(state, exchange, _primary(state), "instance metadata")
    return Response(200, json_bytes(_iam_credential(key)))


ROUTES = {
    ("POST", "/v3.0/OS-AUTH/id-token/tokens"): federated_token,
    ("POST", "/v3.0/OS-CREDENTIAL/securitytokens"): security_tokens,
    ("POST", "/v5/agencies/assume-with-oidc"): assume_with_oidc,
    ("POST", "/pod-identity/credentials"): pod_credentials,
    ("PUT", "/meta-data/latest/api/token"): metadata_token,
    ("GET", "/openstack/latest/securitykey"): metadata_security_key,
}
