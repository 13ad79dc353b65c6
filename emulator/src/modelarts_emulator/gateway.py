# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the API gateway does before a service sees a request: authenticate it, then check the project."""

import hmac

from . import errors, signing


class Exchange:
    """One request on its way through the emulator, and what was learnt about it."""

    # pylint: disable=too-many-instance-attributes,too-few-public-methods
    def __init__(self, method, path, query, headers, body, request_id, base_url):
        # pylint: disable=too-many-arguments
        self.method = method
        self.path = path  # raw (still percent-encoded) path, without the query
        self.query = query  # raw query string
        self.headers = headers  # lowercased names -> values
        self.body = body
        self.request_id = request_id
        self.base_url = base_url  # scheme://Host as the client addressed us
        self.caller = None
        self.project_id = None
        self.job = None
        self.fault = None
        self.issued = None  # what a credential exchange issued (exchanges.py), for the request log; never a secret


class Caller:
    """Who sent a request: ``kind`` is ``aksk``, ``token`` or ``password`` (IAM token requests)."""

    __slots__ = ("kind", "account", "project", "ak", "temporary", "declared_project")

    def __init__(self, kind, account, project=None, ak=None, temporary=False, declared_project=None):
        # pylint: disable=too-many-arguments
        self.kind = kind
        self.account = account
        self.project = project
        self.ak = ak
        self.temporary = temporary
        self.declared_project = declared_project

    def log_view(self):
        """What the request log shows about the caller (never secrets)."""
        view = {"kind": self.kind, "domain": self.account.domain_name}
        if self.ak:
            view["ak"] = self.ak
            view["temporary"] = self.temporary
        if self.project:
            view["project_id"] = self.project["id"]
        return view


def authenticate(state, exchange):
    """Return the Caller of a request signed with AK/SK or carrying an IAM token; raise ApiError (APIGW)."""
    headers = exchange.headers
    authorization = headers.get("authorization")
    if authorization:
        return _authenticate_signature(state, exchange, authorization)
    token = headers.get("x-auth-token")
    if token:
        record = state.tokens.lookup(token.strip())
        if record is None:
            raise errors.apigw_auth("decrypt token fail")
        if state.now() >= record["expires_at"]:
            raise errors.apigw_token_expired()
        return Caller("token", record["account"], project=record["project"])
    raise errors.apigw_auth("no X-Auth-Token and no AK/SK signature in the request")


def _authenticate_signature(state, exchange, authorization):
    headers = exchange.headers
    if not authorization.startswith(signing.ALGORITHM + " "):
        raise errors.apigw_auth("the signing algorithm %s is not supported" % authorization.split(" ", 1)[0][:40])
    try:
        ak, signed, _signature = signing.parse_authorization(authorization)
    except signing.SignatureError as exc:
        raise errors.apigw_auth(exc.detail) from None
    account, key = state.directory.account_for_ak(ak)
    if account is None:
        raise errors.apigw_auth("ak %s not exist" % ak)
    if state.settings["signature_check"]:
        try:
            signing.verify(
                key["sk"], exchange.method, exchange.path, exchange.query, headers, exchange.body, skew_tolerance=state.settings["clock_skew_tolerance"]
            )
        except signing.SignatureError as exc:
            if exc.reason == "skew":
                raise errors.apigw_signature_expired(exc.detail) from None
            raise errors.apigw_auth(exc.detail) from None
    sent_token = headers.get("x-security-token")
    if key["security_token"]:
        if not sent_token or not hmac.compare_digest(sent_token.strip().encode("utf-8"), key["security_token"].encode("utf-8")):
            raise errors.apigw_auth("the security token of temporary AK %s is missing or invalid" % ak)
        if "x-security-token" not in signed:
            # An unsigned token could have been attached by anyone who saw a signed request.
            raise errors.apigw_auth("X-Security-Token must be a signed header")
        if key["expires_at"] is not None and state.now() >= key["expires_at"]:
            raise errors.apigw_auth("the security token of temporary AK %s has expired" % ak)
    elif sent_token:
        raise errors.apigw_auth("a security token was sent with the permanent AK %s" % ak)
    declared = headers.get("x-project-id")
    return Caller("aksk", account, ak=ak, temporary=bool(key["security_token"]), declared_project=declared.strip() if declared else None)


def check_project(caller, project_id, family):
    """Reject a URL project that is not the caller's with ModelArts.2786 (in the v2 or v1 shape)."""
    if caller.kind == "token":
        if caller.project["id"] != project_id:
            raise errors.project_mismatch(family)
        return
    if caller.account.project_by_id(project_id) is None:
        raise errors.project_mismatch(family)
    if caller.declared_project and caller.declared_project != project_id:
        raise errors.project_mismatch(family)
