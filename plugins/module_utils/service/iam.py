# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The IAM side of a client: the project id, and IAM's time format.

The project id is given, named by the credentials (a password token's scope, a credentials file), or
looked up once from the region (``GET /v3/projects?name=<region>``).  Credentials themselves, the
password-issued token included, come from ``credentials.py`` and ``credential_sources.py``.  Every call
goes through the client's own ``request`` (retries, deadline, error model), so this file knows IAM's
rules and nothing of HTTP.
"""

from __future__ import annotations

import datetime
import itertools
import threading

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import describe
from ansible_collections.modelarts.training.plugins.module_utils.text import label

# How many project names a message lists when the region names none of them.
VISIBLE_PROJECTS_SHOWN = 10


def parse_iso8601(value):
    """An aware datetime from IAM's ``expires_at`` (any number of fractional digits, ``Z`` or an offset)."""
    text = str(value).strip().replace("Z", "+00:00")
    # fromisoformat() before Python 3.11 accepts only 3 or 6 fractional digits.
    if "." in text:
        head, _sep, tail = text.partition(".")
        # Only the fraction's own digits: an offset such as +08:00 after them is the zone, not more fraction.
        digits = "".join(itertools.takewhile(str.isdigit, tail))
        zone = tail[len(digits) :]
        text = "%s.%s%s" % (head, (digits + "000000")[:6], zone)
    moment = datetime.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment


class IamSession(object):
    """The project id of one client; thread-safe.

    ``project_id`` is the one given (None: looked up), ``region`` the region it is looked up by (``connection.Connection``'s);
    ``request(method, path, ...)`` is the client's call; ``credentials(deadline)`` answers the client's
    current :class:`~ansible_collections.modelarts.training.plugins.module_utils.service.credentials.Credentials`,
    whose ``project_id`` hint (a password token's scope, a credentials file) is used before asking IAM.
    """

    def __init__(self, project_id, region, request, credentials):
        self.region = region
        self._request = request
        self._credentials = credentials
        self._project_lock = threading.Lock()
        self.known_project = project_id

    def project_id(self, deadline):
        """The project id, looked up in IAM the first time (by ``deadline``)."""
        if self.known_project is None:
            with self._project_lock:
                if self.known_project is None:
                    self.known_project = self._look_up_project(deadline)
        return self.known_project

    def _visible_projects(self, deadline):
        """`` (they see cn-north-4, cn-south-1)``: the names of the projects the credentials see, for a region that
        names none of them ('' when they cannot be listed)."""
        try:
            response = self._request("GET", "/v3/projects", operation="list the projects in IAM", service="iam", deadline=deadline)
        except (ModelArtsError, ConnectionConfigError):
            return ""
        projects = response.data.get("projects") if isinstance(response.data, dict) else None
        names = sorted(set(label(p.get("name"), 60) for p in projects or [] if isinstance(p, dict) and isinstance(p.get("name"), str)))
        if not names:
            return " (they see no project)" if isinstance(projects, list) else ""
        shown = names[:VISIBLE_PROJECTS_SHOWN]
        more = " and %d more" % (len(names) - len(shown)) if len(names) > len(shown) else ""
        return " (they see %s%s)" % (", ".join(shown), more)

    def _look_up_project(self, deadline):
        # The credentials' own answer often names the project: no second call then.
        hint = self._credentials(deadline).project_id
        if hint:
            return hint
        region = self.region
        if not region:
            raise ConnectionConfigError(
                "the project is not known: set %s, or %s so that it can be looked up in IAM" % (describe("project_id"), describe("region"))
            )
        operation = "look up the project of region %s in IAM" % region
        response = self._request("GET", "/v3/projects", query=[("name", region)], operation=operation, service="iam", deadline=deadline)
        projects = response.data.get("projects") if isinstance(response.data, dict) else None
        if not isinstance(projects, list):
            raise ModelArtsError("%s: the answer has no 'projects' list" % operation, operation=operation, request_id=response.request_id)
        ids = [p.get("id") for p in projects if isinstance(p, dict) and p.get("name") == region and p.get("id")]
        if not ids:
            raise ModelArtsError(
                "%s: no project named %r is visible to these credentials%s; check %s, or set %s"
                % (operation, region, self._visible_projects(deadline), describe("region"), describe("project_id")),
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
