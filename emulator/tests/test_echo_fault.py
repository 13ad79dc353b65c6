# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``echo`` fault: an error page quoting the request (headers and body, secrets included) in five encodings."""

import html
import json
from urllib.parse import quote_plus

import pytest

from .helpers import token_for

JOB = "a1000000-0000-4000-8000-000000000001"


@pytest.mark.parametrize("encoding", ["raw", "json", "repr", "percent", "html"])
def test_echo_quotes_the_token_header_in_its_encoding(emu, client, encoding):
    token = token_for(emu, client)
    emu.add_fault(type="echo", encoding=encoding, status=400)
    response = client.with_token("GET", "/v2/%s/training-jobs/%s" % (emu.project_id, JOB), token)
    assert response.status_code == 400
    line = "x-auth-token: %s" % token
    expected = {
        "raw": line,
        "json": json.dumps(line)[1:-1],
        "repr": line,
        "percent": quote_plus(line),
        "html": html.escape(line),
    }[encoding]
    assert expected in response.text
    assert response.headers["Content-Type"].startswith({"json": "application/json", "html": "text/html"}.get(encoding, "text/plain"))
    if encoding == "json":
        assert "echo" in response.json()
    assert client.with_token("GET", "/v2/%s/training-jobs/%s" % (emu.project_id, JOB), token).status_code == 200, "one request only"
    assert emu.requests()[-2]["fault"] == "echo"


def test_echo_quotes_the_iam_password_body_after_padding(emu, client):
    emu.add_fault(type="echo", target="iam", status=500, pad=300)
    response = client.iam_token(emu.username, emu.password, emu.domain_name, emu.region)
    assert response.status_code == 500
    assert response.text.startswith("\n" * 300 + "the request was:\nPOST /v3/auth/tokens")
    assert '"password": "%s"' % emu.password in response.text or '"password":"%s"' % emu.password in response.text
    # The request log keeps its secrets out, echo or not.
    assert emu.password not in json.dumps(emu.requests())


def test_echo_of_chosen_headers_only(emu, client):
    token = token_for(emu, client)
    emu.add_fault(type="echo", headers=["X-Auth-Token"])
    response = client.with_token("GET", "/v2/%s/training-jobs/%s" % (emu.project_id, JOB), token)
    assert response.text == "the request was:\nGET /v2/%s/training-jobs/%s\r\nx-auth-token: %s\r\n\r\n" % (emu.project_id, JOB, token)


def test_bad_echo_specs_are_refused(emu):
    bad_specs = (
        {"type": "echo", "status": 200},
        {"type": "echo", "encoding": "rot13"},
        {"type": "echo", "pad": "lots"},
        {"type": "echo", "pad": -1},
        {"type": "echo", "headers": "x-auth-token"},
    )
    for bad in bad_specs:
        with pytest.raises(RuntimeError, match="HTTP 400"):
            emu.control("POST", "/faults", bad)
