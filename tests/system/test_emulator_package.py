# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulator as a user installs it: the wheel in a fresh venv outside the checkout.

Builds the wheel the way `make emulator-dist` does, installs it (with the ``tls`` extra and pytest)
into a new venv in a temporary directory, then: the ``modelarts-emulator`` console script prints its
ready line, the official ``huaweicloudsdkmodelarts`` client lists and reads the demo jobs over
HTTPS with the default credentials, the collection's module reads them too, the example pytest file
of docs/emulator.md passes with nothing but the plugin's fixture, and ``pip install`` also works
from an installed collection's directory. PyPI (or the machine's package mirror) provides
cryptography and pytest, pinned as in requirements/test.txt.
"""

import os
import re
import shutil
import signal
import subprocess
import sys

import pytest
import yaml
from huaweicloudsdkcore.auth.credentials import BasicCredentials
from huaweicloudsdkcore.http.http_config import HttpConfig
from huaweicloudsdkmodelarts.v1 import JobSearches, ListTrainingJobsRequest, ModelArtsClient, ShowTrainingJobDetailsRequest

from conftest import BIN, ROOT

READY = "modelarts-emulator listening on "
DEMO = {
    "6a0c7f9e-3d2b-4c18-9e5a-1f2d3c4b5a60": "resnet50-flowers-train",
    "2b7e4d1c-8f3a-4e6b-a0c9-5d1e2f3a4b70": "bert-intent-train",
    "9d3f1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a81": "resnet50-flowers-train-baseline",
    "0e4a2b3c-5d6e-4f70-9b8c-1d2e3f4a5b92": "yolo-detect-nightly",
    "5b1d7e2a-3c4f-4a6b-8d9e-0f1a2b3c4d51": "resnet50-flowers-v2",
    "5b1d7e2a-3c4f-4a6b-8d9e-0f1a2b3c4d52": "resnet50-flowers-v3",
    # The two runs of the name the examples of ansible-doc use (finetune-llm is in another workspace: not listed).
    "4c8e2a10-7b3d-4f5e-9a1c-2d3e4f5a6b01": "resnet-nightly",
    "4c8e2a10-7b3d-4f5e-9a1c-2d3e4f5a6b02": "resnet-nightly",
    # The newcomer's three nightly runs of issue 57 (promoted, then refused twice against production).
    "c4a1e0d2-5b6f-4c7d-9e8f-0a1b2c3d4e61": "churn-model",
    "c4a1e0d2-5b6f-4c7d-9e8f-0a1b2c3d4e62": "churn-model",
    "c4a1e0d2-5b6f-4c7d-9e8f-0a1b2c3d4e63": "churn-model",
    # A job that hung and still reports Running (issue 59: make demo's stall gate).
    "3e8b5c2d-6f7a-4b8c-9d0e-1f2a3b4c5d71": "gpt2-pretrain",
}
BASELINE = "9d3f1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a81"


def _pins(*names):
    """``name==version`` lines of requirements/test.txt for ``names``."""
    with open(os.path.join(ROOT, "requirements", "test.txt"), encoding="utf-8") as handle:
        pins = dict(line.strip().lower().split("==", 1) for line in handle if "==" in line and not line.startswith("#"))
    return ["%s==%s" % (name, pins[name]) for name in names]


def _clean_env(extra=None):
    """Our environment without anything that would let the checkout's package leak into the venv."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_ADDOPTS") and not k.startswith(("HUAWEICLOUD_", "PYTEST_XDIST"))
    }
    env.update(extra or {})
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel and sdist, built as `make emulator-dist` builds them."""
    out = tmp_path_factory.mktemp("emulator-dist")
    result = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), os.path.join(ROOT, "emulator")], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    built = sorted(os.listdir(str(out)))
    assert built == ["modelarts_emulator-0.1.0-py3-none-any.whl", "modelarts_emulator-0.1.0.tar.gz"], built
    return os.path.join(str(out), built[0])


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh venv outside the checkout with the wheel (``[tls]`` extra) and pytest installed; returns its bin dir."""
    base = tmp_path_factory.mktemp("user-venv")
    assert not str(base).startswith(ROOT)
    subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True)
    bin_dir = str(base / "venv" / "bin")
    result = subprocess.run(
        [os.path.join(bin_dir, "python"), "-m", "pip", "install", "--quiet", wheel + "[tls]"] + _pins("cryptography", "pytest"),
        capture_output=True,
        text=True,
        cwd=str(base),
        env=_clean_env(),
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return bin_dir


@pytest.fixture(scope="module")
def served(venv, tmp_path_factory):
    """``modelarts-emulator --port 0 --tls-dir DIR`` from the venv; yields (url, ca_file)."""
    workdir = tmp_path_factory.mktemp("served")
    tls_dir = workdir / "tls"
    process = subprocess.Popen(
        [os.path.join(venv, "modelarts-emulator"), "--port", "0", "--tls-dir", str(tls_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(workdir),
        env=_clean_env(),
    )
    try:
        line = process.stdout.readline()
        assert line.startswith(READY), line + process.stderr.read() if process.poll() is not None else line
        url = line[len(READY) :].strip()
        assert re.match(r"^https://127\.0\.0\.1:\d+$", url), url
        yield url, str(tls_dir / "ca.pem")
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=10)
    assert process.returncode == 0


def test_the_venv_runs_the_installed_package_not_the_checkout(venv):
    where = subprocess.run(
        [os.path.join(venv, "python"), "-c", "import modelarts_emulator; print(modelarts_emulator.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        env=_clean_env(),
        cwd=os.path.dirname(venv),
    ).stdout.strip()
    assert where.startswith(os.path.dirname(venv)) and "site-packages" in where, where
    help_text = subprocess.run(
        [os.path.join(venv, "python"), "-m", "modelarts_emulator", "--help"], capture_output=True, text=True, check=True, env=_clean_env()
    ).stdout
    assert help_text.startswith("usage: python -m modelarts_emulator ")
    assert 'without --scenario the emulator serves the "demo" jobs' in " ".join(help_text.split())


def test_the_official_sdk_lists_and_reads_the_demo_jobs(served):
    url, ca_file = served
    config = HttpConfig.get_default_config()
    config.ssl_ca_cert = ca_file
    config.timeout = (5, 10)
    client = (
        ModelArtsClient.new_builder()
        .with_credentials(BasicCredentials("HPUAMAEMULATOR000001", "MaEmulatorSecretKey000000000000000000001", "c2078239586c89f12689d89fd66e9f9b"))
        .with_http_config(config)
        .with_endpoint(url)
        .build()
    )
    listing = client.list_training_jobs(ListTrainingJobsRequest(body=JobSearches(offset=0, limit=50)))
    assert {item.metadata.id: item.metadata.name for item in listing.items} == DEMO
    job = client.show_training_job_details(ShowTrainingJobDetailsRequest(training_job_id=BASELINE))
    assert (job.metadata.name, job.status.phase) == ("resnet50-flowers-train-baseline", "Completed")


def test_the_collections_module_reads_a_demo_job(served, run_playbook):
    url, ca_file = served
    env = {
        "HUAWEICLOUD_SDK_REGION": "cn-north-4",
        "HUAWEICLOUD_SDK_PROJECT_ID": "c2078239586c89f12689d89fd66e9f9b",
        "HUAWEICLOUD_MODELARTS_ENDPOINT": url,
        "HUAWEICLOUD_SDK_IAM_ENDPOINT": url,
        "HUAWEICLOUD_CA_BUNDLE": ca_file,
        "HUAWEICLOUD_SDK_AK": "HPUAMAEMULATOR000001",
        "HUAWEICLOUD_SDK_SK": "MaEmulatorSecretKey000000000000000000001",
    }
    checks = ["job.training_job.name == 'resnet50-flowers-train-baseline'", "job.training_job.phase == 'Completed'", "job.training_job.api_version == 'v2'"]
    result = run_playbook(
        [
            {
                "name": "Read",
                "hosts": "localhost",
                "gather_facts": False,
                "tasks": [
                    {"modelarts.training.modelarts_training_job_info": {"training_job_id": BASELINE}, "register": "job"},
                    {"ansible.builtin.assert": {"that": checks}},
                ],
            }
        ],
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok=2" in result.stdout


def test_a_users_pytest_file_with_only_the_fixture_runs_a_playbook(venv, ansible_env, tmp_path):
    # The user's repository: the example playbook and test file of docs/emulator.md, nothing else.
    for name in ("deploy.yml", "test_deploy.py"):
        shutil.copy(os.path.join(ROOT, "emulator", "examples", name), str(tmp_path / name))
    env = dict(_clean_env(ansible_env))
    result = subprocess.run(
        [os.path.join(venv, "python"), "-m", "pytest", "-p", "no:cacheprovider", "-v", "test_deploy.py"],
        cwd=str(tmp_path),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "3 passed" in output
    # The fixture came from the installed plugin (pytest lists it among the registered plugins).
    assert "modelarts-emulator-0.1.0" in output


def test_pip_installs_from_an_installed_collections_directory(venv, collection_root, ansible_env, tmp_path):
    source = os.path.join(collection_root, "ansible_collections", "modelarts", "training")
    built = subprocess.run(
        [os.path.join(BIN, "ansible-galaxy"), "collection", "build", source, "--output-path", str(tmp_path)],
        env=ansible_env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    target = tmp_path / "collections"
    installed = subprocess.run(
        [os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--offline", "-p", str(target), str(tmp_path / "modelarts-training-1.0.0.tar.gz")],
        env=dict(ansible_env, ANSIBLE_COLLECTIONS_PATH=str(target)),
        capture_output=True,
        text=True,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    package_dir = target / "ansible_collections" / "modelarts" / "training" / "emulator"
    result = subprocess.run(
        [os.path.join(venv, "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", str(package_dir)],
        capture_output=True,
        text=True,
        env=_clean_env(),
        cwd=str(tmp_path),
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # Building left nothing behind in the installed collection.
    assert sorted(os.listdir(str(package_dir))) == ["COPYING", "README.md", "examples", "pyproject.toml", "src", "tests"]
    help_text = subprocess.run([os.path.join(venv, "modelarts-emulator"), "--help"], capture_output=True, text=True, check=True, env=_clean_env()).stdout
    assert help_text.startswith("usage: modelarts-emulator ")


def test_the_checkouts_venv_has_the_package_editable_with_the_interface_command(tmp_path):
    """`make venv` installs emulator/ editable: the tests' command and imports are this checkout's sources, as a package."""
    import modelarts_emulator  # pylint: disable=import-outside-toplevel

    assert os.path.dirname(modelarts_emulator.__file__) == os.path.join(ROOT, "emulator", "src", "modelarts_emulator")
    process = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), "modelarts-emulator"), "--port", "0", "--tls-dir", str(tmp_path / "tls"), "--scenario", "empty"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_clean_env(),
        cwd=str(tmp_path),
    )
    try:
        line = process.stdout.readline()
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=10)
    assert re.match(r"^modelarts-emulator listening on https://127\.0\.0\.1:\d+\n$", line), line
    assert process.returncode == 0


def _doc_block(text, first_line):
    """The body of the fenced block of docs/emulator.md whose first line is ``first_line``."""
    match = re.search(r"```(?:yaml|python)\n" + re.escape(first_line) + r"\n(.*?)```", text, re.S)
    assert match, first_line
    return match.group(1)


def test_the_docs_show_the_example_files_as_they_are():
    with open(os.path.join(ROOT, "docs", "emulator.md"), encoding="utf-8") as handle:
        doc = handle.read()
    examples = os.path.join(ROOT, "emulator", "examples")
    with open(os.path.join(examples, "deploy.yml"), encoding="utf-8") as handle:
        playbook = handle.read()
    with open(os.path.join(examples, "test_deploy.py"), encoding="utf-8") as handle:
        test_file = handle.read()
    assert _doc_block(doc, "# deploy.yml") == playbook[playbook.index("- name:") :]
    assert _doc_block(doc, "# test_deploy.py") == test_file[test_file.index("import json") :]


def _python_files(*tops):
    for top in tops:
        for base, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [name for name in dirs if name not in ("__pycache__", "output", "results")]
            for name in files:
                if name.endswith(".py"):
                    yield os.path.join(base, name)


def test_tests_benchmarks_and_tools_import_the_emulator_as_a_package():
    """No path to the emulator's sources is put on the import path: the package that `make venv` installs is what runs."""
    assert not os.path.exists(os.path.join(ROOT, "tests", "emulator")), "tests/emulator/ (the old shim) is back"
    source_path = re.compile(r"""["']emulator["']\s*,\s*["']src["']|emulator/src""")
    found = []
    for path in _python_files("tests", "benchmarks", "hacking"):
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if source_path.search(line) and re.search(r"sys\.path|PYTHONPATH|EMULATOR_SRC", line):
                    found.append("%s:%d: %s" % (os.path.relpath(path, ROOT), number, line.strip()))
    assert not found, "\n".join(found)
    for name in ("test.txt", "matrix-newest.txt", "demo.txt"):
        with open(os.path.join(ROOT, "requirements", name), encoding="utf-8") as handle:
            assert "-e ./emulator" in handle.read().splitlines(), name


def test_lint_and_molecule_never_install_the_collection_into_the_users_ansible_home():
    """ansible-lint runs offline and every Molecule scenario without prerun: neither copies this checkout to ~/.ansible."""
    with open(os.path.join(ROOT, ".ansible-lint"), encoding="utf-8") as handle:
        assert yaml.safe_load(handle)["offline"] is True
    scenarios = os.path.join(ROOT, "roles", "training_job_gate", "molecule")
    for name in sorted(os.listdir(scenarios)):
        config = os.path.join(scenarios, name, "molecule.yml")
        if os.path.exists(config):
            with open(config, encoding="utf-8") as handle:
                assert yaml.safe_load(handle)["prerun"] is False, config
