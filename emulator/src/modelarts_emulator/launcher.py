# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start the emulator as a subprocess (for tests, benchmarks, demos) and talk to it. Stdlib only.

Usage::

    from modelarts_emulator.launcher import running_emulator

    with running_emulator(scenario='integration', tls=True) as emu:
        emu.url            # 'https://127.0.0.1:41234' (also emu.endpoint / emu.iam_endpoint)
        emu.ca_file        # PEM of the emulator's CA (None without TLS; also emu.ca_bundle)
        emu.admin_token    # for the /_emulator/ control API
        emu.region, emu.project_id, emu.ak, emu.sk
        emu.temp_ak, emu.temp_sk, emu.security_token
        emu.username, emu.password, emu.domain_name
        emu.other          # EmulatorCredentials of a second tenant (project mismatch tests)
        emu.env()          # HUAWEICLOUD_* environment variables for AK/SK auth
        emu.add_fault(type='throttle', count=2)        # ... and the rest of ControlClient
        emu.reset()        # back to the scenario's initial state, fresh clock

``running_emulator(scenario=None, tls=False, tls_dir=None, port=0, admin_token=None,
extra_args=(), python=None, startup_timeout=120.0, env=None)`` is a context manager yielding an
:class:`EmulatorProcess`; ``start_emulator(...)`` takes the same arguments and returns one that
you ``stop()`` yourself. ``scenario=None`` serves the demo jobs, as the command does without
``--scenario``; ``scenario='empty'`` serves none.

Credential flags in ``extra_args`` (e.g. ``['--access-key', 'X', '--secret-key', 'Y']``) update the
yielded object accordingly.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from .app import DEFAULT_ADMIN_TOKEN
from .client import PRIMARY, ControlClient, EmulatorCredentials  # noqa: F401  pylint: disable=unused-import

READY_PREFIX = "modelarts-emulator listening on "
# Seconds to wait for the ready line. Generous: two cores under a load of 18 took over 20 s (cold imports,
# certificates); an emulator that fails exits and is reported at once, whatever this bound.
STARTUP_TIMEOUT = 120.0
# The directory holding the modelarts_emulator package: put on the child's PYTHONPATH so that the
# emulator also starts from a checkout where the package is not installed.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_FLAG_TO_FIELD = {
    "--region": "region",
    "--project-id": "project_id",
    "--access-key": "ak",
    "--secret-key": "sk",
    "--temp-access-key": "temp_ak",
    "--temp-secret-key": "temp_sk",
    "--security-token": "security_token",
    "--username": "username",
    "--password": "password",
    "--domain-name": "domain_name",
}


def server_command(python=None):
    """The argv prefix that runs the emulator's command line with ``python`` (default: this interpreter)."""
    return [python or sys.executable, "-m", "modelarts_emulator"]


def server_env(env=None):
    """The environment for an emulator subprocess: ``env`` (default: ours) with this package importable."""
    result = dict(os.environ if env is None else env)
    paths = [PACKAGE_PARENT] + [p for p in result.get("PYTHONPATH", "").split(os.pathsep) if p and p != PACKAGE_PARENT]
    result["PYTHONPATH"] = os.pathsep.join(paths)
    return result


class EmulatorProcess(ControlClient):
    """A running emulator subprocess: its :class:`~modelarts_emulator.client.ControlClient` plus the process."""

    def __init__(self, process, url, ca_file, admin_token, creds, tls_dir_owned=None):
        # pylint: disable=too-many-arguments
        super().__init__(url, admin_token=admin_token, ca_file=ca_file, credentials=creds)
        self.process = process
        self._tls_dir_owned = tls_dir_owned

    def __repr__(self):
        return "EmulatorProcess(url=%r, pid=%r)" % (self.url, self.process.pid)

    def stop(self, timeout=5.0):
        """Terminate the process (then kill it if needed) and remove an owned TLS directory."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()
        if self._tls_dir_owned:
            shutil.rmtree(self._tls_dir_owned, ignore_errors=True)


def _creds_from_args(args):
    creds = dict(PRIMARY)
    args = list(args)
    for index, arg in enumerate(args):
        if "=" in arg and arg.split("=", 1)[0] in _FLAG_TO_FIELD:
            flag, value = arg.split("=", 1)
            creds[_FLAG_TO_FIELD[flag]] = value
        elif arg in _FLAG_TO_FIELD and index + 1 < len(args):
            creds[_FLAG_TO_FIELD[arg]] = args[index + 1]
    return creds


def start_emulator(scenario=None, tls=False, tls_dir=None, port=0, admin_token=None, extra_args=(), python=None, startup_timeout=STARTUP_TIMEOUT, env=None):
    """Start the emulator and wait for its ready line; return an :class:`EmulatorProcess`.

    ``scenario``: a path, or the name of a shipped one (``demo``, ``empty``, ``integration``, ``flaky``, ``nightly``, ``tagged-1000``, ``tagged-10000``);
    None serves the demo jobs. ``tls=True`` without ``tls_dir`` generates certificates in a temporary
    directory removed by ``stop()``. ``python``: the interpreter to run it with; ``env``: variables
    added to this process's environment for it. ``startup_timeout``: seconds to wait for the ready
    line; an emulator that exits sooner is reported at once, so the bound matters only for one that
    hangs (a loaded machine can take tens of seconds to import and make certificates).
    """
    # pylint: disable=too-many-arguments,too-many-locals
    owned = None
    if tls and not tls_dir:
        tls_dir = owned = tempfile.mkdtemp(prefix="modelarts-emulator-tls-")
    admin_token = admin_token or DEFAULT_ADMIN_TOKEN
    cmd = server_command(python) + ["--port", str(port), "--admin-token", admin_token]
    if tls_dir:
        cmd += ["--tls-dir", str(tls_dir)]
    if scenario:
        cmd += ["--scenario", str(scenario)]
    cmd += list(extra_args)
    proc_env = server_env()
    proc_env.update(env or {})
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=proc_env)  # pylint: disable=consider-using-with
    lines = []

    def _read():
        for line in process.stdout:
            lines.append(line)
            if line.startswith(READY_PREFIX):
                return

    reader = threading.Thread(target=_read, daemon=True)
    reader.start()
    reader.join(startup_timeout)
    ready = [line for line in lines if line.startswith(READY_PREFIX)]
    if not ready:
        hung = reader.is_alive()  # no EOF yet: the emulator is still running, not ready
        process.kill()
        _out, err = process.communicate(timeout=5)
        if owned:
            shutil.rmtree(owned, ignore_errors=True)
        err = (err or "").strip()[-2000:]
        if hung:
            raise RuntimeError(
                "emulator did not start: no ready line within %g s (startup_timeout), so it was stopped%s" % (startup_timeout, ": " + err if err else "")
            )
        raise RuntimeError("emulator did not start (exit %s): %s" % (process.returncode, err))
    url = ready[0][len(READY_PREFIX) :].strip()
    # Keep draining both pipes so a chatty emulator (--verbose) never blocks on a full pipe.
    threading.Thread(target=_drain, args=(process.stderr,), daemon=True).start()
    threading.Thread(target=_drain, args=(process.stdout,), daemon=True).start()
    ca_file = os.path.join(str(tls_dir), "ca.pem") if tls_dir else None
    return EmulatorProcess(process, url, ca_file, admin_token, _creds_from_args(extra_args), owned)


def _drain(stream):
    try:
        for _line in stream:
            pass
    except (OSError, ValueError):
        pass


class running_emulator:  # pylint: disable=invalid-name,too-few-public-methods
    """Context manager: ``with running_emulator(**kwargs) as emu: ...`` (arguments of start_emulator)."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._emulator = None

    def __enter__(self):
        self._emulator = start_emulator(**self._kwargs)
        return self._emulator

    def __exit__(self, *exc):
        self._emulator.stop()
        return False


def wait_until(predicate, timeout=10.0, interval=0.05):
    """Poll ``predicate`` until it returns a truthy value (returned) or ``timeout`` passes (None)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)
