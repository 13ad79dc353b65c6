# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A response about to be sent, as every route builds it: the ModelArts and IAM routes (``routes.py``) and the
credential exchanges (``exchanges.py``) alike, and the handler that sends it."""

import json


class Response:
    """A response about to be sent; faults may rewrite it."""

    # pylint: disable=too-few-public-methods
    __slots__ = ("status", "body", "content_type", "headers", "document", "api")

    def __init__(self, status, body=None, content_type="application/json;charset=UTF-8", headers=None, document=None, api=None):
        # pylint: disable=too-many-arguments
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers = dict(headers or {})
        self.document = document  # the JSON object behind body (drift rewrites it)
        self.api = api  # v2, v1 or search, for drift defaults


def json_bytes(obj):
    """Serialise compactly, as the service does."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def json_bytes_repeating(obj, key, values):
    """``json_bytes(obj)`` with its top-level ``key`` given once per value of ``values``, in order: the object a faulty
    service may send, whose key repeats (a JSON reader keeps one of them; ``obj[key]`` is ignored)."""
    placeholder = "\u0000repeated\u0000"
    text = json.dumps(dict(obj, **{key: placeholder}), separators=(",", ":"), ensure_ascii=False)
    pair = json.dumps(key, ensure_ascii=False) + ":"
    repeated = ",".join(pair + json.dumps(value, separators=(",", ":"), ensure_ascii=False) for value in values)
    return text.replace(pair + json.dumps(placeholder, ensure_ascii=False), repeated, 1).encode("utf-8")


def error_response(exc, request_id):
    """Turn an ApiError into a Response."""
    return Response(exc.status, json_bytes(exc.body(request_id)), headers=exc.headers)
