# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin's choice of way and its in-process result, with a fake task and connection (no playbook).

The behaviour users see - the same registered results both ways, the module's payload only where it runs - is
tests/system/test_in_process_parity.py.
"""

from __future__ import annotations

import os

import pytest

from ansible.errors import AnsibleActionFail

from ansible_collections.modelarts.training.plugins.action import modelarts_training_job_info as action
from ansible_collections.modelarts.training.plugins.module_utils import job_info
from ansible_collections.modelarts.training.plugins.module_utils.query import MissingLibraryError

BASE = {"region": "cn-north-4", "project_id": "p", "auth_token": "tok-SECRET-0123456789", "training_job_id": "job-1"}


class Shell(object):
    tmpdir = None

    @staticmethod
    def env_prefix(**_env):
        return ""


class Connection(object):
    def __init__(self, transport="local"):
        self.transport = transport
        self._shell = Shell()
        self.has_native_async = False


class Task(object):
    def __init__(self, args, environment=None, async_val=0):
        self.args = args
        self.environment = environment or []
        self.async_val = async_val
        self.check_mode = False
        self.action = "modelarts.training.modelarts_training_job_info"


class PlayContext(object):
    def __init__(self, become=False):
        self.become = become


class Templar(object):
    @staticmethod
    def template(value):
        return value


def plugin(args=None, transport="local", environment=None, async_val=0, become=False):
    task = Task(dict(BASE) if args is None else args, environment, async_val)
    return action.ActionModule(task, Connection(transport), PlayContext(become), None, Templar())


def test_a_local_connection_runs_in_process_with_the_task_environment_over_the_controllers():
    environ = plugin(environment=[{"HUAWEICLOUD_SDK_AK": "AK-TASK"}])._in_process_environment({})
    assert environ["HUAWEICLOUD_SDK_AK"] == "AK-TASK"
    assert environ["PATH"] == os.environ["PATH"]
    assert os.environ.get("HUAWEICLOUD_SDK_AK") != "AK-TASK", "the worker's own environment is never changed"


@pytest.mark.parametrize(
    "keywords,variables",
    [
        (dict(transport="ssh"), {}),
        (dict(async_val=30), {}),
        (dict(become=True), {}),
        (dict(environment=[{"HTTPS_PROXY": "http://proxy.invalid:3128"}]), {}),
        ({}, {"modelarts_training_in_process": "no"}),
        ({}, {"modelarts_training_in_process": False}),
    ],
    ids=["ssh", "async", "become", "proxy-variable", "setting-no", "setting-false"],
)
def test_the_module_runs_wherever_the_process_cannot_stand_in_for_it(keywords, variables):
    assert plugin(**keywords)._in_process_environment(variables) is None


def test_a_variable_equal_to_the_controllers_does_not_need_the_module():
    assert plugin(environment=[{"PATH": os.environ["PATH"]}])._in_process_environment({}) is not None


def test_the_setting_is_a_boolean_or_an_error():
    with pytest.raises(AnsibleActionFail, match="modelarts_training_in_process must be a boolean, got 'sometimes'"):
        plugin()._in_process_environment({"modelarts_training_in_process": "sometimes"})


def test_a_missing_library_hands_the_task_to_the_module(monkeypatch):
    def missing(_params, _environ=None):
        raise MissingLibraryError("requests", "no module named requests")

    monkeypatch.setattr(job_info, "run", missing)
    monkeypatch.setattr(action.ActionModule, "_run_module", lambda self, task_vars: {"ran": "module"})
    assert plugin().run(task_vars={})["ran"] == "module"


def test_validation_fails_with_the_modules_words_and_masks_no_log_values():
    result = plugin(dict(BASE, wiat=True))._run_in_process(dict(os.environ))
    assert result["failed"] is True
    assert result["msg"].startswith(
        "Unsupported parameters for (modelarts.training.modelarts_training_job_info) module: wiat (did you mean wait?). Supported parameters include:"
    )
    assert result["invocation"]["module_args"]["auth_token"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
    result = plugin(dict(BASE, validate="sometimes"))._run_in_process(dict(os.environ))
    assert result["msg"] == "value of validate must be one of: strict, warn, off, got: sometimes"


def test_the_outcome_is_formatted_as_ansible_module_formats_it(monkeypatch):
    def run(params, environ=None):
        item = {"id": "job-1", "failure_reason": "saw env-secret-0123 and tok-SECRET-0123456789", "terminal": True}
        return job_info.Outcome(dict(changed=False, training_jobs=[item], training_job=item), warnings=["careful"], secrets=["env-secret-0123"])

    monkeypatch.setattr(job_info, "run", run)
    result = plugin()._run_in_process(dict(os.environ))
    assert result["training_job"]["failure_reason"] == "saw ******** and ********"
    assert result["warnings"] == ["careful"] and result["changed"] is False and result["training_job"]["terminal"] is True
    assert "failed" not in result
