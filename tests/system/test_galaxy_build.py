# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection tarball builds, installs cleanly, and ansible-doc shows every plugin from it.

It is built as a user builds it after ``make demo`` and ``make test``: from a checkout holding a real virtualenv
(``.venv-demo``, made by ``python -m venv``, pip included), the other venvs, caches and build output the Makefile's
targets leave; galaxy.yml's ``build_ignore`` must keep every one of them out, and the tarball small (issue 41).
"""

import os
import subprocess
import sys
import tarfile

import pytest
import yaml

from conftest import BIN, ROOT, collection_plugins

# Galaxy and Automation Hub take far larger uploads; this bound is ours: a clean build is under 1 MB, and a venv
# left in would add ten times that.
MAX_TARBALL_BYTES = 1500 * 1000
# What `make demo`, `make test`, `make test-cores`, `make docs`, `make importer`, pytest, ruff, ansible-test and
# antsibull-changelog leave in a checkout, each with a file inside (a directory alone never reaches a tarball).
DEBRIS = [
    ".venv/bin/python",
    ".venv-newest/lib/site.py",
    ".venv-core-2.16/pyvenv.cfg",
    ".venv-importer/pyvenv.cfg",
    ".cache/pip/wheel.whl",
    ".pytest_cache/v/cache/lastfailed",
    ".ruff_cache/0.17.6/cache",
    ".hypothesis/examples/x",
    ".ansible/collections/x",
    "tests/output/junit/x.xml",
    "tests/integration/integration_config.yml",
    "benchmarks/results/run.json",
    "docs/build/html/index.html",
    "dist/modelarts_emulator-0.1.0-py3-none-any.whl",
    "emulator/build/lib/x.py",
    "emulator/src/modelarts_emulator.egg-info/PKG-INFO",
    "plugins/module_utils/__pycache__/client.cpython-311.pyc",
    "changelogs/.plugin-cache.yaml",
    "importer_result.json",
    "modelarts-training-0.9.0.tar.gz",
]
# The directories of DEBRIS that no tarball holds at all.
SHIPPED_DIRECTORIES = {"plugins/", "tests/", "docs/", "emulator/", "changelogs/", "benchmarks/"}
TOP_LEVEL_DEBRIS = tuple(sorted(set(name.split("/", maxsplit=1)[0] + "/" for name in DEBRIS if "/" in name) - SHIPPED_DIRECTORIES))
with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as _galaxy:
    VERSION = yaml.safe_load(_galaxy)["version"]

# Every plugin and role of the tree (conftest.collection_plugins): a new one is checked by its being added.
PLUGINS = collection_plugins()


@pytest.fixture(scope="module")
def lived_in_checkout(tmp_path_factory):
    """A copy of the checkout as `make demo` and `make test` leave it: a real venv in .venv-demo, and the debris."""
    base = str(tmp_path_factory.mktemp("checkout"))
    source = subprocess.run([os.path.join(ROOT, "hacking", "stage_collection.sh"), base], check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run([sys.executable, "-m", "venv", os.path.join(source, ".venv-demo")], check=True, capture_output=True)
    for name in DEBRIS:
        path = os.path.join(source, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(os.urandom(64 * 1024))
    return source


@pytest.fixture(scope="module")
def installed(lived_in_checkout, ansible_env, tmp_path_factory):
    """Build the tarball from the lived-in checkout and install it into an empty collections path."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [os.path.join(BIN, "ansible-galaxy"), "collection", "build", lived_in_checkout, "--output-path", str(out)],
        check=True,
        env=ansible_env,
        capture_output=True,
        text=True,
    )
    tarballs = [name for name in os.listdir(str(out)) if name.endswith(".tar.gz")]
    assert tarballs == ["modelarts-training-%s.tar.gz" % VERSION]
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
        "plugins/module_utils/door/job_info.py",
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
        assert "__pycache__" not in name and not name.endswith(".pyc"), name
    leaked = [name for name in names if name in DEBRIS or name.startswith(TOP_LEVEL_DEBRIS) or name in [d.rstrip("/") for d in TOP_LEVEL_DEBRIS]]
    assert not leaked, leaked
    assert not [name for name in names if "pyvenv.cfg" in name or "site-packages" in name]
    size = os.path.getsize(tarball)
    print("tarball size: %d bytes, %d members" % (size, len(names)))
    assert size < MAX_TARBALL_BYTES, size


def test_the_checkout_really_held_a_venv_and_the_debris(lived_in_checkout):
    """The build above had something to leave out: a working venv with pip, many MB, and every piece of debris."""
    venv = os.path.join(lived_in_checkout, ".venv-demo")
    assert os.path.isfile(os.path.join(venv, "pyvenv.cfg"))
    size = sum(os.path.getsize(os.path.join(folder, name)) for folder, _dirs, files in os.walk(venv) for name in files)
    assert size > MAX_TARBALL_BYTES, size
    for name in DEBRIS:
        assert os.path.isfile(os.path.join(lived_in_checkout, name)), name


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
    """ansible-doc lists, kind by kind, exactly the plugins of the tree: none undocumented, none left out of the tarball."""
    _tarball, _target, env = installed
    kinds = sorted(set(kind for kind, _name in PLUGINS if kind != "role"))
    assert {"module", "lookup", "test", "filter"} <= set(kinds), kinds
    for kind in kinds:
        result = subprocess.run([os.path.join(BIN, "ansible-doc"), "-t", kind, "-l", "modelarts.training"], env=env, capture_output=True, text=True, check=True)
        listed = sorted(line.split()[0] for line in result.stdout.splitlines() if line.startswith("modelarts.training."))
        assert listed == sorted(name for each, name in PLUGINS if each == kind), result.stdout
