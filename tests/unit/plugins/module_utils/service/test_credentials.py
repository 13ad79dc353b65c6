# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Credential sources over a fake transport: each exchange's exact request, parsing, renewal timing, the default
chain, the 401 path across threads, and secrets kept out of every message.

Where the official SDK (huaweicloudsdkcore) is installed, its own accessors are run against recording stubs and
compared request by request with ours; elsewhere (ansible-test units) those comparisons are skipped and the
hard-coded expectations below still hold the formats.
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import threading
import time

from types import SimpleNamespace

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.service import credentials as cred
from ansible_collections.modelarts.training.plugins.module_utils.service.credential_sources import (
    Agency,
    CredentialsFile,
    Federated,
    InstanceMetadata,
    OidcSts,
    Password,
    PodIdentity,
    Probing,
    default_chain,
    provider_for,
)
from ansible_collections.modelarts.training.plugins.module_utils.service.credentials import (
    Credentials,
    CredentialsConfigError,
    NoCredentialsError,
    Provider,
    Renewing,
    Static,
    Transport,
    read_text_file,
    renew_time,
)
from ansible_collections.modelarts.training.plugins.module_utils.service import endpoints
from ansible_collections.modelarts.training.plugins.module_utils.service.endpoints import sts_endpoint
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import Connection
from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fakes import credential_parts
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError, error_from_response

from ansible_collections.modelarts.training.plugins.module_utils.text import LEVEL_OPTION
from ansible_collections.modelarts.training.plugins.module_utils.door.options import ConnectionConfigError, resolve

UTC = datetime.timezone.utc
START = datetime.datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
DEADLINE = 4321.0
IAM = "https://iam.cn-north-4.myhuaweicloud.com"
STS = "https://sts.cn-north-4.myhuaweicloud.com"
JSON_TYPE = "application/json;charset=UTF-8"

SK = "PermanentSecretKey-DO-NOT-LEAK"
ID_TOKEN = "eyJhbGciOiJSUzI1NiJ9.id-token-one-DO-NOT-LEAK"
ID_TOKEN_2 = "eyJhbGciOiJSUzI1NiJ9.id-token-two-DO-NOT-LEAK"
SUBJECT = "MIIsubjectToken-DO-NOT-LEAK"
TEMP_SK = "TempSecretKey-DO-NOT-LEAK"
TEMP_TOKEN = "TempSecurityToken-DO-NOT-LEAK"
POD_TOKEN = "pod-authorization-token-DO-NOT-LEAK"
META_TOKEN = "metadata-session-token-DO-NOT-LEAK"
PASSWORD = "Pa55word-DO-NOT-LEAK"
IAM_TOKEN = "MIIiamToken-DO-NOT-LEAK"
ALL_SECRETS = (SK, ID_TOKEN, ID_TOKEN_2, SUBJECT, TEMP_SK, TEMP_TOKEN, POD_TOKEN, META_TOKEN, PASSWORD, IAM_TOKEN)

EXPIRES = "2024-05-01T18:00:00.000000Z"
IAM_ANSWER = {"credential": {"access": "TEMPAK", "secret": TEMP_SK, "securitytoken": TEMP_TOKEN, "expires_at": EXPIRES}}
STS_ANSWER = {
    "credentials": {"access_key_id": "TEMPAK", "secret_access_key": TEMP_SK, "security_token": TEMP_TOKEN, "expiration": "2024-05-01T13:00:00.123Z"},
    "assumed_agency": {"agency_id": "a1", "agency_urn": "iam::1:agency:ci"},
}


# -- the fake transport ----------------------------------------------------------------------------------------------


class FakeResponse(object):
    def __init__(self, data, status, headers, request_id):
        self.data = data
        self.status = status
        self.headers = headers
        self.request_id = request_id


def ok(data=None, headers=None, status=200):
    return (status, data, headers or {})


def fail(status, data=None, headers=None):
    return (status, data, headers or {})


def unreachable(url, connected=False):
    # What the client raises for a transport failure: the raw exception text is in its message, and how far it got.
    error = ModelArtsError(
        "op: ConnectTimeout: HTTPConnectionPool(host='169.254.169.254', port=80): Max retries exceeded with url: %s (Caused by ConnectTimeoutError())" % url,
        operation="op",
        transient=True,
    )
    error.connected = connected
    return error


class FakeTransport(Transport):
    """Records every call; answers from a script per (method, url) (the last answer repeats); raises as the client does."""

    def __init__(self, iam_endpoint=IAM, sts_endpoint=STS, now=START):
        self.iam_endpoint = iam_endpoint
        self.sts_endpoint = sts_endpoint
        self.now = now
        self.calls = []
        self.secrets = []
        self.answers = {}
        self.lock = threading.Lock()

    def answer(self, method, url, *answers):
        self.answers.setdefault((method, url), []).extend(answers)
        return self

    def send(self, request):
        with self.lock:
            record = dict(request._asdict(), headers=dict(request.headers or {}), body=copy.deepcopy(request.body))
            self.calls.append(record)
            queue = self.answers.get((request.method, request.url))
            if not queue:
                raise AssertionError("unexpected call %s %s" % (request.method, request.url))
            answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if callable(answer):
            answer = answer(record)
        if isinstance(answer, BaseException):
            raise answer
        status, data, answer_headers = answer
        if not 200 <= status < 300:
            content = data if isinstance(data, (str, bytes)) else json.dumps(data) if data is not None else b""
            raise error_from_response(request.operation, status, answer_headers, content)
        if request.expect == "text" and not isinstance(data, str):
            data = json.dumps(data)
        return FakeResponse(data, status, answer_headers, "req-%d" % len(self.calls))

    def utcnow(self):
        return self.now

    def remember_secret(self, value):
        self.secrets.append(value)

    def advance(self, seconds):
        self.now += datetime.timedelta(seconds=seconds)


def sent(transport):
    """The calls as (method, url, headers, body) tuples."""
    return [(c["method"], c["url"], c["headers"], c["body"]) for c in transport.calls]


def assert_clean(text):
    for secret in ALL_SECRETS:
        assert secret not in text


@pytest.fixture
def transport():
    return FakeTransport()


@pytest.fixture
def id_token_file(tmp_path):
    path = tmp_path / "id_token"
    path.write_text(ID_TOKEN + "\n")
    return path


# -- Credentials, endpoints, renew_time ----------------------------------------------------------------------------


def test_credentials_value():
    aksk = Credentials(access_key="AK", secret_key=SK, security_token=TEMP_TOKEN, expires_at=START, source="s", project_id="p")
    assert aksk.kind == "aksk" and aksk.secrets() == (SK, TEMP_TOKEN) and aksk.project_id == "p"
    token = Credentials(auth_token=IAM_TOKEN)
    assert token.kind == "auth_token" and token.secrets() == (IAM_TOKEN,) and token.expires_at is None
    with pytest.raises(AttributeError):
        aksk.secret_key = "other"
    assert_clean(repr(aksk) + repr(token))
    assert aksk.remaining(START - datetime.timedelta(seconds=30)) == 30.0 and token.remaining(START) is None
    with pytest.raises(ValueError):
        Credentials(access_key="AK")
    with pytest.raises(ValueError):
        Credentials(access_key="AK", secret_key=SK, auth_token=IAM_TOKEN)


def test_expires_at_is_utc():
    east = datetime.timezone(datetime.timedelta(hours=8))
    moment = datetime.datetime(2024, 5, 1, 20, 0, tzinfo=east)
    assert Credentials(auth_token="t", expires_at=moment).expires_at == datetime.datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    assert Credentials(auth_token="t", expires_at=moment).expires_at.tzinfo == UTC


@pytest.mark.parametrize(
    "region,expected",
    [
        ("cn-north-4", "https://sts.cn-north-4.myhuaweicloud.com"),
        ("ap-southeast-1", "https://sts.ap-southeast-1.myhuaweicloud.com"),
        ("tr-west-1", "https://sts.tr-west-1.myhuaweicloud.com"),
        # Not in the SDK's STS map: its default, cn-north-4.
        ("cn-north-1", "https://sts.cn-north-4.myhuaweicloud.com"),
        ("eu-west-101", "https://sts.cn-north-4.myhuaweicloud.com"),
        (None, "https://sts.cn-north-4.myhuaweicloud.com"),
    ],
)
def test_sts_endpoint(region, expected):
    assert sts_endpoint(region) == expected


@pytest.mark.parametrize("region", ["cn-north-4.evil.example#", "CN-NORTH-4", "cn-north-4@x/", "a b", "-cn", 4])
def test_sts_endpoint_refuses_anything_but_a_region_name(region):
    with pytest.raises(ConnectionConfigError, match="region name"):
        sts_endpoint(region)


def test_sts_endpoint_follows_the_sdk_region_map():
    endpoint = pytest.importorskip("huaweicloudsdkcore.auth.endpoint")
    for region in sorted(endpoints.STS_REGIONS) + ["cn-north-1", "ru-moscow-1"]:
        assert sts_endpoint(region) == endpoint.get_sts_endpoint_by_id(region, "https://sts.cn-north-4.myhuaweicloud.com")


@pytest.mark.parametrize(
    "lifetime,offset",
    [
        (20, 20 * 2 / 3.0),  # a third of 20 s is less than 5 minutes
        (900, 600),  # a third of 15 minutes is exactly 5 minutes
        (86400, 86100),  # 5 minutes is less than a third of a day
    ],
)
def test_renew_time(lifetime, offset):
    expires = START + datetime.timedelta(seconds=lifetime)
    assert abs((renew_time(expires, START) - START).total_seconds() - offset) < 1e-6


def test_renew_time_without_expiry_or_already_expired():
    assert renew_time(None, START) is None
    assert renew_time(START - datetime.timedelta(seconds=1), START) is None


# -- files ----------------------------------------------------------------------------------------------------------


def test_read_text_file_errors_name_option_and_path_never_contents(tmp_path):
    with pytest.raises(CredentialsConfigError, match=r"^id_token_file \(X\): cannot read .*missing: No such file or directory$"):
        read_text_file(str(tmp_path / "missing"), "id_token_file (X)")
    with pytest.raises(CredentialsConfigError, match=r"^opt: .* is not a regular file \(it is a directory\)"):
        read_text_file(str(tmp_path), "opt")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # No writer: an ordinary open would wait for one for ever; refused at once, with or without a time bound.
    for timeout in (None, 30.0):
        with pytest.raises(CredentialsConfigError, match=r"^opt: .*fifo is not a regular file \(it is a FIFO \(named pipe\)\)"):
            read_text_file(str(fifo), "opt", timeout=timeout)
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe" + SK.encode() + b"\xff")
    with pytest.raises(CredentialsConfigError, match="not UTF-8 text") as caught:
        read_text_file(str(binary), "opt")
    assert_clean(str(caught.value))
    big = tmp_path / "big"
    big.write_text(SK * 10)
    with pytest.raises(CredentialsConfigError, match="larger than 40 bytes") as caught:
        read_text_file(str(big), "opt", limit=40)
    assert_clean(str(caught.value))
    bom = tmp_path / "bom"
    bom.write_bytes(b"\xef\xbb\xbf[basic]\n")
    assert read_text_file(str(bom), "opt") == "[basic]\n"


# -- Static and Password -------------------------------------------------------------------------------------------


def test_static_is_returned_as_given_and_never_renewed(transport):
    provider = Static(access_key="AK", secret_key=SK, security_token=TEMP_TOKEN)
    renewing = Renewing(provider)
    first = renewing.current(transport, DEADLINE)
    assert (first.access_key, first.secret_key, first.security_token, first.kind) == ("AK", SK, TEMP_TOKEN, "aksk")
    assert SK in transport.secrets and TEMP_TOKEN in transport.secrets
    transport.advance(10 * 86400)
    assert renewing.current(transport, DEADLINE) is first
    assert renewing.refused(transport, first, DEADLINE) is first
    assert transport.calls == [] and not provider.refreshable
    token = Renewing(Static(auth_token=IAM_TOKEN)).current(transport, DEADLINE)
    assert token.kind == "auth_token" and token.auth_token == IAM_TOKEN


def password_answer(project="proj-from-scope"):
    body = {"token": {"expires_at": "2024-05-02T12:00:00.123Z", "project": {"id": project, "name": "cn-north-4"}}}
    return ok(body, {"X-Subject-Token": IAM_TOKEN})


def test_password_token_request_and_result(transport):
    transport.answer("POST", IAM + "/v3/auth/tokens", password_answer())
    result = Password("alice", PASSWORD, "acme", region="cn-north-4").obtain(transport, DEADLINE)
    user = {"name": "alice", "password": PASSWORD, "domain": {"name": "acme"}}
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": user}}, "scope": {"project": {"name": "cn-north-4"}}}}
    assert sent(transport) == [("POST", IAM + "/v3/auth/tokens", {"Content-Type": JSON_TYPE}, body)]
    assert transport.calls[0]["sign_with"] is None and transport.calls[0]["deadline"] == DEADLINE
    assert result.kind == "auth_token" and result.auth_token == IAM_TOKEN and result.project_id == "proj-from-scope"
    assert result.expires_at == datetime.datetime(2024, 5, 2, 12, 0, 0, 123000, tzinfo=UTC)
    assert IAM_TOKEN in transport.secrets and PASSWORD in transport.secrets


def test_password_scoped_to_a_given_project_keeps_it(transport):
    transport.answer("POST", IAM + "/v3/auth/tokens", password_answer("other"))
    result = Password("alice", PASSWORD, "acme", project_id="p1", region="cn-north-4").obtain(transport, DEADLINE)
    assert transport.calls[0]["body"]["auth"]["scope"] == {"project": {"id": "p1"}}
    assert result.project_id == "p1"


def test_password_sends_the_body_iam_expects(transport):
    # The body the collection has always sent (and the SDK's IAM client sends): a project-scoped password token.
    transport.answer("POST", IAM + "/v3/auth/tokens", password_answer())
    Password("alice", PASSWORD, "acme", region="cn-north-4").obtain(transport, DEADLINE)
    user = {"name": "alice", "password": PASSWORD, "domain": {"name": "acme"}}
    expected = {"auth": {"identity": {"methods": ["password"], "password": {"user": user}}, "scope": {"project": {"name": "cn-north-4"}}}}
    assert (transport.calls[0]["method"], transport.calls[0]["body"]) == ("POST", expected)
    Password("alice", PASSWORD, "acme", project_id="p1", region="cn-north-4").obtain(transport, DEADLINE)
    assert transport.calls[1]["body"]["auth"]["scope"] == {"project": {"id": "p1"}}


def test_password_without_header_or_endpoint(transport):
    transport.answer("POST", IAM + "/v3/auth/tokens", ok({"token": {}}))
    with pytest.raises(ModelArtsError, match="no X-Subject-Token header"):
        Password("alice", PASSWORD, "acme", region="cn-north-4").obtain(transport, DEADLINE)
    with pytest.raises(CredentialsConfigError, match="set region .* or iam_endpoint"):
        Password("alice", PASSWORD, "acme", region="cn-north-4").obtain(FakeTransport(iam_endpoint=""), DEADLINE)


# -- Federated -----------------------------------------------------------------------------------------------------


def federated_answers(transport, base=IAM):
    transport.answer("POST", base + "/v3.0/OS-AUTH/id-token/tokens", ok({"token": {"methods": ["mapped"]}}, {"X-Subject-Token": SUBJECT}, 201))
    transport.answer("POST", base + "/v3.0/OS-CREDENTIAL/securitytokens", ok(IAM_ANSWER, status=201))
    return transport


def federated_requests(id_token, base=IAM):
    return [
        (
            "POST",
            base + "/v3.0/OS-AUTH/id-token/tokens",
            {"X-Idp-Id": "github-ci", "Content-Type": JSON_TYPE},
            {"auth": {"id_token": {"id": id_token}}},
        ),
        (
            "POST",
            base + "/v3.0/OS-CREDENTIAL/securitytokens",
            {"Content-Type": JSON_TYPE},
            {"auth": {"identity": {"methods": ["token"], "token": {"id": SUBJECT, "duration_seconds": 21600}}}},
        ),
    ]


def test_federated_exchange(transport, id_token_file):
    federated_answers(transport)
    result = Federated("github-ci", str(id_token_file)).obtain(transport, DEADLINE)
    assert sent(transport) == federated_requests(ID_TOKEN)
    assert all(c["sign_with"] is None and c["deadline"] == DEADLINE for c in transport.calls)
    assert (result.access_key, result.secret_key, result.security_token) == ("TEMPAK", TEMP_SK, TEMP_TOKEN)
    assert result.expires_at == datetime.datetime(2024, 5, 1, 18, 0, tzinfo=UTC)
    assert result.source == "federated identity provider github-ci (idp_id)"
    assert set((ID_TOKEN, SUBJECT, TEMP_SK, TEMP_TOKEN)) <= set(transport.secrets)


def test_federated_reads_the_token_file_again_at_every_exchange(transport, id_token_file):
    federated_answers(transport)
    renewing = Renewing(Federated("github-ci", str(id_token_file)))
    first = renewing.current(transport, DEADLINE)
    id_token_file.write_text(ID_TOKEN_2)
    transport.now = first.expires_at - datetime.timedelta(seconds=299)
    second = renewing.current(transport, DEADLINE)
    assert second is not first
    assert [c["body"] for c in transport.calls[::2]] == [{"auth": {"id_token": {"id": ID_TOKEN}}}, {"auth": {"id_token": {"id": ID_TOKEN_2}}}]
    assert ID_TOKEN_2 in transport.secrets


@pytest.mark.parametrize("content,message", [("", "is empty"), ("  \n", "is empty"), ("abc\ndef", "control character")])
def test_federated_token_file_problems(transport, tmp_path, content, message):
    path = tmp_path / "token"
    path.write_text(content)
    with pytest.raises(CredentialsConfigError, match=message) as caught:
        Federated("idp", str(path)).obtain(transport, DEADLINE)
    assert "id_token_file (HUAWEICLOUD_SDK_ID_TOKEN_FILE)" in str(caught.value) and transport.calls == []


def test_federated_missing_token_file_names_the_option(transport, tmp_path):
    with pytest.raises(CredentialsConfigError, match=r"id_token_file \(HUAWEICLOUD_SDK_ID_TOKEN_FILE\): cannot read .*gone"):
        Federated("idp", str(tmp_path / "gone")).obtain(transport, DEADLINE)


def test_federated_without_subject_token(transport, id_token_file):
    transport.answer("POST", IAM + "/v3.0/OS-AUTH/id-token/tokens", ok({"token": {}}))
    with pytest.raises(ModelArtsError, match="no X-Subject-Token header") as caught:
        Federated("idp", str(id_token_file)).obtain(transport, DEADLINE)
    assert_clean(str(caught.value))


def test_federated_refusal_keeps_the_id_token_out(transport, id_token_file):
    transport.answer("POST", IAM + "/v3.0/OS-AUTH/id-token/tokens", fail(401, {"error": {"code": 401, "message": "The id_token is invalid"}}))
    with pytest.raises(ModelArtsError) as caught:
        Federated("idp", str(id_token_file)).obtain(transport, DEADLINE)
    assert caught.value.status == 401 and "identity provider idp" in str(caught.value)
    assert_clean(str(caught.value))


def test_federated_matches_the_sdk(transport, id_token_file):
    internal = pytest.importorskip("huaweicloudsdkcore.auth.internal")
    from huaweicloudsdkcore.http.http_config import HttpConfig

    requests_seen = []

    def do_request_sync(request):
        requests_seen.append(request)
        if request.resource_path.endswith("/id-token/tokens"):
            return SimpleNamespace(content=b'{"token": {}}', headers={"X-Subject-Token": SUBJECT})
        return SimpleNamespace(content=json.dumps(IAM_ANSWER).encode(), headers={})

    client = SimpleNamespace(config=HttpConfig.get_default_config(), do_request_sync=do_request_sync)
    credential = internal.FederalAccessor().get_credential(iam_endpoint=IAM, http_client=client, idp_id="github-ci", id_token_file=str(id_token_file))
    federated_answers(transport)
    ours = Federated("github-ci", str(id_token_file)).obtain(transport, DEADLINE)
    assert len(requests_seen) == len(transport.calls) == 2
    for request, call in zip(requests_seen, transport.calls):
        assert call["method"] == request.method
        assert call["url"] == "%s://%s%s" % (request.schema, request.host, request.resource_path)
        assert call["headers"] == dict((k, v) for k, v in request.header_params.items() if k != "User-Agent")
        assert call["body"] == json.loads(request.body)
    assert (ours.access_key, ours.secret_key, ours.security_token) == (credential.access, credential.secret, credential.security_token)


# -- credentials file ------------------------------------------------------------------------------------------------


def write_file(tmp_path, text, name="credentials"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_credentials_file_static(transport, tmp_path):
    path = write_file(
        tmp_path,
        "[basic]\nak = FILEAK\nsk = %s\nsecurity_token = %s\nproject_id = p-file\niam_endpoint = https://iam.example.test/\n" % (SK, TEMP_TOKEN),
    )
    result = CredentialsFile(path).obtain(transport, DEADLINE)
    assert (result.access_key, result.secret_key, result.security_token) == ("FILEAK", SK, TEMP_TOKEN)
    assert (result.project_id, result.iam_endpoint, result.expires_at) == ("p-file", "https://iam.example.test/", None)
    assert result.source == "credentials file %s" % path
    assert transport.calls == [] and SK in transport.secrets and TEMP_TOKEN in transport.secrets


def test_credentials_file_federated_uses_its_iam_endpoint_and_project(transport, tmp_path, id_token_file):
    path = write_file(
        tmp_path, "[basic]\nidp_id = github-ci\nid_token_file = %s\nproject_id = p-file\niam_endpoint = https://iam.example.test\n" % id_token_file
    )
    federated_answers(transport, "https://iam.example.test")
    result = CredentialsFile(path).obtain(transport, DEADLINE)
    assert sent(transport) == federated_requests(ID_TOKEN, "https://iam.example.test")
    assert result.project_id == "p-file" and result.secret_key == TEMP_SK
    assert result.source == "federated identity provider github-ci (idp_id in credentials file %s)" % path


def test_credentials_file_federated_wins_over_aksk_as_in_the_sdk(transport, tmp_path, id_token_file):
    path = write_file(tmp_path, "[basic]\nak = FILEAK\nsk = %s\nidp_id = github-ci\nid_token_file = %s\n" % (SK, id_token_file))
    federated_answers(transport)
    assert CredentialsFile(path).obtain(transport, DEADLINE).access_key == "TEMPAK"


def test_credentials_file_is_read_again_when_refused(transport, tmp_path):
    path = write_file(tmp_path, "[basic]\nak = OLD\nsk = %s\n" % SK)
    renewing = Renewing(CredentialsFile(path))
    first = renewing.current(transport, DEADLINE)
    write_file(tmp_path, "[basic]\nak = NEW\nsk = %s\n" % SK)
    assert renewing.current(transport, DEADLINE) is first
    assert renewing.refused(transport, first, DEADLINE).access_key == "NEW"


@pytest.mark.parametrize(
    "text,message",
    [
        ("[default]\nak = A\nsk = %s\n" % SK, r"has no \[basic\] section"),
        ("[basic]\nak = A\n", r"needs ak and sk, or idp_id and id_token_file \(it sets only ak\)"),
        ("[basic]\nsk = %s\n" % SK, r"\(it sets only sk\)"),
        ("[basic]\nidp_id = x\n", r"\(it sets only idp_id\)"),
        ("[basic]\nproject_id = p\n", "it sets none of them"),
        ("ak = A\nsk = %s\n" % SK, r"not an INI file \(MissingSectionHeaderError at line 1\)"),
        ("[basic]\nak = A\n%s\n" % SK, r"not an INI file \(ParsingError at line 3\)"),
        ("[basic]\nsk = %s\nsk = %s\n" % (SK, SK), r"not an INI file \(DuplicateOptionError at line 3\)"),
        ("[basic]\nak = A\nsk = one\n  %s\n" % SK, r"sk in \[basic\] contains a control character"),
        ("[basic]\nak = A\nsk = B\niam_endpoint = ftp://iam\n", r"iam_endpoint in \[basic\] must be a URL"),
    ],
)
def test_credentials_file_problems_never_show_values(transport, tmp_path, text, message):
    path = write_file(tmp_path, text)
    with pytest.raises(CredentialsConfigError, match=message) as caught:
        CredentialsFile(path).obtain(transport, DEADLINE)
    assert str(caught.value).startswith("credentials_file (HUAWEICLOUD_SDK_CREDENTIALS_FILE): %s" % path)
    assert_clean(str(caught.value))


def test_credentials_file_keys_are_case_insensitive_and_interpolation_free(transport, tmp_path):
    path = write_file(tmp_path, "[basic]\nAK = A\nSk = 50%%off%s\n" % SK)
    assert CredentialsFile(path).obtain(transport, DEADLINE).secret_key == "50%%off%s" % SK


# -- OIDC through STS ------------------------------------------------------------------------------------------------


def oidc_body(id_token, session="oidc-sts-session", duration=3600):
    return {
        "provider_urn": "iam::1234:oidc-provider:github",
        "agency_urn": "iam::1234:agency:ci",
        "agency_session_name": session,
        "id_token": id_token,
        "duration_seconds": duration,
    }


def test_oidc_exchange(transport, id_token_file):
    transport.answer("POST", STS + "/v5/agencies/assume-with-oidc", ok(STS_ANSWER))
    result = OidcSts("iam::1234:oidc-provider:github", "iam::1234:agency:ci", token_file=str(id_token_file)).obtain(transport, DEADLINE)
    assert sent(transport) == [("POST", STS + "/v5/agencies/assume-with-oidc", {"Content-Type": JSON_TYPE}, oidc_body(ID_TOKEN))]
    assert transport.calls[0]["sign_with"] is None
    assert (result.access_key, result.secret_key, result.security_token) == ("TEMPAK", TEMP_SK, TEMP_TOKEN)
    assert result.expires_at == datetime.datetime(2024, 5, 1, 13, 0, 0, 123000, tzinfo=UTC)
    assert ID_TOKEN in transport.secrets


def test_oidc_token_file_read_again_and_inline_token_wins(transport, id_token_file):
    transport.answer("POST", STS + "/v5/agencies/assume-with-oidc", ok(STS_ANSWER))
    provider = OidcSts("iam::1234:oidc-provider:github", "iam::1234:agency:ci", token_file=str(id_token_file), session_name="deploy", duration=900)
    provider.obtain(transport, DEADLINE)
    id_token_file.write_text(ID_TOKEN_2 + "\n")
    provider.obtain(transport, DEADLINE)
    assert [c["body"] for c in transport.calls] == [oidc_body(ID_TOKEN, "deploy", 900), oidc_body(ID_TOKEN_2, "deploy", 900)]
    inline = OidcSts("iam::1234:oidc-provider:github", "iam::1234:agency:ci", id_token=ID_TOKEN_2, token_file="/nonexistent")
    inline.obtain(transport, DEADLINE)
    assert transport.calls[-1]["body"]["id_token"] == ID_TOKEN_2


def test_oidc_needs_sts_endpoint_and_a_token():
    with pytest.raises(CredentialsConfigError, match="needs an id token"):
        OidcSts("p", "a")
    with pytest.raises(CredentialsConfigError, match="obtained from STS"):
        OidcSts("p", "a", id_token=ID_TOKEN).obtain(FakeTransport(sts_endpoint=""), DEADLINE)


def test_oidc_matches_the_sdk(transport):
    internal = pytest.importorskip("huaweicloudsdkcore.auth.internal")
    from huaweicloudsdkcore.http.http_config import HttpConfig

    requests_seen = []

    def do_request_sync(request):
        requests_seen.append(request)
        return SimpleNamespace(content=json.dumps(STS_ANSWER).encode(), headers={})

    client = SimpleNamespace(config=HttpConfig.get_default_config(), do_request_sync=do_request_sync)
    accessor = internal.OidcStsAccessor("iam::1234:oidc-provider:github", "iam::1234:agency:ci", ID_TOKEN, agency_session_name="oidc-sts-session")
    credential = accessor.get_credential(sts_endpoint=STS, http_client=client)
    transport.answer("POST", STS + "/v5/agencies/assume-with-oidc", ok(STS_ANSWER))
    ours = OidcSts("iam::1234:oidc-provider:github", "iam::1234:agency:ci", id_token=ID_TOKEN).obtain(transport, DEADLINE)
    (request,) = requests_seen
    call = transport.calls[0]
    assert call["url"] == "%s://%s%s" % (request.schema, request.host, request.resource_path) and call["method"] == request.method
    assert call["headers"] == dict((k, v) for k, v in request.header_params.items() if k != "User-Agent")
    assert call["body"] == json.loads(request.body)
    assert (ours.access_key, ours.secret_key, ours.security_token) == (credential.access, credential.secret, credential.security_token)


# -- pod identity ------------------------------------------------------------------------------------------------------

POD_URI = "http://169.254.170.2/v1/credentials/pod-identity"


@pytest.fixture
def pod_token_file(tmp_path):
    path = tmp_path / "pod-token"
    path.write_text(POD_TOKEN + "\n")
    return path


@pytest.mark.parametrize(
    "answer",
    [
        {"credential": {"access": "PODAK", "secret": TEMP_SK, "securitytoken": TEMP_TOKEN, "expires_at": EXPIRES}},
        {"credentials": {"accessKeyId": "PODAK", "secretAccessKey": TEMP_SK, "securityToken": TEMP_TOKEN, "expiration": EXPIRES}},
        {"access_key_id": "PODAK", "secret_access_key": TEMP_SK, "security_token": TEMP_TOKEN, "expires_at": "2024-05-01T18:00:00Z"},
    ],
)
def test_pod_identity(transport, pod_token_file, answer):
    transport.answer("POST", POD_URI, ok(answer))
    result = PodIdentity(POD_URI, str(pod_token_file)).obtain(transport, DEADLINE)
    assert sent(transport) == [("POST", POD_URI, {"Authorization": POD_TOKEN, "Content-Type": "application/json"}, {})]
    assert transport.calls[0]["sign_with"] is None
    assert (result.access_key, result.secret_key, result.security_token) == ("PODAK", TEMP_SK, TEMP_TOKEN)
    assert result.expires_at == datetime.datetime(2024, 5, 1, 18, 0, tzinfo=UTC)
    assert POD_TOKEN in transport.secrets and result.source == "CCE pod identity (HC_CONTAINER_CREDENTIALS_FULL_URI)"


def test_pod_identity_rereads_its_token_and_refuses_odd_uris(transport, pod_token_file):
    transport.answer("POST", POD_URI, ok(IAM_ANSWER))
    provider = PodIdentity(POD_URI, str(pod_token_file))
    provider.obtain(transport, DEADLINE)
    pod_token_file.write_text("rotated")
    provider.obtain(transport, DEADLINE)
    assert [c["headers"]["Authorization"] for c in transport.calls] == [POD_TOKEN, "rotated"]
    with pytest.raises(CredentialsConfigError, match="HC_CONTAINER_CREDENTIALS_FULL_URI must be a URL"):
        PodIdentity("file:///etc/passwd", str(pod_token_file))


def test_pod_identity_matches_the_sdk(monkeypatch, transport, pod_token_file):
    internal = pytest.importorskip("huaweicloudsdkcore.auth.internal")
    seen = []

    def post(url, **kwargs):
        seen.append((url, kwargs["headers"], kwargs["json"]))
        return SimpleNamespace(raise_for_status=lambda: None, content=json.dumps(IAM_ANSWER).encode())

    monkeypatch.setattr(internal.requests, "post", post)
    credential = internal.PodIdentityAccessor(POD_URI, str(pod_token_file)).get_credential()
    transport.answer("POST", POD_URI, ok(IAM_ANSWER))
    ours = PodIdentity(POD_URI, str(pod_token_file)).obtain(transport, DEADLINE)
    ((url, headers, body),) = seen
    call = transport.calls[0]
    # requests sends json={} as the body {} with Content-Type: application/json.
    assert (call["url"], call["headers"]["Authorization"], call["body"]) == (url, headers["Authorization"], body)
    assert (ours.access_key, ours.secret_key, ours.security_token) == (credential.access, credential.secret, credential.security_token)


# -- instance metadata ---------------------------------------------------------------------------------------------

META = "http://169.254.169.254"
META_TOKEN_URL = META + "/meta-data/latest/api/token"
META_KEY_URL = META + "/openstack/latest/securitykey"
META_ANSWER = {"credential": {"access": "ECSAK", "secret": TEMP_SK, "securitytoken": TEMP_TOKEN, "expires_at": "2024-05-01T13:00:00.000000Z"}}


def test_metadata_with_a_session_token(transport):
    transport.answer("PUT", META_TOKEN_URL, ok(META_TOKEN + "\n")).answer("GET", META_KEY_URL, ok(META_ANSWER))
    provider = InstanceMetadata()
    result = provider.obtain(transport, DEADLINE)
    assert sent(transport) == [
        ("PUT", META_TOKEN_URL, {"X-Metadata-Token-Ttl-Seconds": "21600"}, None),
        ("GET", META_KEY_URL, {"X-Metadata-Token": META_TOKEN}, None),
    ]
    assert transport.calls[0]["expect"] == "text" and transport.calls[0]["retry"] is False
    assert transport.calls[1]["retry"] is True and transport.calls[1]["connect_timeout"] is None
    assert (result.access_key, result.secret_key, result.security_token) == ("ECSAK", TEMP_SK, TEMP_TOKEN)
    assert META_TOKEN in transport.secrets
    # The session token is reused while it is valid.
    provider.obtain(transport, DEADLINE)
    assert [c["method"] for c in transport.calls] == ["PUT", "GET", "GET"]
    transport.advance(6 * 3600)
    provider.obtain(transport, DEADLINE)
    assert [c["method"] for c in transport.calls] == ["PUT", "GET", "GET", "PUT", "GET"]


def test_the_instance_and_pod_credential_services_are_called_direct_and_nothing_else_is(tmp_path, transport, pod_token_file):
    # "direct" (never a proxy) follows the kind of source, whatever its address: a metadata endpoint on any host too.
    other = "http://metadata.internal.example:8080"
    transport.answer("PUT", other + "/meta-data/latest/api/token", ok(META_TOKEN)).answer("GET", other + "/openstack/latest/securitykey", ok(META_ANSWER))
    transport.answer("POST", POD_URI, ok(IAM_ANSWER))
    InstanceMetadata(other).obtain(transport, DEADLINE)
    default_chain({"HUAWEICLOUD_METADATA_ENDPOINT": other}, str(tmp_path)).obtain(transport, DEADLINE)
    PodIdentity(POD_URI, str(pod_token_file)).obtain(transport, DEADLINE)
    assert [call["direct"] for call in transport.calls] == [True] * len(transport.calls) and len(transport.calls) == 5
    # An agency assumed with the instance's credentials goes to IAM, which the proxy settings serve as usual.
    agency = Agency(InstanceMetadata(other), "deployer", "acme")
    transport.answer("POST", IAM + "/v3.0/OS-CREDENTIAL/securitytokens", ok(IAM_ANSWER))
    agency.obtain(transport, DEADLINE)
    assert transport.calls[-1]["url"].startswith(IAM) and transport.calls[-1]["direct"] is False


@pytest.mark.parametrize("status", [404, 405, 503])
def test_metadata_falls_back_to_no_token(transport, status):
    transport.answer("PUT", META_TOKEN_URL, fail(status, "not supported")).answer("GET", META_KEY_URL, ok(META_ANSWER))
    provider = InstanceMetadata()
    assert provider.obtain(transport, DEADLINE).access_key == "ECSAK"
    assert sent(transport) == [("PUT", META_TOKEN_URL, {"X-Metadata-Token-Ttl-Seconds": "21600"}, None), ("GET", META_KEY_URL, {}, None)]
    provider.obtain(transport, DEADLINE)
    assert [c["method"] for c in transport.calls] == ["PUT", "GET", "GET"]


@pytest.mark.parametrize("status", [400, 403, 500])
def test_metadata_token_errors_other_than_the_fallback_ones_fail(transport, status):
    transport.answer("PUT", META_TOKEN_URL, fail(status, "nope"))
    with pytest.raises(ModelArtsError) as caught:
        InstanceMetadata().obtain(transport, DEADLINE)
    assert caught.value.status == status and len(transport.calls) == 1


def test_metadata_401_gets_a_new_session_token_once(transport):
    transport.answer("PUT", META_TOKEN_URL, ok("old-session"), ok(META_TOKEN))
    transport.answer("GET", META_KEY_URL, fail(401, "token expired"), ok(META_ANSWER))
    assert InstanceMetadata().obtain(transport, DEADLINE).access_key == "ECSAK"
    assert [(c["method"], c["headers"].get("X-Metadata-Token")) for c in transport.calls] == [
        ("PUT", None),
        ("GET", "old-session"),
        ("PUT", None),
        ("GET", META_TOKEN),
    ]


def test_metadata_401_without_an_agency_is_not_retried(transport):
    transport.answer("PUT", META_TOKEN_URL, ok(META_TOKEN))
    transport.answer("GET", META_KEY_URL, fail(401, "Please configure Cloud Service Agency first"))
    with pytest.raises(ModelArtsError) as caught:
        InstanceMetadata().obtain(transport, DEADLINE)
    assert caught.value.status == 401 and len(transport.calls) == 2


def test_metadata_matches_the_sdk(monkeypatch):
    internal = pytest.importorskip("huaweicloudsdkcore.auth.internal")
    for token_status in (200, 404):
        seen = []

        def put(url, headers=None, timeout=None, status=token_status):
            seen.append(("PUT", url, dict(headers or {})))
            return SimpleNamespace(status_code=status, text=META_TOKEN if status == 200 else "")

        def get(url, headers=None, timeout=None):
            seen.append(("GET", url, dict(headers or {})))
            return SimpleNamespace(status_code=200, text=json.dumps(META_ANSWER))

        monkeypatch.setattr(internal.requests, "put", put)
        monkeypatch.setattr(internal.requests, "get", get)
        credential = internal.MetadataAccessor().get_credential()
        transport = FakeTransport()
        transport.answer("PUT", META_TOKEN_URL, ok(META_TOKEN) if token_status == 200 else fail(token_status))
        transport.answer("GET", META_KEY_URL, ok(META_ANSWER))
        ours = InstanceMetadata().obtain(transport, DEADLINE)
        assert [(c["method"], c["url"], c["headers"]) for c in transport.calls] == seen
        assert (ours.access_key, ours.secret_key, ours.security_token) == (credential.access, credential.secret, credential.security_token)


# -- answers -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer,message",
    [
        ({"credential": {"secret": TEMP_SK, "securitytoken": TEMP_TOKEN}}, "the answer has no access key"),
        ({"credential": {"access": "AK", "securitytoken": TEMP_TOKEN}}, "the answer has no secret key"),
        ({"credential": {"access": "AK", "secret": {"nested": TEMP_SK}}}, r"has a secret key that is not a string \(a JSON object\)"),
        ({"credential": {"access": "AK", "secret": TEMP_SK + "\r\nX-Injected: 1"}}, "whitespace or a control character"),
        ({"credential": [TEMP_SK]}, "holds no credential object"),
        (None, "the answer is empty"),
    ],
)
def test_bad_answers_never_show_secrets(transport, pod_token_file, answer, message):
    transport.answer("POST", POD_URI, ok(answer))
    with pytest.raises(ModelArtsError, match=message) as caught:
        PodIdentity(POD_URI, str(pod_token_file)).obtain(transport, DEADLINE)
    assert caught.value.status == 200 and caught.value.request_id == "req-1"
    assert_clean(str(caught.value))
    if isinstance(answer, dict) and isinstance(answer.get("credential", {}), dict) and isinstance(answer["credential"].get("secret"), str):
        assert answer["credential"]["secret"] in transport.secrets


def test_expiry_with_fraction_and_offset(transport, pod_token_file):
    transport.answer("POST", POD_URI, ok({"access": "AK", "secret": TEMP_SK, "expires_at": "2024-05-01T20:00:00.000+08:00"}))
    assert PodIdentity(POD_URI, str(pod_token_file)).obtain(transport, DEADLINE).expires_at == datetime.datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def test_unreadable_expiry_means_unknown(transport, pod_token_file):
    transport.answer("POST", POD_URI, ok({"access": "AK", "secret": TEMP_SK, "expires_at": "soon"}))
    result = PodIdentity(POD_URI, str(pod_token_file)).obtain(transport, DEADLINE)
    assert result.expires_at is None and result.security_token is None


# -- agency --------------------------------------------------------------------------------------------------------


class Scripted(Provider):
    """A provider that hands out numbered AK/SK with a given lifetime, counting its obtains."""

    def __init__(self, lifetime=None, refreshable=True, delay=0.0, failures=()):
        self.name = "scripted"
        self.refreshable = refreshable
        self.lifetime = lifetime
        self.delay = delay
        self.failures = list(failures)
        self.count = 0
        self.lock = threading.Lock()

    def obtain(self, transport, deadline):
        if self.delay:
            time.sleep(self.delay)
        with self.lock:
            if self.failures:
                failure = self.failures.pop(0)
                if failure is not None:
                    raise failure
            self.count += 1
            number = self.count
        expires = transport.utcnow() + datetime.timedelta(seconds=self.lifetime) if self.lifetime else None
        return Credentials(access_key="AK%d" % number, secret_key="%s-%d" % (SK, number), expires_at=expires, source=self.name, project_id="base-project")


def assume_body(duration=3600):
    return {
        "auth": {
            "identity": {
                "methods": ["assume_role"],
                "assume_role": {"domain_name": "owner-account", "agency_name": "ci-deployer", "duration_seconds": duration},
            }
        }
    }


def test_agency_is_assumed_with_the_base_credentials(transport):
    transport.answer("POST", IAM + "/v3.0/OS-CREDENTIAL/securitytokens", ok(IAM_ANSWER, status=201))
    base = Scripted(lifetime=3600)
    provider = Agency(base, "ci-deployer", "owner-account")
    result = provider.obtain(transport, DEADLINE)
    assert sent(transport) == [("POST", IAM + "/v3.0/OS-CREDENTIAL/securitytokens", {"Content-Type": JSON_TYPE}, assume_body())]
    signer = transport.calls[0]["sign_with"]
    assert signer.access_key == "AK1" and signer.kind == "aksk"
    assert (result.access_key, result.secret_key, result.security_token) == ("TEMPAK", TEMP_SK, TEMP_TOKEN)
    # The agency's credentials belong to the delegating account: the base's project is not passed on.
    assert result.project_id is None
    assert result.source == "agency ci-deployer of account owner-account (agency_name) with scripted"


def test_agency_renews_a_refused_base_once(transport):
    transport.answer(
        "POST", IAM + "/v3.0/OS-CREDENTIAL/securitytokens", fail(401, {"error_code": "APIG.0301", "error_msg": "Incorrect IAM authentication"}), ok(IAM_ANSWER)
    )
    base = Scripted(lifetime=3600)
    assert Agency(base, "ci-deployer", "owner-account", 900).obtain(transport, DEADLINE).access_key == "TEMPAK"
    assert [c["sign_with"].access_key for c in transport.calls] == ["AK1", "AK2"] and base.count == 2
    assert transport.calls[0]["body"] == assume_body(900)


def test_agency_with_a_static_base_reports_the_refusal(transport):
    transport.answer("POST", IAM + "/v3.0/OS-CREDENTIAL/securitytokens", fail(401, {"error_code": "APIG.0301", "error_msg": "Incorrect IAM authentication"}))
    with pytest.raises(ModelArtsError) as caught:
        Agency(Static(access_key="AK", secret_key=SK), "ci-deployer", "owner-account").obtain(transport, DEADLINE)
    assert caught.value.status == 401 and len(transport.calls) == 1
    assert_clean(str(caught.value))


def test_agency_uses_the_base_credentials_iam_endpoint(transport, tmp_path):
    path = write_file(tmp_path, "[basic]\nak = A\nsk = %s\niam_endpoint = https://iam.example.test\n" % SK)
    transport.answer("POST", "https://iam.example.test/v3.0/OS-CREDENTIAL/securitytokens", ok(IAM_ANSWER))
    Agency(CredentialsFile(path), "ci-deployer", "owner-account").obtain(transport, DEADLINE)
    assert transport.calls[0]["sign_with"].secret_key == SK


@pytest.mark.parametrize("duration", [899, 86401, 0, -5, "abc", True, 1.5])
def test_agency_duration_bounds(duration):
    with pytest.raises(CredentialsConfigError, match="agency_duration"):
        Agency(Scripted(), "a", "d", duration)


def test_agency_accepts_the_bounds():
    assert Agency(Scripted(), "a", "d", 900).duration == 900
    assert Agency(Scripted(), "a", "d", "86400").duration == 86400


# -- renewal -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lifetime,renew_after", [(20, 20 * 2 / 3.0), (900, 600.0), (86400, 86100.0)])
def test_renewal_timing(transport, lifetime, renew_after):
    provider = Scripted(lifetime=lifetime)
    renewing = Renewing(provider)
    first = renewing.current(transport, DEADLINE)
    transport.advance(renew_after - 0.01)
    assert renewing.current(transport, DEADLINE) is first and provider.count == 1
    transport.advance(0.01)
    second = renewing.current(transport, DEADLINE)
    assert second is not first and provider.count == 2 and second.access_key == "AK2"
    # The next renewal is measured from the new credentials.
    transport.advance(renew_after - 0.01)
    assert renewing.current(transport, DEADLINE) is second


def test_credentials_without_expiry_are_renewed_only_when_refused(transport):
    provider = Scripted(lifetime=None)
    renewing = Renewing(provider)
    first = renewing.current(transport, DEADLINE)
    transport.advance(30 * 86400)
    assert renewing.current(transport, DEADLINE) is first
    assert renewing.refused(transport, first, DEADLINE) is not first and provider.count == 2


def test_failed_renewal_keeps_valid_credentials_then_raises_once_expired(transport):
    error = ModelArtsError("get credentials: HTTP 503", status=503, transient=True)
    provider = Scripted(lifetime=900, failures=[None, error, error, error])
    renewing = Renewing(provider)
    first = renewing.current(transport, DEADLINE)
    transport.advance(600)
    assert renewing.current(transport, DEADLINE) is first
    # Tried again 30 s later, not at every call.
    transport.advance(10)
    assert renewing.current(transport, DEADLINE) is first and len(provider.failures) == 2
    transport.advance(20)
    assert renewing.current(transport, DEADLINE) is first and len(provider.failures) == 1
    transport.advance(300)
    with pytest.raises(ModelArtsError, match="HTTP 503"):
        renewing.current(transport, DEADLINE)
    assert renewing.current(transport, DEADLINE).access_key == "AK2"


def test_a_refusal_seen_by_many_threads_renews_once(transport):
    provider = Scripted(lifetime=3600, delay=0.05)
    renewing = Renewing(provider)
    stale = renewing.current(transport, DEADLINE)
    barrier = threading.Barrier(8)
    results = []

    def worker():
        barrier.wait()
        results.append(renewing.refused(transport, stale, DEADLINE))

    threads = [threading.Thread(target=worker) for _number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert provider.count == 2 and len(results) == 8
    assert all(result is results[0] for result in results) and results[0] is not stale
    # A refusal of credentials already replaced does not renew again.
    assert renewing.refused(transport, stale, DEADLINE) is results[0] and provider.count == 2


def test_concurrent_first_use_obtains_once(transport):
    provider = Scripted(lifetime=3600, delay=0.05)
    renewing = Renewing(provider)
    results = []
    threads = [threading.Thread(target=lambda: results.append(renewing.current(transport, DEADLINE))) for _number in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert provider.count == 1 and len(set(map(id, results))) == 1


def test_renewing_remembers_every_secret(transport):
    renewing = Renewing(Scripted(lifetime=20))
    renewing.current(transport, DEADLINE)
    transport.advance(15)
    renewing.current(transport, DEADLINE)
    assert "%s-1" % SK in transport.secrets and "%s-2" % SK in transport.secrets


# -- the default chain -----------------------------------------------------------------------------------------------


def test_chain_env_file_first(tmp_path, transport):
    path = write_file(tmp_path, "[basic]\nak = ENVFILE\nsk = %s\n" % SK, "custom")
    home = tmp_path / "home"
    (home / ".huaweicloud").mkdir(parents=True)
    (home / ".huaweicloud" / "credentials").write_text("[basic]\nak = HOMEFILE\nsk = x\n")
    environ = {"HUAWEICLOUD_SDK_CREDENTIALS_FILE": path, "HC_CONTAINER_CREDENTIALS_FULL_URI": POD_URI, "HC_CONTAINER_AUTHORIZATION_TOKEN_FILE": "/t"}
    provider = default_chain(environ, str(home))
    assert isinstance(provider, CredentialsFile) and provider.obtain(transport, DEADLINE).access_key == "ENVFILE"
    provider = default_chain({}, str(home))
    assert isinstance(provider, CredentialsFile) and provider.obtain(transport, DEADLINE).access_key == "HOMEFILE"


def test_the_chain_s_home_and_file_names_are_the_environment_s(tmp_path, monkeypatch):
    # Issue 36: "~" is the HOME of the environment the task sees, not the process's (the controller's worker).
    monkeypatch.setenv("HOME", str(tmp_path / "controller"))
    home = tmp_path / "task"
    (home / ".huaweicloud").mkdir(parents=True)
    (home / ".huaweicloud" / "credentials").write_text("[basic]\nak = TASKHOME\nsk = %s\n" % SK)
    provider = default_chain({"HOME": str(home)})
    assert isinstance(provider, CredentialsFile) and provider.path == str(home / ".huaweicloud" / "credentials")
    provider = default_chain({"HOME": str(home), "HUAWEICLOUD_SDK_CREDENTIALS_FILE": "~/.huaweicloud/credentials"})
    assert isinstance(provider, CredentialsFile)
    assert read_text_file(provider.path, "opt", environ={"HOME": str(home)}).startswith("[basic]\nak = TASKHOME")
    with pytest.raises(CredentialsConfigError, match="cannot read ~/.huaweicloud/credentials"):
        read_text_file("~/.huaweicloud/credentials", "opt")


def test_chain_env_file_that_does_not_exist_is_an_error(tmp_path):
    with pytest.raises(CredentialsConfigError, match="HUAWEICLOUD_SDK_CREDENTIALS_FILE names .*nowhere, which does not exist"):
        default_chain({"HUAWEICLOUD_SDK_CREDENTIALS_FILE": str(tmp_path / "nowhere")}, str(tmp_path))


def test_chain_pod_identity_before_metadata(tmp_path, transport, pod_token_file):
    environ = {"HC_CONTAINER_CREDENTIALS_FULL_URI": POD_URI, "HC_CONTAINER_AUTHORIZATION_TOKEN_FILE": str(pod_token_file)}
    provider = default_chain(environ, str(tmp_path))
    assert isinstance(provider, PodIdentity)
    transport.answer("POST", POD_URI, ok(IAM_ANSWER))
    assert provider.obtain(transport, DEADLINE).access_key == "TEMPAK"


@pytest.mark.parametrize("name", ["HC_CONTAINER_CREDENTIALS_FULL_URI", "HC_CONTAINER_AUTHORIZATION_TOKEN_FILE"])
def test_chain_half_a_pod_identity_is_an_error(tmp_path, name):
    with pytest.raises(CredentialsConfigError, match="%s is set but" % name):
        default_chain({name: POD_URI if name.endswith("URI") else "/token"}, str(tmp_path))


def test_chain_metadata_probe_is_quick_then_normal(tmp_path, transport):
    provider = default_chain({}, str(tmp_path))
    assert isinstance(provider, Probing)
    transport.answer("PUT", META_TOKEN_URL, ok(META_TOKEN)).answer("GET", META_KEY_URL, ok(META_ANSWER))
    renewing = Renewing(provider)
    assert renewing.current(transport, DEADLINE).access_key == "ECSAK"
    assert [(c["connect_timeout"], c["retry"], c["within"]) for c in transport.calls] == [(1.0, False, 2.0), (1.0, False, 2.0)]
    transport.advance(3600)
    renewing.current(transport, DEADLINE)
    assert [(c["connect_timeout"], c["retry"], c["within"]) for c in transport.calls[2:]] == [(None, True, None)]


def test_chain_metadata_endpoint_from_the_environment(tmp_path, transport):
    provider = default_chain({"HUAWEICLOUD_METADATA_ENDPOINT": "http://127.0.0.1:8081/"}, str(tmp_path))
    transport.answer("PUT", "http://127.0.0.1:8081/meta-data/latest/api/token", fail(404))
    transport.answer("GET", "http://127.0.0.1:8081/openstack/latest/securitykey", ok(META_ANSWER))
    assert provider.obtain(transport, DEADLINE).access_key == "ECSAK"
    with pytest.raises(CredentialsConfigError, match="HUAWEICLOUD_METADATA_ENDPOINT must be a URL"):
        default_chain({"HUAWEICLOUD_METADATA_ENDPOINT": "169.254.169.254"}, str(tmp_path))


def test_chain_nothing_serves_lists_every_source(tmp_path, transport):
    transport.answer("PUT", META_TOKEN_URL, unreachable(META_TOKEN_URL))
    provider = default_chain({}, str(tmp_path))
    with pytest.raises(NoCredentialsError) as caught:
        Renewing(provider).current(transport, DEADLINE)
    error = caught.value
    text = str(error)
    assert [source for source, _reason in error.skipped] == ["credentials file", "CCE pod identity", "instance metadata"]
    assert "credentials file: HUAWEICLOUD_SDK_CREDENTIALS_FILE is not set and %s does not exist" % (tmp_path / ".huaweicloud" / "credentials") in text
    assert "CCE pod identity: HC_CONTAINER_CREDENTIALS_FULL_URI and HC_CONTAINER_AUTHORIZATION_TOKEN_FILE are not set" in text
    assert "instance metadata: nothing answered at http://169.254.169.254 (no connection: not an ECS or BMS instance" in text
    assert "HTTPConnectionPool" not in text and "ConnectTimeout" not in text and "\n" not in text
    assert isinstance(error, ModelArtsError) and error.__suppress_context__ and error.__cause__ is None
    assert len(transport.calls) == 1 and transport.calls[0]["connect_timeout"] == 1.0 and transport.calls[0]["retry"] is False


@pytest.mark.parametrize(
    "key_answer,reason",
    [
        (fail(401, "Please configure Cloud Service Agency first"), "has no agency"),
        (fail(404, "<html>not found</html>"), "answered HTTP 404"),
        (ok({"unexpected": True}), "instance metadata: the answer has no access key"),
        (unreachable(META_KEY_URL), "nothing answered at http://169.254.169.254 \\(no connection"),
        (unreachable(META_KEY_URL, connected=True), "http://169.254.169.254 accepted the connection but answered too slowly \\(no answer within 2s"),
        (unreachable(META_KEY_URL, connected=None), "no answer from http://169.254.169.254 \\(ConnectTimeout: HTTPConnectionPool"),
    ],
)
def test_chain_metadata_reasons(tmp_path, transport, key_answer, reason):
    transport.answer("PUT", META_TOKEN_URL, fail(404)).answer("GET", META_KEY_URL, key_answer)
    with pytest.raises(NoCredentialsError, match=reason) as caught:
        default_chain({}, str(tmp_path)).obtain(transport, DEADLINE)
    assert "instance metadata: " in str(caught.value)


def test_chain_without_a_home_directory(transport):
    transport.answer("PUT", META_TOKEN_URL, unreachable(META_TOKEN_URL))
    with pytest.raises(NoCredentialsError, match="HUAWEICLOUD_SDK_CREDENTIALS_FILE is not set and there is no home directory"):
        default_chain({}, "").obtain(transport, DEADLINE)


# -- provider_for --------------------------------------------------------------------------------------------------


def test_provider_for_each_kind(tmp_path, id_token_file):
    assert isinstance(provider_for(*credential_parts("aksk", {"access_key": "AK", "secret_key": SK}), {}), Static)
    assert (
        provider_for(*credential_parts("aksk", {"access_key": " AK ", "secret_key": SK, "security_token": TEMP_TOKEN}), {})
        .obtain(FakeTransport(), 1)
        .security_token
        == TEMP_TOKEN
    )
    assert provider_for(*credential_parts("auth_token", {"auth_token": IAM_TOKEN}), {}).obtain(FakeTransport(), 1).auth_token == IAM_TOKEN
    password = provider_for(*credential_parts("password", {"username": "u", "password": PASSWORD, "domain_name": "d", "region": "cn-north-4"}), {})
    assert isinstance(password, Password) and password.region == "cn-north-4"
    assert isinstance(provider_for(*credential_parts("credentials_file", {"credentials_file": "/x"}), {}), CredentialsFile)
    federated = provider_for(*credential_parts("federated", {"idp_id": "github-ci", "id_token_file": str(id_token_file)}), {})
    assert isinstance(federated, Federated) and federated.id_token_file == str(id_token_file)
    assert isinstance(provider_for(*credential_parts("default", {}), {}, str(tmp_path)), Probing)


def oidc_provider(levels, environ):
    """The provider the door builds for these option levels over this environment."""
    settings = resolve(levels, dict(environ, HUAWEICLOUD_SDK_REGION="cn-north-4", HUAWEICLOUD_SDK_PROJECT_ID="p"))
    return provider_for(settings.credentials, settings.service, environ)


def test_provider_for_oidc_reads_its_environment(id_token_file):
    env = {"HUAWEICLOUD_OIDC_PROVIDER_URN": "iam::1234:oidc-provider:github", "HUAWEICLOUD_OIDC_AGENCY_URN": "iam::1234:agency:ci"}
    env_file = dict(env, HUAWEICLOUD_OIDC_TOKEN_FILE=str(id_token_file))
    provider = oidc_provider([], dict(env_file, HUAWEICLOUD_OIDC_SESSION_NAME="deploy", HUAWEICLOUD_OIDC_DURATION_SECONDS="1800"))
    transport = FakeTransport().answer("POST", STS + "/v5/agencies/assume-with-oidc", ok(STS_ANSWER))
    provider.obtain(transport, DEADLINE)
    assert transport.calls[0]["body"] == oidc_body(ID_TOKEN, "deploy", 1800)
    # The inline token wins over the token file of the same level...
    oidc_provider([], dict(env_file, HUAWEICLOUD_OIDC_ID_TOKEN=ID_TOKEN_2)).obtain(transport, DEADLINE)
    assert transport.calls[1]["body"] == oidc_body(ID_TOKEN_2)
    # ...but never over a token file the task gives: options win over the environment.
    task = [(LEVEL_OPTION, {"oidc_token_file": str(id_token_file)})]
    oidc_provider(task, dict(env, HUAWEICLOUD_OIDC_ID_TOKEN=ID_TOKEN_2)).obtain(transport, DEADLINE)
    assert transport.calls[2]["body"] == oidc_body(ID_TOKEN)
    with pytest.raises(ConnectionConfigError, match=r"oidc_duration_seconds \(environment variable HUAWEICLOUD_OIDC_DURATION_SECONDS\) must be an integer"):
        oidc_provider([], dict(env_file, HUAWEICLOUD_OIDC_DURATION_SECONDS="an hour"))
    with pytest.raises(CredentialsConfigError, match="between 900 and 43200"):
        oidc_provider([], dict(env_file, HUAWEICLOUD_OIDC_DURATION_SECONDS="60"))
    with pytest.raises(ConnectionConfigError, match=r"incomplete credentials.*oidc_agency_urn \(HUAWEICLOUD_OIDC_AGENCY_URN\) missing"):
        oidc_provider([(LEVEL_OPTION, {"oidc_provider_urn": "p", "oidc_token_file": "/t"})], {})
    with pytest.raises(ConnectionConfigError, match=r"incomplete credentials.*oidc_token_file \(HUAWEICLOUD_OIDC_TOKEN_FILE\) missing"):
        oidc_provider([(LEVEL_OPTION, {"oidc_provider_urn": "p", "oidc_agency_urn": "a"})], {})
    with pytest.raises(CredentialsConfigError, match="needs an id token"):
        provider_for(*credential_parts("oidc", {"oidc_provider_urn": "p", "oidc_agency_urn": "a"}), {})


def test_provider_for_wraps_an_agency(tmp_path):
    values = {"access_key": "AK", "secret_key": SK, "agency_name": "ci-deployer", "agency_domain_name": "owner-account"}
    provider = provider_for(*credential_parts("aksk", values), {})
    assert isinstance(provider, Agency) and provider.duration == 3600 and isinstance(provider.base.provider, Static)
    assert provider_for(*credential_parts("aksk", dict(values, agency_duration=7200)), {}).duration == 7200
    assert isinstance(provider_for(*credential_parts("default", {"agency_name": "a", "agency_domain_name": "d"}), {}, str(tmp_path)).base.provider, Probing)
    with pytest.raises(CredentialsConfigError, match="agency_name is set without agency_domain_name"):
        provider_for(*credential_parts("aksk", {"access_key": "AK", "secret_key": SK, "agency_name": "a"}), {})
    with pytest.raises(CredentialsConfigError, match="agency_domain_name and agency_duration set without agency_name"):
        provider_for(*credential_parts("aksk", {"access_key": "AK", "secret_key": SK, "agency_domain_name": "d", "agency_duration": 900}), {})
    with pytest.raises(CredentialsConfigError, match="agency_duration must be between 900 and 86400 seconds, got 100000"):
        provider_for(*credential_parts("aksk", dict(values, agency_duration=100000)), {})


def test_provider_for_missing_values_and_unknown_kind():
    with pytest.raises(CredentialsConfigError, match=r"federated identity credentials need id_token_file \(HUAWEICLOUD_SDK_ID_TOKEN_FILE\)"):
        provider_for(*credential_parts("federated", {"idp_id": "x", "id_token_file": " "}), {})
    with pytest.raises(CredentialsConfigError, match=r"AK/SK credentials need secret_key \(HUAWEICLOUD_SDK_SK\)"):
        provider_for(*credential_parts("aksk", {"access_key": "AK"}), {})
    with pytest.raises(CredentialsConfigError, match="unknown credential kind 'magic'"):
        provider_for(*credential_parts("magic", {}), {})


def test_config_errors_are_connection_config_errors():
    assert issubclass(CredentialsConfigError, ConnectionConfigError)
    assert issubclass(NoCredentialsError, ModelArtsError)


# -- issue 28: credential answers, the STS host, a failed first fetch ---------------------------------------------


def test_answer_secrets_are_found_in_raw_bytes_whole_or_cut():
    body = ('{"credential": {"access": "AK", "secret": "%s", "securitytoken": "%s", "expires_at": "x"}}' % (TEMP_SK, TEMP_TOKEN)).encode()
    assert set(cred.answer_secrets({}, body)) == {TEMP_SK, TEMP_TOKEN}
    # Cut inside the token: its start is still a secret; an escaped value is found as written and as decoded.
    cut = body[: body.index(TEMP_TOKEN.encode()) + 12]
    assert TEMP_TOKEN[:12] in cred.answer_secrets({}, cut)
    assert "ab/cdefgh" in cred.answer_secrets({}, b'{"Secret_Access_Key": "ab\\/cdefgh"} trailing')
    assert cred.answer_secrets({"X-Subject-Token": IAM_TOKEN, "Content-Type": "json"}, b"") == [IAM_TOKEN]
    assert cred.answer_secrets({}, b"  session-token-value\n", expect="text") == ["session-token-value"]
    assert cred.answer_secrets({}, b'{"access": "AKIDENTIFIER", "secret": "abc"}') == []


@pytest.mark.parametrize(
    "content,problem",
    [
        (b'{"a": 1} <html>', r"^is not JSON \(extra data: line 1 column 10 of 15 bytes\)$"),
        (b'{"secret": "' + TEMP_SK.encode(), r"^is not JSON \(unterminated string starting at: line 1 column 12"),
        (b'\xef\xbb\xbf{"a": 1}', r"^starts with a UTF-8 byte-order mark \(11 bytes\)$"),
        (b'{"a": "\xff"}', r"^is not UTF-8 text \(byte 8 of 10\)$"),
        (b"[" * 100000, r"^is not JSON \("),
    ],
)
def test_parse_answer_says_why_without_quoting(content, problem):
    with pytest.raises(cred.UnreadableAnswer, match=problem) as caught:
        cred.parse_answer(content)
    assert TEMP_SK not in str(caught.value)


def test_parse_answer_reads_json_and_empty():
    assert cred.parse_answer(b"") is None and cred.parse_answer(b'{"a": [1]}') == {"a": [1]}


@pytest.mark.parametrize(
    "params,expected",
    [
        ({"sts_endpoint": "https://sts.private.example/", "region": "eu-west-101", "endpoint": "https://x"}, "https://sts.private.example"),
        ({"region": "cn-south-1", "endpoint": "https://modelarts.private.example"}, "https://sts.cn-south-1.myhuaweicloud.com"),
        ({"region": "eu-west-101"}, "https://sts.cn-north-4.myhuaweicloud.com"),
        ({"region": "eu-west-101", "iam_endpoint": "https://iam.private.example"}, "sts_endpoint"),
        ({"region": None, "endpoint": "https://modelarts.private.example"}, "sts_endpoint"),
    ],
)
def test_sts_base_sends_the_id_token_only_where_the_user_points(params, expected):
    if expected.startswith("https://"):
        assert endpoints.sts_base(Connection(**params)) == expected
    else:
        with pytest.raises(CredentialsConfigError, match=r"set sts_endpoint \(HUAWEICLOUD_SDK_STS_ENDPOINT\)"):
            endpoints.sts_base(Connection(**params))


class _Failing(cred.Provider):
    name = "failing source"

    def __init__(self):
        self.asked = 0

    def obtain(self, transport, deadline):
        self.asked += 1
        raise ModelArtsError("op: HTTP 500 X.500: down", status=500, transient=True)


def test_a_failed_first_fetch_backs_off(transport):
    provider = _Failing()
    renewing = Renewing(provider)
    for _poll in range(10):
        with pytest.raises(ModelArtsError) as caught:
            renewing.current(transport, DEADLINE)
        transport.advance(0.4)
    assert provider.asked == 1 and caught.value.transient
    assert "credentials are not asked for again for 1s after 1 failure in a row" in str(caught.value)
    transport.advance(1.5)
    with pytest.raises(ModelArtsError):
        renewing.current(transport, DEADLINE)
    assert provider.asked == 2
    transport.advance(cred.OBTAIN_RETRY * 2 - 1)
    with pytest.raises(ModelArtsError, match="after 2 failures in a row"):
        renewing.current(transport, DEADLINE)
    assert provider.asked == 2
