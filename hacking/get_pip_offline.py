# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in for get-pip.py that needs no download host.

ansible-test bootstraps pip in each virtual environment it creates by running
``get_pip_<version>.py`` from ``~/.ansible/test/cache/``, downloading it first
when it is absent.  Where that host cannot be reached, ``make`` installs this
script under that name: it runs the pip wheel that the interpreter's own
``ensurepip`` bundles and lets it install the requested pip from the package
index, exactly as get-pip.py would.
"""

from __future__ import annotations

import glob
import os
import sys

import ensurepip


def main():
    """Install the packages named on the command line (``pip==X`` ...) with the bundled pip."""
    bundled = sorted(glob.glob(os.path.join(os.path.dirname(ensurepip.__file__), "_bundled", "pip-*.whl")))
    if not bundled:
        sys.exit("get_pip_offline: this Python has no ensurepip wheel to bootstrap from")
    sys.path.insert(0, bundled[-1])
    # get-pip.py understands these two; pip install does not.
    args = [arg for arg in sys.argv[1:] if arg not in ("--no-setuptools", "--no-wheel")]
    from pip._internal.cli.main import main as pip_main  # pylint: disable=import-outside-toplevel

    sys.exit(pip_main(["install", "--ignore-installed"] + args))


if __name__ == "__main__":
    main()
