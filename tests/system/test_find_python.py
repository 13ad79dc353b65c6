# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hacking/find_python.sh and the Makefile's *-newest suites on machines laid out in other ways (issue 12, item 5).

Each test builds a fake machine under tmp_path: a HOME, pyenv roots, a PATH holding only the tools
the script and make need plus fake interpreters (shell scripts that answer like Python does to the
script's question: ``<major.minor> <sys.executable>``), and a fake ``pyenv`` where one is wanted.
"""

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "hacking", "find_python.sh")
NEWEST = ("sanity-newest", "units-newest", "integration-newest")


def _executable(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)
    return str(path)


def interpreter(path, version="3.13"):
    """A fake interpreter that reports ``version`` and its own path."""
    return _executable(path, 'echo "%s $0"\n' % version)


def broken_shim(path):
    """A pyenv shim whose version is not active: what made `make test` fail."""
    return _executable(path, 'echo "pyenv: $(basename "$0"): command not found" >&2\nexit 127\n')


def fake_pyenv(bin_dir, root=None, which=None):
    """A pyenv answering `pyenv root` and `pyenv which python3.13`."""
    return _executable(
        bin_dir / "pyenv",
        ('case "$1" in\n  root) %s ;;\n  which) %s ;;\n  *) exit 1 ;;\nesac\n')
        % ('echo "%s"' % root if root else "exit 1", 'echo "%s"' % which if which else 'echo "pyenv: $2: command not found" >&2; exit 127'),
    )


@pytest.fixture
def env(tmp_path):
    """A fake machine's environment: an empty HOME and a PATH of tmp_path/tools only (bash, sort, make)."""
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in ("bash", "sort", "make"):
        path = shutil.which(tool)
        if path is None:
            pytest.skip("%s is not installed" % tool)
        os.symlink(path, str(tools / tool))
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "PATH": str(tools), "LANG": "C"}


def find(env, version="3.13"):
    return subprocess.run([SCRIPT, version], env=env, capture_output=True, text=True, timeout=60, check=False)


def found(env, version="3.13"):
    result = find(env, version)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_pyenv_root_variable_newest_release_first(env, tmp_path):
    root = tmp_path / "opt" / "pyenv"
    for release in ("3.13.1", "3.13.2", "3.13.10"):
        interpreter(root / "versions" / release / "bin" / "python3.13")
    interpreter(root / "versions" / "3.12.4" / "bin" / "python3.12", "3.12")
    interpreter(root / "versions" / "project-venv" / "bin" / "python3.13")  # a pyenv-virtualenv, not a release
    env["PYENV_ROOT"] = str(root)
    assert found(env) == str(root / "versions" / "3.13.10" / "bin" / "python3.13")
    assert found(env, "3.12") == str(root / "versions" / "3.12.4" / "bin" / "python3.12")


def test_pyenv_root_command(env, tmp_path):
    tools = tmp_path / "tools"
    root = tmp_path / "elsewhere" / "pyenv"
    expected = interpreter(root / "versions" / "3.13.0" / "bin" / "python3.13")
    fake_pyenv(tools, root=root)
    assert found(env) == expected


def test_default_root_in_home(env):
    expected = interpreter(pathlib.Path(env["HOME"]) / ".pyenv" / "versions" / "3.13.3" / "bin" / "python3.13")
    assert found(env) == expected


def test_pyenv_which(env, tmp_path):
    tools = tmp_path / "tools"
    expected = interpreter(tmp_path / "system" / "bin" / "python3.13")
    fake_pyenv(tools, root=tmp_path / "empty-root", which=expected)
    assert found(env) == expected


def test_path_skips_a_shim_of_an_inactive_version(env, tmp_path):
    broken_shim(tmp_path / "pyenv" / "shims" / "python3.13")
    expected = interpreter(tmp_path / "usr-local" / "bin" / "python3.13")
    env["PATH"] = os.pathsep.join([str(tmp_path / "pyenv" / "shims"), str(tmp_path / "usr-local" / "bin"), env["PATH"]])
    assert found(env) == expected


def test_shims_directory_leads_to_its_root(env, tmp_path):
    """pyenv not set up in this shell (no PYENV_ROOT, no pyenv command), but its shims are on PATH."""
    root = tmp_path / "srv" / "pyenv"
    broken_shim(root / "shims" / "python3.13")
    expected = interpreter(root / "versions" / "3.13.4" / "bin" / "python3.13")
    env["PATH"] = os.pathsep.join([str(root / "shims"), env["PATH"]])
    assert found(env) == expected


def test_a_resolving_shim_gives_the_real_interpreter(env, tmp_path):
    real = tmp_path / "real" / "bin" / "python3.13"
    _executable(real, 'echo "3.13 $0"\n')
    _executable(tmp_path / "shims" / "python3.13", 'exec "%s" "$@"\n' % real)
    env["PATH"] = os.pathsep.join([str(tmp_path / "shims"), env["PATH"]])
    assert found(env) == str(real)


def test_mislabelled_interpreter_is_not_taken(env, tmp_path):
    interpreter(tmp_path / "bin" / "python3.13", "3.12")
    env["PATH"] = os.pathsep.join([str(tmp_path / "bin"), env["PATH"]])
    result = find(env)
    assert result.returncode == 1 and result.stdout == ""


def test_nothing_found(env, tmp_path):
    tools = tmp_path / "tools"
    broken_shim(tmp_path / "shims" / "python3.13")
    fake_pyenv(tools, root=tmp_path / "no-such-root")
    env["PATH"] = os.pathsep.join([str(tmp_path / "shims"), env["PATH"]])
    env["PYENV_ROOT"] = str(tmp_path / "no-such-root")
    result = find(env)
    assert result.returncode == 1 and result.stdout == "", result.stderr
    assert "Traceback" not in result.stderr and "command not found" not in result.stderr


def test_bad_version_argument(env):
    result = find(env, "3")
    assert result.returncode == 2
    assert "3.13" in result.stderr


def make(env, *args):
    """make in the checkout with a clean environment (no PYTHON_NEWEST, nothing from an outer make)."""
    return subprocess.run(["make", "-s", "--no-print-directory", "-C", ROOT] + list(args), env=env, capture_output=True, text=True, timeout=120, check=False)


def test_make_skips_the_newest_suites_in_one_line_each(env, tmp_path):
    """The reported machine: no ~/.pyenv, and on PATH only a pyenv shim for a version that is not active."""
    broken_shim(tmp_path / "shims" / "python3.13")
    env["PATH"] = os.pathsep.join([str(tmp_path / "shims"), env["PATH"]])
    result = make(env, *NEWEST)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == list(NEWEST), result.stdout
    for line in lines:
        assert ": skipped: no Python 3.13 found" in line and "PYTHON_NEWEST" in line, line
    assert "pyenv:" not in result.stdout + result.stderr


@pytest.mark.parametrize("suite", NEWEST)
def test_make_fails_the_newest_suites_under_ci(env, suite):
    env["CI"] = "true"
    result = make(env, suite)
    assert result.returncode != 0
    assert "%s: failed: no Python 3.13 found" % suite in result.stderr
    assert "PYTHON_NEWEST" in result.stderr


def test_make_uses_the_interpreter_the_script_finds(env, tmp_path):
    root = tmp_path / "opt" / "pyenv"
    expected = interpreter(root / "versions" / "3.13.7" / "bin" / "python3.13")
    env["PYENV_ROOT"] = str(root)
    result = make(env, "--eval", 'print-newest: ; @echo "PYTHON_NEWEST=$(PYTHON_NEWEST)"', "print-newest")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "PYTHON_NEWEST=" + expected


def test_make_takes_python_newest_as_given(env):
    env["PYTHON_NEWEST"] = "/custom/python3.13"
    result = make(env, "--eval", 'print-newest: ; @echo "PYTHON_NEWEST=$(PYTHON_NEWEST)"', "print-newest")
    assert result.stdout.strip() == "PYTHON_NEWEST=/custom/python3.13", result.stderr


OLDEST = ("sanity-oldest", "units-oldest", "integration-oldest")


def test_make_skips_the_oldest_cores_suites_in_one_line_each(env):
    """No Python 3.10 on the machine: `make test`'s suites on ansible-core 2.16 say so and what to set, and pass."""
    result = make(env, *OLDEST)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["sanity-2.16", "units-2.16", "integration-2.16"], result.stdout
    for line in lines:
        assert ": skipped: no Python 3.10 found for ansible-core 2.16" in line and "PYTHON310=" in line, line


@pytest.mark.parametrize("suite", ["sanity-2.17", "parity-2.18", "integration-2.20"])
def test_make_fails_a_cores_suites_under_ci_without_its_python(env, suite):
    env["CI"] = "true"
    result = make(env, suite)
    assert result.returncode != 0
    assert "%s: failed: no Python" % suite in result.stderr


def test_make_uses_the_interpreter_given_for_a_core(env, tmp_path):
    given = interpreter(tmp_path / "elsewhere" / "python3.10", version="3.10")
    env["PYTHON310"] = given
    result = make(env, "--eval", 'print-2.16: ; @echo "2.16 $(CORE_INTERPRETER_2.16) $(CORE_PYTHON_2.16)"', "print-2.16")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2.16 %s 3.10" % given, result.stdout
