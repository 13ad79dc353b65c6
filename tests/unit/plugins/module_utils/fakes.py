# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test doubles: a scripted transport standing in for ``requests.Session`` and a fake clock."""

from __future__ import annotations

import datetime
import json

from requests.structures import CaseInsensitiveDict


class FakeResponse(object):
    """Enough of ``requests.Response`` for the client: status, headers, streamed content."""

    def __init__(self, status=200, body=None, headers=None, raw=None):
        self.status_code = status
        self.headers = CaseInsensitiveDict(headers or {})
        if raw is not None:
            self._content = raw if isinstance(raw, bytes) else raw.encode("utf-8")
        elif body is not None:
            self._content = json.dumps(body).encode("utf-8")
        else:
            self._content = b""
        self.closed = False

    def iter_content(self, chunk_size=1):
        for start in range(0, len(self._content), chunk_size):
            yield self._content[start : start + chunk_size]

    def close(self):
        self.closed = True


class FakeSession(object):
    """Replays a script of responses (or exceptions to raise) and records every request."""

    def __init__(self, *script, **routes):
        self.script = list(script)
        self.routes = routes
        self.calls = []

    def request(self, method, url, **kwargs):
        self.calls.append(dict(kwargs, method=method, url=url))
        for fragment, answer in self.routes.items():
            if fragment.replace("__", "/") in url:
                return self._answer(answer(method, url, kwargs) if callable(answer) else answer)
        if not self.script:
            raise AssertionError("unexpected request %s %s" % (method, url))
        return self._answer(self.script.pop(0))

    @staticmethod
    def _answer(answer):
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def close(self):
        pass


class FakeClock(object):
    """A monotonic clock that only moves when the code under test sleeps."""

    def __init__(self, start=1000.0):
        self.now = start
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds

    def utcnow(self):
        return datetime.datetime(2024, 5, 1, 12, 0, 0, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=self.now - 1000.0)


def client_parts(values):
    """The two parts a client is built from, out of a plain dict of connection option values, the credential rules
    checked as the door checks them (``options.connection_parts``): ``ModelArtsClient(*client_parts({...}), ...)``."""
    from ansible_collections.modelarts.training.plugins.module_utils.door.options import connection_parts

    return connection_parts(values)


def credential_parts(kind, values):
    """``(CredentialSource, Connection)`` of credential ``kind`` from a plain dict of option values, built as they are
    (no credential rule checked): what ``credential_sources.provider_for(*credential_parts(...), environ)`` takes."""
    from ansible_collections.modelarts.training.plugins.module_utils.service.connection import Connection, CredentialSource

    source = CredentialSource(kind, **dict((name, value) for name, value in values.items() if name in CredentialSource._fields))
    return source, Connection(**dict((name, value) for name, value in values.items() if name in Connection._fields))
