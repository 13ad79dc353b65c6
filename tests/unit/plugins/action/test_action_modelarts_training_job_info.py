# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin's choice of way and its in-process result, with a fake task and connection (no playbook).

The behaviour users see - the same registered results both ways, the module's payload only where it runs - is
tests/system/test_in_process_parity.py.
"""

from __future__ import annotations

import datetime
import os

import pytest

from ansible.errors import AnsibleActionFail

from ansible_collections.modelarts.training.plugins.action import modelarts_training_job_info as action
from ansible_collections.modelarts.training.plugins.module_utils.door import job_info
from ansible_collections.modelarts.training.plugins.module_utils.door.query import MissingLibraryError

# ansible-core 2.21+ shows a result's invocation only when asked (ansible_inject_invocation); before, always.
SHOW_INVOCATION = {"ansible_inject_invocation": True}
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
    return action.ActionModule(task, Connection(transport), PlayContext(become), None, Templar(), None)  # shared_loader_obj: required before 2.19


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
    def missing(_params, _environ=None, notify=None):
        raise MissingLibraryError("requests", "no module named requests")

    monkeypatch.setattr(job_info, "run", missing)
    monkeypatch.setattr(action.ActionModule, "_run_module", lambda self, task_vars: {"ran": "module"})
    assert plugin().run(task_vars={})["ran"] == "module"


def test_validation_fails_with_the_modules_words_and_masks_no_log_values():
    result = plugin(dict(BASE, wiat=True))._run_in_process(dict(os.environ), SHOW_INVOCATION)
    assert result["failed"] is True
    assert result["msg"].startswith(
        "Unsupported parameters for (modelarts.training.modelarts_training_job_info) module: wiat (did you mean wait?). Supported parameters include:"
    )
    assert result["invocation"]["module_args"]["auth_token"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
    result = plugin(dict(BASE, validate="sometimes"))._run_in_process(dict(os.environ))
    assert result["msg"] == "value of validate must be one of: strict, warn, off, got: sometimes"


def test_the_outcome_is_formatted_as_ansible_module_formats_it(monkeypatch):
    def run(params, environ=None, notify=None):
        item = {"id": "job-1", "failure_reason": "saw env-secret-0123 and tok-SECRET-0123456789", "terminal": True}
        return job_info.Outcome(dict(changed=False, training_jobs=[item], training_job=item), warnings=["careful"], secrets=["env-secret-0123"])

    monkeypatch.setattr(job_info, "run", run)
    result = plugin()._run_in_process(dict(os.environ))
    assert result["training_job"]["failure_reason"] == "saw ******** and ********"
    assert result["warnings"] == ["careful"] and result["changed"] is False and result["training_job"]["terminal"] is True
    assert "failed" not in result


def test_path_options_are_expanded_against_the_environment_the_module_would_see(monkeypatch):
    # Issue 36: ArgumentSpecValidator's path type expands against this worker's os.environ, not the task's environment.
    monkeypatch.setenv("HUAWEICLOUD_PROFILE_DIR", "/controller")
    seen = []

    def run(params, environ=None, notify=None):
        seen.append(params)
        return job_info.Outcome(dict(changed=False, training_jobs=[]))

    monkeypatch.setattr(job_info, "run", run)
    args = dict(BASE, credentials_file="$HUAWEICLOUD_PROFILE_DIR/credentials", ca_bundle="~/ca.pem")
    del args["auth_token"]
    environ = dict(os.environ, HUAWEICLOUD_PROFILE_DIR="/task", HOME="/home/task")
    result = plugin(args)._run_in_process(environ, SHOW_INVOCATION)
    assert seen[0]["credentials_file"] == "/task/credentials" and seen[0]["ca_bundle"] == "/home/task/ca.pem"
    assert result["invocation"]["module_args"]["credentials_file"] == "/task/credentials"
    # A value that is not a string is converted as the module converts it.
    result = plugin(dict(args, ca_bundle=12))._run_in_process(environ)
    assert seen[1]["ca_bundle"] == "12"


def test_values_reach_the_task_as_the_module_receives_them_through_json():
    # Issue 36: in process, {2024: q4} kept its integer key (the module gets "2024"), a date stayed a date.
    from ansible.utils.unsafe_proxy import wrap_var  # pylint: disable=import-outside-toplevel

    args = {
        "tags": {2024: "q4", True: "yes", 1.5: None, "day": datetime.date(2024, 1, 2)},
        "name": datetime.datetime(2024, 1, 2, 3, 4, 5),
        "training_job_ids": ("a", wrap_var("b")),
    }
    received = action.as_the_module_receives(args)
    assert received == {
        "tags": {"2024": "q4", "true": "yes", "1.5": None, "day": "2024-01-02"},
        "name": "2024-01-02T03:04:05",
        "training_job_ids": ["a", "b"],
    }
    assert received["training_job_ids"][1].__class__ is str, "no unsafe or tagged text: what JSON decoding gives"


def test_a_value_json_cannot_carry_takes_the_module_which_says_so(monkeypatch):
    monkeypatch.setattr(action.ActionModule, "_run_module", lambda self, task_vars: {"ran": "module"})
    assert plugin(dict(BASE, name=b"bytes")).run(task_vars={})["ran"] == "module"
    assert plugin(dict(BASE, tags={("a", "b"): "tuple key"})).run(task_vars={})["ran"] == "module"


def test_the_invocation_is_there_when_the_module_s_would_be(monkeypatch):
    # ansible-core 2.21 adds INJECT_INVOCATION (default false): the module's result then has no invocation.
    monkeypatch.setattr(job_info, "run", lambda params, environ=None, notify=None: job_info.Outcome(dict(changed=False, training_jobs=[])))
    defined = action.INJECT_INVOCATION in action.C.config.get_configuration_definitions()
    assert ("invocation" in plugin()._run_in_process(dict(os.environ), {})) is not defined
    assert "invocation" in plugin()._run_in_process(dict(os.environ), {"ansible_inject_invocation": True})


# -- masking the items: remove_values's result, without its copy of every item (issue 40) ---------------------------

SECRETS = {"tok-SECRET-0123456789", 's3cr"et/\u00e9\n', "4242"}


def _job(number, **extra):
    item = {
        "id": "job-%d" % number,
        "phase": "Completed",
        "terminal": True,
        "failed": False,
        "duration": 12.5,
        "retries": number,
        "diagnostics": None,
        "details": {"metadata": {"name": "train-%d" % number, "annotations": {"team": "vision"}}, "tasks": [{"ip": "10.0.0.%d" % number}]},
    }
    item.update(extra)
    return item


@pytest.mark.parametrize(
    "item",
    [
        _job(1),
        _job(2, failure_reason="the log says tok-SECRET-0123456789 twice: tok-SECRET-0123456789"),  # inside a string
        _job(3, failure_reason="tok-SECRET-0123456789"),  # a whole string
        _job(4, failure_reason='quoted s3cr"et/\u00e9\n inside'),  # a value JSON escapes
        _job(5, retries=4242),  # a number whose text is a value
        _job(6, retries=142420),  # a number whose text holds a value
        _job(7, details={"tok-SECRET-0123456789": "a key is never masked"}),
        _job(8, details={"paths": ("a", "tok-SECRET-0123456789")}),  # a tuple becomes a list
        _job(9, details={1: "an int key"}),
        _job(10, duration=float("nan")),
        _job(11, tags={"a", "b"}),
        _job(12, when=datetime.date(2026, 11, 27)),
        _job(13, details=[[[{"deep": ["4242 and more"]}]]]),
        _job(14, details={"ok": True, "none": None, "float": 4242.5}),
    ],
)
def test_items_are_masked_exactly_as_remove_values_masks_them(item):
    result = dict(changed=False, training_jobs=[_job(0), item], training_job=item, invocation=dict(module_args={"auth_token": "tok-SECRET-0123456789"}))
    expected = action.remove_values(result, SECRETS)
    got = action._without_no_log_values(result, SECRETS)
    assert got == expected
    assert list(got) == list(expected)
    assert repr(got) == repr(expected)  # the same types too: a tuple is a list, a str is a str


@pytest.mark.parametrize("secret", ["ru", "e", "None", "al"])
def test_a_value_inside_true_false_or_none_is_masked_as_remove_values_masks_it(secret):
    """ansible-core 2.16-2.18 mask a boolean or None whose str() holds a no_log value (2.19 on keep them): whatever the
    core does, the items are masked as its remove_values masks them."""
    item = _job(1, details={"ok": True, "none": None, "off": False, "text": "true or null"})
    result = dict(changed=False, training_jobs=[item], training_job=item)
    expected = action.remove_values(result, {secret})
    got = action._without_no_log_values(result, {secret})
    assert repr(got) == repr(expected)


def test_an_item_without_secrets_is_not_copied_but_training_job_is():
    item = _job(1)
    result = dict(changed=False, training_jobs=[item], training_job=item)
    got = action._without_no_log_values(result, SECRETS)
    assert got["training_jobs"][0] is item
    assert got["training_job"] == item and got["training_job"] is not item
    assert got["training_job"]["details"] is not item["details"]


# -- what a plain GET by id loads (issue 51) ---------------------------------------------------------------------

# The collection's modules in sys.modules after the action plugin ran one task reading one job by id in process: the
# rooms such a task takes and no other (issue 58: with the packages' __init__ modules, the connection's typed parts,
# service/connection.py, the two light option tables waiting/wait_options.py and results/metric_options.py that
# the door's argument specs read on every call, and the door's checks of the connection, the selectors and stall, which
# it runs on every call).  A file added here must be one a plain GET needs: every other room
# (searching, waiting, diagnostics, metrics, credential sources, the watch...) is imported by the calls that take it.
PLAIN_GET_MODULES = [
    "ansible_collections.modelarts.training",
    "ansible_collections.modelarts.training.plugins",
    "ansible_collections.modelarts.training.plugins.action",
    "ansible_collections.modelarts.training.plugins.action.modelarts_training_job_info",
    "ansible_collections.modelarts.training.plugins.module_utils",
    "ansible_collections.modelarts.training.plugins.module_utils.door",
    "ansible_collections.modelarts.training.plugins.module_utils.door.connection_checks",
    "ansible_collections.modelarts.training.plugins.module_utils.door.job_info",
    "ansible_collections.modelarts.training.plugins.module_utils.door.options",
    "ansible_collections.modelarts.training.plugins.module_utils.door.query",
    "ansible_collections.modelarts.training.plugins.module_utils.door.selection_checks",
    "ansible_collections.modelarts.training.plugins.module_utils.door.stall_checks",
    "ansible_collections.modelarts.training.plugins.module_utils.errors",
    "ansible_collections.modelarts.training.plugins.module_utils.job",
    "ansible_collections.modelarts.training.plugins.module_utils.job.items",
    "ansible_collections.modelarts.training.plugins.module_utils.job.jobs",
    "ansible_collections.modelarts.training.plugins.module_utils.job.phases",
    "ansible_collections.modelarts.training.plugins.module_utils.job.schema_data",
    "ansible_collections.modelarts.training.plugins.module_utils.job.selection",
    "ansible_collections.modelarts.training.plugins.module_utils.job.validation",
    "ansible_collections.modelarts.training.plugins.module_utils.results",
    "ansible_collections.modelarts.training.plugins.module_utils.results.metric_options",
    "ansible_collections.modelarts.training.plugins.module_utils.service",
    "ansible_collections.modelarts.training.plugins.module_utils.service.auth",
    "ansible_collections.modelarts.training.plugins.module_utils.service.client",
    "ansible_collections.modelarts.training.plugins.module_utils.service.connection",
    "ansible_collections.modelarts.training.plugins.module_utils.service.credentials",
    "ansible_collections.modelarts.training.plugins.module_utils.service.endpoints",
    "ansible_collections.modelarts.training.plugins.module_utils.service.fanout",
    "ansible_collections.modelarts.training.plugins.module_utils.service.iam",
    "ansible_collections.modelarts.training.plugins.module_utils.service.transport",
    "ansible_collections.modelarts.training.plugins.module_utils.service.watchdog",
    "ansible_collections.modelarts.training.plugins.module_utils.text",
    "ansible_collections.modelarts.training.plugins.module_utils.waiting",
    "ansible_collections.modelarts.training.plugins.module_utils.waiting.wait_options",
]

# A fresh interpreter: the action plugin imported as ansible-core's strategy imports it, then one task run by it in
# process (ActionModule.run on a local connection) against a local HTTP server answering the job's GET with the
# documented example; it prints the task's result and the collection's modules then loaded.
_PLAIN_GET = r"""
import http.server, json, sys, threading
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
_AnsibleCollectionFinder(paths=[%(root)r])._install()
DOCUMENT = json.dumps(%(document)r).encode()

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        found = self.path == "/v2/%(project)s/training-jobs/%(job)s"
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "application/json")
        body = DOCUMENT if found else b'{"error_code": "ModelArts.2775", "error_msg": "not found"}'
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
from ansible_collections.modelarts.training.plugins.action import modelarts_training_job_info as action

class Shell:
    tmpdir = None
    @staticmethod
    def env_prefix(**_env):
        return ""

class Connection:
    transport = "local"
    _shell = Shell()
    has_native_async = False

class Task:
    environment = []
    async_val = 0
    check_mode = False
    action = "modelarts.training.modelarts_training_job_info"
    args = dict(%(options)r, endpoint="http://127.0.0.1:%%d" %% server.server_address[1], training_job_id=%(job)r)

class PlayContext:
    become = False

class Templar:
    @staticmethod
    def template(value):
        return value

result = action.ActionModule(Task(), Connection(), PlayContext(), None, Templar(), None).run(task_vars={})
server.shutdown()
print(json.dumps({
    "failed": bool(result.get("failed")),
    "msg": result.get("msg"),
    "id": (result.get("training_job") or {}).get("id"),
    "modules": sorted(name for name in sys.modules if (name + ".").startswith("ansible_collections.modelarts.training.")),
    "jsonschema": any(name.split(".")[0] == "jsonschema" for name in sys.modules),
}))
"""


@pytest.mark.parametrize("credentials", ["aksk", "auth_token"])
def test_a_plain_get_by_id_loads_only_the_rooms_it_uses(credentials):
    """Issue 51 (issue 48's check that a call without metrics loads none of their files, made exact): the modules a
    task reading one job by id imports, listed - a later change cannot add one unnoticed.  With the module's way
    (AnsiballZ) each of them is compiled on every run; in process they are imported once per ansible-playbook run."""
    import json  # pylint: disable=import-outside-toplevel
    import subprocess  # pylint: disable=import-outside-toplevel
    import sys  # pylint: disable=import-outside-toplevel

    from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fixture_files import (  # pylint: disable=import-outside-toplevel
        load as load_json,
    )

    project, job = "0" * 32, "3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718"
    document = load_json("v2_example_latest.json")
    document["metadata"]["id"] = job
    document["status"]["phase"] = "Completed"  # the example is Abnormal: a fail_on phase, whose diagnostics a task reads
    options = {"region": "cn-north-4", "project_id": project}
    if credentials == "aksk":
        options.update(access_key="AKIDEXAMPLE0123456789", secret_key="SK-EXAMPLE-0123456789abcdef")
    else:
        options["auth_token"] = "tok-SECRET-0123456789"
    code = _PLAIN_GET % dict(root=_collections_root(), document=document, project=project, job=job, options=options)
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120)
    assert process.returncode == 0, process.stderr[-3000:]
    outcome = json.loads(process.stdout.strip().splitlines()[-1])
    assert not outcome["failed"] and outcome["id"] == job, outcome["msg"]
    for room in (
        "results.metrics",
        "results.metric_reads",
        "results.matching",
        "results.diagnostics",
        "service.search",
        "service.credential_sources",
        "waiting.observer",
        "waiting.waiter",
        "watch.source",
    ):
        assert "ansible_collections.modelarts.training.plugins.module_utils." + room not in outcome["modules"], room
    assert outcome["modules"] == PLAIN_GET_MODULES, outcome["modules"]
    assert not outcome["jsonschema"], "a valid document is decided by the compiled pre-check: jsonschema is imported only for one that fails it"


def _collections_root():
    import ansible_collections.modelarts.training as collection  # pylint: disable=import-outside-toplevel

    return os.path.dirname(os.path.dirname(os.path.dirname(list(collection.__path__)[0])))


def test_a_warning_given_while_the_task_waits_is_displayed_at_once_and_kept_in_the_result(monkeypatch):
    # Issue 60, item 5: ansible-core 2.19+ holds a task's display.warning until the task ends; the action shows it now.
    shown = []

    class Display(object):
        def display(self, msg, color=None, stderr=False):
            shown.append((msg, stderr))

    def run(params, environ=None, notify=None):
        notify("no training job named 'x' in the default workspace: still waiting (a job may be submitted later)")
        assert shown, "displayed before the task's result exists"
        return job_info.Outcome(dict(changed=False, training_jobs=[]), warnings=["no training job named 'x' ..."])

    monkeypatch.setattr(job_info, "run", run)
    monkeypatch.setattr(action, "Display", Display)
    result = plugin()._run_in_process(dict(os.environ))
    assert shown == [("[WARNING]: no training job named 'x' in the default workspace: still waiting (a job may be submitted later)", True)]
    assert result["warnings"] == ["no training job named 'x' ..."]
