# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render the v1 status -> phase table (plugins/module_utils/job/phases.py) for the docs.

Usage: ``.venv/bin/python hacking/render_v1_status_table.py [--write | --check]``.  Without options it
prints the Markdown table; ``--write`` puts it into docs/module.md between the
``<!-- v1-status-table:start -->``/``<!-- v1-status-table:end -->`` markers; ``--check`` writes nothing
and exits 1 when docs/module.md is stale.  ``tests/unit/plugins/module_utils/job/test_docs_sync.py``
loads this file to hold docs/module.md and the module's DOCUMENTATION to the code's table.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHASES_PY = os.path.join(ROOT, "plugins", "module_utils", "job", "phases.py")
MODULE_MD = os.path.join(ROOT, "docs", "module.md")
START = "<!-- v1-status-table:start -->"
END = "<!-- v1-status-table:end -->"


def _load_phases():
    # Loaded by path: phases.py is plain data, and this avoids needing the ansible_collections/ tree on sys.path.
    spec = importlib.util.spec_from_file_location("_modelarts_training_phases", PHASES_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def v1_status_table(table=None):
    """The v1 status table: ``(code, name, phase, why)`` rows, from phases.py unless given."""
    return _load_phases().V1_STATUS_TABLE if table is None else table


def v1_status_table_markdown(table=None):
    """Return the v1 status -> phase table as Markdown (header and one row per status)."""
    rows = ["| status | name | phase | why |", "|---|---|---|---|"]
    rows.extend("| %d | %s | %s | %s |" % row for row in v1_status_table(table))
    return "\n".join(rows) + "\n"


def v1_status_doc_lines(table=None):
    """Return the v1 status table as one line per status, for a module's DOCUMENTATION."""
    return ["C(%d) %s -> C(%s): %s." % row for row in v1_status_table(table)]


def replace_marked_block(text, block):
    """``text`` with the part between the START and END markers replaced by ``block``."""
    if text.count(START) != 1 or text.count(END) != 1:
        raise ValueError("expected exactly one %s and one %s marker" % (START, END))
    head, _start, rest = text.partition(START)
    _old, _end, tail = rest.partition(END)
    return "%s%s\n%s%s%s" % (head, START, block, END, tail)


def main(argv=None):
    """Print, write or check the table in docs/module.md; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="update docs/module.md")
    group.add_argument("--check", action="store_true", help="verify docs/module.md only; exit 1 if stale")
    args = parser.parse_args(argv)
    table = v1_status_table_markdown()
    if not (args.write or args.check):
        sys.stdout.write(table)
        return 0
    with open(MODULE_MD, encoding="utf-8") as handle:
        text = handle.read()
    wanted = replace_marked_block(text, table)
    if wanted == text:
        return 0
    if args.check:
        sys.stderr.write("docs/module.md is stale: run hacking/render_v1_status_table.py --write\n")
        return 1
    with open(MODULE_MD, "w", encoding="utf-8") as handle:
        handle.write(wanted)
    sys.stdout.write("wrote docs/module.md\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
