# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The name search's bounds: what a search holds stays bounded whatever the server sends."""

from __future__ import annotations

import json

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.transport import Response
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.search import jobs_matching, jobs_named, pages_matching
from ansible_collections.modelarts.training.plugins.module_utils.selection import Search


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
