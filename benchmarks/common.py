# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared helpers of the benchmarks: paths, job ids, statistics, machine facts, staging, the emulator."""

import json
import os
import platform
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.path.join(ROOT, 'benchmarks')
RESULTS_DIR = os.path.join(BENCH_DIR, 'results')
CALLBACK_DIR = os.path.join(BENCH_DIR, 'callback_plugins')
sys.path.insert(0, os.path.join(ROOT, 'emulator', 'src'))  # the emulator package of this checkout

from modelarts_emulator.launcher import running_emulator  # noqa: E402  pylint: disable=wrong-import-position,unused-import

# The integration scenario holds 220 Completed v2 jobs with these ids (bulk-001 .. bulk-220).
V2_IDS = ['5e1f0000-0000-4000-8000-%012d' % n for n in range(1, 221)]
SCENARIO = 'integration'


def summarize(samples):
    """Median and spread of a list of numbers: ``{n, median, min, max, q1, q3}`` (None when empty)."""
    values = sorted(float(value) for value in samples)
    if not values:
        return None
    if len(values) >= 4:
        q1, _q2, q3 = statistics.quantiles(values, n=4, method='inclusive')
    else:
        q1, q3 = values[0], values[-1]
    return {'n': len(values), 'median': statistics.median(values), 'min': values[0], 'max': values[-1], 'q1': q1, 'q3': q3}


def ratio_summary(numerators, denominators):
    """Paired ratios ``numerators[i] / denominators[i]`` (one per round), summarised."""
    pairs = [(a, b) for a, b in zip(numerators, denominators) if a is not None and b]
    return summarize([a / b for a, b in pairs])


def fmt_spread(summary, unit='', scale=1.0, digits=3):
    """``median (min-max)`` of a summary, scaled; ``n/a`` when missing."""
    if not summary:
        return 'n/a'
    form = '%%.%df' % digits
    return '%s%s (%s-%s)' % (form % (summary['median'] * scale), unit, form % (summary['min'] * scale), form % (summary['max'] * scale))


def _command_output(command):
    try:
        return subprocess.run(command, capture_output=True, text=True, check=False, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def cpu_model():
    """The CPU model from /proc/cpuinfo, or the platform's processor string."""
    try:
        with open('/proc/cpuinfo', encoding='utf-8') as handle:
            for line in handle:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def machine_facts(python):
    """Facts that qualify every figure: cores, CPU, Python, ansible-core and library versions, load."""
    versions = _command_output([python, '-c', (
        'import json, importlib.metadata as m\n'
        'names = ["ansible-core", "requests", "urllib3", "jsonschema", "huaweicloudsdkcore", "huaweicloudsdkmodelarts", "matplotlib"]\n'
        'out = {}\n'
        'for name in names:\n'
        '    try:\n'
        '        out[name] = m.version(name)\n'
        '    except m.PackageNotFoundError:\n'
        '        out[name] = None\n'
        'print(json.dumps(out))\n')])
    try:
        packages = json.loads(versions) if versions else None
    except ValueError:
        packages = None
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        'nproc': _command_output(['nproc']),
        'cpu': cpu_model(),
        'python': _command_output([python, '-V']),
        'platform': platform.platform(),
        'packages': packages,
        'loadavg_at_start': load,
    }


def stage_collection(base):
    """Copy this checkout to ``base/ansible_collections/modelarts/training``; return ``base``."""
    subprocess.run([os.path.join(ROOT, 'hacking', 'stage_collection.sh'), base], check=True, stdout=subprocess.DEVNULL)
    return base


def import_staged(base):
    """Make the staged collection importable as ``ansible_collections.modelarts.training`` in this process."""
    if base not in sys.path:
        sys.path.insert(0, base)


def start_emulator():
    """A context manager running the HTTPS emulator (integration scenario) on 127.0.0.1."""
    return running_emulator(scenario=SCENARIO, tls=True)


class simulated_latency:  # pylint: disable=invalid-name,too-few-public-methods
    """Context manager: every v2 job GET stalls ``seconds`` in the emulator (a ``delay`` fault, count -1).

    The emulator serves each request on its own thread, so concurrent requests stall in parallel,
    as they would on a distant service. The fault is removed on exit.
    """

    def __init__(self, emu, seconds):
        self._emu = emu
        self._seconds = seconds
        self._fault = None

    def __enter__(self):
        self._fault = self._emu.add_fault(type='delay', seconds=self._seconds, count=-1, target='v2')
        return self

    def __exit__(self, *exc):
        self._emu.control('DELETE', '/faults/%d' % self._fault)
        return False
