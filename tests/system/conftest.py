# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures for system tests: real ansible-playbook / ansible-rulebook processes against the emulator.

* ``emulator``: one HTTPS emulator (integration scenario) for the session; call ``emulator.reset()``
  at the start of a test that depends on lifecycles or faults. It is the emulator package's pytest
  fixture ``modelarts_emulator_server`` (``modelarts_emulator_options`` below picks the scenario), so
  the plugin's ``modelarts_emulator`` (reset before and after each test) and ``modelarts_emulator_factory``
  (more emulators, e.g. with other credentials) work here too; see docs/emulator.md.
* ``collection_root``: a staged copy of this checkout at ``<tmp>/ansible_collections/modelarts/training``,
  so the tests use the checkout and never a stray installed copy.
* ``ansible_env``: the environment for subprocesses (collections path, venv on PATH, no colour,
  no retry files, no inherited HUAWEICLOUD_* variables, the metadata endpoint on a closed port).
* ``run_playbook(text, extra_vars=None, env=None, verbosity=0, check=False)``: writes the playbook to a
  temporary file, runs ansible-playbook, returns the ``subprocess.CompletedProcess`` (stdout and
  stderr captured as text).
* ``run_in_group(command, env, cwd, timeout)``: ``subprocess.run`` with the output captured as text, in a process
  group of its own that is ended with the command: nothing it leaves running (ansible-core leaves a module polling
  past its task's ``timeout``) reaches the emulator during a later test.
* ``run_info_task(task, verbosity=3)``: runs a playbook whose one task is ``modelarts_training_job_info`` with
  ``task`` (its failure ignored, so that the playbook itself must pass) and returns ``(registered result, process)``.
* ``collection_plugins()``: every plugin and role ``ansible-doc`` shows, as ``(kind, FQCN)``, read from the tree (the
  one list the documentation tests share: a new plugin is in it by being added).
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The emulator package (emulator/, installed editable by `make venv`) registers its pytest plugin, so its
# fixtures ``modelarts_emulator``, ``modelarts_emulator_factory`` and ``modelarts_emulator_server`` are here as they
# are in a user's tests.

BIN = os.path.dirname(sys.executable)
# plugins/<folder> -> the ansible-doc type of what it holds; the other folders hold no documented plugin (action
# plugins pair with the module of the same name, doc fragments and module_utils are shared code).
PLUGIN_FOLDERS = {"modules": "module"}
UNDOCUMENTED_FOLDERS = ("action", "doc_fragments", "module_utils")


def collection_plugins(root=ROOT):
    """Every plugin and role of the collection that ``ansible-doc`` shows, as ``(kind, FQCN)``, sorted: a plugin is a
    ``.py`` file holding ``DOCUMENTATION`` or a ``.yml`` file of documentation (a filter's or a test's, whose code is a
    ``FilterModule``/``TestModule`` of several) under ``plugins/<type>/``, and a role is a folder of ``roles/`` with
    ``meta/argument_specs.yml``."""
    found = set()
    plugins = os.path.join(root, "plugins")
    for folder in sorted(os.listdir(plugins)):
        if folder in UNDOCUMENTED_FOLDERS or not os.path.isdir(os.path.join(plugins, folder)):
            continue
        kind = PLUGIN_FOLDERS.get(folder, folder)
        for name in sorted(os.listdir(os.path.join(plugins, folder))):
            stem, extension = os.path.splitext(name)
            path = os.path.join(plugins, folder, name)
            if stem.startswith("_"):
                continue
            if extension == ".yml":
                found.add((kind, "modelarts.training." + stem))
            elif extension == ".py":
                with open(path, encoding="utf-8") as handle:
                    if re.search(r"^DOCUMENTATION\s*=", handle.read(), re.M):
                        found.add((kind, "modelarts.training." + stem))
    roles = os.path.join(root, "roles")
    for name in sorted(os.listdir(roles)):
        if os.path.isfile(os.path.join(roles, name, "meta", "argument_specs.yml")):
            found.add(("role", "modelarts.training." + name))
    return sorted(found)


def run_in_group(command, env, cwd, timeout):
    """Run ``command`` like ``subprocess.run(capture_output=True, text=True)`` in a process group of its own; end
    whatever is left in that group when it returns (or times out).

    The session's emulator is shared by the tests of a worker, and some of them count the requests it received:
    a process that outlives its test (the module ansible-core leaves running when a task's ``timeout`` ends it, a
    playbook stopped at ``timeout``) would poll it during the next test.
    """
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        end_group(process.pid)
        process.communicate()
        raise
    end_group(process.pid)
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def end_group(group):
    """Kill what is left of the process group ``group`` (nothing, most of the time)."""
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.fixture(scope="session")
def modelarts_emulator_options():
    """The session's emulator serves the integration scenario over HTTPS."""
    return {"scenario": "integration", "tls": True}


@pytest.fixture(scope="session")
def emulator(modelarts_emulator_server):  # noqa: F811  pylint: disable=redefined-outer-name
    """A running HTTPS emulator with the integration scenario (not reset between tests)."""
    return modelarts_emulator_server


@pytest.fixture(scope="session")
def collection_root(tmp_path_factory):
    """Stage this checkout as a collection and return the directory holding ``ansible_collections``."""
    base = str(tmp_path_factory.mktemp("collections"))
    subprocess.run([os.path.join(ROOT, "hacking", "stage_collection.sh"), base], check=True, stdout=subprocess.DEVNULL)
    return base


@pytest.fixture(scope="session")
def ansible_env(collection_root, tmp_path_factory):
    """Environment for ansible subprocesses: only the staged collection, the venv first on PATH."""
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith(("HUAWEICLOUD_", "ANSIBLE_")))
    home = str(tmp_path_factory.mktemp("ansible-home"))
    env.update(
        {
            "PATH": BIN + os.pathsep + env.get("PATH", ""),
            "ANSIBLE_COLLECTIONS_PATH": collection_root,
            "ANSIBLE_HOME": home,
            "ANSIBLE_LOCAL_TEMP": os.path.join(home, "tmp"),
            # Absolute, so that async_wrapper (which expands ~ with HOME) and async_status (with the account's home
            # directory) agree when HOME is elsewhere, and so that the tests' async jobs are not in ~/.ansible_async.
            "ANSIBLE_ASYNC_DIR": os.path.join(home, "async"),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_RETRY_FILES_ENABLED": "0",
            "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
            "ANSIBLE_LOCALHOST_WARNING": "0",
            "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
            # A play with no credentials looks at the instance metadata last: a closed loopback port
            # here, never whatever answers 169.254.169.254 on the machine running the tests.
            "HUAWEICLOUD_METADATA_ENDPOINT": "http://127.0.0.1:9",
        }
    )
    return env


@pytest.fixture
def run_playbook(ansible_env, tmp_path):
    """Run a playbook given as YAML text (or a list of plays) and return the completed process."""

    def run(playbook, extra_vars=None, env=None, verbosity=0, check=False, timeout=300):
        path = tmp_path / "playbook.yml"
        text = playbook if isinstance(playbook, str) else yaml.safe_dump(playbook, sort_keys=False)
        path.write_text(text)
        command = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(path)]
        if verbosity:
            command.append("-" + "v" * verbosity)
        if check:
            command.append("--check")
        if extra_vars:
            vars_file = tmp_path / "extra_vars.yml"
            vars_file.write_text(yaml.safe_dump(extra_vars))
            command += ["-e", "@%s" % vars_file]
        merged = dict(ansible_env, **(env or {}))
        return run_in_group(command, merged, str(tmp_path), timeout)

    return run


@pytest.fixture
def run_info_task(run_playbook, tmp_path):
    """``run_info_task(task, verbosity=3)``: the registered result of one ``modelarts_training_job_info`` task (its
    failure ignored) and the ``ansible-playbook`` process, which must have passed."""

    def run(task, verbosity=3):
        playbook = [
            {
                "hosts": "localhost",
                "gather_facts": False,
                "tasks": [
                    {"modelarts.training.modelarts_training_job_info": task, "register": "result", "ignore_errors": True},
                    {"ansible.builtin.copy": {"content": "{{ result | to_json }}", "dest": "result.json"}},
                ],
            }
        ]
        process = run_playbook(playbook, verbosity=verbosity)
        assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
        return json.loads((tmp_path / "result.json").read_text()), process

    return run


def block_play(emu, block, rescue):
    """One localhost play against ``emu`` (its connection in the module group's ``module_defaults``): ``block`` and its
    ``rescue``."""
    return [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "module_defaults": {"group/modelarts.training.modelarts": emulator_connection(emu)},
            "tasks": [{"block": block, "rescue": rescue}],
        }
    ]


def emulator_connection(emu, kind="aksk", token=None, **extra):
    """Module/role connection options for the emulator with one credential kind (``auth_token`` takes ``token``)."""
    if kind == "auth_token":
        options = dict((name, value) for name, value in emu.connection("aksk").items() if name not in ("access_key", "secret_key"))
        options["auth_token"] = token
    else:
        options = emu.connection(kind)
    options.update(extra)
    return options


@pytest.fixture(scope="session")
def tempdir():
    """A scratch directory for the session."""
    with tempfile.TemporaryDirectory() as path:
        yield path


@pytest.fixture
def stale_search(emulator):  # pylint: disable=redefined-outer-name
    """``stale(phase)``: from then on every search answer of the session's emulator reports ``phase`` (its ``stale``
    fault: a search index lagging behind the jobs' own documents); removed after the test."""
    added = []

    def stale(phase):
        added.append(emulator.add_fault(type="stale", phase=phase, count="always"))

    yield stale
    for fault in added:
        emulator.control("DELETE", "/faults/%s" % fault)


def endpoint_tokens(emu, job_ids):
    """The access tokens under ``endpoints`` of these v2 jobs, read by the official SDK (not through the collection).

    Tests add them to the secrets they scan for: they open a job's notebook and dashboards.
    """
    # pylint: disable=import-outside-toplevel
    from huaweicloudsdkcore.auth.credentials import BasicCredentials
    from huaweicloudsdkcore.http.http_config import HttpConfig
    from huaweicloudsdkmodelarts.v1 import ModelArtsClient, ShowTrainingJobDetailsRequest

    config = HttpConfig.get_default_config()
    config.ssl_ca_cert = emu.ca_file
    client = (
        ModelArtsClient.new_builder().with_http_config(config).with_credentials(BasicCredentials(emu.ak, emu.sk, emu.project_id)).with_endpoint(emu.url).build()
    )
    tokens = []
    for job_id in job_ids:
        details = client.show_training_job_details(ShowTrainingJobDetailsRequest(training_job_id=job_id)).to_json_object()
        for entry in (details.get("endpoints") or {}).values():
            if isinstance(entry, dict) and entry.get("token"):
                tokens.append(entry["token"])
    assert tokens, "the emulator's documents must carry endpoint tokens for the scan to mean anything"
    return tokens
