# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""options.resolve: precedence of levels over the environment, credentials kind by kind, strict types naming their origin."""

from __future__ import annotations

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.text import LEVEL_ARGUMENT, LEVEL_KEYWORD, LEVEL_OPTION, LEVEL_VARIABLE
from ansible_collections.modelarts.training.plugins.module_utils.door.options import ConnectionConfigError, resolve
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import proxy_secret

CI_ENV = {"HUAWEICLOUD_SDK_AK": "env-ak", "HUAWEICLOUD_SDK_SK": "env-sk-SECRET", "HUAWEICLOUD_SDK_REGION": "env-region"}


def test_task_auth_token_replaces_the_environments_aksk():
    settings = resolve([(LEVEL_OPTION, {"auth_token": "task-token", "project_id": "p"})], CI_ENV)
    assert settings.kind == "auth_token"
    assert settings.connection["access_key"] is None and settings.connection["secret_key"] is None
    assert settings.connection["region"] == "env-region", "non-credential options still come from the environment"
    assert settings.origins["auth_token"] == LEVEL_OPTION and settings.origins["region"] == "environment"


def test_environment_credentials_are_used_when_the_task_names_none():
    settings = resolve([(LEVEL_OPTION, {"project_id": "p", "validate_certs": None})], CI_ENV)
    assert settings.kind == "aksk"
    assert settings.connection["secret_key"] == "env-sk-SECRET"


@pytest.mark.parametrize(
    "levels",
    [
        [(LEVEL_KEYWORD, {"auth_token": "kw"}), (LEVEL_VARIABLE, {"username": "u", "password": "pw", "domain_name": "d"})],
        [(LEVEL_KEYWORD, {}), (LEVEL_VARIABLE, {"auth_token": "var"})],
    ],
)
def test_the_highest_level_naming_credentials_wins(levels):
    settings = resolve(levels + [], dict(CI_ENV, HUAWEICLOUD_SDK_PROJECT_ID="p"))
    assert settings.kind == "auth_token"


def test_two_kinds_at_one_level_conflict_and_say_where():
    with pytest.raises(ConnectionConfigError) as info:
        resolve([(LEVEL_OPTION, {"auth_token": "t", "access_key": "a", "secret_key": "s-SECRET", "project_id": "p", "region": "r"})], {})
    assert "conflicting credentials (given as task options)" in str(info.value)
    assert "s-SECRET" not in str(info.value)
    with pytest.raises(ConnectionConfigError, match=r"conflicting credentials \(from HUAWEICLOUD_\* environment variables\)"):
        resolve([(LEVEL_OPTION, {"project_id": "p"})], dict(CI_ENV, HUAWEICLOUD_SDK_AUTH_TOKEN="t"))


def test_within_the_chosen_kind_each_option_takes_the_highest_level():
    # A keyword secret_key replaces the variable's, the access key still comes from the variable.
    settings = resolve(
        [(LEVEL_KEYWORD, {"secret_key": "kw-sk"}), (LEVEL_VARIABLE, {"access_key": "var-ak", "secret_key": "var-sk"})],
        dict(CI_ENV, HUAWEICLOUD_SDK_PROJECT_ID="p"),
    )
    assert (settings.connection["access_key"], settings.connection["secret_key"]) == ("var-ak", "kw-sk")
    assert settings.origins["secret_key"] == LEVEL_KEYWORD and settings.origins["access_key"] == LEVEL_VARIABLE


def test_a_runners_security_token_never_joins_a_tasks_permanent_keys():
    env = dict(CI_ENV, HUAWEICLOUD_SDK_SECURITY_TOKEN="runner-token", HUAWEICLOUD_SDK_PROJECT_ID="p")
    settings = resolve([(LEVEL_OPTION, {"access_key": "task-ak", "secret_key": "task-sk"})], env)
    assert settings.connection["security_token"] is None
    settings = resolve([(LEVEL_OPTION, {"project_id": "p"})], env)
    assert settings.connection["security_token"] == "runner-token", "the runner's own temporary credentials stay whole"


@pytest.mark.parametrize(
    "level,where",
    [
        (LEVEL_OPTION, "validate_certs (task option)"),
        (LEVEL_KEYWORD, "validate_certs (keyword)"),
        (LEVEL_VARIABLE, "validate_certs (variable modelarts_validate_certs)"),
        (LEVEL_ARGUMENT, "validate_certs (argument)"),
    ],
)
@pytest.mark.parametrize("value", ["ture", "{{ verify_tls }}", "2", 2, {"a": 1}])
def test_a_boolean_is_a_boolean_or_an_error_naming_its_origin(level, where, value):
    with pytest.raises(ConnectionConfigError) as info:
        resolve([(level, {"validate_certs": value, "auth_token": "t", "project_id": "p", "region": "r"})], {})
    assert where in str(info.value) and "must be a boolean" in str(info.value)


def test_a_bad_boolean_in_the_environment_names_the_variable():
    with pytest.raises(ConnectionConfigError, match=r"validate_certs \(environment variable HUAWEICLOUD_VALIDATE_CERTS\) must be a boolean"):
        resolve([(LEVEL_OPTION, {"auth_token": "t", "project_id": "p", "region": "r"})], {"HUAWEICLOUD_VALIDATE_CERTS": "ture"})


@pytest.mark.parametrize("value,expected", [("yes", True), ("False", False), ("0", False), ("on", True), (True, True), (0, False)])
def test_boolean_words(value, expected):
    settings = resolve([(LEVEL_KEYWORD, {"validate_certs": value, "wait": value, "auth_token": "t", "project_id": "p", "region": "r"})], {})
    assert settings.connection["validate_certs"] is expected
    assert settings.wait is expected


def test_environment_boolean_applies_when_no_level_sets_it():
    settings = resolve([(LEVEL_OPTION, {"auth_token": "t", "project_id": "p", "region": "r"})], {"HUAWEICLOUD_VALIDATE_CERTS": "false"})
    assert settings.connection["validate_certs"] is False
    assert resolve([(LEVEL_OPTION, {"auth_token": "t", "project_id": "p", "region": "r"})], {}).connection["validate_certs"] is True


def test_numbers_from_strings_and_their_errors():
    settings = resolve([(LEVEL_VARIABLE, {"request_timeout": "7.5", "backoff_retries": "2", "auth_token": "t", "project_id": "p", "region": "r"})], {})
    assert settings.connection["request_timeout"] == 7.5 and settings.connection["backoff_retries"] == 2
    with pytest.raises(ConnectionConfigError, match=r"backoff_retries \(variable modelarts_backoff_retries\) must be an integer"):
        resolve([(LEVEL_VARIABLE, {"backoff_retries": "2.5", "auth_token": "t", "project_id": "p", "region": "r"})], {})


def test_secret_of_the_wrong_type_is_named_not_shown():
    with pytest.raises(ConnectionConfigError) as info:
        resolve([(LEVEL_ARGUMENT, {"secret_key": 12345678987654321, "access_key": "a", "project_id": "p", "region": "r"})], {})
    assert "secret_key (argument) must be a string, got a int" in str(info.value)
    assert "12345678987654321" not in str(info.value)


def test_query_options_are_checked_with_their_origin():
    base = {"auth_token": "t", "project_id": "p", "region": "r"}
    with pytest.raises(ConnectionConfigError, match=r"max_concurrency \(keyword\) must be between 1 and 256"):
        resolve([(LEVEL_KEYWORD, dict(base, max_concurrency=0))], {})
    with pytest.raises(ConnectionConfigError, match="wait_for and fail_on must not share phases"):
        resolve([(LEVEL_KEYWORD, dict(base, wait_for=["Failed"]))], {})
    with pytest.raises(ConnectionConfigError, match=r"fail_on: unknown phase 'Done' \(keyword\)"):
        resolve([(LEVEL_KEYWORD, dict(base, fail_on=["Done"]))], {})


@pytest.mark.parametrize(
    "proxy,secret",
    [
        ("http://user:pa@ss@proxy:3128", "user:pa@ss"),
        ("http://proxy:3128", None),
        ("socks5h://u:p@10.0.0.1:1080/", "u:p"),
        (None, None),
    ],
)
def test_proxy_secret(proxy, secret):
    assert proxy_secret(proxy) == secret


# -- what becomes a host, a header or a path (issue 20) -----------------------------------------------


@pytest.mark.parametrize("region", ["cn-north-4@other.host/", "x.other.host#", "x/..", "x:443", "Cn-North-4", "cn_north_4", "cn-north-4 x"])
def test_a_region_that_is_not_a_region_name_is_refused_naming_where_it_came_from(region):
    with pytest.raises(ConnectionConfigError, match=r"region \(task option\) must be a region name") as info:
        resolve([(LEVEL_OPTION, {"region": region, "auth_token": "t"})], {})
    assert "endpoint" in str(info.value)
    with pytest.raises(ConnectionConfigError, match=r"region \(environment variable HUAWEICLOUD_SDK_REGION\) must be a region name"):
        resolve([(LEVEL_OPTION, {"auth_token": "t"})], {"HUAWEICLOUD_SDK_REGION": region})
    with pytest.raises(ConnectionConfigError, match=r"region \(variable modelarts_region\) must be a region name"):
        resolve([(LEVEL_KEYWORD, {}), (LEVEL_VARIABLE, {"region": region, "auth_token": "t"})], {})


@pytest.mark.parametrize(
    "name,env", [("auth_token", "HUAWEICLOUD_SDK_AUTH_TOKEN"), ("security_token", "HUAWEICLOUD_SDK_SECURITY_TOKEN"), ("secret_key", "HUAWEICLOUD_SDK_SK")]
)
def test_credentials_lose_surrounding_whitespace(name, env):
    values = {"auth_token": "tok"} if name == "auth_token" else {"access_key": "ak", "secret_key": "sk", "security_token": "st"}
    values[name] = "SECRET-VALUE-0123456789\n"
    environ = dict(
        ("HUAWEICLOUD_SDK_" + {"access_key": "AK", "secret_key": "SK", "security_token": "SECURITY_TOKEN", "auth_token": "AUTH_TOKEN"}[k], v)
        for k, v in values.items()
    )
    environ["HUAWEICLOUD_SDK_REGION"] = "cn-north-4\n"
    settings = resolve([(LEVEL_OPTION, {"project_id": "p"})], environ)
    assert settings.connection[name] == "SECRET-VALUE-0123456789" and settings.connection["region"] == "cn-north-4"
    assert env in environ
    settings = resolve([(LEVEL_OPTION, dict(values, project_id="p", region="cn-north-4"))], {})
    assert settings.connection[name] == "SECRET-VALUE-0123456789"


@pytest.mark.parametrize("value", ["SECRET-VALUE\n0123456789", "SECRET\r\nX-Other: 1", "SECRET\x00VALUE", "SECRET\u2028VALUE", "SECRET\tVALUE"])
@pytest.mark.parametrize("name", ["auth_token", "security_token", "access_key", "secret_key", "project_id"])
def test_a_control_character_inside_a_credential_is_refused_without_echoing_it(name, value):
    values = {"auth_token": "tok"} if name in ("auth_token", "project_id") else {"access_key": "ak", "secret_key": "sk", "security_token": "st"}
    values.update({name: value, "region": "cn-north-4"})
    values.setdefault("project_id", "p")
    with pytest.raises(ConnectionConfigError) as info:
        resolve([(LEVEL_OPTION, values)], {})
    text = str(info.value)
    assert ("%s (task option) contains a control character" % name) in text
    assert "SECRET" not in text and "VALUE" not in text


def test_a_task_security_token_with_the_environments_access_key_is_an_error():
    environ = {
        "HUAWEICLOUD_SDK_AK": "env-ak",
        "HUAWEICLOUD_SDK_SK": "env-sk",
        "HUAWEICLOUD_SDK_SECURITY_TOKEN": "env-OLD-token",
        "HUAWEICLOUD_SDK_REGION": "cn-north-4",
    }
    with pytest.raises(ConnectionConfigError) as info:
        resolve([(LEVEL_OPTION, {"security_token": "task-NEW-token", "project_id": "p"})], environ)
    text = str(info.value)
    assert "security_token (task option) is set without access_key at the same level" in text
    assert "from HUAWEICLOUD_* environment variables" in text and "token" in text and "NEW" not in text and "OLD" not in text
    with pytest.raises(ConnectionConfigError, match=r"security_token \(keyword\) is set without access_key"):
        resolve(
            [(LEVEL_KEYWORD, {"security_token": "kw"}), (LEVEL_VARIABLE, {"access_key": "a", "secret_key": "s"})],
            {"HUAWEICLOUD_SDK_PROJECT_ID": "p", "HUAWEICLOUD_SDK_REGION": "r"},
        )


def test_a_complete_temporary_set_on_the_task_replaces_the_environments():
    environ = {
        "HUAWEICLOUD_SDK_AK": "env-ak",
        "HUAWEICLOUD_SDK_SK": "env-sk",
        "HUAWEICLOUD_SDK_SECURITY_TOKEN": "env-token",
        "HUAWEICLOUD_SDK_REGION": "cn-north-4",
    }
    settings = resolve([(LEVEL_OPTION, {"access_key": "a", "secret_key": "s", "security_token": "task-token", "project_id": "p"})], environ)
    assert (settings.connection["access_key"], settings.connection["security_token"]) == ("a", "task-token")
    settings = resolve([(LEVEL_OPTION, {"access_key": "a", "secret_key": "s", "project_id": "p"})], environ)
    assert settings.connection["security_token"] is None, "the environment's token belongs to the environment's access key"


def test_password_auth_without_region_asks_for_region_or_iam_endpoint():
    values = {"username": "u", "password": "pw", "domain_name": "d", "endpoint": "https://127.0.0.1:1", "project_id": "p"}
    with pytest.raises(ConnectionConfigError, match=r"set region \(HUAWEICLOUD_SDK_REGION\), or iam_endpoint \(HUAWEICLOUD_SDK_IAM_ENDPOINT\)"):
        resolve([(LEVEL_OPTION, values)], {})
    settings = resolve([(LEVEL_OPTION, dict(values, iam_endpoint="https://127.0.0.1:2"))], {})
    assert settings.kind == "password"


def test_without_wait_for_an_entry_point_may_fail_on_completed():
    settings = resolve([(LEVEL_ARGUMENT, {"auth_token": "t", "region": "r", "project_id": "p", "fail_on": ["Completed", "Failed"]})], {}, has_wait_for=False)
    assert settings.fail_on == ["Completed", "Failed"] and settings.wait_for == ["Terminated", "Abnormal"]
    with pytest.raises(ConnectionConfigError, match="wait_for and fail_on must not share phases"):
        resolve([(LEVEL_OPTION, {"auth_token": "t", "region": "r", "project_id": "p", "fail_on": ["Completed"]})], {})


@pytest.mark.parametrize(
    "levels,env",
    [
        ([(LEVEL_OPTION, {"project_id": "p"})], dict(CI_ENV, HUAWEICLOUD_OIDC_SESSION_NAME="deploy", HUAWEICLOUD_OIDC_DURATION_SECONDS="1800")),
        ([(LEVEL_OPTION, {"project_id": "p", "oidc_session_name": "deploy", "oidc_duration_seconds": 1800})], CI_ENV),
    ],
)
def test_oidc_tuning_options_select_no_kind_and_hide_no_aksk(levels, env):
    settings = resolve(levels, env)
    assert settings.kind == "aksk" and settings.connection["secret_key"] == "env-sk-SECRET"
    assert settings.connection["oidc_session_name"] == "deploy" and settings.connection["oidc_duration_seconds"] == 1800


def test_oidc_tuning_options_still_tune_the_oidc_kind():
    env = {"HUAWEICLOUD_OIDC_PROVIDER_URN": "urn:p", "HUAWEICLOUD_OIDC_AGENCY_URN": "urn:a", "HUAWEICLOUD_OIDC_ID_TOKEN": "tok"}
    env["HUAWEICLOUD_SDK_REGION"] = "cn-north-4"
    settings = resolve([(LEVEL_OPTION, {"project_id": "p", "oidc_session_name": "task-session"})], env)
    assert settings.kind == "oidc" and settings.connection["oidc_session_name"] == "task-session"
