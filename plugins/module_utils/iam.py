# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The IAM side of a client: the project id and the password-issued token.

The project id is given, or looked up once from the region (``GET /v3/projects?name=<region>``).
A password-issued token (``POST /v3/auth/tokens``) is reused until shortly before it expires and
renewed once when the service refuses it; a pre-issued ``auth_token`` is used as given.  Every
call goes through the client's own ``request`` (retries, deadline, error model), so this file
knows IAM's rules and nothing of HTTP.
"""

from __future__ import annotations

import datetime
import threading

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.options import describe

# Renew a token this long before it expires (at most a tenth of its lifetime).
TOKEN_RENEW_MARGIN = 300.0


def parse_iso8601(value):
    """An aware datetime from IAM's ``expires_at`` (any number of fractional digits, ``Z`` or an offset)."""
    text = str(value).strip().replace("Z", "+00:00")
    # fromisoformat() before Python 3.11 accepts only 3 or 6 fractional digits.
    if "." in text:
        head, _sep, tail = text.partition(".")
        digits = "".join(ch for ch in tail if ch.isdigit())
        zone = tail[len(digits) :]
        text = "%s.%s%s" % (head, (digits + "000000")[:6], zone)
    moment = datetime.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment


class IamSession(object):
    """Project id and token of one client; thread-safe.

    ``request(method, path, ...)`` is the client's call; ``utcnow()`` the aware UTC time;
    ``remember_secret(value)`` adds an issued token to what the client masks in messages.
    """

    def __init__(self, params, kind, request, utcnow, remember_secret):
        self.params = params
        self.kind = kind
        self._request = request
        self._utcnow = utcnow
        self._remember_secret = remember_secret
        self._project_lock = threading.Lock()
        self._token_lock = threading.RLock()
        self.known_project = params["project_id"]
        self.current_token = params["auth_token"] if kind == "auth_token" else None
        self._renew_at = None

    def project_id(self, deadline):
        """The project id, looked up in IAM the first time (by ``deadline``)."""
        if self.known_project is None:
            with self._project_lock:
                if self.known_project is None:
                    self.known_project = self._look_up_project(deadline)
        return self.known_project

    def _look_up_project(self, deadline):
        region = self.params["region"]
        if self.kind == "password":
            # The token's own scope often names the project: no second call then.
            self.token(deadline)
            if self.known_project:
                return self.known_project
        operation = "look up the project of region %s in IAM" % region
        response = self._request("GET", "/v3/projects", query=[("name", region)], operation=operation, service="iam", deadline=deadline)
        projects = response.data.get("projects") if isinstance(response.data, dict) else None
        if not isinstance(projects, list):
            raise ModelArtsError("%s: the answer has no 'projects' list" % operation, operation=operation, request_id=response.request_id)
        ids = [p.get("id") for p in projects if isinstance(p, dict) and p.get("name") == region and p.get("id")]
        if not ids:
            raise ModelArtsError(
                "%s: no project named %r is visible to these credentials; set %s" % (operation, region, describe("project_id")),
                operation=operation,
                request_id=response.request_id,
            )
        if len(ids) > 1:
            raise ModelArtsError(
                "%s: %d projects are named %r (%s); set %s to choose one" % (operation, len(ids), region, ", ".join(sorted(ids)), describe("project_id")),
                operation=operation,
                request_id=response.request_id,
            )
        return ids[0]

    def token(self, deadline, stale=None):
        """A valid token: the pre-issued one, or a password-issued one fetched when absent, near expiry, or equal to ``stale``.

        ``stale`` is a token the service refused: threads that saw the same refusal renew it once between them.
        """
        if self.kind != "password":
            return self.current_token
        with self._token_lock:
            expiring = self._renew_at is not None and self._utcnow() >= self._renew_at
            if self.current_token is None or expiring or (stale is not None and self.current_token == stale):
                self._fetch_token(deadline)
            return self.current_token

    def _fetch_token(self, deadline):
        params = self.params
        scope = {"id": params["project_id"]} if params["project_id"] else {"name": params["region"]}
        user = {"name": params["username"], "password": params["password"], "domain": {"name": params["domain_name"]}}
        body = {"auth": {"identity": {"methods": ["password"], "password": {"user": user}}, "scope": {"project": scope}}}
        operation = "get an IAM token for user %s" % params["username"]
        response = self._request("POST", "/v3/auth/tokens", body=body, operation=operation, service="iam", deadline=deadline, authenticate=False)
        token = response.headers.get("X-Subject-Token")
        if not token:
            raise ModelArtsError("%s: the answer has no X-Subject-Token header" % operation, operation=operation, request_id=response.request_id)
        self._remember_secret(token)
        self.current_token = token
        info = response.data.get("token") if isinstance(response.data, dict) else None
        info = info if isinstance(info, dict) else {}
        project = info.get("project")
        if not self.known_project and isinstance(project, dict) and project.get("id"):
            self.known_project = project["id"]
        self._renew_at = self._renew_time(info.get("expires_at"))

    def _renew_time(self, expires_at):
        if not expires_at:
            return None
        try:
            expiry = parse_iso8601(expires_at)
        except ValueError:
            return None
        lifetime = (expiry - self._utcnow()).total_seconds()
        # Renew well before expiry, but not at once for short-lived tokens.
        margin = min(TOKEN_RENEW_MARGIN, max(lifetime, 0) * 0.1)
        return expiry - datetime.timedelta(seconds=margin)
