# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The command writes only its own files (issue 28, item 8): ``--tls-dir``, ``--ready-file`` and ``--pid-file`` never
follow a link planted in a shared directory, and certificates the emulator did not create are never served."""

import os
import shutil
import subprocess

import pytest
import requests

from modelarts_emulator.launcher import running_emulator, server_command, server_env, start_emulator

PRECIOUS = "the user's own file\n"


def run_command(*args):
    """The emulator's command, run to its end (a refusal ends it at once; a start is never expected here)."""
    return subprocess.run(server_command() + ["--port", "0"] + list(args), capture_output=True, text=True, timeout=30, check=False, env=server_env())


@pytest.fixture
def shared(tmp_path):
    """A directory anyone may write to (as /tmp is), and a file of the user's elsewhere that a link there points at."""
    directory = tmp_path / "shared"
    directory.mkdir()
    directory.chmod(0o1777)
    victim = tmp_path / "victim"
    victim.write_text(PRECIOUS)
    return directory, victim


@pytest.mark.parametrize("option", ["--ready-file", "--pid-file"])
def test_a_link_planted_at_the_ready_or_pid_file_is_refused(shared, option):
    directory, victim = shared
    planted = directory / "ma.file"
    planted.symlink_to(victim)
    result = run_command(option, str(planted))
    assert result.returncode == 2, result
    assert "%s %s is a symbolic link; refusing to write through it" % (option, planted) in result.stderr and "Traceback" not in result.stderr
    assert victim.read_text() == PRECIOUS and os.path.islink(planted)


def test_a_link_planted_beside_the_ready_and_pid_files_is_not_written_through(shared):
    directory, victim = shared
    ready, pid = directory / "ma.url", directory / "ma.pid"
    # Where the emulator used to write first (PATH.tmp, then renamed): a link there overwrote its target.
    for path in (ready, pid):
        (directory / (path.name + ".tmp")).symlink_to(victim)
    with running_emulator(extra_args=["--ready-file", str(ready), "--pid-file", str(pid)]) as emu:
        assert ready.read_text() == emu.url + "\n" and int(pid.read_text()) == emu.process.pid
        assert not ready.is_symlink() and not pid.is_symlink()
    assert victim.read_text() == PRECIOUS
    assert not ready.exists() and not pid.exists(), "removed on exit"


def test_a_link_planted_as_the_tls_dir_is_refused(shared, tmp_path):
    directory, _victim = shared
    theirs = tmp_path / "victim-dir"
    theirs.mkdir()
    (theirs / "notes.txt").write_text(PRECIOUS)
    planted = directory / "ma-tls"
    planted.symlink_to(theirs, target_is_directory=True)
    result = run_command("--tls-dir", str(planted))
    assert result.returncode == 2, result
    assert "--tls-dir %s is a symbolic link" % planted in result.stderr and "Traceback" not in result.stderr
    assert sorted(os.listdir(theirs)) == ["notes.txt"] and (theirs / "notes.txt").read_text() == PRECIOUS


def test_a_tls_dir_others_can_write_to_is_refused(shared):
    directory, _victim = shared
    result = run_command("--tls-dir", str(directory))
    assert result.returncode == 2, result
    assert "--tls-dir %s can be written by other users (mode 0o1777)" % directory in result.stderr
    assert os.listdir(directory) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_a_tls_dir_of_another_user_is_refused(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, 65534, 65534)
    result = run_command("--tls-dir", str(theirs))
    assert result.returncode == 2 and "--tls-dir %s belongs to another user (uid 65534)" % theirs in result.stderr, result
    assert os.listdir(theirs) == []


def test_a_new_tls_dir_is_private(tmp_path):
    fresh = tmp_path / "new" / "ma-tls"
    with running_emulator(tls_dir=str(fresh)) as emu:
        assert requests.get(emu.url + "/_emulator/health", timeout=5, verify=emu.ca_file).status_code == 200
    assert oct(os.stat(fresh).st_mode & 0o777) == "0o700"


def test_certificates_the_emulator_did_not_create_are_never_reused(tmp_path):
    # Certificates of another emulator run (a valid CA and server pair, key included): planted without the marker, and
    # planted beside a marker that names other files.
    source = tmp_path / "source"
    with running_emulator(tls_dir=str(source)):
        pass
    planted_ca = (source / "ca.pem").read_bytes()
    for name, with_marker in (("bare", False), ("mismatched", True)):
        target = tmp_path / name
        target.mkdir(mode=0o700)
        for pem in ("ca.pem", "server.pem", "server-key.pem"):
            shutil.copy(source / pem, target / pem)
        if with_marker:
            (target / ".modelarts-emulator").write_text('{"ca.pem": "%s", "server.pem": "0", "server-key.pem": "0"}' % ("0" * 64))
        with running_emulator(tls_dir=str(target)) as emu:
            assert (target / "ca.pem").read_bytes() != planted_ca, name
            with pytest.raises(requests.exceptions.SSLError):
                requests.get(emu.url + "/_emulator/health", timeout=5, verify=str(source / "ca.pem"))
            assert requests.get(emu.url + "/_emulator/health", timeout=5, verify=emu.ca_file).status_code == 200
    # Its own certificates, in its own directory, are still reused across restarts.
    with running_emulator(tls_dir=str(source)) as emu:
        assert (source / "ca.pem").read_bytes() == planted_ca
        assert requests.get(emu.url + "/_emulator/health", timeout=5, verify=emu.ca_file).status_code == 200


def test_a_scenario_whose_failing_task_does_not_exist_is_refused_in_one_line(tmp_path):
    """Issue 38, item 7: ``worker-3`` in a one-node job is a typo the emulator names, as it names an unknown key."""
    scenario = tmp_path / "typo.json"
    scenario.write_text('{"jobs": [{"name": "oom-train", "phase": "Failed", "failure": {"task": "worker-3", "exit_code": 137, "message": "OOMKilled"}}]}')
    result = run_command("--scenario", str(scenario))
    assert result.returncode == 2, result
    assert result.stderr.strip().splitlines() == [
        "modelarts-emulator: cannot start: job 'oom-train': failure task 'worker-3' does not exist: a job of node_count 1 has the tasks worker-0"
    ], result.stderr


def _fake_interpreter(tmp_path, body):
    """An executable standing in for python: start_emulator runs it as ``<it> -m modelarts_emulator ...``."""
    path = tmp_path / "fake-python"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def test_an_emulator_that_never_gets_ready_is_stopped_and_the_bound_is_named(tmp_path):
    marker = tmp_path / "still-running"
    fake = _fake_interpreter(tmp_path, 'echo "importing" >&2; touch %s; exec sleep 300' % marker)
    with pytest.raises(RuntimeError) as failure:
        start_emulator(python=fake, startup_timeout=5)
    message = str(failure.value)
    assert message == "emulator did not start: no ready line within 5 s (startup_timeout), so it was stopped: importing"
    assert marker.exists()


def test_an_emulator_that_exits_is_reported_with_its_status_without_waiting_for_the_bound(tmp_path):
    fake = _fake_interpreter(tmp_path, 'echo "modelarts-emulator: cannot start: port taken" >&2; exit 3')
    # A launcher that waited for the bound instead of noticing the exit would hang here.
    with pytest.raises(RuntimeError) as failure:
        start_emulator(python=fake, startup_timeout=100000)
    assert str(failure.value) == "emulator did not start (exit 3): modelarts-emulator: cannot start: port taken"
