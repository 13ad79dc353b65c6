# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The signer against every SDK-HMAC-SHA256 vector computed by the official SDK's own signer."""

from __future__ import annotations

import datetime
import json
import os

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.service import auth

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "signing_vectors.json")

with open(FIXTURE) as handle:
    VECTORS = json.load(handle)["vectors"]

SHA256_VECTORS = [v for v in VECTORS if v["inputs"]["signing_algorithm"] == "HMAC_SHA256" and not v["inputs"]["derived_auth"]]


def _frozen(vector):
    return datetime.datetime.strptime(vector["inputs"]["fixed_time_utc"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)


def _sign(vector, **overrides):
    inputs = dict(vector["inputs"], **overrides)
    return auth.sign_request(
        inputs["method"],
        inputs["url"],
        inputs["headers_before_signing"],
        inputs["body"],
        inputs["ak"],
        inputs["sk"],
        project_id=inputs["project_id"],
        security_token=inputs["security_token"],
        now=_frozen(vector),
    )


def test_every_sha256_vector_is_covered():
    # 13 SDK-HMAC-SHA256 vectors ship in the fixture; a vector silently dropped
    # from the list would make the parametrised test below prove less.
    assert len(SHA256_VECTORS) == 13


@pytest.mark.parametrize("vector", SHA256_VECTORS, ids=[v["name"] for v in SHA256_VECTORS])
def test_vector_headers_and_url(vector):
    url, headers = _sign(vector)
    assert headers == vector["outputs"]["headers_after_signing"]
    assert url == vector["outputs"]["url_sent"]


@pytest.mark.parametrize("vector", SHA256_VECTORS, ids=[v["name"] for v in SHA256_VECTORS])
def test_vector_intermediates(vector):
    inputs = vector["inputs"]
    _url, headers = _sign(vector)
    unsigned = dict((k, v) for k, v in headers.items() if k != "Authorization")
    parts = auth.urlsplit(inputs["url"])
    canonical = auth.canonical_request(inputs["method"], parts.path, parts.query, unsigned, inputs["body"])
    assert canonical == vector["intermediate"]["canonical_request"]
    assert auth.string_to_sign(canonical, headers["X-Sdk-Date"]) == vector["intermediate"]["string_to_sign"]


def test_caller_headers_are_not_modified():
    vector = SHA256_VECTORS[1]
    before = dict(vector["inputs"]["headers_before_signing"])
    _sign(vector)
    assert vector["inputs"]["headers_before_signing"] == before


@pytest.mark.parametrize(
    "field,value",
    [
        ("sk", "ExampleSecretKey0123456789abcdefghijklmX"),
        ("url", "https://modelarts.cn-north-4.myhuaweicloud.com/v2/0123456789abcdef0123456789abcdef/training-jobs/other"),
        ("method", "DELETE"),
        ("project_id", "fedcba9876543210fedcba9876543210"),
    ],
)
def test_any_change_changes_the_signature(field, value):
    vector = SHA256_VECTORS[0]
    _url, headers = _sign(vector, **{field: value})
    assert headers["Authorization"] != vector["outputs"]["Authorization"]


def test_security_token_is_signed():
    vector = [v for v in SHA256_VECTORS if v["inputs"]["security_token"]][0]
    _url, headers = _sign(vector)
    assert "x-security-token" in headers["Authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")


def test_clock_is_used_when_no_date_header():
    vector = SHA256_VECTORS[0]
    moment = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    inputs = vector["inputs"]
    _url, headers = auth.sign_request("GET", inputs["url"], {}, None, inputs["ak"], inputs["sk"], now=moment)
    assert headers["X-Sdk-Date"] == "20300102T030405Z"


@pytest.mark.parametrize(
    "path,expected",
    [
        ("/v2/p/training-jobs/abc", "/v2/p/training-jobs/abc/"),
        ("/v2/p/training-jobs/", "/v2/p/training-jobs/"),
        ("/v2/p/training-jobs/a%20b", "/v2/p/training-jobs/a%20b/"),
        ("/v2/p/training-jobs/a~b", "/v2/p/training-jobs/a~b/"),
        ("", "/"),
    ],
)
def test_canonical_uri(path, expected):
    assert auth.canonical_uri(path) == expected


def test_canonical_query_sorts_pairs_and_keeps_blank_values():
    assert auth.canonical_query("b=2&a=1&a=0&flag=&name=my%20job/x~y") == "a=0&a=1&b=2&flag=&name=my%20job%2Fx~y"
    assert auth.canonical_query([("name", "cn-north-4"), ("a", 1)]) == "a=1&name=cn-north-4"
