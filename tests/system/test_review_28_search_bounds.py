# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 28 (extra): a name search holds bounded memory whatever the server sends.

Each page was bounded by ``max_response_bytes`` and the search by 200 pages, but not what the pages add up to: a
server answering every page with more documents than the ``limit`` asked, or with endless full pages, had the
module read 200 of them and hold every document of the name (100,000 here, or 200 pages of ``max_response_bytes``)
before giving up.  Now a page over its ``limit`` ends the search at once, and the pages of one search together stay
within ``max_response_bytes``.  The server is a small HTTPS JSON API on 127.0.0.1 (peers.json_api), run by the test.
"""

import re
import uuid

from peers import json_api

NAME = "r28-endless"
PROJECT = "0123456789abcdef0123456789abcdef"


def endless(per_page, pad):
    """A search that never ends: every page ``per_page`` fresh documents named NAME (each ``pad`` bytes bigger), no total."""

    def answer(method, path, body):
        if method != "POST" or not path.endswith("/training-job-searches"):
            return 404, {"error_code": "ModelArts.0001", "error_msg": "not here"}
        items = [
            {"kind": "job", "metadata": {"id": str(uuid.uuid4()), "name": NAME, "description": "x" * pad}, "status": {"phase": "Running"}}
            for _index in range(per_page)
        ]
        return 200, {"count": len(items), "limit": body.get("limit"), "offset": body.get("offset"), "items": items}

    return answer


def search(run_info_task, server, **options):
    """The registered result of a task that finds the jobs named NAME on ``server`` (at -vvv)."""
    task = dict(
        region="cn-north-4",
        project_id=PROJECT,
        access_key="AKENDLESSPAGES",
        secret_key="SK-endless-pages-secret",
        endpoint=server.url,
        ca_bundle=server.ca_file,
        backoff_retries=0,
        name=NAME,
        **options,
    )
    found, process = run_info_task(task)
    assert "Traceback" not in process.stdout + process.stderr
    return found


def test_a_page_holding_more_documents_than_asked_ends_the_search(run_info_task, tmp_path):
    with json_api(endless(per_page=500, pad=0), tls_dir=str(tmp_path / "tls")) as server:
        found = search(run_info_task, server)
    assert found.get("failed") is True
    assert "the answer holds 500 documents for a limit of 50" in found["msg"], found["msg"]
    assert len(server.seen) == 1, "%d pages read from a server that does not page as asked" % len(server.seen)


def test_the_pages_of_one_name_search_stay_within_max_response_bytes_together(run_info_task, tmp_path):
    budget = 1024 * 1024
    with json_api(endless(per_page=50, pad=2000), tls_dir=str(tmp_path / "tls")) as server:
        found = search(run_info_task, server, max_response_bytes=budget)
    assert found.get("failed") is True
    expected = r"its \d+ pages so far hold \d+ bytes, more than the whole search may hold \(8388608 bytes, 8 x max_response_bytes\)"
    assert re.search(expected, found["msg"]), found["msg"]
    # Each page is over 100,000 bytes: the search stops at the page that passes the budget, not after 200 pages.
    assert len(server.seen) <= 8 * budget // (50 * 2000) + 1, "%d pages read" % len(server.seen)
