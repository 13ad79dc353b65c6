# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Credential and connection option rules: each gap or conflict fails naming options and env vars, never values."""

from __future__ import annotations

import os

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.door.options import (
    CONNECTION_OPTIONS,
    ConnectionConfigError,
    check_credentials,
    check_known,
    connection_argument_spec,
    expand_user,
    resolve,
    unknown_names,
)
from ansible_collections.modelarts.training.plugins.module_utils.text import expand_path

BASE = {"region": "cn-north-4", "project_id": "p"}
SECRETS = {"secret_key": "sk-VALUE-123", "password": "pw-VALUE-123", "auth_token": "tok-VALUE-123", "security_token": "st-VALUE-123"}


@pytest.mark.parametrize(
    "params,kind",
    [
        ({"access_key": "ak", "secret_key": "sk"}, "aksk"),
        ({"access_key": "ak", "secret_key": "sk", "security_token": "st"}, "aksk"),
        ({"auth_token": "tok"}, "auth_token"),
        ({"username": "u", "password": "p", "domain_name": "d"}, "password"),
    ],
)
def test_each_credential_kind(params, kind):
    assert check_credentials(dict(BASE, **params)) == kind


def test_no_credential_option_is_the_default_chain():
    # Where hosts keep credentials is looked at when the client first needs them (credential_sources.default_chain).
    assert check_credentials(dict(BASE)) == "default"


@pytest.mark.parametrize(
    "params,fragments",
    [
        ({"access_key": "ak"}, ["incomplete credentials", "access_key (HUAWEICLOUD_SDK_AK) set", "secret_key (HUAWEICLOUD_SDK_SK) missing"]),
        ({"secret_key": SECRETS["secret_key"]}, ["access_key (HUAWEICLOUD_SDK_AK) missing"]),
        ({"username": "u", "password": SECRETS["password"]}, ["domain_name (HUAWEICLOUD_DOMAIN_NAME) missing"]),
        (
            {"access_key": "ak", "secret_key": SECRETS["secret_key"], "auth_token": SECRETS["auth_token"]},
            ["conflicting credentials", "access_key/secret_key and auth_token"],
        ),
        (
            {"auth_token": SECRETS["auth_token"], "username": "u", "password": SECRETS["password"], "domain_name": "d"},
            ["conflicting credentials", "auth_token and username/password/domain_name"],
        ),
        ({"auth_token": SECRETS["auth_token"], "security_token": SECRETS["security_token"]}, ["conflicting credentials", "security_token and auth_token"]),
        ({"security_token": SECRETS["security_token"]}, ["incomplete credentials", "security_token (HUAWEICLOUD_SDK_SECURITY_TOKEN) set", "access_key"]),
    ],
)
def test_gaps_and_conflicts(params, fragments):
    with pytest.raises(ConnectionConfigError) as info:
        check_credentials(dict(BASE, **params))
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message
    for value in SECRETS.values():
        assert value not in message


def test_region_or_endpoint_required():
    with pytest.raises(ConnectionConfigError, match=r"region \(HUAWEICLOUD_SDK_REGION\) or endpoint \(HUAWEICLOUD_MODELARTS_ENDPOINT\)"):
        check_credentials({"project_id": "p", "auth_token": "t"})


def test_project_needs_region_to_be_resolved():
    with pytest.raises(ConnectionConfigError, match=r"project_id \(HUAWEICLOUD_SDK_PROJECT_ID\), or region"):
        check_credentials({"endpoint": "https://x", "auth_token": "t"})
    assert check_credentials({"endpoint": "https://x", "project_id": "p", "auth_token": "t"}) == "auth_token"


@pytest.mark.parametrize("name,value", [("connect_timeout", 0), ("request_timeout", -1.0), ("backoff_retries", -1), ("backoff_max_delay", -0.5)])
def test_numbers_are_checked(name, value):
    with pytest.raises(ConnectionConfigError, match=name):
        check_credentials(dict(BASE, auth_token="t", **{name: value}))


def test_argument_spec_leaves_the_environment_to_resolve():
    """The module's spec has no env fallbacks and no default where an env var exists: resolve() reads the environment
    after the task's options, so task credentials replace the environment's and a bad value names its variable."""
    spec = connection_argument_spec()
    assert set(spec) == set(CONNECTION_OPTIONS)
    assert spec["secret_key"]["no_log"] and spec["password"]["no_log"] and spec["auth_token"]["no_log"] and spec["security_token"]["no_log"]
    assert not any("fallback" in entry for entry in spec.values())
    assert spec["validate_certs"] == {"type": "bool"}
    assert spec["request_timeout"]["default"] == 30.0
    spec["region"]["type"] = "int"
    assert connection_argument_spec()["region"]["type"] == "str", "callers get a fresh copy"


def test_unknown_names_suggest_the_closest_known_name():
    known = ["auth_token", "wait_timeout", "field", "request_timeout"]
    assert unknown_names(["auth_tokn", "field", "colour"], known) == [("auth_tokn", "did you mean auth_token?"), ("colour", None)]
    assert unknown_names(["wait_timout"], known) == [("wait_timout", "did you mean wait_timeout?")]
    assert unknown_names(["field"], known) == []


def test_unknown_names_compare_without_the_shared_prefix():
    # With the prefix, every training_job_gate_* name would look close to every other one.
    known = ["training_job_gate_ids", "training_job_gate_timeout", "training_job_gate_poll"]
    found = unknown_names(["training_job_gate_timout", "training_job_gate_colour"], known, prefix="training_job_gate_")
    assert found == [("training_job_gate_colour", None), ("training_job_gate_timout", "did you mean training_job_gate_timeout?")]


def test_check_known_names_every_unknown_name_and_takes_hints():
    with pytest.raises(ConnectionConfigError, match=r"^unknown keywords auth_tokn \(did you mean auth_token\?\), colour$"):
        check_known({"auth_tokn": "x", "colour": 1, "field": "phase"}, ["auth_token", "field"], "keyword")
    with pytest.raises(ConnectionConfigError, match=r"^unknown argument wait_for \(no waiting here\)$"):
        check_known(["wait_for"], ["fail_on"], "argument", hints={"wait_for": "no waiting here"})
    check_known({"field": 1}, ["field"], "keyword")


# -- paths (issue 36): expanded against the environment the task sees -------------------------------------------------

PATHS = ["~", "~/", "~/x", "~root/x", "~no-such-user-36/x", "$HOME/a", "${HOME}/a", "$NOPE/a", "${NOPE", "$", "a$HOME$HOME", "${}", "x/~", "~~"]


@pytest.mark.parametrize("path", PATHS)
def test_expand_path_is_check_type_path_over_a_mapping(path, monkeypatch):
    # What ansible-core's check_type_path gives in the module's process, whose os.environ is the mapping.
    monkeypatch.setenv("HOME", "/home/task")
    assert expand_path(path, dict(os.environ)) == os.path.expanduser(os.path.expandvars(path))
    monkeypatch.delenv("HOME")
    assert expand_path(path, dict(os.environ)) == os.path.expanduser(os.path.expandvars(path))


def test_expand_path_reads_the_mapping_never_the_process_environment(monkeypatch):
    monkeypatch.setenv("HUAWEICLOUD_PROFILE_DIR", "/controller")
    monkeypatch.setenv("HOME", "/home/controller")
    task = {"HUAWEICLOUD_PROFILE_DIR": "/task", "HOME": "/home/task/"}
    assert expand_path("$HUAWEICLOUD_PROFILE_DIR/credentials", task) == "/task/credentials"
    assert expand_path("${HUAWEICLOUD_PROFILE_DIR}/x/$HOME", task) == "/task/x//home/task/"
    assert expand_path("~/credentials", task) == expand_user("~/credentials", task) == "/home/task/credentials"
    assert expand_path("$HUAWEICLOUD_PROFILE_DIR/credentials", {}) == "$HUAWEICLOUD_PROFILE_DIR/credentials"
    assert expand_path("$HUAWEICLOUD_PROFILE_DIR/c") == "/controller/c", "without a mapping, the process's environment"


def test_a_path_option_s_home_is_the_environment_s(monkeypatch):
    monkeypatch.setenv("HOME", "/home/controller")
    environ = {"HOME": "/home/task", "HUAWEICLOUD_CA_BUNDLE": "~/ca.pem"}
    settings = resolve([("option", dict(BASE, credentials_file="~/creds", validate_certs=False))], environ)
    assert settings.connection["credentials_file"] == "/home/task/creds"
    assert settings.connection["ca_bundle"] == "/home/task/ca.pem"
