# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module as a translator: options in (one level, plus the environment), QueryResult out, secrets hidden."""

from __future__ import annotations

import contextlib
import json
import uuid

import pytest

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core 2.16 to 2.18: AnsibleModule reads its arguments from basic._ANSIBLE_ARGS
    from ansible.module_utils import basic

    @contextlib.contextmanager
    def patch_module_args(args):
        """The arguments ``AnsibleModule`` reads, for the ``with`` block, as ansible-core 2.19's helper of that name sets them."""
        saved = basic._ANSIBLE_ARGS
        basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode("utf-8")
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = saved


from ansible_collections.modelarts.training.plugins.module_utils.door import job_info
from ansible_collections.modelarts.training.plugins.module_utils.door.query import QueryResult
from ansible_collections.modelarts.training.plugins.modules import modelarts_training_job_info as module

ITEM = {"id": "job-1", "phase": "Failed", "details": {}}
BASE = {"region": "cn-north-4", "project_id": "p", "auth_token": "tok-SECRET-0123456789"}


class FakeQuery(object):
    """Records what the module handed over and returns a prepared result."""

    seen = {}
    result = None

    def __init__(self, levels, selection, **_kwargs):
        FakeQuery.seen = {"levels": levels, "selection": selection}

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        return False

    @staticmethod
    def secrets():
        return ["env-secret-0123456789"]

    def run(self):
        return FakeQuery.result


def run_module(monkeypatch, capsys, args, result):
    monkeypatch.setattr(job_info, "Query", FakeQuery)
    FakeQuery.result = result
    with patch_module_args(args), pytest.raises(SystemExit):
        module.main()
    return json.loads(capsys.readouterr().out)


def test_failure_returns_the_single_job_its_messages_and_the_error_fields(monkeypatch, capsys):
    failed = QueryResult([dict(ITEM)], False, msg="stopped waiting: job-1 reached Failed", job_messages=["job-1 reached Failed"], single=True)
    output = run_module(monkeypatch, capsys, dict(BASE, training_job_id="job-1", wait=True), failed)
    assert output["failed"] and output["msg"] == "stopped waiting: job-1 reached Failed"
    assert output["training_job"]["id"] == "job-1" and output["training_jobs"][0]["id"] == "job-1"
    assert output["job_messages"] == ["job-1 reached Failed"] and output["changed"] is False


def test_the_module_hands_one_level_and_the_selection(monkeypatch, capsys):
    warning = "validate_certs is false: %s" % uuid.uuid4()
    ok = QueryResult([dict(ITEM, phase="Completed")], True, single=False, warnings=[warning])
    shown = []
    monkeypatch.setattr(module.AnsibleModule, "warn", lambda self, text: shown.append(text))
    output = run_module(monkeypatch, capsys, dict(BASE, training_job_ids=["job-1"]), ok)
    ((level, values),) = FakeQuery.seen["levels"]
    assert level == "task option" and values["auth_token"] == BASE["auth_token"] and values["validate_certs"] is None
    assert FakeQuery.seen["selection"].keys == ["job-1"]
    assert "training_job" not in output
    assert shown == [warning], "each warning of the door is shown once, through Ansible"


def test_proxy_credentials_and_environment_secrets_are_masked(monkeypatch, capsys):
    item = dict(ITEM, phase="Completed", failure_reason="via http://user:Pr0xy-pass@proxy:3128 and env-secret-0123456789")
    output = run_module(
        monkeypatch, capsys, dict(BASE, training_job_id="job-1", proxy="http://user:Pr0xy-pass@proxy:3128"), QueryResult([item], True, single=True)
    )
    text = json.dumps(output)
    assert "Pr0xy-pass" not in text and "env-secret-0123456789" not in text
    # ansible-core 2.19 returns the invocation; 2.21 leaves it to the controller (system tests check -vvvv).
    if "invocation" in output:
        # ansible-core 2.16 masks the proxy's password in the URL (user:********); later cores the whole user:password.
        assert output["invocation"]["module_args"]["proxy"] in ("http://********@proxy:3128", "http://user:********@proxy:3128")


def test_configuration_errors_fail_before_any_query(monkeypatch, capsys):
    monkeypatch.delenv("HUAWEICLOUD_VALIDATE_CERTS", raising=False)
    monkeypatch.setenv("HUAWEICLOUD_VALIDATE_CERTS", "ture")
    with patch_module_args(dict(BASE, training_job_id="job-1")), pytest.raises(SystemExit):
        module.main()
    output = json.loads(capsys.readouterr().out)
    assert output["failed"] and "validate_certs (environment variable HUAWEICLOUD_VALIDATE_CERTS) must be a boolean" in output["msg"]
