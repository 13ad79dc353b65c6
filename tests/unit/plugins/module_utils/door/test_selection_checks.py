# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The door's reading of the selectors (door/selection_checks): tags parsed against the search API's rules, each bad
one named; select refusing an empty, contradictory or malformed selection, and building a search."""

from __future__ import annotations


import pytest

from ansible_collections.modelarts.training.plugins.module_utils.door.options import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.door.selection_checks import parse_tags
from ansible_collections.modelarts.training.plugins.module_utils.door.selection_checks import select


WORKSPACE = "0123456789abcdef0123456789ABCDEF"


@pytest.mark.parametrize(
    "value,tags",
    [
        ({"release": "2.4.0"}, (("release", ("2.4.0",)),)),
        ({"release": ["2.4.0", "2.4.1"]}, (("release", ("2.4.0", "2.4.1")),)),
        ({"approved": None}, (("approved", ()),)),
        ({"approved": []}, (("approved", ()),)),
        ({"approved": ""}, (("approved", ()),)),
        ({"approved": [""]}, (("approved", ()),)),
        ({"team": "vision", "stage": "prod"}, (("team", ("vision",)), ("stage", ("prod",)))),
        ({"run": 7}, (("run", ("7",)),)),
        ({"path": "a/b c:d=e+f-g@h_i.j"}, (("path", ("a/b c:d=e+f-g@h_i.j",)),)),
        (None, ()),
        ({}, ()),
    ],
)
def test_tags_are_parsed(value, tags):
    assert parse_tags(value) == tags


@pytest.mark.parametrize(
    "value,message",
    [
        ("release=1", "tags must be a dict"),
        (dict(("k%d" % index, "v") for index in range(11)), "tags: at most 10 tag keys, got 11"),
        ({"release": ["v%d" % index for index in range(11)]}, "tags.release: at most 10 values a tag key, got 11"),
        ({"release": ["a", "a"]}, "tags.release: a value is given twice"),
        ({"release": ["", "a"]}, "tags.release: an empty value means any value"),
        ({" release": "a"}, "no leading or trailing space"),
        ({"k" * 129: "a"}, "is not a tag key"),
        ({"": "a"}, "is not a tag key"),
        ({"re/lease": "a"}, "is not a tag key"),
        ({"release": "a#b"}, "tags.release: 'a#b' is not a tag value"),
        ({"release": "v" * 256}, "is not a tag value"),
        ({"release": 1.10}, "tags.release: a tag value must be a string, got 1.1"),
        ({"release": True}, "a tag value must be a string, got true"),
        ({"release": {"a": 1}}, "a tag value must be a string"),
    ],
)
def test_bad_tags_fail_naming_the_option(value, message):
    with pytest.raises(ConnectionConfigError) as info:
        parse_tags(value)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "values,message",
    [
        ({"training_job_id": "a", "latest": True}, "latest needs name or tags"),
        ({"training_job_ids": ["a"], "latest": True}, "latest needs name or tags"),
        ({"latest": True}, "latest needs name or tags"),
        ({"name": "n", "latest": "yes"}, "latest must be a boolean"),
        ({"training_job_id": "a", "tags": {"k": "v"}}, "training_job_id, tags are mutually exclusive (name and tags may be combined)"),
        ({"training_job_ids": ["a"], "name": "n"}, "are mutually exclusive"),
        ({"tags": {"k": "v"}, "name": " "}, "name must not be empty"),
        ({"name": "n", "workspace_id": "x"}, "workspace_id: 'x' is not a workspace id"),
        ({"tags": {"k": "a#"}}, "tags.k"),
        ({}, "one of training_job_id, training_job_ids, name, tags, job_id with version_id, or v1_jobs is required"),
    ],
)
def test_select_refuses(values, message):
    with pytest.raises(ConnectionConfigError) as info:
        select(values)
    assert message in str(info.value)


def test_select_builds_a_search():
    selection = select({"name": "nightly", "tags": {"team": ["a", "b"], "ok": None}, "latest": True, "workspace_id": WORKSPACE})
    assert selection.keys == [] and selection.single and selection.name == "nightly" and selection.workspace_id == WORKSPACE
    search = selection.search
    assert search.filters() == [{"key": "name", "operator": "like", "value": ["nightly"]}]
    assert search.fields() == {"tags": [{"key": "team", "values": ["a", "b"]}, {"key": "ok", "values": []}], "workspace_id": WORKSPACE}
    assert search.describe() == "named 'nightly' tagged team=a|b, ok in workspace %s" % WORKSPACE
    tags_only = select({"tags": {"team": "a"}})
    assert tags_only.search.filters() == [] and not tags_only.single and tags_only.search.matches({"metadata": {"name": "anything"}})
    assert select({"training_job_ids": ["a", "b"], "workspace_id": "0"}).workspace_id == "0"
