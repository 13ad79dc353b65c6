# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start the ModelArts emulator as a subprocess for tests, benchmarks and Molecule. Stdlib only.

Usage::

    import sys; sys.path.insert(0, 'tests/emulator')      # or load this file by path
    from launcher import running_emulator

    with running_emulator(scenario='integration', tls=True) as emu:
        emu.url            # 'https://127.0.0.1:41234' (also emu.endpoint / emu.iam_endpoint)
        emu.ca_file        # PEM of the emulator's CA (None without TLS)
        emu.admin_token    # for the /_emulator/ control API
        emu.region, emu.project_id, emu.ak, emu.sk
        emu.temp_ak, emu.temp_sk, emu.security_token
        emu.username, emu.password, emu.domain_name
        emu.other          # EmulatorCredentials of a second tenant (project mismatch tests)
        emu.env()          # HUAWEICLOUD_* environment variables for AK/SK auth
        emu.control('POST', '/faults', {'type': 'throttle', 'count': 2})   # -> parsed JSON
        emu.reset()        # back to the scenario's initial state, fresh clock

``running_emulator(scenario=None, tls=False, tls_dir=None, port=0, admin_token=None,
extra_args=(), python=None, startup_timeout=20.0, env=None)`` is a context manager yielding an
:class:`EmulatorProcess`; ``start_emulator(...)`` takes the same arguments and returns one that
you ``stop()`` yourself. ``emulator_fixture(scope='session', **kwargs)`` builds a pytest fixture.

The defaults below mirror tests/emulator/modelarts_emulator/accounts.py; they are overridable via
``extra_args`` (e.g. ``['--access-key', 'X', '--secret-key', 'Y']``), which updates the yielded
object accordingly.
"""

import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, 'server.py')
READY_PREFIX = 'modelarts-emulator listening on '
DEFAULT_ADMIN_TOKEN = 'modelarts-emulator-admin'


class EmulatorCredentials:
    """One tenant's credentials and project."""

    # pylint: disable=too-many-instance-attributes,too-few-public-methods
    def __init__(self, **kwargs):
        self.region = kwargs.get('region')
        self.project_id = kwargs.get('project_id')
        self.ak = kwargs.get('ak')
        self.sk = kwargs.get('sk')
        self.temp_ak = kwargs.get('temp_ak')
        self.temp_sk = kwargs.get('temp_sk')
        self.security_token = kwargs.get('security_token')
        self.username = kwargs.get('username')
        self.password = kwargs.get('password')
        self.domain_name = kwargs.get('domain_name')

    def __repr__(self):
        # Never show secrets in test output or tracebacks.
        return 'EmulatorCredentials(region=%r, project_id=%r, ak=%r)' % (self.region, self.project_id, self.ak)


PRIMARY = dict(
    region='cn-north-4', project_id='c2078239586c89f12689d89fd66e9f9b',
    ak='HPUAMAEMULATOR000001', sk='MaEmulatorSecretKey000000000000000000001',
    temp_ak='HSTAMAEMULATOR000001', temp_sk='MaEmulatorTemporarySecretKey000000000001',
    security_token='gQpjbi1ub3J0aC00EMULATOR-TEMPORARY-SECURITY-TOKEN-'
                   'Q2lDZFhPZkRrR1BsaE1vZWxhcnRzRW11bGF0b3JUZW1wb3JhcnlUb2tlbg+/==',
    username='ci-robot', password='Emulat0r-Passw0rd', domain_name='modelarts-ci',
)
SECOND_PROJECT = {'region': 'cn-east-3', 'project_id': '985dd76911835273e3e465c473f753a0'}
OTHER = dict(
    region='cn-north-4', project_id='817c519a596826b1ccc8630e7d28887e',
    ak='HPUAOTHERTENANT00001', sk='OtherTenantSecretKey00000000000000000001',
    username='other-user', password='0ther-Passw0rd', domain_name='other-tenant',
)
_FLAG_TO_FIELD = {
    '--region': 'region', '--project-id': 'project_id', '--access-key': 'ak', '--secret-key': 'sk',
    '--temp-access-key': 'temp_ak', '--temp-secret-key': 'temp_sk', '--security-token': 'security_token',
    '--username': 'username', '--password': 'password', '--domain-name': 'domain_name',
}


class EmulatorProcess(EmulatorCredentials):
    """A running emulator subprocess plus the credentials that work against it."""

    def __init__(self, process, url, ca_file, admin_token, creds, tls_dir_owned=None):
        # pylint: disable=too-many-arguments
        super().__init__(**creds)
        self.process = process
        self.url = url
        self.endpoint = url
        self.iam_endpoint = url
        self.ca_file = ca_file
        self.admin_token = admin_token
        self.second_project = dict(SECOND_PROJECT)
        self.other = EmulatorCredentials(**OTHER)
        self._tls_dir_owned = tls_dir_owned
        self._ssl = ssl.create_default_context(cafile=ca_file) if ca_file else None

    def __repr__(self):
        return 'EmulatorProcess(url=%r, pid=%r)' % (self.url, self.process.pid)

    @property
    def port(self):
        """The TCP port the emulator listens on."""
        return int(self.url.rsplit(':', 1)[1])

    def env(self, kind='aksk'):
        """HUAWEICLOUD_* variables for ``kind`` ``aksk``, ``temporary`` or ``password`` credentials."""
        env = {'HUAWEICLOUD_SDK_REGION': self.region, 'HUAWEICLOUD_SDK_PROJECT_ID': self.project_id,
               'HUAWEICLOUD_MODELARTS_ENDPOINT': self.url, 'HUAWEICLOUD_SDK_IAM_ENDPOINT': self.url}
        if self.ca_file:
            env['HUAWEICLOUD_CA_BUNDLE'] = self.ca_file
        if kind == 'aksk':
            env.update(HUAWEICLOUD_SDK_AK=self.ak, HUAWEICLOUD_SDK_SK=self.sk)
        elif kind == 'temporary':
            env.update(HUAWEICLOUD_SDK_AK=self.temp_ak, HUAWEICLOUD_SDK_SK=self.temp_sk,
                       HUAWEICLOUD_SDK_SECURITY_TOKEN=self.security_token)
        elif kind == 'password':
            env.update(HUAWEICLOUD_USERNAME=self.username, HUAWEICLOUD_PASSWORD=self.password,
                       HUAWEICLOUD_DOMAIN_NAME=self.domain_name)
        else:
            raise ValueError('kind must be aksk, temporary or password')
        return env

    def control(self, method, path, body=None, timeout=10):
        """Call the control API (``path`` relative to ``/_emulator``); return the parsed JSON answer.

        Raises ``RuntimeError`` for non-2xx answers.
        """
        data = None if body is None else json.dumps(body).encode('utf-8')
        request = urllib.request.Request(self.url + '/_emulator' + path, data=data, method=method,
                                         headers={'X-Emulator-Admin-Token': self.admin_token,
                                                  'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self._ssl) as response:  # nosec - loopback only
                return json.loads(response.read() or b'null')
        except urllib.error.HTTPError as exc:
            raise RuntimeError('control %s %s failed: HTTP %s %s' % (method, path, exc.code, exc.read()[:500])) from None

    def reset(self, scenario=None):
        """Reset jobs, faults, tokens, settings and the request log (optionally to another scenario dict)."""
        return self.control('POST', '/reset', {'scenario': scenario} if scenario is not None else {})

    def add_fault(self, **fault):
        """Inject a fault (see docs/emulator.md); return its id."""
        return self.control('POST', '/faults', fault)['ids'][0]

    def add_jobs(self, jobs, replace=False):
        """Add jobs in scenario syntax; return the control API's answer."""
        return self.control('POST', '/jobs', {'jobs': jobs, 'replace': replace})

    def requests(self, since=0, path=None):
        """Return the (redacted) request log entries after sequence number ``since``."""
        query = '?since=%d' % since + ('&path=%s' % path if path else '')
        return self.control('GET', '/requests' + query)['requests']

    def settings(self, **values):
        """Change settings (token_lifetime, clock_skew_tolerance, ...); return them all."""
        return self.control('PUT', '/settings', values)

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
    for index, arg in enumerate(args[:-1]):
        if arg in _FLAG_TO_FIELD:
            creds[_FLAG_TO_FIELD[arg]] = args[index + 1]
    return creds


def start_emulator(scenario=None, tls=False, tls_dir=None, port=0, admin_token=None, extra_args=(),
                   python=None, startup_timeout=20.0, env=None):
    """Start the emulator and wait for its ready line; return an :class:`EmulatorProcess`.

    ``scenario``: a path or the name of a file in tests/emulator/scenarios. ``tls=True`` without
    ``tls_dir`` generates certificates in a temporary directory removed by ``stop()``.
    """
    # pylint: disable=too-many-arguments,too-many-locals
    owned = None
    if tls and not tls_dir:
        tls_dir = owned = tempfile.mkdtemp(prefix='modelarts-emulator-tls-')
    admin_token = admin_token or DEFAULT_ADMIN_TOKEN
    cmd = [python or sys.executable, SERVER, '--port', str(port), '--admin-token', admin_token]
    if tls_dir:
        cmd += ['--tls-dir', tls_dir]
    if scenario:
        cmd += ['--scenario', str(scenario)]
    cmd += list(extra_args)
    proc_env = dict(os.environ)
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
        process.kill()
        _out, err = process.communicate(timeout=5)
        if owned:
            shutil.rmtree(owned, ignore_errors=True)
        raise RuntimeError('emulator did not start (exit %s): %s' % (process.returncode, (err or '').strip()[-2000:]))
    url = ready[0][len(READY_PREFIX):].strip()
    # Keep draining both pipes so a chatty emulator (--verbose) never blocks on a full pipe.
    threading.Thread(target=_drain, args=(process.stderr,), daemon=True).start()
    threading.Thread(target=_drain, args=(process.stdout,), daemon=True).start()
    ca_file = os.path.join(tls_dir, 'ca.pem') if tls_dir else None
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


def emulator_fixture(scope='session', name=None, **kwargs):
    """Return a pytest fixture that runs one emulator for ``scope`` (xdist: one per worker).

    Example (in a conftest.py)::

        from launcher import emulator_fixture
        emulator = emulator_fixture(scope='session', scenario='integration', tls=True)

    The fixture takes the name of the variable it is assigned to (or ``name``). Do not import this
    function into a conftest under a name starting with ``pytest_``: pytest would take it for a hook.
    """
    import pytest  # pylint: disable=import-outside-toplevel  # only needed by pytest users

    def _fixture():
        """A running emulator, stopped after the last test of the scope."""
        with running_emulator(**kwargs) as emu:
            yield emu

    return pytest.fixture(scope=scope, name=name)(_fixture) if name else pytest.fixture(scope=scope)(_fixture)


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
