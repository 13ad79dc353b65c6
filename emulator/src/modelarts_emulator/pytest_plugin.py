# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""pytest plugin (entry point ``pytest11``): fixtures that run a ModelArts emulator for your tests.

Installed with the package, so a test file needs no import::

    import subprocess, os

    def test_my_playbook(modelarts_emulator):
        env = dict(os.environ, **modelarts_emulator.env())
        subprocess.run(['ansible-playbook', 'site.yml'], env=env, check=True)

Fixtures:

``modelarts_emulator``
    The session's emulator, reset to its startup scenario before the test (jobs, polls, faults,
    tokens, settings, request log and clock): each test starts from the same state.
``modelarts_emulator_server``
    The same emulator without the reset (session scope), for session-scoped fixtures of your own.
``modelarts_emulator_options``
    What the session's emulator is started with: a dict of :func:`~modelarts_emulator.launcher.start_emulator`
    arguments, by default ``{'scenario': None, 'tls': True}`` (the demo jobs over HTTPS). Override it
    in your ``conftest.py`` (session scope) to serve your own scenario.
``modelarts_emulator_factory``
    A function taking the same arguments that starts another emulator, stopped after the test.

Each emulator is a subprocess on a free 127.0.0.1 port (one per xdist worker); the object they give
is an :class:`~modelarts_emulator.launcher.EmulatorProcess`: ``url``, ``ca_bundle``/``ca_file``, the
credentials and project, ``env()``, ``connection()`` and the control client (``add_jobs``,
``add_fault``, ``advance_clock``, ``requests`` ...).
"""

import pytest

from .launcher import running_emulator, start_emulator

DEFAULT_OPTIONS = {"scenario": None, "tls": True}


def _start(options):
    # A start that fails (say, HTTPS without the [tls] extra) raises RuntimeError with the emulator's
    # one-line explanation, which pytest shows as the fixture's error.
    return start_emulator(**options)


@pytest.fixture(scope="session")
def modelarts_emulator_options():
    """Arguments of ``start_emulator`` for the session's emulator; override in a conftest.py to change them."""
    return dict(DEFAULT_OPTIONS)


@pytest.fixture(scope="session")
def modelarts_emulator_server(modelarts_emulator_options):  # pylint: disable=redefined-outer-name
    """The session's running emulator (not reset between tests)."""
    options = dict(DEFAULT_OPTIONS, **(modelarts_emulator_options or {}))
    emulator = _start(options)
    try:
        yield emulator
    finally:
        emulator.stop()


@pytest.fixture
def modelarts_emulator(modelarts_emulator_server):  # pylint: disable=redefined-outer-name
    """The session's emulator, reset to its startup scenario for this test, and again after it: what the test
    changed (jobs, faults, settings, expired keys and tokens) never reaches a later test that uses the server as it is."""
    modelarts_emulator_server.reset()
    yield modelarts_emulator_server
    modelarts_emulator_server.reset()


@pytest.fixture
def modelarts_emulator_factory():
    """``start(**options)`` starts one more emulator (``start_emulator`` arguments); all are stopped after the test."""
    started = []

    def start(**options):
        emulator = _start(dict(DEFAULT_OPTIONS, **options))
        started.append(emulator)
        return emulator

    yield start
    for emulator in reversed(started):
        emulator.stop()


def emulator_fixture(scope="session", name=None, **kwargs):
    """Return a pytest fixture that runs one emulator (``start_emulator`` arguments) for ``scope``.

    Example (in a conftest.py)::

        from modelarts_emulator.pytest_plugin import emulator_fixture
        integration_emulator = emulator_fixture(scope='session', scenario='integration', tls=True)

    The fixture takes the name of the variable it is assigned to (or ``name``). Do not assign it to
    a name starting with ``pytest_``: pytest would take it for a hook.
    """

    def _fixture():
        """A running emulator, stopped after the last test of the scope."""
        with running_emulator(**kwargs) as emu:
            yield emu

    return pytest.fixture(scope=scope, name=name)(_fixture) if name else pytest.fixture(scope=scope)(_fixture)
