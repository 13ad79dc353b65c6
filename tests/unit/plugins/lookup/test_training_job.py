# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training_job lookup: terms, fields, option sources, and errors before any request."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleLookupError
from ansible.plugins.loader import lookup_loader

from ansible_collections.modelarts.training.plugins.lookup.training_job import flatten_terms, pick, term_key

ITEM = {"id": "j1", "phase": "Completed", "details": {"status": {"duration": 42, "task_statuses": [{"exit_code": 0}]}}}


@pytest.mark.parametrize(
    "term,key",
    [
        ("abc", "abc"),
        ("  abc ", "abc"),
        ({"job_id": 10, "version_id": 2}, ("v1", 10, 2)),
        ({"job_id": "10", "version_id": "2"}, ("v1", 10, 2)),
    ],
)
def test_term_keys(term, key):
    assert term_key(term, 0) == key


@pytest.mark.parametrize(
    "term,fragment",
    [
        ("", "term 3 must not be empty"),
        ("..", "term 3: '..' is not a training job id"),
        ("a/../b", "term 3: 'a/../b' is not a training job id"),
        (5, "got int"),
        (None, "got NoneType"),
        ({"job_id": 1}, "exactly the keys job_id and version_id"),
        ({"job_id": 1, "version_id": 2, "x": 3}, "exactly the keys"),
        ({"job_id": "ten", "version_id": 2}, "term 3: job_id must be an integer, got 'ten'"),
        ({"job_id": 10.9, "version_id": 2}, "term 3: job_id must be an integer, got 10.9"),
        ({"job_id": 10, "version_id": True}, "term 3: version_id must be an integer, got true"),
        ({"job_id": -3, "version_id": 2}, "term 3: job_id must not be negative, got -3"),
    ],
)
def test_bad_terms(term, fragment):
    with pytest.raises(AnsibleLookupError, match=fragment):
        term_key(term, 3)


def test_flatten_terms():
    assert flatten_terms([["a", "b"], "c", ({"job_id": 1, "version_id": 1},)]) == ["a", "b", "c", {"job_id": 1, "version_id": 1}]


def test_pick():
    assert pick(ITEM, "phase") == "Completed"
    assert pick(ITEM, "details.status.duration") == 42
    assert pick(ITEM, "details.status.task_statuses.0.exit_code") == 0
    with pytest.raises(AnsibleLookupError, match=r"'nope' is not in training job j1"):
        pick(ITEM, "details.nope")
    with pytest.raises(AnsibleLookupError, match="'5' is not in"):
        pick(ITEM, "details.status.task_statuses.5")


def _lookup():
    lookup = lookup_loader.get("modelarts.training.training_job")
    assert lookup is not None
    return lookup


def test_credentials_checked_before_any_request(monkeypatch):
    for name in ("HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK", "HUAWEICLOUD_SDK_AUTH_TOKEN", "HUAWEICLOUD_USERNAME"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(AnsibleLookupError, match=r"incomplete credentials \(given as lookup keywords\): access_key \(HUAWEICLOUD_SDK_AK\) set"):
        _lookup().run(["job"], variables={}, region="cn-north-4", project_id="p", access_key="ak")
    with pytest.raises(AnsibleLookupError, match=r"conflicting credentials \(given as lookup keywords\): auth_token and idp_id/id_token_file"):
        _lookup().run(["job"], variables={}, region="cn-north-4", auth_token="t", idp_id="i", id_token_file="/f")


def test_options_from_env_vars_and_keywords(monkeypatch):
    """Keywords beat inventory vars, which beat the environment (set_options honoured)."""
    monkeypatch.setenv("HUAWEICLOUD_SDK_AUTH_TOKEN", "env-token")
    monkeypatch.setenv("HUAWEICLOUD_SDK_REGION", "env-region")
    lookup = _lookup()
    lookup.set_options(var_options={"modelarts_region": "var-region", "modelarts_project_id": "var-project"}, direct={"project_id": "kw-project"})
    assert lookup.get_option("auth_token") == "env-token"
    assert lookup.get_option("region") == "var-region"
    assert lookup.get_option("project_id") == "kw-project"


def test_unknown_phase_is_refused(monkeypatch):
    monkeypatch.setenv("HUAWEICLOUD_SDK_AUTH_TOKEN", "t")
    with pytest.raises(AnsibleLookupError, match="wait_for: unknown phase 'Done'"):
        _lookup().run(["job"], variables={}, region="r", project_id="p", wait_for=["Done"])
