# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The user docs and the module's DOCUMENTATION state the v1 status -> phase table that the code uses.

``docs/module.md`` holds the Markdown table rendered by ``hacking/render_v1_status_table.py`` between
two HTML comment markers; the module's DOCUMENTATION lists the statuses as ``C(<n>) NAME, ... -> C(Phase)``
lines. Both are checked against ``phases.V1_STATUS_TABLE`` so a change to the mapping cannot leave
either behind.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re

import pytest
import yaml

from ansible_collections.modelarts.training.plugins.module_utils.job.jobs import FAILURE_REASON_RULES
from ansible_collections.modelarts.training.plugins.module_utils.job.phases import (
    PHASES,
    V1_STATUS_NAMES,
    V1_STATUS_PHASES,
    V1_STATUS_TABLE,
)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", "..", ".."))
MODULE_MD = os.path.join(ROOT, "docs", "module.md")
MODULE_FILE = os.path.join(ROOT, "plugins", "modules", "modelarts_training_job_info.py")


def _renderer():
    # Loaded by path: hacking/ is a directory of scripts, not a package.
    spec = importlib.util.spec_from_file_location("render_v1_status_table", os.path.join(ROOT, "hacking", "render_v1_status_table.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RENDERER = _renderer()


def v1_status_table_markdown():
    """The table as docs/module.md must hold it, rendered from the table the code uses."""
    return RENDERER.v1_status_table_markdown(V1_STATUS_TABLE)


START = "<!-- v1-status-table:start -->"
END = "<!-- v1-status-table:end -->"

# "C(1) INIT, C(2) IMAGE_CREATING -> C(Creating)" followed by optional commentary.
STATUS = re.compile(r"C\((\d+)\) ([A-Z][A-Z_]*)")
STATUS_LINE = re.compile(r"^\s*(C\(\d+\) [A-Z][A-Z_]*(?:\s*,\s*C\(\d+\) [A-Z][A-Z_]*)*)\s*->\s*C\(([A-Za-z]+)\)")


def marked_block(text, start=START, end=END):
    """The text between the start and end markers, without the newline after the start marker."""
    assert text.count(start) == 1, "expected exactly one %s marker" % start
    assert text.count(end) == 1, "expected exactly one %s marker" % end
    rest = text.partition(start)[2]
    block = rest.partition(end)[0]
    return block[1:] if block.startswith("\n") else block


def module_documentation(path=None):
    """The module's DOCUMENTATION, parsed as YAML, read from the source without importing it."""
    path = path or MODULE_FILE
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), filename=path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(target, ast.Name) and target.id == "DOCUMENTATION" for target in node.targets):
            return yaml.safe_load(ast.literal_eval(node.value))
    raise AssertionError("no DOCUMENTATION in %s" % path)


def status_lines(description):
    """``[(line, [(code, name), ...], phase)]`` for the description lines that map v1 statuses to a phase."""
    found = []
    for line in description:
        match = STATUS_LINE.match(line)
        if match:
            statuses = [(int(code), name) for code, name in STATUS.findall(match.group(1))]
            found.append((line, statuses, match.group(2)))
    return found


def status_mapping(description):
    """``{code: [(name, phase), ...]}`` as the description lines state it (a list, to catch duplicates)."""
    mapping = {}
    for _line, statuses, phase in status_lines(description):
        for code, name in statuses:
            mapping.setdefault(code, []).append((name, phase))
    return mapping


def test_module_md_table_matches_code():
    with open(MODULE_MD, encoding="utf-8") as handle:
        block = marked_block(handle.read())
    assert block == v1_status_table_markdown(), "docs/module.md is out of date: run hacking/render_v1_status_table.py --write (the table between %s and %s)" % (
        START,
        END,
    )


def test_module_md_states_the_failure_reason_rules():
    with open(MODULE_MD, encoding="utf-8") as handle:
        text = handle.read()
    for rule in FAILURE_REASON_RULES:
        assert rule in text, "docs/module.md lacks the failure_reason rule: %s" % rule


def test_module_md_table_has_every_status():
    # A guard on the guard: the generated table itself names every status 0-22 once.
    rows = [line for line in v1_status_table_markdown().splitlines() if re.match(r"^\| \d+ \|", line)]
    assert [int(row.split("|")[1]) for row in rows] == list(range(23))


def test_module_documentation_maps_every_v1_status_once():
    description = module_documentation()["description"]
    mapping = status_mapping(description)
    assert sorted(mapping) == list(range(23)), "statuses listed: %s" % sorted(mapping)
    for code, stated in sorted(mapping.items()):
        assert len(stated) == 1, "v1 status %d is listed %d times: %s" % (code, len(stated), stated)
        name, phase = stated[0]
        assert name == V1_STATUS_NAMES[code], "v1 status %d is named %s, the code says %s" % (code, name, V1_STATUS_NAMES[code])
        assert phase == V1_STATUS_PHASES[code], "v1 status %d %s -> %s, the code says %s" % (code, name, phase, V1_STATUS_PHASES[code])
        assert phase in PHASES


def test_module_documentation_names_the_out_of_range_rule():
    description = " ".join(module_documentation()["description"])
    assert "outside 0-22" in description


@pytest.mark.parametrize(
    "lines, problem",
    [
        (["C(1) INIT -> C(Creating)."], "missing"),
        (
            ["C(%d) %s -> C(%s)." % (code, V1_STATUS_NAMES[code], V1_STATUS_PHASES[code]) for code in range(23)] + ["C(10) COMPLETED -> C(Completed)."],
            "duplicate",
        ),
        (["C(%d) %s -> C(%s)." % (code, V1_STATUS_NAMES[code], "Completed" if code == 20 else V1_STATUS_PHASES[code]) for code in range(23)], "wrong phase"),
    ],
)
def test_parser_catches_drift(lines, problem):
    """The parser behind the DOCUMENTATION check sees a missing, a duplicated and a wrongly mapped status."""
    mapping = status_mapping(lines)
    if problem == "missing":
        assert sorted(mapping) != list(range(23))
    elif problem == "duplicate":
        assert len(mapping[10]) == 2
    else:
        assert mapping[20] == [("CHECK_RUNNING_COMPLETED", "Completed")] != [("CHECK_RUNNING_COMPLETED", V1_STATUS_PHASES[20])]


def test_marked_block_catches_drift():
    table = v1_status_table_markdown()
    broken = table.replace("| 20 | CHECK_RUNNING_COMPLETED | Pending |", "| 20 | CHECK_RUNNING_COMPLETED | Completed |")
    assert marked_block("intro\n%s\n%s%s\nmore\n" % (START, broken, END)) != table
    assert marked_block("intro\n%s\n%s%s\nmore\n" % (START, table, END)) == table


def test_v1_table_renders_for_docs():
    markdown = v1_status_table_markdown().splitlines()
    assert markdown[0] == "| status | name | phase | why |"
    assert len(markdown) == 2 + 23
    assert markdown[2 + 10].startswith("| 10 | COMPLETED | Completed |")
    lines = RENDERER.v1_status_doc_lines(V1_STATUS_TABLE)
    assert len(lines) == 23 and lines[3].startswith("C(3) IMAGE_FAILED -> C(Failed): ")


def test_renderer_reads_the_table_the_code_uses():
    # The renderer loads phases.py by path; it must be the same file the collection imports.
    assert RENDERER.v1_status_table_markdown() == v1_status_table_markdown()


def test_renderer_writes_between_the_markers():
    text = "intro\n%s\nold table\n%s\nmore\n" % (START, END)
    written = RENDERER.replace_marked_block(text, v1_status_table_markdown())
    assert marked_block(written) == v1_status_table_markdown()
    assert written.startswith("intro\n") and written.endswith("\nmore\n")
    assert RENDERER.replace_marked_block(written, v1_status_table_markdown()) == written
    assert (RENDERER.START, RENDERER.END) == (START, END)
