# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the ansible-test integration targets against a ModelArts emulator started for the run.

Starts the emulator over HTTPS with the integration scenario, writes its URL,
CA and credentials to ``tests/integration/integration_config.yml`` (ansible-test
hands those variables to every target), runs ``ansible-test integration`` with
the arguments given, and stops the emulator whatever happens.  Run it from the
collection root (the staged copy); ``make integration`` does.
"""

import argparse
import os
import subprocess
import sys

import yaml

from modelarts_emulator.launcher import running_emulator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


CONFIG = os.path.join(ROOT, "tests", "integration", "integration_config.yml")


def emulator_vars(emu):
    """The variables the targets read, all prefixed ``emulator_``."""
    return {
        "emulator_url": emu.url,
        "emulator_ca_file": emu.ca_file,
        "emulator_admin_token": emu.admin_token,
        "emulator_region": emu.region,
        "emulator_project_id": emu.project_id,
        "emulator_ak": emu.ak,
        "emulator_sk": emu.sk,
        "emulator_temp_ak": emu.temp_ak,
        "emulator_temp_sk": emu.temp_sk,
        "emulator_security_token": emu.security_token,
        "emulator_username": emu.username,
        "emulator_password": emu.password,
        "emulator_domain_name": emu.domain_name,
        "emulator_second_project": emu.second_project,
        "emulator_other_project_id": emu.other.project_id,
        "emulator_other_ak": emu.other.ak,
        "emulator_other_sk": emu.other.sk,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--python", default="3.11", help="Python version for ansible-test")
    parser.add_argument("targets", nargs="*", help="targets to run (default: all)")
    args = parser.parse_args()
    with running_emulator(scenario="integration", tls=True) as emu:
        with open(CONFIG, "w") as handle:
            yaml.safe_dump(emulator_vars(emu), handle, default_flow_style=False)
        command = [
            os.path.join(os.path.dirname(sys.executable), "ansible-test"),
            "integration",
            "--venv",
            "--requirements",
            "--python",
            args.python,
            "--color",
            "no",
        ] + args.targets
        try:
            return subprocess.call(command, cwd=ROOT)
        finally:
            os.unlink(CONFIG)


if __name__ == "__main__":
    sys.exit(main())
