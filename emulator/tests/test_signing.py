# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The server-side verifier against the SDK's own signing vectors, and tampering."""

import calendar
import json
import os
import time
from urllib.parse import urlsplit

import pytest

from modelarts_emulator import signing

# The one copy of the official SDK's signing vectors lives with the collection's unit tests.
VECTORS = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "tests", "unit", "fixtures", "signing_vectors.json"), encoding="utf-8"))


def _cases():
    cases = []
    for vector in VECTORS["vectors"] + VECTORS["client_vectors"]:
        outputs = vector["outputs"]
        if not outputs.get("Authorization", "").startswith("SDK-HMAC-SHA256 "):
            continue
        inputs = vector["inputs"]
        headers = outputs.get("headers_after_signing") or outputs["headers_sent"]
        body = inputs["body"] if "body" in inputs else outputs.get("body_sent")
        if isinstance(body, dict):
            body = json.dumps(body)
        cases.append(
            pytest.param(
                {
                    "method": inputs.get("method") or outputs["method_sent"],
                    "url": outputs["url_sent"],
                    "headers": {k.lower(): v for k, v in headers.items()},
                    "body": body.encode("utf-8") if body else b"",
                    "sk": inputs["sk"],
                    "canonical": vector["intermediate"]["canonical_request"],
                },
                id=vector["name"],
            )
        )
    return cases


def _now(case):
    return calendar.timegm(time.strptime(case["headers"]["x-sdk-date"], signing.DATE_FORMAT))


def _verify(case, **changes):
    data = dict(case, **changes)
    url = urlsplit(data["url"])
    return signing.verify(data["sk"], data["method"], url.path, url.query, data["headers"], data["body"], now=_now(case))


@pytest.mark.parametrize("case", _cases())
def test_every_sdk_vector_verifies(case):
    url = urlsplit(case["url"])
    signed = signing.parse_authorization(case["headers"]["authorization"])[1]
    assert signing.canonical_request(case["method"], url.path, url.query, case["headers"], signed, case["body"]) == case["canonical"]
    ak, _signed = _verify(case)
    assert ak == "HPUAEXAMPLEAK0000001"


def test_vectors_cover_the_interesting_cases():
    names = {p.id for p in _cases()}
    assert {
        "get_v2_job_with_query",
        "get_v2_job_with_security_token",
        "post_v2_training_job_searches_json",
        "post_non_json_content_type_unsigned_payload",
        "header_with_underscore_not_signed",
        "get_path_with_trailing_slash",
        "get_v1_legacy_job_version",
    } <= names


@pytest.mark.parametrize("case", _cases()[:1] + [c for c in _cases() if c.id == "post_v2_training_job_searches_json"])
@pytest.mark.parametrize("tamper", ["sk", "path", "query", "header", "method", "body", "signature", "date"])
def test_tampered_requests_are_rejected(case, tamper):
    case = dict(case)
    headers = dict(case["headers"])
    if tamper == "sk":
        case["sk"] = case["sk"][:-1] + "X"
    elif tamper == "path":
        case["url"] = case["url"].replace("training-job", "training-jobz")
    elif tamper == "query":
        case["url"] += ("&" if "?" in case["url"] else "?") + "limit=1"
    elif tamper == "header":
        headers["x-project-id"] = "0" * 32
    elif tamper == "method":
        case["method"] = "DELETE"
    elif tamper == "body":
        case["body"] = (case["body"] or b"{}") + b" "
    elif tamper == "signature":
        auth = headers["authorization"]
        headers["authorization"] = auth[:-1] + ("0" if auth[-1] != "0" else "1")
    elif tamper == "date":
        headers["x-sdk-date"] = "20240501T123457Z"
    case["headers"] = headers
    with pytest.raises(signing.SignatureError) as info:
        _verify(case)
    assert info.value.reason == "mismatch"
    assert case["sk"] not in info.value.detail


def test_unsigned_header_may_change_but_signed_may_not():
    case = [c for c in _cases() if c.id == "header_with_underscore_not_signed"][0].values[0]
    headers = dict(case["headers"], x_custom_header="changed", **{"user-agent": "not signed here"})
    _verify(case, headers=headers)


def test_clock_skew_over_tolerance_is_rejected():
    case = _cases()[0].values[0]
    url = urlsplit(case["url"])
    now = _now(case)
    signing.verify(case["sk"], "GET", url.path, url.query, case["headers"], b"", now=now + 899)
    for delta in (901, -901):
        with pytest.raises(signing.SignatureError) as info:
            signing.verify(case["sk"], "GET", url.path, url.query, case["headers"], b"", now=now + delta)
        assert info.value.reason == "skew"


@pytest.mark.parametrize("value", ["", "Basic abc", "SDK-HMAC-SHA256 Access=AK", "SDK-HMAC-SHA256 Access=AK, SignedHeaders=Host, Signature=00"])
def test_malformed_authorization(value):
    with pytest.raises(signing.SignatureError) as info:
        signing.parse_authorization(value)
    assert info.value.reason == "malformed"


def test_missing_or_bad_date():
    case = _cases()[0].values[0]
    url = urlsplit(case["url"])
    headers = dict(case["headers"])
    del headers["x-sdk-date"]
    with pytest.raises(signing.SignatureError) as info:
        signing.verify(case["sk"], "GET", url.path, url.query, headers, b"")
    assert info.value.reason == "missing_date"
    headers["x-sdk-date"] = "2024-05-01T12:34:56Z"
    with pytest.raises(signing.SignatureError):
        signing.verify(case["sk"], "GET", url.path, url.query, headers, b"")


@pytest.mark.parametrize(
    "raw, canonical",
    [
        ("/v2/p/training-jobs/abc", "/v2/p/training-jobs/abc/"),
        ("/v2/p/training-jobs/", "/v2/p/training-jobs/"),
        ("/a%20b/c~d/e%7Ef", "/a%20b/c~d/e~f/"),
        ("/a%2Fb", "/a/b/"),
        ("/caf%C3%A9", "/caf%C3%A9/"),
    ],
)
def test_canonical_uri(raw, canonical):
    assert signing.canonical_uri(raw) == canonical


def test_canonical_query_sorts_and_requotes():
    assert signing.canonical_query("b=2&a=1&a=0&flag=&name=my%20job/x~y") == "a=0&a=1&b=2&flag=&name=my%20job%2Fx~y"
    assert signing.canonical_query("") == ""


def test_payload_hash_rules():
    assert signing.payload_hash(b"", {"x-sdk-content-sha256": "UNSIGNED-PAYLOAD"}) == signing.EMPTY_HASH
    assert signing.payload_hash(b"x", {"x-sdk-content-sha256": "UNSIGNED-PAYLOAD"}) == "UNSIGNED-PAYLOAD"
    assert signing.payload_hash(b"x", {}) == "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
