# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Request signing (``SDK-HMAC-SHA256``) and credential kinds.

The signer reproduces byte for byte what the official ``huaweicloudsdkcore``
signer produces (see ``tests/unit/fixtures/signing_vectors.json``).  It is kept
free of any HTTP library so that it can be unit-tested on its own and reused by
every plugin.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac

from urllib.parse import parse_qsl, quote, unquote, urlsplit

ALGORITHM = "SDK-HMAC-SHA256"
DATE_FORMAT = "%Y%m%dT%H%M%SZ"
EMPTY_BODY_SHA256 = hashlib.sha256(b"").hexdigest()
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
HEADER_DATE = "X-Sdk-Date"
HEADER_CONTENT_SHA256 = "X-Sdk-Content-Sha256"
HEADER_PROJECT_ID = "X-Project-Id"
HEADER_SECURITY_TOKEN = "X-Security-Token"


def _encode(value):
    # The gateway's canonical form percent-encodes everything except unreserved
    # characters; Python's quote() already keeps letters, digits and "_.-", and
    # the SDK adds "~".
    return quote(value, safe="~")


def canonical_uri(path):
    """Return the canonical URI of a request path, as the SDK signer builds it.

    The whole path is unquoted, split on ``/`` and every segment re-quoted.
    A ``/`` is appended when missing: that slash lives only in the canonical
    form, never on the wire.
    """
    uri = "/".join(_encode(segment) for segment in unquote(path or "/").split("/"))
    if not uri.endswith("/"):
        uri += "/"
    return uri


def canonical_query(query):
    """Return the canonical query string: pairs sorted by key then value, each quoted.

    ``query`` is the raw query string of a URL (``a=1&b=2``) or a list of
    ``(key, value)`` pairs.  Blank values are kept (``flag=``).
    """
    if isinstance(query, str):
        pairs = parse_qsl(query, keep_blank_values=True)
    else:
        pairs = [(str(key), str(value)) for key, value in (query or [])]
    return "&".join("%s=%s" % (_encode(key), _encode(value)) for key, value in sorted(pairs))


def signed_header_names(headers):
    """Names of the headers that take part in the signature: lowercased, sorted, none with ``_``."""
    return sorted(name.lower() for name in headers if "_" not in name)


def _header_value(headers, name):
    lowered = name.lower()
    for key, value in headers.items():
        if key.lower() == lowered:
            return value
    return None


def payload_hash(headers, body):
    """Hex SHA-256 of the body; the literal ``UNSIGNED-PAYLOAD`` when the caller asked for it."""
    if not body:
        return EMPTY_BODY_SHA256
    declared = _header_value(headers, HEADER_CONTENT_SHA256)
    if declared:
        return declared
    if isinstance(body, str):
        body = body.encode("utf-8")
    return hashlib.sha256(body).hexdigest()


def canonical_request(method, path, query, headers, body):
    """Build the canonical request string that is hashed into the string to sign."""
    names = signed_header_names(headers)
    by_lower = dict((key.lower(), value) for key, value in headers.items())
    header_lines = "".join("%s:%s\n" % (name, str(by_lower[name]).strip()) for name in names)
    return "\n".join(
        [
            method.upper(),
            canonical_uri(path),
            canonical_query(query),
            header_lines,
            ";".join(names),
            payload_hash(headers, body),
        ]
    )


def string_to_sign(canonical, sdk_date):
    """The string the HMAC is computed over."""
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    return "%s\n%s\n%s" % (ALGORITHM, sdk_date, digest)


def signature(secret_key, text):
    """Hex HMAC-SHA256 of ``text`` keyed with the secret key."""
    return hmac.new(secret_key.encode("utf-8"), text.encode("utf-8"), hashlib.sha256).hexdigest()


def sign_request(method, url, headers, body, access_key, secret_key, project_id=None, security_token=None, now=None):
    """Sign a request the way ``huaweicloudsdkcore`` does.

    Returns ``(url, headers)``: the URL to send (its query replaced by the
    canonical one, as the SDK does, so the server sees exactly what was signed)
    and a new header dict holding the caller's headers plus ``X-Project-Id``,
    ``X-Security-Token``, ``X-Sdk-Content-Sha256`` (non-JSON bodies),
    ``X-Sdk-Date``, ``Host`` and ``Authorization``.  ``headers`` is not modified.

    ``now`` is a timezone-aware or naive-UTC ``datetime`` (tests freeze it);
    a caller-supplied ``X-Sdk-Date`` header wins over it.
    """
    signed = dict(headers or {})
    if project_id and _header_value(signed, HEADER_PROJECT_ID) is None:
        signed[HEADER_PROJECT_ID] = project_id
    if security_token:
        signed[HEADER_SECURITY_TOKEN] = security_token
    content_type = _header_value(signed, "Content-Type")
    if content_type and not content_type.startswith(("application/json", "application/bson")):
        signed[HEADER_CONTENT_SHA256] = UNSIGNED_PAYLOAD
    sdk_date = _header_value(signed, HEADER_DATE)
    if sdk_date is None:
        moment = now or datetime.datetime.now(datetime.timezone.utc)
        sdk_date = moment.strftime(DATE_FORMAT)
        signed[HEADER_DATE] = sdk_date
    parts = urlsplit(url)
    if _header_value(signed, "Host") is None:
        signed["Host"] = parts.netloc
    canonical = canonical_request(method, parts.path, parts.query, signed, body)
    names = signed_header_names(signed)
    signed["Authorization"] = "%s Access=%s, SignedHeaders=%s, Signature=%s" % (
        ALGORITHM,
        access_key,
        ";".join(names),
        signature(secret_key, string_to_sign(canonical, sdk_date)),
    )
    query = canonical_query(parts.query)
    sent_url = "%s://%s%s%s" % (parts.scheme, parts.netloc, parts.path, "?" + query if query else "")
    return sent_url, signed
