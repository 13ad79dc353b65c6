# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The client core over a scripted transport: retries, backoff, deadlines, errors, auth, TLS, proxies."""

from __future__ import annotations

import json
import socket
import threading

import pytest
import requests
import urllib3

from ansible_collections.modelarts.training.plugins.module_utils.service import transport as client_mod
from ansible_collections.modelarts.training.plugins.module_utils.service.client import ModelArtsClient
from ansible_collections.modelarts.training.plugins.module_utils.service.endpoints import escape, iam_endpoint, modelarts_endpoint
from ansible_collections.modelarts.training.plugins.module_utils.service.transport import parse_retry_after
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.door.options import ConnectionConfigError
from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fakes import FakeClock, FakeResponse, FakeSession, client_parts

PROJECT = "0123456789abcdef0123456789abcdef"
SECRET = "SuperSecretSK-0123456789-DO-NOT-LEAK"
TOKEN = "MIIsecretSecurityToken-DO-NOT-LEAK"
PASSWORD = "Pa55word-DO-NOT-LEAK"
IAM_TOKEN = "MIIiamTokenValue-DO-NOT-LEAK"
AKSK = {"region": "cn-north-4", "project_id": PROJECT, "access_key": "AKEXAMPLE", "secret_key": SECRET}
JOB = {"metadata": {"id": "job-1", "name": "train"}, "status": {"phase": "Running"}}


def make(session, params=None, clock=None, rand=lambda: 0.5, **extra):
    clock = clock or FakeClock()
    merged = dict(AKSK, **(params or {}))
    return ModelArtsClient(*client_parts(merged), session=session, clock=clock, sleep=clock.sleep, rand=rand, utcnow=clock.utcnow, **extra), clock


def test_get_training_job_signs_and_returns_json():
    session = FakeSession(FakeResponse(200, JOB, {"X-Request-Id": "req-1"}))
    client, _clock = make(session)
    response = client.get_training_job("job-1")
    assert response.data == JOB and response.request_id == "req-1"
    call = session.calls[0]
    assert call["url"] == "https://modelarts.cn-north-4.myhuaweicloud.com/v2/%s/training-jobs/job-1" % PROJECT
    assert call["headers"]["Authorization"].startswith("SDK-HMAC-SHA256 Access=AKEXAMPLE, SignedHeaders=host;x-project-id;x-sdk-date")
    assert call["headers"]["X-Project-Id"] == PROJECT
    assert call["timeout"] == (10.0, 30.0)
    assert call["verify"] is True and call["proxies"] is None and call["allow_redirects"] is False


@pytest.mark.parametrize(
    "job_id,escaped",
    [
        ("a/b", "a%2Fb"),
        ("a..", "a.."),
        ("x?y=1", "x%3Fy%3D1"),
        ("100%", "100%25"),
        ("j\u00f6b", "j%C3%B6b"),
    ],
)
def test_ids_are_path_escaped(job_id, escaped):
    assert escape(job_id) == escaped
    session = FakeSession(FakeResponse(200, JOB))
    client, _clock = make(session)
    client.get_training_job(job_id)
    assert session.calls[0]["url"].endswith("/training-jobs/" + escaped)


@pytest.mark.parametrize("job_id", [".", "..", "..."])
def test_dot_segments_are_refused_before_any_request(job_id):
    # %2E%2E is no protection: requests (and servers, proxies) decode it back into a parent path.
    session = FakeSession(FakeResponse(200, JOB))
    client, _clock = make(session)
    with pytest.raises(ConnectionConfigError, match="cannot be a URL path segment"):
        client.get_training_job(job_id)
    with pytest.raises(ConnectionConfigError, match="cannot be a URL path segment"):
        client.get_job_version(job_id, 1)
    assert not session.calls


@pytest.mark.parametrize(
    "region",
    ["cn-north-4@other.host/", "x.other.host#", "x/..", "cn-north-4.", "CN-NORTH-4", "cn-north-4\n", "", None],
)
def test_a_default_endpoint_is_built_from_a_region_name_only(region):
    with pytest.raises(ConnectionConfigError, match="region"):
        modelarts_endpoint(region)
    with pytest.raises(ConnectionConfigError, match="region"):
        iam_endpoint(region)


def test_endpoint_overrides_and_user_agent():
    session = FakeSession(FakeResponse(200, JOB))
    client, _clock = make(session, {"endpoint": "https://127.0.0.1:8443/", "iam_endpoint": "https://127.0.0.1:8443"})
    client.get_training_job("job-1")
    assert session.calls[0]["url"].startswith("https://127.0.0.1:8443/v2/")
    assert session.calls[0]["headers"]["Host"] == "127.0.0.1:8443"
    real = ModelArtsClient(*client_parts(AKSK))
    assert real._session.headers["User-Agent"].startswith("modelarts.training/%s" % client_mod.COLLECTION_VERSION)


def test_ca_bundle_wins_and_validate_certs_false(tmp_path):
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    session = FakeSession(FakeResponse(200, JOB), FakeResponse(200, JOB))
    client, _clock = make(session, {"ca_bundle": str(bundle), "proxy": "http://proxy.example:3128"})
    client.get_training_job("job-1")
    assert session.calls[0]["verify"] == str(bundle)
    assert session.calls[0]["proxies"] == {"http": "http://proxy.example:3128", "https": "http://proxy.example:3128"}
    client, _clock = make(session, {"validate_certs": False, "ca_bundle": str(bundle)})
    client.get_training_job("job-1")
    assert session.calls[1]["verify"] is False


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_retryable_statuses_are_retried_with_full_jitter(status):
    session = FakeSession(
        FakeResponse(status, {"error_code": "X", "error_msg": "busy"}), FakeResponse(status, {"error_code": "X", "error_msg": "busy"}), FakeResponse(200, JOB)
    )
    client, clock = make(session, {"backoff_delay": 2.0, "backoff_max_delay": 3.0}, rand=lambda: 0.5)
    assert client.get_training_job("job-1").data == JOB
    # attempt 0: 0.5 * min(3, 2*1) = 1.0; attempt 1: 0.5 * min(3, 2*2) = 1.5
    assert clock.sleeps == [1.0, 1.5]
    assert len(session.calls) == 3


def test_retry_after_seconds_is_honoured():
    session = FakeSession(FakeResponse(429, {"error_code": "ModelArts.0002", "error_msg": "throttled"}, {"Retry-After": "7"}), FakeResponse(200, JOB))
    client, clock = make(session)
    client.get_training_job("job-1")
    assert clock.sleeps == [7.0]


def test_retry_after_http_date():
    clock = FakeClock()
    date = "Wed, 01 May 2024 12:00:09 GMT"  # 9 s after the fake clock's wall time
    assert parse_retry_after(date, clock.utcnow()) == 9.0
    assert parse_retry_after("garbage") is None
    assert parse_retry_after(None) is None
    assert parse_retry_after("-3") == 0.0


@pytest.mark.parametrize(
    "status,code",
    [
        (400, "ModelArts.0101"),
        (401, "APIG.0301"),
        (403, "ModelArts.2784"),
        (404, "ModelArts.2786"),
        (409, "ModelArts.2796"),
    ],
)
def test_other_4xx_are_not_retried(status, code):
    session = FakeSession(FakeResponse(status, {"error_code": code, "error_msg": "nope"}, {"X-Request-Id": "rid-9"}))
    client, clock = make(session)
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert len(session.calls) == 1 and clock.sleeps == []
    err = info.value
    assert (err.status, err.error_code, err.error_msg, err.request_id, err.transient) == (status, code, "nope", "rid-9", False)
    assert "get training job job-1" in str(err) and code in str(err) and "rid-9" in str(err)


def test_retries_are_bounded():
    session = FakeSession(*[FakeResponse(503, {"error_code": "X", "error_msg": "down"}) for _i in range(10)])
    client, clock = make(session, {"backoff_retries": 3})
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert len(session.calls) == 4 and len(clock.sleeps) == 3
    assert info.value.transient and "gave up after 4 attempts" in str(info.value)


def test_zero_retries():
    session = FakeSession(FakeResponse(503, {"error_code": "X", "error_msg": "down"}))
    client, _clock = make(session, {"backoff_retries": 0})
    with pytest.raises(ModelArtsError):
        client.get_training_job("job-1")
    assert len(session.calls) == 1


def test_connection_errors_are_retried_and_reported_cleanly():
    reset = requests.exceptions.ConnectionError(ConnectionResetError(104, "Connection reset by peer"))
    session = FakeSession(reset, requests.exceptions.ReadTimeout("read timed out"), reset)
    client, clock = make(session, {"backoff_retries": 2})
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert len(session.calls) == 3 and len(clock.sleeps) == 2
    assert info.value.status is None and info.value.transient
    assert "Connection reset by peer" in str(info.value) and "Traceback" not in str(info.value)


def test_a_connection_error_is_unreached_until_the_host_has_answered():
    refused = requests.exceptions.ConnectionError(
        urllib3.exceptions.MaxRetryError(
            None, "/", urllib3.exceptions.NewConnectionError(None, "Failed to establish a new connection: [Errno 111] Connection refused")
        )
    )
    reset = requests.exceptions.ConnectionError(urllib3.exceptions.ProtocolError("Connection aborted.", ConnectionResetError(104, "Connection reset by peer")))
    session = FakeSession(reset, refused, FakeResponse(200, JOB), refused, requests.exceptions.ReadTimeout("read timed out"))
    client, _clock = make(session, {"backoff_retries": 0})
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert info.value.transient and not info.value.unreached, "a connection made, then reset, reached the host"
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert info.value.transient and info.value.unreached
    client.get_training_job("job-1")
    for _each in range(2):
        with pytest.raises(ModelArtsError) as info:
            client.get_training_job("job-1")
        assert info.value.transient and not info.value.unreached


def unresolved(errno, modern=True):
    """What requests raises when the resolver answers ``errno``: urllib3 2.x's NameResolutionError (the gaierror kept as
    its reason and cause), or 1.x's NewConnectionError raised while handling the gaierror."""
    gaierror = socket.gaierror(errno, "Name or service not known")
    if modern and hasattr(urllib3.exceptions, "NameResolutionError"):
        inner = urllib3.exceptions.NameResolutionError("modelarts.example.invalid", None, gaierror)
        inner.__cause__ = gaierror
    else:
        inner = urllib3.exceptions.NewConnectionError(None, "Failed to establish a new connection: [Errno %d] Name or service not known" % errno)
        inner.__context__ = gaierror
    return requests.exceptions.ConnectionError(urllib3.exceptions.MaxRetryError(None, "/", inner))


@pytest.mark.parametrize("modern", [True, False], ids=["urllib3-2", "urllib3-1"])
@pytest.mark.parametrize("errno", [socket.EAI_NONAME] + ([socket.EAI_NODATA] if hasattr(socket, "EAI_NODATA") else []))
def test_a_name_that_never_resolved_is_said_at_once(modern, errno):
    session = FakeSession(unresolved(errno, modern), FakeResponse(200, JOB))
    client, clock = make(session, {"backoff_retries": 4})
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert len(session.calls) == 1 and clock.sleeps == [], "not retried"
    assert info.value.unreached and info.value.unresolved and info.value.transient
    assert "gave up after" not in str(info.value)


def test_a_resolver_that_cannot_answer_now_and_a_name_that_resolved_before_are_retried():
    # EAI_AGAIN: the resolver could not be asked; it may answer next time.
    session = FakeSession(unresolved(socket.EAI_AGAIN), unresolved(socket.EAI_AGAIN), FakeResponse(200, JOB))
    client, clock = make(session, {"backoff_retries": 4})
    client.get_training_job("job-1")
    assert len(session.calls) == 3 and len(clock.sleeps) == 2
    # The host has answered: a name it had is a resolver's hiccup now, retried like any connection error.
    session.script.extend([unresolved(socket.EAI_NONAME), FakeResponse(200, JOB)])
    client.get_training_job("job-1")
    assert len(session.calls) == 5 and len(clock.sleeps) == 3


def test_never_sleeps_past_the_deadline():
    session = FakeSession(*[FakeResponse(429, {"error_code": "X", "error_msg": "slow down"}, {"Retry-After": "30"}) for _i in range(5)])
    client, clock = make(session)
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1", deadline=clock() + 20)
    assert clock.sleeps == [] and len(session.calls) == 1
    assert "no time left before the deadline" in str(info.value)


def test_timeouts_shrink_to_the_deadline():
    session = FakeSession(FakeResponse(200, JOB))
    client, clock = make(session)
    client.get_training_job("job-1", deadline=clock() + 4)
    assert session.calls[0]["timeout"] == (4.0, 4.0)


def test_no_request_after_the_deadline():
    session = FakeSession()
    client, clock = make(session)
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1", deadline=clock() - 1)
    assert session.calls == [] and "deadline passed" in str(info.value)


@pytest.mark.parametrize(
    "body,code,message,request_id",
    [
        ({"error_code": "ModelArts.2775", "error_msg": "Training job not found."}, "ModelArts.2775", "Training job not found.", "hdr"),
        ({"is_success": False, "error_code": "ModelArts.0104", "error_message": "Job version not found."}, "ModelArts.0104", "Job version not found.", "hdr"),
        (
            {"error_code": "APIG.0301", "error_msg": "Incorrect IAM authentication information: verify aksk signature fail", "request_id": "body-rid"},
            "APIG.0301",
            "Incorrect IAM authentication information: verify aksk signature fail",
            "hdr",
        ),
        (
            {"error": {"code": 401, "title": "Unauthorized", "message": "The username or password is wrong."}},
            "401",
            "The username or password is wrong.",
            "hdr",
        ),
        ({"errorCode": "E1", "errorMsg": "camel"}, "E1", "camel", "hdr"),
    ],
)
def test_error_body_shapes(body, code, message, request_id):
    session = FakeSession(FakeResponse(400, body, {"X-Request-Id": "hdr"}))
    client, _clock = make(session)
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert (info.value.error_code, info.value.error_msg, info.value.request_id) == (code, message, request_id)


def test_request_id_from_apigw_body_when_header_missing():
    session = FakeSession(FakeResponse(401, {"error_code": "APIG.0301", "error_msg": "bad", "request_id": "body-rid"}))
    client, _clock = make(session)
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert info.value.request_id == "body-rid"
    assert "check the credentials (access_key/secret_key, or auth_token)" in str(info.value)


def test_not_found_classification():
    assert ModelArtsError("x", status=404).not_found
    assert ModelArtsError("x", status=400, error_code="ModelArts.2775").not_found
    assert ModelArtsError("x", status=404, error_code="ModelArts.2775").not_found
    assert not ModelArtsError("x", status=400, error_code="ModelArts.0101").not_found
    # The project mismatch comes as HTTP 404 but is not a missing job.
    assert not ModelArtsError("x", status=404, error_code="ModelArts.2786").not_found
    assert not ModelArtsError("x", status=404, error_code="APIG.0101").not_found


def test_html_gateway_page_is_quoted_briefly():
    page = "<html><head><title>502 Bad Gateway</title></head><body>" + "x" * 5000 + "</body></html>"
    session = FakeSession(FakeResponse(502, raw=page, headers={"Content-Type": "text/html"}))
    client, _clock = make(session, {"backoff_retries": 0})
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    text = str(info.value)
    assert "HTTP 502 with a non-JSON body" in text and "502 Bad Gateway" in text and len(text) < 400


def test_truncated_json_on_success_is_retried_then_reported():
    session = FakeSession(FakeResponse(200, raw='{"metadata": {"id": "job-1", "na'), FakeResponse(200, raw='{"metadata": {"id": "job-1", "na'))
    client, _clock = make(session, {"backoff_retries": 1})
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert len(session.calls) == 2
    assert "not valid JSON" in str(info.value) and "gave up after 2 attempts" in str(info.value)


def test_deeply_nested_json_is_a_clean_error():
    session = FakeSession(FakeResponse(200, raw="[" * 200000 + "]" * 200000))
    client, _clock = make(session, {"backoff_retries": 0})
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert "not valid JSON" in str(info.value)


def test_oversized_body_is_refused():
    session = FakeSession(FakeResponse(200, raw="[" + "1," * 1000 + "1]"))
    client, _clock = make(session, {"backoff_retries": 0, "max_response_bytes": 1000})
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert "over the max_response_bytes limit of 1000" in str(info.value)
    assert not info.value.transient


def test_ten_megabyte_body_is_read():
    big = dict(JOB, padding="x" * (10 * 1024 * 1024))
    session = FakeSession(FakeResponse(200, big))
    client, _clock = make(session)
    assert len(client.get_training_job("job-1").data["padding"]) == 10 * 1024 * 1024


def test_a_consumed_body_is_read_as_it_arrives_and_never_held_whole():
    seen = []

    def consume(pieces):
        for piece in pieces:
            seen.append(len(piece))
        return {"read": sum(seen)}

    session = FakeSession(FakeResponse(200, raw="x" * 300000))
    client, _clock = make(session)
    response = client.get_task_log_preview("job-1", "worker-0", consume=consume)
    assert response.data == {"read": 300000} and max(seen) <= 65536 and len(seen) > 1


def test_a_body_the_consumer_cannot_read_is_retried_then_reported():
    def consume(pieces):
        for _piece in pieces:
            pass
        raise ValueError("the body ends inside its JSON")

    session = FakeSession(FakeResponse(200, raw='{"content": "abc'), FakeResponse(200, raw='{"content": "abc'))
    client, _clock = make(session, {"backoff_retries": 1})
    with pytest.raises(ModelArtsError) as info:
        client.get_task_log_preview("job-1", "worker-0", consume=consume)
    assert "HTTP 200 but the body is not readable JSON: the body ends inside its JSON (gave up after 2 attempts)" in str(info.value)


def test_max_bytes_bounds_one_answer_below_max_response_bytes():
    session = FakeSession(FakeResponse(200, raw='{"events": [], "pad": "%s"}' % ("x" * 5000)))
    client, _clock = make(session, {"backoff_retries": 0})
    with pytest.raises(ModelArtsError) as info:
        client.list_training_job_events("job-1", max_bytes=1000)
    assert "over the limit of 1000 bytes read for this answer" in str(info.value) and "max_response_bytes" not in str(info.value)


def test_the_events_are_asked_for_newest_first():
    session = FakeSession(FakeResponse(200, raw='{"events": []}'))
    client, _clock = make(session, {"backoff_retries": 0})
    client.list_training_job_events("job-1", limit=50)
    url = session.calls[0]["url"]
    assert "/training-jobs/job-1/events?" in url and "order=desc" in url and "limit=50" in url, url


def test_secrets_never_appear_in_errors():
    echo = json.dumps({"error_code": "APIG.0301", "error_msg": "bad signature for sk=%s token=%s" % (SECRET, TOKEN)})
    session = FakeSession(
        FakeResponse(401, raw=echo),
        FakeResponse(502, raw="<html>%s %s</html>" % (SECRET, TOKEN)),
        requests.exceptions.ProxyError("Cannot connect to proxy http://user:%s@proxy:3128" % SECRET),
    )
    client, _clock = make(session, {"security_token": TOKEN, "backoff_retries": 0})
    messages = []
    for _i in range(3):
        with pytest.raises(ModelArtsError) as info:
            client.get_training_job("job-1")
        messages.append(str(info.value) + repr(info.value.to_dict()))
    for message in messages:
        assert SECRET not in message and TOKEN not in message
    assert "********" in messages[0] and "********" in messages[1]


def test_security_token_header_is_signed_and_sent():
    session = FakeSession(FakeResponse(200, JOB))
    client, _clock = make(session, {"security_token": TOKEN})
    client.get_training_job("job-1")
    headers = session.calls[0]["headers"]
    assert headers["X-Security-Token"] == TOKEN and "x-security-token" in headers["Authorization"]


def test_auth_token_is_sent_as_x_auth_token():
    session = FakeSession(FakeResponse(200, JOB))
    client, _clock = make(session, {"access_key": None, "secret_key": None, "auth_token": IAM_TOKEN})
    client.get_training_job("job-1")
    headers = session.calls[0]["headers"]
    assert headers["X-Auth-Token"] == IAM_TOKEN and "Authorization" not in headers


def _token_response(token, expires_at="2024-05-02T12:00:00.000000Z", project_id=PROJECT):
    return FakeResponse(201, {"token": {"expires_at": expires_at, "project": {"id": project_id, "name": "cn-north-4"}}}, {"X-Subject-Token": token})


PASSWORD_PARAMS = {"access_key": None, "secret_key": None, "project_id": None, "username": "alice", "password": PASSWORD, "domain_name": "acme"}


def test_password_auth_gets_a_token_once_and_learns_the_project():
    session = FakeSession(_token_response(IAM_TOKEN), FakeResponse(200, JOB), FakeResponse(200, JOB))
    client, _clock = make(session, PASSWORD_PARAMS)
    client.get_training_job("job-1")
    client.get_training_job("job-1")
    token_call = session.calls[0]
    assert token_call["url"] == "https://iam.cn-north-4.myhuaweicloud.com/v3/auth/tokens"
    body = json.loads(token_call["data"])
    assert body["auth"]["identity"]["password"]["user"] == {"name": "alice", "password": PASSWORD, "domain": {"name": "acme"}}
    assert body["auth"]["scope"] == {"project": {"name": "cn-north-4"}}
    assert [c["headers"].get("X-Auth-Token") for c in session.calls[1:]] == [IAM_TOKEN, IAM_TOKEN]
    assert PROJECT in session.calls[1]["url"]


def test_password_token_renewed_once_on_401():
    session = FakeSession(
        _token_response("tok-1"), FakeResponse(401, {"error_code": "APIG.0307", "error_msg": "token expired"}), _token_response("tok-2"), FakeResponse(200, JOB)
    )
    client, _clock = make(session, PASSWORD_PARAMS)
    assert client.get_training_job("job-1").data == JOB
    assert session.calls[3]["headers"]["X-Auth-Token"] == "tok-2"


def test_password_token_second_401_fails():
    session = FakeSession(
        _token_response("tok-1"),
        FakeResponse(401, {"error_code": "APIG.0307", "error_msg": "expired"}),
        _token_response("tok-2"),
        FakeResponse(401, {"error_code": "APIG.0307", "error_msg": "expired"}),
    )
    client, _clock = make(session, PASSWORD_PARAMS)
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert info.value.status == 401 and len(session.calls) == 4
    assert "tok-" not in str(info.value)


class _TokenService(object):
    """IAM and ModelArts behind one fake session: IAM issues tok-1, tok-2...; ModelArts accepts the tokens in ``good``
    and answers 401 to the others. ``issued`` counts the exchanges."""

    def __init__(self, good, lifetime="2024-05-02T12:00:00Z"):
        self.good = set(good)
        self.lifetime = lifetime
        self.issued = 0
        self.lock = threading.Lock()
        self.before_answer = None

    def session(self):
        return FakeSession(auth__tokens=self.token, v2=self.job)

    def token(self, method, url, kwargs):
        with self.lock:
            self.issued += 1
            return _token_response("tok-%d" % self.issued, self.lifetime)

    def job(self, method, url, kwargs):
        token = kwargs["headers"].get("X-Auth-Token")
        answer = self.before_answer(token) if self.before_answer else None
        if answer is not None:
            return answer
        if token in self.good:
            return FakeResponse(200, JOB)
        return FakeResponse(401, {"error_code": "APIG.0307", "error_msg": "The token must be updated."})


def test_a_401_renews_the_credentials_that_signed_the_refused_request():
    # tok-1 is current when the call starts; a 503 and a long wait later, its second attempt is signed with tok-2 (a timed
    # renewal). tok-2 is refused: it is current, so it is renewed (tok-3), not taken for "already renewed by someone else".
    service = _TokenService(good=["tok-1", "tok-3"], lifetime="2024-05-01T12:05:00Z")
    clock = FakeClock()
    first = []

    def wait_then_503(token):
        if not first:
            first.append(token)
            clock.now += 250  # past tok-1's renewal time (a third of its 300 s lifetime before it expires)
            return FakeResponse(503, {"error_code": "ModelArts.0001", "error_msg": "busy"})
        return None

    client, _clock = make(service.session(), PASSWORD_PARAMS, clock=clock)
    client.resolve_project_id()
    service.before_answer = wait_then_503
    assert client.get_training_job("job-1").data == JOB
    signed = [call["headers"].get("X-Auth-Token") for call in client._session.calls if "training-jobs" in call["url"]]  # pylint: disable=protected-access
    assert signed == ["tok-1", "tok-2", "tok-3"] and service.issued == 3


def test_concurrent_calls_refused_together_renew_once_and_are_signed_again():
    # Eight jobs read at once; the service has revoked tok-1 and refuses all eight. One renewal serves them all: the calls
    # signed before it are simply signed again with tok-2.
    service = _TokenService(good=["tok-2"])
    count = 8
    arrived = threading.Barrier(count, timeout=10)

    def hold_until_all_sent(token):
        if token == "tok-1":
            arrived.wait()  # every first attempt is signed with tok-1 before any is refused
        return None

    client, _clock = make(service.session(), PASSWORD_PARAMS, clock=FakeClock())
    client.resolve_project_id()
    service.before_answer = hold_until_all_sent
    results = [None] * count

    def read(index):
        results[index] = client.get_training_job("job-%d" % index).data

    threads = [threading.Thread(target=read, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert results == [JOB] * count
    assert service.issued == 2, "one exchange, then one renewal for all eight refusals"
    signed = [call["headers"].get("X-Auth-Token") for call in client._session.calls if "training-jobs" in call["url"]]  # pylint: disable=protected-access
    assert sorted(signed) == ["tok-1"] * count + ["tok-2"] * count


def test_password_token_renewed_near_expiry():
    # The fake wall clock starts at 2024-05-01T12:00:00Z; this token lives 1000 s, so it is renewed
    # 300 s before it expires (less than 5 minutes or a third of its lifetime left, whichever is shorter).
    session = FakeSession(
        _token_response("tok-1", "2024-05-01T12:16:40Z"),
        FakeResponse(200, JOB),
        FakeResponse(200, JOB),
        _token_response("tok-2", "2024-05-02T12:00:00Z"),
        FakeResponse(200, JOB),
    )
    client, clock = make(session, PASSWORD_PARAMS)
    client.get_training_job("job-1")
    clock.now += 650
    client.get_training_job("job-1")
    clock.now += 100
    client.get_training_job("job-1")
    assert [c["headers"].get("X-Auth-Token") for c in session.calls if "training-jobs" in c["url"]] == ["tok-1", "tok-1", "tok-2"]


def test_wrong_password_is_a_clean_error():
    session = FakeSession(FakeResponse(401, {"error": {"code": 401, "title": "Unauthorized", "message": "The username or password is wrong."}}))
    client, _clock = make(session, PASSWORD_PARAMS)
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert "username or password is wrong" in str(info.value) and PASSWORD not in str(info.value)
    assert len(session.calls) == 1


@pytest.mark.parametrize(
    "projects,expected",
    [
        ([{"id": "p1", "name": "cn-north-4"}], "p1"),
        ([], "no project named 'cn-north-4'"),
        ([{"id": "p1", "name": "cn-north-4"}, {"id": "p2", "name": "cn-north-4"}], "2 projects are named 'cn-north-4' (p1, p2)"),
    ],
)
def test_project_resolution(projects, expected):
    session = FakeSession(FakeResponse(200, {"projects": projects}), FakeResponse(200, JOB))
    client, _clock = make(session, {"project_id": None})
    if expected == "p1":
        client.get_training_job("job-1")
        assert session.calls[0]["url"] == "https://iam.cn-north-4.myhuaweicloud.com/v3/projects?name=cn-north-4"
        assert "X-Project-Id" not in session.calls[0]["headers"]
        assert "/v2/p1/training-jobs/job-1" in session.calls[1]["url"]
        assert session.calls[1]["headers"]["X-Project-Id"] == "p1"
    else:
        with pytest.raises(ModelArtsError) as info:
            client.get_training_job("job-1")
        assert expected in str(info.value) and "project_id (HUAWEICLOUD_SDK_PROJECT_ID)" in str(info.value)


def test_search_follows_pages_and_matches_exactly():
    def page(offset, items, total):
        return FakeResponse(200, {"total": total, "count": len(items), "limit": 2, "offset": offset, "items": items})

    def job(job_id, name):
        return {"metadata": {"id": job_id, "name": name}}

    session = FakeSession(
        page(0, [job("a", "train"), job("b", "train-2")], 5), page(1, [job("c", "train"), job("d", "xtrain")], 5), page(2, [job("e", "train")], 5)
    )
    client, _clock = make(session)
    found = client.search_training_jobs("train", page_size=2)
    assert [j["metadata"]["id"] for j in found] == ["a", "c", "e"]
    offsets = [json.loads(c["data"])["offset"] for c in session.calls]
    assert offsets == [0, 1, 2]
    assert json.loads(session.calls[0]["data"])["filters"] == [{"key": "name", "operator": "like", "value": ["train"]}]


# -- name search paging: either reading of offset (issue 20, item 15) -------------------------------


class SearchService(object):
    """A search API over ``documents`` (newest first) that reads ``offset`` as a page index, an item offset, or not at all."""

    def __init__(self, documents, reading="page", total=True):
        self.documents = list(documents)
        self.reading = reading
        self.total = total
        self.offsets = []
        self.before_answer = None

    def __call__(self, _method, _url, kwargs):
        body = json.loads(kwargs["data"])
        offset, limit = body["offset"], body["limit"]
        self.offsets.append(offset)
        if self.before_answer:
            self.before_answer(self)
        start = {"page": offset * limit, "item": offset, "ignore": 0}[self.reading]
        items = self.documents[start : start + limit]
        answer = {"count": len(items), "limit": limit, "offset": offset, "items": items}
        if self.total:
            answer["total"] = len(self.documents)
        return FakeResponse(200, answer)


def search_jobs(count, name="nightly", prefix="j"):
    return [{"metadata": {"id": "%s%03d" % (prefix, index), "name": name}} for index in range(count)]


def searched(service, name="nightly", **kwargs):
    client, _clock = make(FakeSession(**{"training-job-searches": service}))
    return [document["metadata"].get("id") for document in client.search_training_jobs(name, **kwargs)]


@pytest.mark.parametrize("reading,offsets", [("page", [0, 1, 2]), ("item", [0, 1, 51, 101])])
@pytest.mark.parametrize("total", [True, False])
def test_search_gives_every_job_once_under_either_reading_of_offset(reading, offsets, total):
    service = SearchService(search_jobs(120), reading, total=total)
    ids = searched(service)
    assert ids == ["j%03d" % index for index in range(120)]
    assert service.offsets == offsets


@pytest.mark.parametrize("reading", ["page", "item"])
def test_search_stops_at_total_on_a_full_last_page(reading):
    service = SearchService(search_jobs(100), reading)
    assert len(searched(service)) == 100
    assert service.offsets == ([0, 1] if reading == "page" else [0, 1, 51])


@pytest.mark.parametrize("reading", ["page", "item"])
def test_search_keeps_documents_without_a_readable_id_once(reading):
    documents = search_jobs(120)
    for index in (10, 60, 110):
        documents[index] = {"metadata": {"name": "nightly", "id": None if index == 10 else 7}, "status": {"phase": "Failed"}}
    ids = searched(SearchService(documents, reading))
    assert len(ids) == 120 and ids.count(None) == 1 and ids.count(7) == 2
    assert sorted(job_id for job_id in ids if isinstance(job_id, str)) == ["j%03d" % index for index in range(120) if index not in (10, 60, 110)]


@pytest.mark.parametrize("reading", ["page", "item"])
def test_search_drops_the_repeats_of_jobs_created_while_paging(reading):
    service = SearchService(search_jobs(120), reading)

    def create_two_after_the_first_page(fake):
        if len(fake.offsets) == 2:
            fake.documents[:0] = search_jobs(2, prefix="new")

    service.before_answer = create_two_after_the_first_page
    ids = searched(service)
    assert len(ids) == len(set(ids))
    assert set("j%03d" % index for index in range(120)) <= set(ids)


def test_search_stops_when_a_page_adds_nothing_new():
    # A service that ignores offset answers the first page again and again: a few requests, not a loop.
    service = SearchService(search_jobs(120), "ignore")
    assert searched(service) == ["j%03d" % index for index in range(50)]
    assert service.offsets == [0, 1, 51]


def test_search_matches_the_name_exactly_over_every_page():
    documents = [{"metadata": {"id": "j%03d" % index, "name": "nightly" if index % 3 else "nightly-2"}} for index in range(130)]
    for reading in ("page", "item"):
        assert searched(SearchService(documents, reading)) == ["j%03d" % index for index in range(130) if index % 3]


def test_search_is_bounded_and_says_so():
    service = SearchService(search_jobs(400), "page")
    client, _clock = make(FakeSession(**{"training-job-searches": service}))
    with pytest.raises(ModelArtsError, match=r"named 'nightly': more than 150 matching jobs \(3 pages of 50\).*150 jobs seen.*add latest: true"):
        client.search_training_jobs("nightly", max_pages=3)
    assert service.offsets == [0, 1, 2]


def test_v1_job_version_path():
    session = FakeSession(FakeResponse(200, {"is_success": True, "job_id": 10}))
    client, _clock = make(session)
    client.get_job_version(10, 2)
    assert session.calls[0]["url"].endswith("/v1/%s/training-jobs/10/versions/2" % PROJECT)


def test_tls_failure_gives_a_hint():
    session = FakeSession(requests.exceptions.SSLError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"))
    client, _clock = make(session)
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert len(session.calls) == 1, "a certificate problem is not retried"
    assert "ca_bundle (HUAWEICLOUD_CA_BUNDLE)" in str(info.value)


def test_credentials_are_checked_before_any_request():
    session = FakeSession()
    with pytest.raises(ConnectionConfigError):
        make(session, {"auth_token": IAM_TOKEN})
    assert session.calls == []


def test_blank_project_id_is_resolved_not_used():
    """A blank HUAWEICLOUD_SDK_PROJECT_ID (or AWX field) must not make /v2//training-jobs/ URLs."""
    session = FakeSession(FakeResponse(200, {"projects": [{"id": "p1", "name": "cn-north-4"}]}), FakeResponse(200, JOB))
    client, _clock = make(session, {"project_id": ""})
    client.get_training_job("job-1")
    assert "/v2/p1/training-jobs/job-1" in session.calls[1]["url"]


def test_region_endpoints():
    assert modelarts_endpoint("cn-north-4") == "https://modelarts.cn-north-4.myhuaweicloud.com"
    assert modelarts_endpoint("ap-southeast-1") == "https://modelarts.ap-southeast-1.myhuaweicloud.cn"
    assert iam_endpoint("ap-southeast-1") == "https://iam.ap-southeast-1.myhuaweicloud.com"


def test_retry_after_longer_than_backoff_max_delay_is_still_honoured():
    session = FakeSession(FakeResponse(429, {"error_code": "APIG.0308", "error_msg": "throttled"}, {"Retry-After": "45"}), FakeResponse(200, JOB))
    client, clock = make(session, {"backoff_max_delay": 0.2})
    client.get_training_job("job-1")
    assert clock.sleeps == [45.0]


def test_retry_after_of_hours_is_not_slept():
    session = FakeSession(FakeResponse(429, {"error_code": "APIG.0308", "error_msg": "throttled"}, {"Retry-After": "3600"}))
    client, clock = make(session, {"backoff_max_delay": 30})
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert clock.sleeps == [] and len(session.calls) == 1
    assert "asked to retry after 3600s, more than the 300s this client waits" in str(info.value)
    assert info.value.transient, "a wait may still poll again later"


@pytest.mark.parametrize("option,value", [("endpoint", "modelarts.example.com"), ("iam_endpoint", "ftp://iam"), ("proxy", "proxy:3128")])
def test_urls_without_scheme_are_refused_before_any_request(option, value):
    session = FakeSession()
    with pytest.raises(ConnectionConfigError, match="%s.* must be a URL starting with https://" % option):
        make(session, {option: value})
    assert session.calls == []


def test_a_search_answer_with_null_items_is_empty_and_odd_items_are_skipped():
    odd = [{"metadata": "not an object"}, {"metadata": None}, "not a document", {"metadata": {"id": "j1", "name": "n"}}]
    session = FakeSession(
        FakeResponse(200, {"total": 0, "items": None}),
        FakeResponse(200, {"total": 4, "items": odd}),
        FakeResponse(200, {"total": 0}),
    )
    client, _clock = make(session)
    assert client.search_training_jobs("n") == []
    assert client.search_training_jobs("n") == [odd[3]]
    with pytest.raises(ModelArtsError, match="no 'items' list"):
        client.search_training_jobs("n")


# -- the real requests session: environment read once per host, never .netrc ---------------------


class _Sent(Exception):
    """Raised by the patched adapter with what would have gone on the wire."""


def _capture_send(monkeypatch, session):
    """Stop every request at the adapter; return the list of ``(prepared request, send kwargs)``."""
    sent = []

    def send(request, **kwargs):
        sent.append((request, kwargs))
        raise _Sent()

    for adapter in session.adapters.values():
        monkeypatch.setattr(adapter, "send", send)
    return sent


def _request(session, url, proxies=None, verify=True):
    with pytest.raises(_Sent):
        session.request("GET", url, headers={"X-Auth-Token": "t"}, timeout=(1, 2), verify=verify, proxies=proxies, stream=True, allow_redirects=False)


def test_the_session_never_adds_netrc_credentials(monkeypatch, tmp_path):
    netrc = tmp_path / "netrc"
    netrc.write_text("default login ci-bot password netrc-password\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    session = client_mod.new_session(4)
    sent = _capture_send(monkeypatch, session)
    _request(session, "https://modelarts.example.com/v2/p/training-jobs/j")
    prepared, _kwargs = sent[0]
    assert "Authorization" not in prepared.headers
    assert prepared.headers["X-Auth-Token"] == "t"
    # The plain requests.Session would have sent the netrc login: the test would catch a regression.
    plain = requests.Session()
    assert plain.prepare_request(requests.Request("GET", "https://modelarts.example.com/")).headers.get("Authorization", "").startswith("Basic ")


def test_the_session_applies_proxy_and_ca_variables_once_per_host(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://env-proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "iam.example.com")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/env/ca.pem")
    session = client_mod.new_session(4)
    sent = _capture_send(monkeypatch, session)
    merges = []
    original = session.merge_environment_settings
    monkeypatch.setattr(session, "merge_environment_settings", lambda *args: merges.append(args[0]) or original(*args))
    for job in ("j1", "j2", "j3"):
        _request(session, "https://modelarts.example.com/v2/p/training-jobs/" + job)
    _request(session, "https://iam.example.com/v3/projects")
    _request(session, "https://modelarts.example.com/v2/p/training-jobs/k", proxies={"https": "http://option-proxy:8080"}, verify="/option/ca.pem")
    assert [url.split("/")[2] for url in merges] == ["modelarts.example.com", "iam.example.com", "modelarts.example.com"]
    first, iam, option = sent[0][1], sent[3][1], sent[4][1]
    assert first["proxies"]["https"] == "http://env-proxy.example:3128" and first["verify"] == "/env/ca.pem"
    assert sent[2][1] == first
    assert "https" not in iam["proxies"]  # NO_PROXY still honoured
    assert option["proxies"]["https"] == "http://option-proxy:8080" and option["verify"] == "/option/ca.pem"
    assert first["timeout"] == (1, 2) and first["stream"] is True


def test_a_direct_call_uses_no_proxy_whatever_the_variables_and_the_option_say(monkeypatch):
    # The instance's and the pod's credential services (Call.direct): never a proxy, even one named for "all" schemes.
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://env-proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "")
    session = client_mod.new_session(4)
    sent = _capture_send(monkeypatch, session)
    _request(session, "http://169.254.169.254/openstack/latest/securitykey", proxies=client_mod.DIRECT)
    _request(session, "http://169.254.169.254/openstack/latest/securitykey")
    _request(session, "http://169.254.169.254/openstack/latest/securitykey", proxies={"http": "http://option-proxy:8080", "https": "http://option-proxy:8080"})
    assert sent[0][1]["proxies"] == {}
    assert sent[1][1]["proxies"]["http"] == "http://env-proxy.example:3128"  # requests' rule for every other call
    assert sent[2][1]["proxies"]["http"] == "http://option-proxy:8080"


def test_a_search_by_id_throttled_with_apig_0308_is_retried_like_a_get_and_counted():
    ids = ["job-%d" % index for index in range(10)]
    throttled = FakeResponse(429, {"error_code": "APIG.0308", "error_msg": "The throttling threshold has been reached"}, {"Retry-After": "2"})
    answer = FakeResponse(200, {"total": 1, "count": 1, "items": [dict(JOB, metadata={"id": "job-3", "name": "t"})]})
    client, clock = make(FakeSession(throttled, answer))
    found = client.search_training_jobs_by_id(ids)
    assert list(found) == ["job-3"]  # the other nine are simply not there
    assert clock.sleeps == [2.0] and client.throttled == 1
    body = json.loads(client._session.calls[-1]["data"])  # pylint: disable=protected-access
    assert body["filters"] == [{"key": "id", "operator": "in", "value": ids}] and body["offset"] == 0 and body["limit"] == 50
    assert all(call["method"] == "POST" for call in client._session.calls)  # pylint: disable=protected-access


def test_a_search_by_id_takes_one_to_ten_ids():
    client, _clock = make(FakeSession())
    for ids in ([], ["job-%d" % index for index in range(11)]):
        with pytest.raises(ValueError):
            client.search_training_jobs_by_id(ids)


def test_a_search_by_id_answering_jobs_not_asked_for_is_an_error_that_is_not_transient():
    other = {"metadata": {"id": "not-asked", "name": "x"}, "status": {"phase": "Running"}}
    client, _clock = make(FakeSession(FakeResponse(200, {"total": 1, "count": 1, "items": [other]})))
    with pytest.raises(ModelArtsError, match="not-asked, which was not asked for") as info:
        client.search_training_jobs_by_id(["job-1", "job-2"])
    assert not info.value.transient


def test_a_transport_failure_says_whether_it_had_connected():
    # What the metadata probe's message tells apart: nothing answered, or a connection that brought no answer in time.
    import urllib3.exceptions  # pylint: disable=import-outside-toplevel

    refused = requests.exceptions.ConnectionError(
        urllib3.exceptions.MaxRetryError(None, "/", urllib3.exceptions.NewConnectionError(None, "Failed to establish a new connection: [Errno 111] refused"))
    )
    reset = requests.exceptions.ConnectionError(urllib3.exceptions.ProtocolError("Connection aborted.", ConnectionResetError(104, "reset")))
    assert client_mod.connected_before_failing(refused, "while connecting to 127.0.0.1:9 (name resolution and TCP connect)") is False
    assert client_mod.connected_before_failing(requests.exceptions.ConnectTimeout("connect timed out"), None) is False
    assert client_mod.connected_before_failing(requests.exceptions.ReadTimeout("read timed out"), None) is True
    assert client_mod.connected_before_failing(reset, "while waiting for the status line and headers of the response") is None
    # The deadline ended the attempt (no exception of the transport's own): what it was doing says.
    assert client_mod.connected_before_failing(None, "while connecting to 169.254.169.254:80 (name resolution and TCP connect)") is False
    assert client_mod.connected_before_failing(None, "while waiting for the status line and headers of the response") is True
    assert client_mod.connected_before_failing(None, "during the TLS handshake with host:443") is None


# -- issue 28: credential answers ----------------------------------------------------------------------------------


def test_a_metadata_page_saying_no_agency_is_recognised_though_never_quoted(monkeypatch):
    monkeypatch.setenv("HUAWEICLOUD_METADATA_ENDPOINT", "http://127.0.0.1:9")
    page = "<html>401: Please configure Cloud Service Agency first; request %s</html>" % SECRET
    session = FakeSession(FakeResponse(404, raw=b"no tokens"), FakeResponse(401, raw=page))
    client, _clock = make(session, {"access_key": None, "secret_key": None}, environ={"HUAWEICLOUD_METADATA_ENDPOINT": "http://127.0.0.1:9"})
    with pytest.raises(ModelArtsError, match="has no agency") as caught:
        client.get_training_job("job-1")
    assert "Please configure" not in str(caught.value) and SECRET not in str(caught.value)


def test_secrets_of_a_cut_credential_answer_are_masked_from_then_on(tmp_path):
    token_file = tmp_path / "pod-token"
    token_file.write_text("pod-token-value\n")
    body = ('{"credential": {"access": "AK", "secret": "%s", "securitytoken": "%s' % (SECRET, TOKEN)).encode()
    session = FakeSession(FakeResponse(200, raw=body), FakeResponse(500, raw=("oops %s %s" % (SECRET, TOKEN)).encode()))
    environ = {"HC_CONTAINER_CREDENTIALS_FULL_URI": "http://127.0.0.1:9/pod", "HC_CONTAINER_AUTHORIZATION_TOKEN_FILE": str(token_file)}
    client, _clock = make(session, {"access_key": None, "secret_key": None, "backoff_retries": 1}, environ=environ)
    with pytest.raises(ModelArtsError) as caught:
        client.get_training_job("job-1")
    text = str(caught.value)
    assert "the answer of POST http://127.0.0.1:9/pod (HTTP 200) is not JSON (unterminated string" not in text  # the last attempt's error
    assert "HTTP 500 with a non-JSON body" in text and "not shown" in text and SECRET not in text and TOKEN not in text
    assert SECRET in client.secrets() and TOKEN in client.secrets()
