# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad inputs at the client (docs/reliability.md): hostile ids in messages, config errors that must not be retried."""

from __future__ import annotations

import pytest
import requests

from ansible_collections.modelarts.training.plugins.module_utils.service.client import ModelArtsClient
from ansible_collections.modelarts.training.plugins.module_utils.service.transport import proxy_problem
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.text import label
from ansible_collections.modelarts.training.plugins.module_utils.door.options import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.door.query import query_jobs
from ansible_collections.modelarts.training.plugins.module_utils.waiting.waiter import describe_job
from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fakes import FakeClock, FakeResponse, FakeSession, client_parts

PARAMS = {"region": "cn-north-4", "project_id": "0123456789abcdef0123456789abcdef", "access_key": "AK", "secret_key": "SK"}
NOT_FOUND = {"error_code": "ModelArts.2775", "error_msg": "Training job not found."}


def make(session, **params):
    clock = FakeClock()
    merged = dict(PARAMS, **params)
    return ModelArtsClient(*client_parts(merged), session=session, clock=clock, sleep=clock.sleep, rand=lambda: 0.5, utcnow=clock.utcnow)


@pytest.mark.parametrize("job_id", ["a\r\nok: [localhost] => forged", "a\x1b[31mred", "a\tb\x00c", "x" * 5000, "\u8bad\u7ec3\u2028x"])
def test_an_id_cannot_forge_or_flood_a_message(job_id):
    """The error names the id on one bounded, printable line."""
    client = make(FakeSession(FakeResponse(400, NOT_FOUND)), backoff_retries=0)
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job(job_id)
    message = str(info.value)
    assert message.isprintable() and len(message) < 400, repr(message[:200])
    assert info.value.not_found


def test_query_messages_of_hostile_ids_are_one_line():
    """The same through the query pipeline the module and lookup use."""
    client = make(FakeSession(FakeResponse(400, NOT_FOUND)), backoff_retries=0)
    result = query_jobs(client, ["a\nb" * 2000])
    assert not result.ok and result.msg.isprintable() and len(result.msg) < 400


def test_names_from_the_api_are_one_line_in_wait_messages():
    """A job name with a newline (it comes from the service) cannot forge a line either."""
    text = describe_job("id", {"id": "id\n1", "name": "evil\nfatal: [localhost]: FAILED!", "version_id": None})
    assert text.isprintable() and "\\n" in text


def test_label():
    """Printable text is kept; control characters are escaped; long values are cut."""
    assert label("3f7a-\u8bad\u7ec3") == "3f7a-\u8bad\u7ec3"
    assert label("a\r\nb") == "a\\r\\nb"
    assert label("x" * 500) == "x" * 120 + "..."


def test_a_missing_ca_bundle_fails_before_any_request():
    """ca_bundle names a file that does not exist: a config error naming the option, not four retried OSErrors."""
    session = FakeSession()
    with pytest.raises(ConnectionConfigError) as info:
        make(session, ca_bundle="/nonexistent/ca.pem")
    assert "ca_bundle (HUAWEICLOUD_CA_BUNDLE)" in str(info.value) and "/nonexistent/ca.pem" in str(info.value)
    assert session.calls == []


def test_a_missing_ca_bundle_is_ignored_without_validation():
    """validate_certs: false never reads ca_bundle, so a stale path does not matter."""
    make(FakeSession(), ca_bundle="/nonexistent/ca.pem", validate_certs=False)


@pytest.mark.parametrize(
    "exc",
    [
        requests.exceptions.MissingSchema("Invalid URL 'not a url/v2': No scheme supplied"),
        requests.exceptions.InvalidSchema("No connection adapters were found for 'ftp://x'"),
        requests.exceptions.InvalidURL("Failed to parse: https://[x"),
        requests.exceptions.InvalidProxyURL("Please check proxy URL. It is malformed"),
    ],
)
def test_configuration_errors_are_not_retried(exc):
    """A URL that can never work fails at the first attempt, without sleeping through the backoff."""
    session = FakeSession(exc, exc, exc)
    client = make(session, backoff_retries=2)
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    assert len(session.calls) == 1 and not info.value.transient
    assert type(exc).__name__ in str(info.value)


@pytest.mark.parametrize("token", ["MIIsecret\nvalue-DO-NOT-LEAK", " MIIsecret-leading-DO-NOT-LEAK", "MIIsecret\r-DO-NOT-LEAK"])
def test_a_header_requests_refuses_is_named_never_quoted(token):
    """requests' InvalidHeader quotes the value (escaped, so masking the raw value missed it): the message names the header only."""
    client = ModelArtsClient(*client_parts(dict(PARAMS, backoff_retries=0)))

    class Refused(object):  # pylint: disable=too-few-public-methods
        kind = "auth_token"
        auth_token = token

    client.current_credentials = lambda deadline=None: Refused()
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1")
    message = str(info.value)
    assert "InvalidHeader" in message and "X-Auth-Token" in message, message
    for piece in ("MIIsecret", "value-", "leading-", "DO-NOT-LEAK"):
        assert piece not in message, message
    assert not info.value.transient


@pytest.mark.parametrize("proxy", ["http://u:Pa/ss-word@proxy:3128", "http://u:Pa#ss-word@proxy:3128", "http://u:Pa?ss-word@proxy", "http://u/ss-word@proxy:1"])
def test_a_proxy_url_requests_would_misread_is_refused_without_quoting_it(proxy):
    """Issue 20, item 4: requests would take 'u' for the host and quote 'u:Pa' in its error; the message says to percent-encode."""
    with pytest.raises(ConnectionConfigError) as info:
        make(FakeSession(), proxy=proxy)
    message = str(info.value)
    assert "percent-encode" in message and "%2F" in message
    assert "Pa" not in message.replace("Pa%2Fss", "") and "ss-word" not in message and "u:" not in message, message


@pytest.mark.parametrize(
    "proxy",
    [
        "http://u:Pw-secret-9@[fd00::1",
        "http://[fd00::1",
        "http://u:Pw-secret-9@[fd00::1]:99999",
        "http://u:Pw-secret-9@proxy:port",
        "http://u:Pw-secret-9@:3128",
    ],
)
def test_a_proxy_url_whose_host_or_port_cannot_be_read_is_refused_without_quoting_it(proxy):
    """Issue 36, item 6: an unclosed IPv6 bracket was a ValueError from inside the standard library, a traceback."""
    with pytest.raises(ConnectionConfigError) as info:
        make(FakeSession(), proxy=proxy)
    message = str(info.value)
    assert message.startswith("proxy: it is not a URL of the form scheme://host:port (with user:password@ before the host"), message
    assert "Pw-secret" not in message and "fd00::1]:3128" in message and "[fd00::1 " not in message, message


@pytest.mark.parametrize("proxy", ["http://[fd00::1]:3128", "http://u:Pw-secret-9@[fd00::1]:3128", "proxy.example:3128", "socks5h://proxy.example"])
def test_proxy_urls_that_can_be_read_pass(proxy):
    assert proxy_problem(proxy) is None


@pytest.mark.parametrize(
    "proxy,masked",
    [
        ("http://u:Pa@ss-word@proxy:3128", ["u:Pa@ss-word", "Pa@ss-word"]),
        ("http://u:Pa%2Fss-word@proxy:3128", ["u:Pa%2Fss-word", "u:Pa/ss-word", "Pa%2Fss-word", "Pa/ss-word"]),
        ("http://u:Pa:ss-word@proxy:3128", ["u:Pa:ss-word", "Pa:ss-word"]),
    ],
)
def test_a_proxy_url_read_right_is_used_and_its_credentials_masked_in_every_form(proxy, masked):
    client = make(FakeSession(FakeResponse(200, {"metadata": {"id": "j"}, "status": {"phase": "Running"}})), proxy=proxy)
    for value in masked:
        assert value in client.secrets()
        assert client.redact("proxy said %s" % value) == "proxy said ********"
    assert client.redact(proxy) == "http://********@proxy:3128"
    client.get_training_job("j")
