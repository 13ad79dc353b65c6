# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The name search's bounds: what a search holds stays bounded whatever the server sends."""

from __future__ import annotations

import json

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.service.transport import Response
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.service.search import PageFailed, jobs_matching, jobs_named, names_in_workspace, pages_matching
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import Search, closest_names, closest_text


def endless(per_page, pad=0):
    """``(post, bodies)``: a search answering every page with ``per_page`` fresh documents named ``n``, without a total."""
    bodies = []

    def post(body, operation):
        bodies.append(body)
        start = len(bodies) * 10000
        data = {"items": [{"metadata": {"id": "job-%d" % (start + index), "name": "n", "description": "x" * pad}} for index in range(per_page)]}
        return Response(data, 200, "req-%d" % len(bodies), {}, len(json.dumps(data)))

    return post, bodies


def test_a_page_over_its_limit_ends_the_search_at_once():
    post, bodies = endless(51)
    with pytest.raises(ModelArtsError, match=r"\(offset 0\): the answer holds 51 documents for a limit of 50: the service does not page as asked"):
        jobs_named(post, "n")
    assert len(bodies) == 1


def test_the_pages_together_stay_within_max_bytes():
    post, bodies = endless(50, pad=1000)
    with pytest.raises(ModelArtsError, match=r"its 3 pages so far hold \d+ bytes, more than the whole search may hold \(120000 bytes"):
        jobs_named(post, "n", max_bytes=120000)
    assert len(bodies) == 3


def test_without_a_byte_bound_the_page_cap_still_ends_an_endless_search():
    post, bodies = endless(50)
    with pytest.raises(ModelArtsError, match=r"more than 250 matching jobs \(5 pages of 50\), more than one search returns whole .*add latest: true"):
        jobs_named(post, "n", max_pages=5)
    assert len(bodies) == 5


def test_a_tag_search_over_the_limit_names_the_limit_and_what_to_do_never_the_name_filter():
    post, _bodies = endless(50)
    with pytest.raises(ModelArtsError) as caught:
        jobs_matching(post, Search(tags=[("team", ("vision",))]), max_pages=200)
    text = str(caught.value)
    assert "more than 10000 matching jobs (200 pages of 50)" in text and "name filter" not in text
    assert "add latest: true for the newest match only, narrow the tags or give a workspace_id" in text


def test_pages_matching_has_no_cap_and_gives_a_page_at_a_time():
    """The event source's listing: 210 pages (10,500 jobs) and on, each page handed over before the next is asked."""
    post, bodies = endless(50)
    listing = pages_matching(post, Search(tags=[("team", ("vision",))]))
    for number in range(210):
        page = next(listing)
        assert len(page) == 50 and len(bodies) == number + 1
    listing.close()


def failing_once_at(request_number):
    """``(post, bodies)``: 3 pages of 50 fresh documents then a short last page; request ``request_number`` (1-based)
    fails once with a ModelArtsError before the service answers it."""
    bodies, failed = [], []

    def post(body, operation):
        if len(bodies) + len(failed) + 1 == request_number and not failed:
            failed.append(body)
            raise ModelArtsError("%s: the deadline passed before the request could be sent" % operation)
        bodies.append(body)
        page = body["offset"]
        count = 50 if page < 3 else 7
        data = {"items": [{"metadata": {"id": "job-%d-%d" % (page, index), "name": "n"}} for index in range(count)]}
        return Response(data, 200, "req-%d" % len(bodies), {}, len(json.dumps(data)))

    return post, bodies, failed


def test_with_resume_on_a_failed_page_is_asked_again_and_the_listing_keeps_its_place():
    """A long listing (the event source's) keeps its place through a failed request: the failure is handed over as a
    PageFailed and the next step asks for the same page, never for the pages already read."""
    post, bodies, failed = failing_once_at(3)
    steps = list(pages_matching(post, Search(tags=[("team", ("vision",))]), resume_on=(ModelArtsError,)))
    assert [type(step).__name__ if isinstance(step, PageFailed) else len(step) for step in steps] == [50, 50, "PageFailed", 50, 7]
    assert "offset 2" in str(steps[2].error)
    assert failed[0]["offset"] == 2 and [body["offset"] for body in bodies] == [0, 1, 2, 3]
    ids = [document["metadata"]["id"] for step in steps if isinstance(step, list) for document in step]
    assert len(ids) == len(set(ids)) == 157


def test_without_resume_on_a_failed_page_ends_the_listing_with_its_error():
    post, bodies, _failed = failing_once_at(2)
    listing = pages_matching(post, Search(tags=[("team", ("vision",))]))
    assert len(next(listing)) == 50
    with pytest.raises(ModelArtsError, match=r"\(offset 1\): the deadline passed"):
        next(listing)
    assert [body["offset"] for body in bodies] == [0]


def test_the_names_of_a_workspace_s_newest_jobs_are_one_request_of_one_page_with_no_filter():
    """Issue 60, item 5: what the closest names to a name that matches nothing are picked from."""
    bodies = []
    items = [{"metadata": {"id": "a%d" % n, "name": name}} for n, name in enumerate(["b", "a", "b", None, "", 7, "c"])] + ["not a document"]

    def post(body, operation):
        bodies.append((body, operation))
        return Response({"items": items}, 200, "req-1", {}, 10)

    assert names_in_workspace(post, "0123456789abcdef0123456789abcdef") == ["b", "a", "c"]
    assert bodies == [
        (
            {"offset": 0, "limit": 50, "sort_by": "create_time", "order": "desc", "filters": [], "workspace_id": "0123456789abcdef0123456789abcdef"},
            "list the names of the newest training jobs",
        )
    ]
    default = []
    assert names_in_workspace(lambda body, operation: default.append(body) or Response({"items": None}, 200, "r", {}, 2)) == []
    assert "workspace_id" not in default[0], "the default workspace: no workspace_id"


def test_the_closest_names_are_ranked_as_option_names_are_and_never_the_name_itself():
    names = ["resnet50", "churn-model-v2", "churn-model", "churn-modle", "churn-model"]
    assert closest_names("churn-modle", names) == ["churn-model", "churn-model-v2"]
    assert closest_text(Search(name="churn-modle"), names, 50) == "closest names: 'churn-model', 'churn-model-v2'"
    assert closest_text(Search(name="zzzz"), names, 50) == "no name of the 50 newest jobs in the default workspace comes close"
    assert closest_text(Search(name="zzzz", workspace_id="0" * 32), [], 50) == "no name of the 50 newest jobs in workspace %s comes close" % ("0" * 32)
