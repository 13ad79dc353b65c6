# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small test client that signs with the official SDK's signer and sends with requests."""

import json
from urllib.parse import urlsplit

import requests
from huaweicloudsdkcore.auth.credentials import BasicCredentials
from huaweicloudsdkcore.sdk_request import SdkRequest

V2_JOB = "/v2/{project}/training-jobs/{job}"
V2_SEARCH = "/v2/{project}/training-job-searches"
V1_JOB = "/v1/{project}/training-jobs/{job}/versions/{version}"


class SignedClient:
    """Sends AK/SK-signed (or token) requests to the emulator over one keep-alive session."""

    def __init__(self, url, ak=None, sk=None, project_id=None, security_token=None, ca_file=None, timeout=10):
        # pylint: disable=too-many-arguments
        self.url = url
        self.ak = ak
        self.sk = sk
        self.project_id = project_id
        self.security_token = security_token
        self.timeout = timeout
        self.session = requests.Session()
        self.session.trust_env = False
        self.session.verify = ca_file if ca_file else True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.session.close()

    def signed_headers(self, method, path, query=None, body=b"", headers=None, send_project=True):
        """Return the headers the SDK would send for this request (including Authorization)."""
        split = urlsplit(self.url)
        creds = BasicCredentials(self.ak, self.sk, self.project_id if send_project else None)
        if self.security_token:
            creds = creds.with_security_token(self.security_token)
        request = SdkRequest(
            method=method,
            schema=split.scheme,
            host=split.netloc,
            resource_path=path,
            query_params=list(query or []),
            header_params=dict(headers or {"Content-Type": "application/json"}),
            body=body or "",
        )
        signed = creds.sign_request(request)
        return dict(signed.header_params), signed.uri

    def request(self, method, path, query=None, body=None, headers=None, send_project=True, **kwargs):
        """Sign and send a request; ``body`` (a dict) is sent as JSON. Return the requests.Response."""
        raw = json.dumps(body).encode("utf-8") if isinstance(body, (dict, list)) else (body or b"")
        sent_headers, uri = self.signed_headers(method, path, query, raw, headers, send_project)
        kwargs.setdefault("timeout", self.timeout)
        return self.session.request(method, self.url + uri, data=raw or None, headers=sent_headers, **kwargs)

    def unsigned(self, method, path, headers=None, body=None, **kwargs):
        """Send a request exactly as given (no signature)."""
        raw = json.dumps(body).encode("utf-8") if isinstance(body, (dict, list)) else body
        kwargs.setdefault("timeout", self.timeout)
        return self.session.request(method, self.url + path, data=raw, headers=headers or {}, **kwargs)

    def job(self, job_id, project=None, **kwargs):
        """GET a v2 job."""
        return self.request("GET", V2_JOB.format(project=project or self.project_id, job=job_id), **kwargs)

    def v1_job(self, job_id, version_id, project=None, **kwargs):
        """GET a v1 job version."""
        return self.request("GET", V1_JOB.format(project=project or self.project_id, job=job_id, version=version_id), **kwargs)

    def search(self, body, project=None, **kwargs):
        """POST a v2 search."""
        headers = {"Content-Type": "application/json;charset=UTF-8"}
        return self.request("POST", V2_SEARCH.format(project=project or self.project_id), body=body, headers=headers, **kwargs)

    def with_token(self, method, path, token, body=None, **kwargs):
        """Send a request authenticated by an IAM token."""
        headers = {"Content-Type": "application/json", "X-Auth-Token": token}
        return self.unsigned(method, path, headers=headers, body=body, **kwargs)

    def iam_token(self, username, password, domain, project_name=None, project_id=None, **kwargs):
        """POST /v3/auth/tokens with password auth; return the response."""
        scope = {"project": {"id": project_id} if project_id else {"name": project_name}}
        body = {
            "auth": {
                "identity": {"methods": ["password"], "password": {"user": {"name": username, "password": password, "domain": {"name": domain}}}},
                "scope": scope,
            }
        }
        return self.unsigned("POST", "/v3/auth/tokens", headers={"Content-Type": "application/json;charset=utf8"}, body=body, **kwargs)


def token_for(emu, client, project_name=None):
    """Return a fresh IAM token for the emulator's primary user."""
    response = client.iam_token(emu.username, emu.password, emu.domain_name, project_name or emu.region)
    assert response.status_code == 201, response.text
    return response.headers["X-Subject-Token"]
