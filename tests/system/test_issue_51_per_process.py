# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 51: what a task can share is built once per process, and nothing a task must keep to itself is shared.

The action plugin builds, as ansible-core loads it in the controller's main process, the schemas' compiled checks and
the TLS contexts of the default trust store (``job_info.prepare``); every TLS context is kept per process by what it is
built from (``watchdog.tls_context``).  These tests run tasks the way the action plugin runs them, against the HTTPS
emulator, in a fresh interpreter standing in for the controller: several tasks one after the other in one process
(what must not leak from one to the next: a trust store, credentials, secrets to mask), and tasks in workers forked
from it (what they find built).
"""

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from urllib.parse import urlsplit

import certifi
import pytest

from conftest import emulator_connection
from peers import relay

COMPLETED = "a1000000-0000-4000-8000-000000000001"
MASKED = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"

# The stand-in for the controller: {"root", "tasks": [{"args", "fork"}], "ca_files"}; prints one JSON line, a result per
# task with the CA files loaded (SSLContext.load_verify_locations) and schema pre-checks compiled while it ran.
RUNNER = r"""
import json, os, ssl, sys
config = json.loads(sys.argv[1])
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
_AnsibleCollectionFinder(paths=[config["root"]])._install()
loads, compiles = [], []
original_load = ssl.SSLContext.load_verify_locations

def load_verify_locations(context, cafile=None, capath=None, cadata=None):
    loads.append(cafile or capath)
    return original_load(context, cafile, capath, cadata)

ssl.SSLContext.load_verify_locations = load_verify_locations
from ansible_collections.modelarts.training.plugins.module_utils.job import validation
original_compile = validation._FastChecker.compile

def compile(checker, node):
    if node is checker.root:
        compiles.append(1)
    return original_compile(checker, node)

validation._FastChecker.compile = compile
from ansible_collections.modelarts.training.plugins.action import modelarts_training_job_info as action
at_load = list(loads)

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
    def __init__(self, args):
        self.args = args

class PlayContext:
    become = False

class Templar:
    @staticmethod
    def template(value):
        return value

def run(args):
    del loads[:], compiles[:]
    result = action.ActionModule(Task(args), Connection(), PlayContext(), None, Templar(), None).run(task_vars={"ansible_inject_invocation": True})
    return {"result": result, "loads": list(loads), "compiles": len(compiles)}

def forked(args):
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reading)
        with os.fdopen(writing, "w") as handle:
            json.dump(run(args), handle, default=str)
        os._exit(0)
    os.close(writing)
    with os.fdopen(reading) as handle:
        text = handle.read()
    os.waitpid(pid, 0)
    return json.loads(text)

outcomes = []
for task in config["tasks"]:
    for step in task.get("before", []):
        with open(step["path"], "wb") as handle:
            handle.write(open(step["copy"], "rb").read())
        stat = os.stat(step["path"])
        os.utime(step["path"], ns=(stat.st_atime_ns, stat.st_mtime_ns + 1000000 * (1 + len(outcomes))))
    outcomes.append(forked(task["args"]) if task.get("fork") else json.loads(json.dumps(run(task["args"]), default=str)))
print(json.dumps({"at_load": at_load, "outcomes": outcomes}))
"""


def run_tasks(collection_root, tasks, env=None):
    """Run ``tasks`` (``{"args", "fork", "before"}``) in one fresh interpreter; ``(what was loaded with the plugin, outcomes)``."""
    environment = dict((name, value) for name, value in os.environ.items() if not name.startswith(("HUAWEICLOUD_", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")))
    environment.update(env or {})
    config = json.dumps({"root": collection_root, "tasks": tasks})
    process = subprocess.run([sys.executable, "-c", RUNNER, config], capture_output=True, text=True, env=environment, check=False, timeout=300)
    assert process.returncode == 0, process.stderr[-4000:]
    answer = json.loads(process.stdout.strip().splitlines()[-1])
    return answer["at_load"], answer["outcomes"]


def read_job(emulator, **options):
    args = emulator_connection(emulator, backoff_retries=0)
    args.update(options, training_job_id=COMPLETED)
    return dict((name, value) for name, value in args.items() if value is not None)


def succeeded(outcome):
    result = outcome["result"]
    return not result.get("failed") and result["training_job"]["id"] == COMPLETED


def refused(outcome, text="CERTIFICATE_VERIFY_FAILED"):
    result = outcome["result"]
    return bool(result.get("failed")) and text in result["msg"]


def test_tasks_in_one_process_each_trust_their_own_ca_bundle(emulator, collection_root, tmp_path):
    """Two CA bundles, in turn, in one process: each task verifies with its own, whatever the task before trusted; a CA
    file rewritten in place is read again; a bundle used twice is loaded once."""
    other = certifi.where()  # a real bundle that does not hold the emulator's CA
    moving = str(tmp_path / "moving-ca.pem")
    shutil.copyfile(emulator.ca_file, moving)
    tasks = [
        {"args": read_job(emulator)},
        {"args": read_job(emulator, ca_bundle=other)},
        {"args": read_job(emulator)},
        {"args": read_job(emulator, ca_bundle=None, validate_certs=False)},
        {"args": read_job(emulator, ca_bundle=moving)},
        {"args": read_job(emulator, ca_bundle=moving), "before": [{"path": moving, "copy": other}]},
        {"args": read_job(emulator, ca_bundle=moving), "before": [{"path": moving, "copy": emulator.ca_file}]},
        {"args": read_job(emulator, ca_bundle=None)},
    ]
    at_load, outcomes = run_tasks(collection_root, tasks)
    assert at_load == [other], "the plugin loaded the default trust store (requests' bundle) as it was loaded, and only that"
    trusted, untrusted, again, unverified, copied, replaced, restored, default = outcomes
    assert succeeded(trusted) and trusted["loads"] == [emulator.ca_file]
    assert refused(untrusted) and "ca_bundle" in untrusted["result"]["msg"] and untrusted["loads"] == [], "the default bundle: built already"
    assert succeeded(again) and again["loads"] == [], "the emulator's CA file is loaded once in the process"
    assert succeeded(unverified) and unverified["loads"] == []
    assert succeeded(copied) and copied["loads"] == [moving], "another path: a trust store of its own"
    assert refused(replaced) and replaced["loads"] == [moving], "the file now holds another bundle: read again, and it does not trust the emulator"
    assert succeeded(restored) and restored["loads"] == [moving]
    assert refused(default) and default["loads"] == []


@contextlib.contextmanager
def relayed_from(address, target):
    """A TCP relay listening on ``address`` (host, 0) to ``target``: the emulator under a host name its certificate does
    not name.  Skips where that address cannot be bound."""
    try:
        listener = socket.create_server(address)
    except OSError as error:
        pytest.skip("cannot listen on %s: %s" % (address[0], error))

    def serve():
        while True:
            try:
                conn, _peer = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(target, timeout=30)
            threading.Thread(target=lambda one=conn, other=upstream: relay(one, other), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield "https://%s:%d" % (address[0], listener.getsockname()[1])
    finally:
        listener.close()


def test_the_shared_context_still_checks_each_host_name(emulator, collection_root):
    """One TLS context for the emulator's CA serves every task of the process, and each connection's host is still
    checked against the certificate: the emulator reached as 127.0.0.2 (its certificate names 127.0.0.1, ::1 and
    localhost) is refused between two tasks that reach it as 127.0.0.1 with the same CA file."""
    parts = urlsplit(emulator.url)
    with relayed_from(("127.0.0.2", 0), (parts.hostname, parts.port)) as elsewhere:
        tasks = [
            {"args": read_job(emulator)},
            {"args": read_job(emulator, endpoint=elsewhere, iam_endpoint=elsewhere)},
            {"args": read_job(emulator)},
        ]
        _at_load, outcomes = run_tasks(collection_root, tasks)
    before, mismatch, after = outcomes
    assert succeeded(before) and succeeded(after) and after["loads"] == []
    message = mismatch["result"].get("msg") or ""
    assert mismatch["result"].get("failed") and "127.0.0.2" in message, message
    assert "mismatch" in message or "match" in message, message


def test_tasks_in_one_process_each_sign_with_their_own_credentials(emulator, collection_root):
    """Credentials, sessions and secrets are each task's: a wrong secret key after a right one is refused, the right one
    after it is accepted, and no task's result holds a secret of its own or of another task."""
    wrong_key = "Wrong-SK-" + "x" * 31
    wrong_token = "Wrong-Token-" + "y" * 40
    tasks = [
        {"args": read_job(emulator)},
        {"args": read_job(emulator, secret_key=wrong_key)},
        {"args": read_job(emulator)},
        {"args": read_job(emulator, access_key=None, secret_key=None, auth_token=wrong_token)},
        {"args": read_job(emulator)},
    ]
    _at_load, outcomes = run_tasks(collection_root, tasks)
    right, wrong, right_again, token, right_last = outcomes
    for outcome in (right, right_again, right_last):
        assert succeeded(outcome), outcome["result"].get("msg")
        assert outcome["result"]["invocation"]["module_args"]["secret_key"] == MASKED
    assert refused(wrong, "401") and wrong["result"]["invocation"]["module_args"]["secret_key"] == MASKED
    assert refused(token, "401") and token["result"]["invocation"]["module_args"]["auth_token"] == MASKED
    for outcome in outcomes:
        text = json.dumps(outcome["result"])
        for secret in (emulator.sk, wrong_key, wrong_token):
            assert secret not in text


def test_workers_forked_from_the_controller_find_what_they_share_built(emulator, collection_root, tmp_path):
    """Tasks in workers forked from the process that loaded the plugin, as ansible-core runs them: with the default trust
    store (here REQUESTS_CA_BUNDLE, the emulator's CA) a task loads no CA file and compiles no schema; a task with a
    ca_bundle of its own builds that trust store itself, once."""
    own = str(tmp_path / "own-ca.pem")
    shutil.copyfile(emulator.ca_file, own)
    tasks = [
        {"args": read_job(emulator, ca_bundle=None), "fork": True},
        {"args": read_job(emulator, ca_bundle=None, auth_token=None), "fork": True},
        {"args": read_job(emulator, ca_bundle=own), "fork": True},
    ]
    at_load, outcomes = run_tasks(collection_root, tasks, env={"REQUESTS_CA_BUNDLE": emulator.ca_file})
    assert at_load == [emulator.ca_file]
    first, second, own_bundle = outcomes
    for outcome in (first, second):
        assert succeeded(outcome), outcome["result"].get("msg")
        assert outcome["loads"] == [] and outcome["compiles"] == 0, outcome
    assert succeeded(own_bundle) and own_bundle["loads"] == [own] and own_bundle["compiles"] == 0


@pytest.mark.parametrize("variable", ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"])
def test_the_default_trust_store_follows_the_variables_requests_reads(emulator, collection_root, variable):
    """The trust store built when the plugin is loaded is the one a task without ca_bundle verifies with."""
    at_load, outcomes = run_tasks(collection_root, [{"args": read_job(emulator, ca_bundle=None), "fork": True}], env={variable: emulator.ca_file})
    assert at_load == [emulator.ca_file]
    assert succeeded(outcomes[0]) and outcomes[0]["loads"] == []
