# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pytest plugin, run the way a user's test suite runs it: fixtures, options, reset, factory, stop.

Each test runs an inner pytest in a subprocess with only this plugin loaded (``-p``); the test that
the installed package registers it as a ``pytest11`` entry point builds the wheel
(tests/system/test_emulator_package.py in the collection).
"""

import os

import pytest

from modelarts_emulator.launcher import server_env

pytest_plugins = ["pytester"]


@pytest.fixture
def inner(pytester, monkeypatch):
    """Run an inner pytest session in a subprocess with the plugin; return the RunResult."""
    monkeypatch.setenv("PYTHONPATH", server_env()["PYTHONPATH"])
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")

    def run(*args):
        return pytester.runpytest_subprocess("-p", "modelarts_emulator.pytest_plugin", "-p", "no:cacheprovider", *args)

    return run


USER_TESTS = """
import os
import ssl
import urllib.request

from modelarts_emulator.scenario import load_file, resolve_scenario_path

PIDS = os.environ['PID_FILE']
# The demo scenario's jobs, counted from the shipped file.
DEMO_JOBS = len(load_file(resolve_scenario_path('demo'))['jobs'])


def test_first_sees_the_demo_jobs_and_changes_things(modelarts_emulator):
    emu = modelarts_emulator
    with open(PIDS, 'a') as handle:
        handle.write('%d\\n' % emu.process.pid)
    assert emu.url.startswith('https://127.0.0.1:') and emu.endpoint == emu.iam_endpoint == emu.url
    assert os.path.isfile(emu.ca_bundle) and emu.ca_bundle == emu.ca_file
    assert (emu.region, emu.project_id, emu.ak) == ('cn-north-4', 'c2078239586c89f12689d89fd66e9f9b', 'HPUAMAEMULATOR000001')
    assert emu.env() == {
        'HUAWEICLOUD_SDK_REGION': 'cn-north-4', 'HUAWEICLOUD_SDK_PROJECT_ID': 'c2078239586c89f12689d89fd66e9f9b',
        'HUAWEICLOUD_MODELARTS_ENDPOINT': emu.url, 'HUAWEICLOUD_SDK_IAM_ENDPOINT': emu.url,
        'HUAWEICLOUD_CA_BUNDLE': emu.ca_bundle,
        'HUAWEICLOUD_SDK_AK': 'HPUAMAEMULATOR000001', 'HUAWEICLOUD_SDK_SK': 'MaEmulatorSecretKey000000000000000000001'}
    assert emu.env('password')['HUAWEICLOUD_USERNAME'] == 'ci-robot'
    assert emu.connection('temporary')['security_token'] == emu.security_token
    assert len(emu.jobs()) == DEMO_JOBS
    job_id = emu.add_job(name='added', timeline=[{'phase': 'Running', 'seconds': 60}, 'Completed'])
    assert emu.add_fault(type='throttle', count=3) == 1
    assert emu.advance_clock(61) == 61
    assert {job['name']: job['phase'] for job in emu.jobs()}['added'] == 'Completed'
    context = ssl.create_default_context(cafile=emu.ca_bundle)
    request = urllib.request.Request(emu.url + '/v2/%s/training-jobs/%s' % (emu.project_id, job_id))
    try:
        urllib.request.urlopen(request, context=context, timeout=10)
    except urllib.error.HTTPError as exc:
        assert exc.code == 401          # unsigned: the gateway refuses it
    assert [entry['status'] for entry in emu.requests(path='/training-jobs/')] == [401]


def test_second_starts_from_the_startup_state(modelarts_emulator):
    with open(PIDS, 'a') as handle:
        handle.write('%d\\n' % modelarts_emulator.process.pid)
    assert sorted(job['name'] for job in modelarts_emulator.jobs())[0] == 'bert-intent-train'
    assert len(modelarts_emulator.jobs()) == DEMO_JOBS
    assert modelarts_emulator.faults() == [] and modelarts_emulator.requests() == []
    assert modelarts_emulator.state()['clock_offset'] == 0


def test_factory_starts_more(modelarts_emulator_factory, modelarts_emulator_server):
    other = modelarts_emulator_factory(scenario='empty', tls=False, extra_args=['--secret-key', 'AnotherSecretKey0000000000000000000000001'])
    with open(PIDS, 'a') as handle:
        handle.write('%d\\n' % other.process.pid)
    assert other.url.startswith('http://') and other.ca_bundle is None and other.url != modelarts_emulator_server.url
    assert other.jobs() == [] and other.sk == 'AnotherSecretKey0000000000000000000000001'
    assert 'HUAWEICLOUD_CA_BUNDLE' not in other.env()
"""


def _pids(path):
    return [int(line) for line in path.read_text().split()]


def _running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_users_tests_get_a_reset_emulator_per_test_and_it_stops_after(pytester, inner, tmp_path, monkeypatch):
    pids = tmp_path / "pids"
    monkeypatch.setenv("PID_FILE", str(pids))
    pytester.makepyfile(test_user=USER_TESTS)
    result = inner("-v")
    result.assert_outcomes(passed=3)
    session, again, extra = _pids(pids)
    assert session == again != extra  # one emulator for the session, one more from the factory
    assert not _running(session) and not _running(extra)


def test_options_fixture_picks_the_scenario_and_plain_http(pytester, inner):
    pytester.makeconftest("""
import pytest

@pytest.fixture(scope='session')
def modelarts_emulator_options():
    return {'scenario': 'empty', 'tls': False, 'extra_args': ['--region', 'eu-west-101']}
""")
    pytester.makepyfile(
        test_options="""
def test_it(modelarts_emulator):
    assert modelarts_emulator.url.startswith('http://127.0.0.1:') and modelarts_emulator.ca_bundle is None
    assert modelarts_emulator.jobs() == [] and modelarts_emulator.region == 'eu-west-101'
    assert modelarts_emulator.env()['HUAWEICLOUD_SDK_REGION'] == 'eu-west-101'
"""
    )
    inner().assert_outcomes(passed=1)


def test_a_start_that_fails_is_a_fixture_error_with_the_reason(pytester, inner):
    pytester.makeconftest("""
import pytest

@pytest.fixture(scope='session')
def modelarts_emulator_options():
    return {'scenario': 'no-such-scenario'}
""")
    pytester.makepyfile(
        test_broken="""
def test_it(modelarts_emulator):
    pass
"""
    )
    result = inner()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*emulator did not start (exit 2): modelarts-emulator: cannot start: scenario file not found: no-such-scenario*"])
