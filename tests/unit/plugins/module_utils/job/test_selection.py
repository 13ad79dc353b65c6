# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Selectors (selection.py): tags, latest and workspace_id parsed and checked before any request; the search body
they make; latest and created_since paging (search.jobs_matching); workspace_id on the searches by id."""

from __future__ import annotations

import json

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.service.client import ModelArtsClient
from ansible_collections.modelarts.training.plugins.module_utils.door.options import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.service.search import jobs_matching
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import Search, check_workspace_id
from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fakes import FakeClock, FakeResponse, FakeSession, client_parts

WORKSPACE = "0123456789abcdef0123456789ABCDEF"


@pytest.mark.parametrize("value,text", [(None, None), ("", None), ("0", "0"), (0, "0"), (WORKSPACE, WORKSPACE), (" 0 ", "0")])
def test_workspace_ids(value, text):
    assert check_workspace_id(value) == text


@pytest.mark.parametrize("value", ["1", "default", WORKSPACE[:-1], WORKSPACE + "0", "0123456789abcdef0123456789abcde-", True, ["0"]])
def test_malformed_workspace_ids_fail_naming_the_option(value):
    with pytest.raises(ConnectionConfigError) as info:
        check_workspace_id(value)
    assert str(info.value).startswith("workspace_id")


def doc(job_id, name="nightly", created=0):
    return {"metadata": {"id": job_id, "name": name, "create_time": created}}


class Pages(object):
    """The search API over ``documents`` (newest first), offset a page index; records each body."""

    def __init__(self, documents):
        self.documents = documents
        self.bodies = []

    def __call__(self, body, _operation):
        self.bodies.append(body)
        start = body["offset"] * body["limit"]
        items = self.documents[start : start + body["limit"]]
        return Answer({"total": len(self.documents), "items": items})


class Answer(object):
    """What the client's ``post`` gives ``search.py``: the parsed body and the request id."""

    def __init__(self, data):
        self.data = data
        self.request_id = "req"


def test_latest_stops_at_the_first_page_with_a_match_and_keeps_the_newest():
    documents = [doc("x%d" % index, "nightly-other", 1000 - index) for index in range(3)] + [doc("new", created=900), doc("old", created=800)]
    documents += [doc("y%d" % index, "nightly", 100) for index in range(200)]
    post = Pages(documents)
    pages = []
    assert jobs_matching(post, Search(name="nightly", latest=True), page_size=50, pages=pages) == [documents[3]]
    assert pages == [1] and len(post.bodies) == 1


@pytest.mark.parametrize("listed", ["by-id", "reversed"])
def test_jobs_created_in_the_same_millisecond_come_greatest_id_first_whatever_order_the_service_lists_them_in(listed):
    tied = [doc("t%d" % index, created=500) for index in range(4)]
    documents = [doc("newer", created=900)] + (tied[::-1] if listed == "by-id" else tied) + [doc("older", created=100)]
    found = jobs_matching(Pages(documents), Search(name="nightly"))
    assert [d["metadata"]["id"] for d in found] == ["newer", "t3", "t2", "t1", "t0", "older"]


@pytest.mark.parametrize("listed", ["by-id", "reversed"])
def test_latest_among_jobs_created_in_the_same_millisecond_reads_on_while_the_pages_hold_them_and_keeps_the_greatest_id(listed):
    # 120 jobs of the name created together, listed over three pages of 50 in an order of the service's own.
    tied = [doc("t%03d" % index, created=500) for index in range(120)]
    documents = (tied[::-1] if listed == "by-id" else tied) + [doc("older-%d" % index, created=100) for index in range(60)]
    post = Pages(documents)
    pages = []
    assert jobs_matching(post, Search(name="nightly", latest=True), page_size=50, pages=pages) == [doc("t119", created=500)]
    # The third page ends with an older job: the tie cannot go on past it.
    assert pages == [3] and len(post.bodies) == 3


def test_latest_reads_no_further_page_when_its_page_ends_with_an_older_job():
    documents = [doc("b", created=500), doc("a", created=500), doc("older", created=100)] + [doc("x%d" % i, created=50) for i in range(100)]
    post = Pages(documents)
    assert jobs_matching(post, Search(name="nightly", latest=True), page_size=3) == [doc("b", created=500)]
    assert len(post.bodies) == 1


def test_a_tag_search_sends_tags_and_workspace_and_no_name_filter():
    post = Pages([doc("a", "one"), doc("b", "two")])
    found = jobs_matching(post, Search(tags=(("team", ("a",)),), workspace_id=WORKSPACE))
    assert sorted(d["metadata"]["id"] for d in found) == ["a", "b"]
    body = post.bodies[0]
    assert body["filters"] == [] and body["tags"] == [{"key": "team", "values": ["a"]}] and body["workspace_id"] == WORKSPACE
    assert body["sort_by"] == "create_time" and body["order"] == "desc"


def test_created_since_stops_after_the_page_that_reaches_older_jobs():
    """What the event source asks each round: one request while fewer than a page of jobs are new."""
    documents = [doc("n%d" % index, created=10_000 - index) for index in range(5)] + [doc("o%d" % index, created=5_000 - index) for index in range(1000)]
    post = Pages(documents)
    found = jobs_matching(post, Search(tags=(("team", ()),)), page_size=50, created_since=9_000)
    assert len(post.bodies) == 1
    assert [d["metadata"]["id"] for d in found][:5] == ["n0", "n1", "n2", "n3", "n4"]


def test_searches_by_id_carry_the_workspace():
    session = FakeSession(FakeResponse(200, {"total": 1, "items": [doc("a")]}))
    clock = FakeClock()
    client = ModelArtsClient(
        *client_parts({"region": "cn-north-4", "project_id": "p" * 32, "access_key": "AK", "secret_key": "SK"}),
        session=session,
        clock=clock,
        sleep=clock.sleep,
        utcnow=clock.utcnow,
    )
    assert list(client.search_training_jobs_by_id(["a"], workspace_id=WORKSPACE)) == ["a"]
    assert json.loads(session.calls[0]["data"])["workspace_id"] == WORKSPACE
