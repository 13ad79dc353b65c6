# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""IAM: password tokens (``POST /v3/auth/tokens``) and project lookup (``GET /v3/projects``).

Tokens are opaque random strings kept in memory with their scope and expiry. Only the emulator's
own tokens are accepted by its ModelArts endpoints.
"""

import secrets
import threading
import time

from . import errors


def iso8601(epoch):
    """Format epoch seconds the way IAM does: ``2026-01-02T03:04:05.000000Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + ".%06dZ" % int((epoch % 1) * 1e6)


class TokenStore:
    """Issued tokens. Thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self._tokens = {}

    def issue(self, account, user, project, now, lifetime):
        """Create a token; return its record (``token`` holds the secret string)."""
        token = "MII" + secrets.token_urlsafe(120).replace("-", "+").replace("_", "/")
        record = {"token": token, "account": account, "user": user, "project": project, "issued_at": now, "expires_at": now + lifetime}
        with self._lock:
            self._tokens[token] = record
        return record

    def lookup(self, token):
        """Return the record of a token (expired or not), or None."""
        with self._lock:
            return self._tokens.get(token)

    def expire_all(self, now):
        """Make every issued token expire at ``now``."""
        with self._lock:
            for record in self._tokens.values():
                record["expires_at"] = min(record["expires_at"], now)

    def clear(self):
        """Forget all tokens."""
        with self._lock:
            self._tokens.clear()

    def count(self):
        """Return how many tokens were issued (and not cleared)."""
        with self._lock:
            return len(self._tokens)


def _iam_error(status, message):
    return errors.ApiError(status, "IAM", message, errors.IAM)


def parse_password_auth(body):
    """Return (domain_name, user_name, password, scope) from a token request body or raise ApiError."""
    try:
        identity = body["auth"]["identity"]
        methods = identity["methods"]
    except (KeyError, TypeError):
        raise _iam_error(400, "The request body is invalid: auth.identity.methods is required.") from None
    if methods != ["password"] or "password" not in identity:
        raise _iam_error(400, "Only the password method is supported by this endpoint.")
    try:
        user = identity["password"]["user"]
        name = user["name"]
        password = user["password"]
        domain = user["domain"]["name"]
    except (KeyError, TypeError):
        raise _iam_error(400, "The request body is invalid: user name, password and domain name are required.") from None
    scope = body["auth"].get("scope") if isinstance(body.get("auth"), dict) else None
    return str(domain), str(name), str(password), scope


def resolve_scope(account, scope):
    """Return the project a token request is scoped to, or raise ApiError."""
    if not isinstance(scope, dict) or "project" not in scope:
        raise _iam_error(400, "A project scope (auth.scope.project.name or .id) is required by this emulator.")
    project = scope["project"] or {}
    if project.get("id"):
        found = account.project_by_id(str(project["id"]))
    else:
        named = account.projects_named(str(project.get("name", "")))
        found = named[0] if named else None
    if found is None:
        raise _iam_error(401, "The project in the scope does not exist or is not accessible.")
    return found


def token_body(record, base_url, with_catalog=True):
    """Return the JSON body of a token response."""
    account = record["account"]
    project = record["project"]
    user = record["user"]
    body = {
        "token": {
            "expires_at": iso8601(record["expires_at"]),
            "issued_at": iso8601(record["issued_at"]),
            "methods": ["password"],
            "project": {"id": project["id"], "name": project["name"], "domain": {"id": account.domain_id, "name": account.domain_name}},
            "user": {"id": user["id"], "name": user["name"], "password_expires_at": "", "domain": {"id": account.domain_id, "name": account.domain_name}},
            "roles": [{"id": "0", "name": "te_admin"}, {"id": "0", "name": "op_gated_modelarts"}],
        }
    }
    if with_catalog:
        body["token"]["catalog"] = [
            {
                "type": "modelarts",
                "name": "modelarts",
                "id": "c3f8b1a0e7d94d6c9b2a5f4e3d2c1b0a",
                "endpoints": [
                    {"id": "e1d2c3b4a5f64e7d8c9b0a1f2e3d4c5b", "interface": "public", "region": project["name"], "region_id": project["name"], "url": base_url}
                ],
            },
            {
                "type": "identity",
                "name": "iam",
                "id": "a1b2c3d4e5f64a7b8c9d0e1f2a3b4c5d",
                "endpoints": [{"id": "f0e1d2c3b4a54f6e7d8c9b0a1f2e3d4c", "interface": "public", "region": "*", "region_id": "*", "url": base_url + "/v3"}],
            },
        ]
    return body


def projects_body(account, name, base_url):
    """Return the body of ``GET /v3/projects`` for an account (filtered by name when given)."""
    projects = account.projects if name is None else account.projects_named(name)
    return {
        "links": {"self": base_url + "/v3/projects" + ("?name=" + name if name else ""), "previous": None, "next": None},
        "projects": [
            {
                "id": p["id"],
                "name": p["name"],
                "domain_id": account.domain_id,
                "description": "",
                "enabled": True,
                "is_domain": False,
                "parent_id": account.domain_id,
                "links": {"self": base_url + "/v3/projects/" + p["id"]},
            }
            for p in projects
        ],
    }
