# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The request log: what clients sent and what they got, with every secret redacted.

Redacted: the signature in ``Authorization``, ``X-Auth-Token``, ``X-Security-Token``,
``X-Subject-Token``, the admin token, and passwords (and token ids) in IAM request bodies.
"""

import collections
import itertools
import json
import re
import threading

REDACTED = "***"
SECRET_HEADERS = ("x-auth-token", "x-security-token", "x-subject-token", "x-emulator-admin-token", "x-metadata-token", "cookie")
_SIGNATURE_RE = re.compile(r"(Signature=)[0-9A-Fa-f]+")
_SECRET_KEYS = ("password", "secret", "sk", "security_token", "securitytoken", "access_token", "id_token", "token")


def redact_headers(headers):
    """Return a dict of header name -> value with secrets replaced."""
    result = {}
    for name, value in headers.items():
        lower = name.lower()
        if lower in SECRET_HEADERS:
            value = REDACTED
        elif lower == "authorization":
            value = _SIGNATURE_RE.sub(r"\1" + REDACTED, value)
            if "Signature=" not in value:
                value = REDACTED
        result[name] = value
    return result


def _redact_obj(obj):
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if str(key).lower() in _SECRET_KEYS and not isinstance(value, (dict, list)):
                out[key] = REDACTED
            elif str(key).lower() in ("token", "id_token") and isinstance(value, dict):
                out[key] = {k: (REDACTED if k == "id" else _redact_obj(v)) for k, v in value.items()}
            else:
                out[key] = _redact_obj(value)
        return out
    if isinstance(obj, list):
        return [_redact_obj(item) for item in obj]
    return obj


def redact_body(body):
    """Return a loggable form of a request body: parsed JSON with secrets redacted, else a short note."""
    if not body:
        return None
    try:
        parsed = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return "<%d bytes, not JSON>" % len(body)
    return _redact_obj(parsed)


class RequestLog:
    """A bounded, thread-safe list of request records, kept in the order the requests ended.

    A record's ``seq`` is the request's number when it *arrived* (:meth:`arrive`), from one counter that :meth:`mark`
    also draws from: every request that arrives after a mark has a larger ``seq`` than the mark, every one that arrived
    before it a smaller one - also one held (by a ``delay`` fault, a slow job, a client killed mid-request) that ends
    after the mark.  So ``entries(since=mark)`` holds exactly the requests sent after the mark was taken.

    A request that arrived before the last clear (:meth:`clear`) is not recorded when it ends: one held past the end of
    its test would otherwise land in the next test's log."""

    def __init__(self, capacity=20000):
        self._lock = threading.Lock()
        self._entries = collections.deque(maxlen=capacity)
        self._seq = itertools.count(1)
        self.generation = 0  # how many resets forgot the requests in flight: read when a request arrives

    def arrive(self):
        """A request arrived: ``(its sequence number, the current generation)``, both handed back to :meth:`add`."""
        with self._lock:
            return next(self._seq), self.generation

    def mark(self):
        """A sequence number between every request that arrived before this call and every one that arrives after."""
        with self._lock:
            return next(self._seq)

    def add(self, entry, generation=None, seq=None):
        """Append a record (a dict) of a request that ended; return its sequence number, or None when the request
        arrived before the last clear (``generation`` and ``seq``: what :meth:`arrive` gave when it arrived; None:
        record it whenever it arrived, numbered now)."""
        with self._lock:
            if generation is not None and generation != self.generation:
                return None
            entry["seq"] = next(self._seq) if seq is None else seq
            self._entries.append(entry)
            return entry["seq"]

    def entries(self, since=0, limit=None, path_contains=None):
        """Return records with ``seq > since`` (optionally filtered by path substring), oldest first."""
        with self._lock:
            items = [e for e in self._entries if e["seq"] > since]
        if path_contains:
            items = [e for e in items if path_contains in e.get("path", "")]
        if limit is not None:
            items = items[:limit]
        return items

    def clear(self):
        """Forget all records and the requests in flight now, which are then not recorded when they end (sequence
        numbers keep increasing)."""
        with self._lock:
            self._entries.clear()
            self.generation += 1
