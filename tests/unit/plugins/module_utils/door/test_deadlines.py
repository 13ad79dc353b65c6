# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One deadline, really: every bound of docs/reliability.md proved on a fake clock.

* with ``wait_timeout: T`` a call ends by ``T + request_timeout`` whatever the service does;
* a ``Retry-After`` longer than the time left ends the retries at once (``test_client.py::test_never_sleeps_past_the_deadline``);
* the IAM project lookup and a slowly arriving body are bounded like any request;
* without a deadline, one request ends within the request budget formula.
"""

from __future__ import annotations

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.service.client import ModelArtsClient
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.door.query import query_jobs
from ansible_collections.modelarts.training.plugins.module_utils.job.phases import DEFAULT_FAIL_ON, DEFAULT_WAIT_FOR
from ansible_collections.modelarts.training.plugins.module_utils.waiting.wait_options import WaitSettings
from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fakes import FakeClock, FakeResponse, FakeSession, client_parts

PROJECT = "0" * 32
AKSK = {"region": "cn-north-4", "project_id": PROJECT, "access_key": "AKEXAMPLE", "secret_key": "SKEXAMPLE-secret"}
RUNNING = {"metadata": {"id": "job-1", "name": "n"}, "status": {"phase": "Running"}}


def make(session, params=None, clock=None):
    clock = clock or FakeClock()
    client = ModelArtsClient(
        *client_parts(dict(AKSK, **(params or {}))), session=session, clock=clock, sleep=clock.sleep, rand=lambda: 0.5, utcnow=clock.utcnow
    )
    return client, clock


class CostlySession(FakeSession):
    """Each request costs ``cost`` seconds on the fake clock, capped by the timeout the client passed (as a socket would)."""

    def __init__(self, clock, cost, *script, **routes):
        super().__init__(*script, **routes)
        self.clock = clock
        self.cost = cost

    def request(self, method, url, **kwargs):
        connect, read = kwargs["timeout"]
        spent = min(self.cost, connect + read)
        self.clock.now += spent
        if spent < self.cost:
            self.calls.append(dict(kwargs, method=method, url=url))
            raise TimeoutError("read timed out")
        return super().request(method, url, **kwargs)


class TricklingResponse(FakeResponse):
    """A 200 whose body arrives one byte every ``gap`` seconds on the fake clock."""

    def __init__(self, clock, gap, size):
        super().__init__(200, raw=b" " * size)
        self.clock = clock
        self.gap = gap

    def iter_content(self, chunk_size=1):
        for start in range(len(self._content)):
            self.clock.now += self.gap
            yield self._content[start : start + 1]


@pytest.mark.parametrize("retry_after", ["30", "300", "86400"])
def test_throttled_wait_ends_by_timeout_plus_one_request_timeout(retry_after):
    clock = FakeClock()
    throttled = FakeResponse(429, {"error_code": "APIG.0308", "error_msg": "throttled"}, {"Retry-After": retry_after})
    session = CostlySession(clock, 0.2, **{"training-jobs": throttled})
    client, _clock = make(session, {"request_timeout": 10}, clock)
    start = clock()
    result = query_jobs(client, ["job-1"], waiting=WaitSettings(True, DEFAULT_WAIT_FOR, DEFAULT_FAIL_ON, 2, 1, 60), clock=clock, sleeper=clock.sleep)
    assert not result.ok
    assert clock() - start <= 2 + 10
    assert "timed out" in result.msg and "APIG.0308" in result.msg, "the message says what the last attempt saw"


def test_slow_service_wait_ends_by_timeout_plus_one_request_timeout():
    clock = FakeClock()
    session = CostlySession(clock, 1000.0, **{"training-jobs": FakeResponse(200, RUNNING)})
    client, _clock = make(session, {"request_timeout": 10, "connect_timeout": 5}, clock)
    start = clock()
    result = query_jobs(client, ["job-1"], waiting=WaitSettings(True, DEFAULT_WAIT_FOR, DEFAULT_FAIL_ON, 2, 1, 60), clock=clock, sleeper=clock.sleep)
    assert not result.ok
    assert clock() - start <= 2 + 10


def test_iam_project_lookup_is_bounded_by_the_callers_deadline():
    clock = FakeClock()
    slow_iam = FakeResponse(503, {"error_code": "X", "error_msg": "busy"}, {"Retry-After": "5"})
    session = CostlySession(clock, 0.1, **{"v3__projects": slow_iam})
    client, _clock = make(session, {"project_id": None}, clock)
    start = clock()
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1", deadline=start + 12)
    assert clock() - start <= 12
    assert "look up the project" in str(info.value)
    assert all("/v3/projects" in call["url"] for call in session.calls)


def test_iam_project_lookup_without_deadline_has_the_request_budget():
    clock = FakeClock()
    session = CostlySession(clock, 10_000.0, **{"v3__projects": FakeResponse(200, {"projects": []})})
    client, _clock = make(session, {"project_id": None, "backoff_retries": 1, "connect_timeout": 2, "request_timeout": 3, "backoff_max_delay": 4}, clock)
    start = clock()
    with pytest.raises(ModelArtsError):
        client.get_training_job("job-1")
    assert client.request_budget() == 2 * (2 + 3) + 1 * 4
    assert clock() - start <= client.request_budget()


def test_a_trickling_body_is_cut_at_the_deadline():
    clock = FakeClock()
    session = FakeSession(TricklingResponse(clock, 1.0, 1000))
    client, _clock = make(session, {"backoff_retries": 0}, clock)
    start = clock()
    with pytest.raises(ModelArtsError) as info:
        client.get_training_job("job-1", deadline=start + 5)
    assert clock() - start <= 5 + 1.0
    assert "deadline passed while the body was still arriving" in str(info.value)


@pytest.mark.parametrize("retries,connect,read,max_delay", [(0, 1, 1, 1), (4, 10, 30, 30), (2, 0.5, 2, 60)])
def test_without_deadline_one_request_ends_within_the_budget(retries, connect, read, max_delay):
    clock = FakeClock()
    answers = [FakeResponse(503, {"error_code": "X", "error_msg": "busy"}, {"Retry-After": "300"}) for _attempt in range(retries + 1)]
    session = CostlySession(clock, 10_000.0, *answers)
    client, _clock = make(session, {"backoff_retries": retries, "connect_timeout": connect, "request_timeout": read, "backoff_max_delay": max_delay}, clock)
    start = clock()
    with pytest.raises(ModelArtsError):
        client.get_training_job("job-1")
    assert clock() - start <= (retries + 1) * (connect + read) + retries * max_delay


def test_v1_error_on_http_200_is_the_same_error_as_on_a_4xx():
    body = {"is_success": False, "error_code": "ModelArts.0103", "error_message": "The job does not exist."}
    session = FakeSession(FakeResponse(200, body, {"X-Request-Id": "req-9"}))
    client, _clock = make(session)
    with pytest.raises(ModelArtsError) as info:
        client.get_job_version(10, 2)
    error = info.value
    assert (error.error_code, error.error_msg, error.request_id) == ("ModelArts.0103", "The job does not exist.", "req-9")
    assert "HTTP 200 ModelArts.0103: The job does not exist." in str(error)
    assert not error.transient
