# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Server-side verification of ``SDK-HMAC-SHA256`` request signatures.

An independent implementation of what the API gateway checks, written from the canonical rules the
official SDK follows (see tests/unit/fixtures/signing_vectors.json in the collection):

- canonical URI: the whole path unquoted, split on ``/``, each segment quoted with only ``~`` safe,
  a ``/`` appended when missing (in the canonical form only);
- canonical query: ``key=value`` pairs decoded, sorted, re-quoted the same way, joined by ``&``;
- canonical headers: each name listed in ``SignedHeaders`` as ``name:value.strip()``;
- payload hash: the empty-body hash when there is no body, else the ``X-Sdk-Content-Sha256`` value
  when present (``UNSIGNED-PAYLOAD``), else hex sha256 of the body;
- string to sign: ``SDK-HMAC-SHA256\\n<X-Sdk-Date>\\n<hex sha256(canonical request)>``.
"""

import calendar
import hashlib
import hmac
import re
import time
from urllib.parse import quote, unquote

ALGORITHM = "SDK-HMAC-SHA256"
DATE_FORMAT = "%Y%m%dT%H%M%SZ"
EMPTY_HASH = hashlib.sha256(b"").hexdigest()
_AUTH_RE = re.compile(r"^SDK-HMAC-SHA256\s+Access=(?P<ak>[^,\s]+),\s*SignedHeaders=(?P<signed>[^,\s]+),\s*Signature=(?P<sig>[0-9a-fA-F]+)\s*$")


class SignatureError(Exception):
    """A request whose signature cannot be accepted.

    ``reason`` is ``malformed``, ``missing_date``, ``skew`` or ``mismatch``; ``detail`` is safe to show
    to the client (it never contains the secret key or the expected signature).
    """

    def __init__(self, reason, detail):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _encode(text):
    return quote(text, safe="~")


def canonical_uri(raw_path):
    """Return the canonical URI of a raw request path (without the query string)."""
    segments = unquote(raw_path).split("/")
    path = "/".join(_encode(segment) for segment in segments)
    if not path.endswith("/"):
        path += "/"
    return path


def canonical_query(raw_query):
    """Return the canonical query string of a raw (still percent-encoded) query string."""
    if not raw_query:
        return ""
    pairs = []
    for part in raw_query.split("&"):
        if not part:
            continue
        key, _sep, value = part.partition("=")
        # The SDK quotes spaces as %20, never '+', so '+' is taken literally, as the gateway does.
        pairs.append((unquote(key), unquote(value)))
    pairs.sort()
    return "&".join("%s=%s" % (_encode(k), _encode(v)) for k, v in pairs)


def payload_hash(body, headers):
    """Return the payload hash the signer used for ``body`` (bytes) given the request headers."""
    if not body:
        return EMPTY_HASH
    declared = headers.get("x-sdk-content-sha256")
    if declared:
        return declared
    return hashlib.sha256(body).hexdigest()


def parse_authorization(value):
    """Split an ``Authorization`` header into (ak, signed header list, signature); raise SignatureError."""
    match = _AUTH_RE.match(value or "")
    if not match:
        raise SignatureError("malformed", "Authorization header is not a valid SDK-HMAC-SHA256 header")
    signed = match.group("signed").split(";")
    if any(not name or name != name.lower() for name in signed):
        raise SignatureError("malformed", 'SignedHeaders must be lowercase names separated by ";"')
    return match.group("ak"), signed, match.group("sig").lower()


def canonical_request(method, raw_path, raw_query, headers, signed_headers, body):
    """Build the canonical request; ``headers`` maps lowercased names to values."""
    lines = []
    for name in signed_headers:
        if name not in headers:
            raise SignatureError("malformed", "signed header %s is missing from the request" % name)
        lines.append("%s:%s" % (name, headers[name].strip()))
    return "\n".join(
        [
            method.upper(),
            canonical_uri(raw_path),
            canonical_query(raw_query),
            "\n".join(lines) + "\n",
            ";".join(signed_headers),
            payload_hash(body, headers),
        ]
    )


def string_to_sign(sdk_date, canonical):
    """Return the string to sign for a canonical request."""
    return "%s\n%s\n%s" % (ALGORITHM, sdk_date, hashlib.sha256(canonical.encode("utf-8")).hexdigest())


def compute_signature(secret_key, method, raw_path, raw_query, headers, signed_headers, body):
    """Return the hex signature the client should have sent."""
    canonical = canonical_request(method, raw_path, raw_query, headers, signed_headers, body)
    to_sign = string_to_sign(headers["x-sdk-date"].strip(), canonical)
    return hmac.new(secret_key.encode("utf-8"), to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


def parse_sdk_date(value):
    """Return epoch seconds for an ``X-Sdk-Date`` value; raise SignatureError when malformed."""
    try:
        return calendar.timegm(time.strptime(value.strip(), DATE_FORMAT))
    except (ValueError, AttributeError):
        raise SignatureError("missing_date", "X-Sdk-Date is missing or not in %s format" % DATE_FORMAT) from None


def verify(secret_key, method, raw_path, raw_query, headers, body, now=None, skew_tolerance=900):
    """Verify a signed request; return the parsed (ak, signed_headers) or raise SignatureError.

    ``headers`` maps lowercased header names to values (the last value wins, as in the SDK).
    ``now`` is epoch seconds (defaults to the real clock); ``skew_tolerance`` is in seconds.
    """
    ak, signed, signature = parse_authorization(headers.get("authorization"))
    if "x-sdk-date" not in headers:
        raise SignatureError("missing_date", "X-Sdk-Date header is required")
    sent_at = parse_sdk_date(headers["x-sdk-date"])
    if "x-sdk-date" not in signed:
        raise SignatureError("malformed", "x-sdk-date must be a signed header")
    expected = compute_signature(secret_key, method, raw_path, raw_query, headers, signed, body)
    # Compare before the clock check so that a wrong key is reported as such even from a skewed client.
    if not hmac.compare_digest(expected, signature):
        raise SignatureError("mismatch", "verify aksk signature fail")
    now = time.time() if now is None else now
    if skew_tolerance is not None and abs(now - sent_at) > skew_tolerance:
        raise SignatureError("skew", "the X-Sdk-Date of the request differs from the server time by more than %d seconds" % skew_tolerance)
    return ak, signed
