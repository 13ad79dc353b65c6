# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection tarball builds, installs cleanly, and ansible-doc shows every plugin from it."""

import os
import subprocess
import tarfile

import pytest

from conftest import BIN

PLUGINS = [
    ("module", "modelarts.training.modelarts_training_job_info"),
    ("lookup", "modelarts.training.training_job"),
    ("test", "modelarts.training.completed"),
    ("test", "modelarts.training.terminal"),
    ("test", "modelarts.training.failed"),
    ("filter", "modelarts.training.unknown_variables"),
    ("role", "modelarts.training.training_job_gate"),
]


@pytest.fixture(scope="module")
def installed(collection_root, ansible_env, tmp_path_factory):
    """Build the tarball from the staged copy and install it into an empty collections path."""
    out = tmp_path_factory.mktemp("dist")
    source = os.path.join(collection_root, "ansible_collections", "modelarts", "training")
    subprocess.run(
        [os.path.join(BIN, "ansible-galaxy"), "collection", "build", source, "--output-path", str(out)],
        check=True,
        env=ansible_env,
        capture_output=True,
        text=True,
    )
    tarballs = [name for name in os.listdir(str(out)) if name.endswith(".tar.gz")]
    assert tarballs == ["modelarts-training-0.1.0.tar.gz"]
    tarball = os.path.join(str(out), tarballs[0])
    target = tmp_path_factory.mktemp("installed")
    env = dict(ansible_env, ANSIBLE_COLLECTIONS_PATH=str(target))
    result = subprocess.run(
        [os.path.join(BIN, "ansible-galaxy"), "collection", "install", tarball, "-p", str(target), "--offline"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stdout + result.stderr, result.stdout + result.stderr
    return tarball, str(target), env


def test_tarball_holds_the_collection_and_no_build_debris(installed):
    tarball, _target, _env = installed
    with tarfile.open(tarball) as archive:
        names = archive.getnames()
    for needed in (
        "MANIFEST.json",
        "meta/runtime.yml",
        "plugins/modules/modelarts_training_job_info.py",
        "plugins/action/modelarts_training_job_info.py",
        "plugins/module_utils/job_info.py",
        "plugins/lookup/training_job.py",
        "roles/training_job_gate/meta/argument_specs.yml",
        "extensions/eda/plugins/event_source/training_job_phase.py",
        "meta/execution-environment.yml",
        # The emulator package ships, to pip install from the installed collection (its modelarts-emulator command).
        "emulator/pyproject.toml",
        "emulator/src/modelarts_emulator/cli.py",
    ):
        assert needed in names, needed
    for name in names:
        assert not name.startswith((".venv", "tests/output", ".cache", ".git/")), name
        assert "__pycache__" not in name, name
    print("tarball size: %d bytes, %d members" % (os.path.getsize(tarball), len(names)))


@pytest.mark.parametrize("kind,name", PLUGINS, ids=[name for _kind, name in PLUGINS])
def test_ansible_doc_renders_from_the_installed_tarball(installed, kind, name):
    _tarball, target, env = installed
    result = subprocess.run([os.path.join(BIN, "ansible-doc"), "-t", kind, name], env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    # The header names the file the docs came from: it must be the installed copy.
    assert os.path.join(target, "ansible_collections", "modelarts", "training") in result.stdout, result.stdout[:500]
    assert "ERROR" not in result.stderr and "WARNING" not in result.stderr, result.stderr
    assert len(result.stdout.splitlines()) > 10


def test_ansible_doc_lists_every_plugin(installed):
    _tarball, _target, env = installed
    for kind, expected in (("module", 1), ("lookup", 1), ("test", 3), ("filter", 1)):
        result = subprocess.run([os.path.join(BIN, "ansible-doc"), "-t", kind, "-l", "modelarts.training"], env=env, capture_output=True, text=True, check=True)
        listed = [line for line in result.stdout.splitlines() if line.startswith("modelarts.training.")]
        assert len(listed) == expected, result.stdout
