# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Authentication as the gateway does it: signatures, skew, temporary credentials, tokens, projects."""

import time

from .helpers import V1_JOB, V2_JOB, SignedClient, token_for

JOB = "a1000000-0000-4000-8000-000000000001"
EAST_JOB = "a1000000-0000-4000-8000-000000000040"
OTHER_JOB = "a1000000-0000-4000-8000-000000000041"


def _apigw(response, status, code):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code
    assert body["request_id"] == response.headers["X-Request-Id"]
    assert body["error_msg"].startswith(("Incorrect IAM authentication information", "The token must be updated"))
    return body


def test_signed_request_is_accepted(client):
    response = client.job(JOB)
    assert response.status_code == 200
    assert response.json()["metadata"]["id"] == JOB


def test_wrong_secret_key_is_rejected(emu):
    with SignedClient(emu.url, emu.ak, emu.sk[:-1] + "X", emu.project_id) as bad:
        body = _apigw(bad.job(JOB), 401, "APIG.0301")
    assert "verify aksk signature fail" in body["error_msg"]
    assert emu.sk not in str(body)


def test_unknown_access_key_is_rejected(emu):
    with SignedClient(emu.url, "HPUAUNKNOWNKEY000000", emu.sk, emu.project_id) as bad:
        body = _apigw(bad.job(JOB), 401, "APIG.0301")
    assert "HPUAUNKNOWNKEY000000 not exist" in body["error_msg"]


def test_missing_credentials_are_rejected(client):
    _apigw(client.unsigned("GET", V2_JOB.format(project=client.project_id, job=JOB)), 401, "APIG.0301")


def test_other_signing_algorithms_are_rejected(client):
    headers, uri = client.signed_headers("GET", V2_JOB.format(project=client.project_id, job=JOB))
    headers["Authorization"] = headers["Authorization"].replace("SDK-HMAC-SHA256", "SDK-HMAC-SM3")
    _apigw(client.unsigned("GET", uri, headers=headers), 401, "APIG.0301")


def test_clock_skew_over_15_minutes_is_rejected(client):
    stale = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() - 16 * 60))
    headers = {"Content-Type": "application/json", "X-Sdk-Date": stale}
    _apigw(client.job(JOB, headers=headers), 401, "APIG.0303")
    future = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() + 16 * 60))
    _apigw(client.job(JOB, headers={"Content-Type": "application/json", "X-Sdk-Date": future}), 401, "APIG.0303")
    recent = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() - 14 * 60))
    assert client.job(JOB, headers={"Content-Type": "application/json", "X-Sdk-Date": recent}).status_code == 200


def test_clock_skew_tolerance_is_configurable(emu, client):
    emu.settings(clock_skew_tolerance=60)
    stale = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() - 120))
    _apigw(client.job(JOB, headers={"Content-Type": "application/json", "X-Sdk-Date": stale}), 401, "APIG.0303")


def test_tampered_request_is_rejected(client):
    headers, uri = client.signed_headers("GET", V2_JOB.format(project=client.project_id, job=JOB))
    other = uri.replace(JOB, "a1000000-0000-4000-8000-000000000002")
    _apigw(client.unsigned("GET", other, headers=headers), 401, "APIG.0301")


def test_temporary_credentials(emu):
    with SignedClient(emu.url, emu.temp_ak, emu.temp_sk, emu.project_id, security_token=emu.security_token) as temp:
        assert temp.job(JOB).status_code == 200
    with SignedClient(emu.url, emu.temp_ak, emu.temp_sk, emu.project_id) as no_token:
        _apigw(no_token.job(JOB), 401, "APIG.0301")
    with SignedClient(emu.url, emu.temp_ak, emu.temp_sk, emu.project_id, security_token="forged-token") as forged:
        _apigw(forged.job(JOB), 401, "APIG.0301")


def test_security_token_must_be_signed(emu):
    with SignedClient(emu.url, emu.temp_ak, emu.temp_sk, emu.project_id) as temp:
        headers, uri = temp.signed_headers("GET", V2_JOB.format(project=emu.project_id, job=JOB))
        headers["X-Security-Token"] = emu.security_token
        _apigw(temp.unsigned("GET", uri, headers=headers), 401, "APIG.0301")


def test_security_token_with_permanent_key_is_rejected(emu):
    with SignedClient(emu.url, emu.ak, emu.sk, emu.project_id, security_token=emu.security_token) as odd:
        _apigw(odd.job(JOB), 401, "APIG.0301")


def test_iam_password_token(emu, client):
    response = client.iam_token(emu.username, emu.password, emu.domain_name, emu.region)
    assert response.status_code == 201
    assert response.headers["X-IAM-Trace-Id"] == "token_" + response.headers["X-Request-Id"]
    token = response.headers["X-Subject-Token"]
    body = response.json()["token"]
    assert body["project"] == {"id": emu.project_id, "name": emu.region, "domain": {"id": body["user"]["domain"]["id"], "name": emu.domain_name}}
    assert body["expires_at"].endswith("Z") and body["expires_at"] > body["issued_at"]
    assert body["catalog"][0]["endpoints"][0]["url"] == emu.url
    job = client.with_token("GET", V2_JOB.format(project=emu.project_id, job=JOB), token)
    assert job.status_code == 200 and job.json()["metadata"]["id"] == JOB
    by_id = client.iam_token(emu.username, emu.password, emu.domain_name, project_id=emu.second_project["project_id"])
    assert by_id.json()["token"]["project"]["name"] == emu.second_project["region"]


def test_iam_wrong_password(emu, client):
    response = client.iam_token(emu.username, "not-the-password", emu.domain_name, emu.region)
    assert response.status_code == 401
    assert response.json() == {"error": {"code": 401, "title": "Unauthorized", "message": "The username or password is wrong."}}
    assert "X-Subject-Token" not in response.headers
    assert response.headers["X-Request-Id"]
    unknown = client.iam_token("nobody", emu.password, emu.domain_name, emu.region)
    assert unknown.status_code == 401 and unknown.json() == response.json()


def test_iam_bad_requests(emu, client):
    assert client.unsigned("POST", "/v3/auth/tokens", body=b"{not json").status_code == 400
    bad_scope = client.iam_token(emu.username, emu.password, emu.domain_name, "xx-nowhere-1")
    assert bad_scope.status_code == 401 and "error" in bad_scope.json()


def test_token_expiry(emu, client):
    emu.settings(token_lifetime=30)
    token = token_for(emu, client)
    path = V2_JOB.format(project=emu.project_id, job=JOB)
    assert client.with_token("GET", path, token).status_code == 200
    emu.control("POST", "/clock/advance", {"seconds": 31})
    _apigw(client.with_token("GET", path, token), 401, "APIG.0307")
    fresh = token_for(emu, client)
    assert client.with_token("GET", path, fresh).status_code == 200


def test_expire_all_tokens(emu, client):
    token = token_for(emu, client)
    emu.control("POST", "/tokens/expire")
    _apigw(client.with_token("GET", V2_JOB.format(project=emu.project_id, job=JOB), token), 401, "APIG.0307")


def test_unknown_token(emu, client):
    _apigw(client.with_token("GET", V2_JOB.format(project=emu.project_id, job=JOB), "MIIforged"), 401, "APIG.0301")


def _mismatch(response, v1=False):
    assert response.status_code == 404, response.text
    body = response.json()
    if v1:
        assert body["is_success"] is False and body["error_code"] == "ModelArts.2786" and body["error_message"]
    else:
        assert body == {"error_code": "ModelArts.2786", "error_msg": body["error_msg"]}


def test_token_scoped_to_another_project(emu, client):
    token = token_for(emu, client)  # scoped to cn-north-4
    east = emu.second_project["project_id"]
    _mismatch(client.with_token("GET", V2_JOB.format(project=east, job=EAST_JOB), token))
    _mismatch(client.with_token("GET", V1_JOB.format(project=east, job=1001, version=1), token), v1=True)
    east_token = token_for(emu, client, emu.second_project["region"])
    assert client.with_token("GET", V2_JOB.format(project=east, job=EAST_JOB), east_token).status_code == 200


def test_aksk_of_another_account(emu):
    with SignedClient(emu.url, emu.other.ak, emu.other.sk, emu.project_id) as other:
        _mismatch(other.job(JOB))
    with SignedClient(emu.url, emu.other.ak, emu.other.sk, emu.other.project_id) as other:
        assert other.job(OTHER_JOB).status_code == 200
        _mismatch(other.job(JOB, project=emu.project_id))


def test_x_project_id_must_match_url(emu):
    with SignedClient(emu.url, emu.ak, emu.sk, emu.second_project["project_id"]) as client:
        _mismatch(client.job(JOB, project=emu.project_id))
        assert client.job(JOB, project=emu.project_id, send_project=False).status_code == 200


def test_iam_projects_lookup(emu, client):
    response = client.request("GET", "/v3/projects", query=[("name", emu.region)], send_project=False)
    assert response.status_code == 200
    projects = response.json()["projects"]
    assert [(p["id"], p["name"]) for p in projects] == [(emu.project_id, emu.region)]
    nothing = client.request("GET", "/v3/projects", query=[("name", "xx-nowhere-1")], send_project=False)
    assert nothing.json()["projects"] == []
    token = token_for(emu, client)
    everything = client.with_token("GET", "/v3/projects", token)
    assert len(everything.json()["projects"]) == 2
    _apigw(client.unsigned("GET", "/v3/projects?name=cn-north-4"), 401, "APIG.0301")


def test_temporary_credentials_expire(emu):
    with SignedClient(emu.url, emu.temp_ak, emu.temp_sk, emu.project_id, security_token=emu.security_token) as temp:
        assert temp.job(JOB).status_code == 200
        emu.control("POST", "/tokens/expire")
        body = _apigw(temp.job(JOB), 401, "APIG.0301")
        assert "has expired" in body["error_msg"] and emu.security_token not in body["error_msg"]
        emu.reset()
        assert temp.job(JOB).status_code == 200


def test_temporary_credentials_with_a_lifetime(emu, client):
    scenario = {
        "accounts": [
            {
                "domain_name": "short",
                "users": [],
                "projects": [{"id": emu.project_id, "name": emu.region}],
                "temporary_keys": [{"ak": "HSTASHORTLIVED000001", "sk": "S" * 40, "security_token": "tok", "expires_in": 30}],
            }
        ],
        "jobs": [{"id": JOB, "name": "j"}],
    }
    emu.reset(scenario)
    try:
        with SignedClient(emu.url, "HSTASHORTLIVED000001", "S" * 40, emu.project_id, security_token="tok") as temp:
            assert temp.job(JOB).status_code == 200
            emu.control("POST", "/clock/advance", {"seconds": 31})
            _apigw(temp.job(JOB), 401, "APIG.0301")
    finally:
        emu.reset()
    assert client.job(JOB).status_code == 200
