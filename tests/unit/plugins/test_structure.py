# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shape of the code (issue 39): no import cycle between module_utils files (nor between the emulator's modules),
lazy imports inside functions included, and no file under plugins/ over 700 lines of code nor class over 250.

A line of code is a line holding a token other than a comment: blank lines, comments and docstrings do not count, nor
do a module's documentation strings (``DOCUMENTATION``, ``EXAMPLES``, ``RETURN``), the doc fragments and the schema
data (the ``*_SCHEMA`` assignments of ``schemas.py`` and ``schema_data.py``)."""

from __future__ import annotations

import ast
import io
import os
import tokenize

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(ROOT, "plugins")
MODULE_UTILS = os.path.join(PLUGINS, "module_utils")
EMULATOR = os.path.join(ROOT, "emulator", "src", "modelarts_emulator")
PACKAGE = "ansible_collections.modelarts.training.plugins.module_utils"

MAX_FILE_LINES = 700
MAX_CLASS_LINES = 250
DOC_STRINGS = frozenset(("DOCUMENTATION", "EXAMPLES", "RETURN"))
SKIPPED_TOKENS = frozenset((tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER))


def _python_files(top):
    for folder, _dirs, files in os.walk(top):
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(folder, name)


def _parse(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    return text, ast.parse(text, path)


# -- imports ------------------------------------------------------------------------------------------------------


def _imported(tree, names, package=None):
    """The modules of ``names`` that ``tree`` imports anywhere (inside functions too).  ``package``: the absolute
    package its own files are imported from; without it, relative imports (``from . import x``, ``from .x import y``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if package and alias.name.startswith(package + "."):
                    found.add(alias.name[len(package) + 1 :].split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if package is not None and node.level == 0 and base == package:
                found.update(alias.name for alias in node.names)
            elif package is not None and node.level == 0 and base.startswith(package + "."):
                found.add(base[len(package) + 1 :].split(".")[0])
            elif package is None and node.level == 1 and base:
                found.add(base.split(".")[0])
            elif package is None and node.level == 1:
                found.update(alias.name for alias in node.names)
    return found & names


def _graph(folder, package):
    names = set(os.path.splitext(name)[0] for name in os.listdir(folder) if name.endswith(".py"))
    return dict((name, _imported(_parse(os.path.join(folder, name + ".py"))[1], names, package)) for name in sorted(names))


def find_cycle(graph):
    """One import cycle of ``graph`` (``{module: imported modules}``) as a list ``[a, b, ..., a]``, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for child in sorted(graph.get(node, ())):
            if state.get(child) == "open":
                return path[path.index(child) :] + [child]
            if child not in state:
                cycle = visit(child, path + [child])
                if cycle:
                    return cycle
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start, [start])
            if cycle:
                return cycle
    return None


def test_find_cycle_sees_a_lazy_circle_and_a_longer_one():
    lazy = ast.parse("def f():\n    from %s import b\n" % PACKAGE)
    assert _imported(lazy, {"b"}, PACKAGE) == {"b"}
    assert find_cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_between_module_utils_files():
    graph = _graph(MODULE_UTILS, PACKAGE)
    assert graph["client"] >= {"transport", "endpoints", "credentials"}  # the parser reads this package's imports
    assert "credential_sources" in graph["client"]  # ... lazy ones included
    assert find_cycle(graph) is None, "import cycle between module_utils files: %s" % " -> ".join(find_cycle(graph))


@pytest.mark.skipif(not os.path.isdir(EMULATOR), reason="the emulator package is not in this copy")
def test_no_import_cycle_between_the_emulators_modules():
    graph = _graph(EMULATOR, None)
    assert "responses" in graph["routes"]
    assert find_cycle(graph) is None, "import cycle between the emulator's modules: %s" % " -> ".join(find_cycle(graph))


# -- sizes --------------------------------------------------------------------------------------------------------


def _not_code(tree, path):
    """Line numbers of docstrings, module documentation strings and schema data."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    schemas = os.path.basename(path) in ("schemas.py", "schema_data.py")
    for node in tree.body:
        if isinstance(node, ast.Assign) and all(isinstance(target, ast.Name) for target in node.targets):
            names = [target.id for target in node.targets]
            if any(name in DOC_STRINGS or (schemas and name.endswith("_SCHEMA")) for name in names):
                lines.update(range(node.lineno, node.end_lineno + 1))
    return lines


def code_lines(text, tree, path):
    """The set of line numbers of ``text`` that hold code (see the module's docstring)."""
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in SKIPPED_TOKENS:
            lines.update(range(token.start[0], token.end[0] + 1))
    return lines - _not_code(tree, path)


def test_code_lines_leave_out_blanks_comments_docstrings_and_documentation():
    text = 'DOCUMENTATION = """\nx\n"""\n\n\nclass A:\n    """Doc.\n\n    more\n    """\n\n    # a comment\n    def f(self):\n        return 1\n'
    assert sorted(code_lines(text, ast.parse(text), "m.py")) == [6, 13, 14]


def _measured():
    for path in _python_files(PLUGINS):
        if os.sep + "doc_fragments" + os.sep in path:
            continue
        text, tree = _parse(path)
        lines = code_lines(text, tree, path)
        classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
        classes = [(node.name, len([line for line in lines if node.lineno <= line <= node.end_lineno])) for node in classes]
        yield os.path.relpath(path, ROOT), len(lines), classes


def test_no_file_under_plugins_over_700_lines_of_code_nor_class_over_250():
    measured = list(_measured())
    assert any(path.endswith("client.py") for path, _lines, _classes in measured)
    too_long = ["%s: %d lines of code" % (path, lines) for path, lines, _classes in measured if lines > MAX_FILE_LINES]
    classes = [(path, name, size) for path, _lines, found in measured for name, size in found]
    too_long += ["%s: class %s, %d lines of code" % (path, name, size) for path, name, size in classes if size > MAX_CLASS_LINES]
    assert not too_long, "over %d lines a file or %d a class: %s" % (MAX_FILE_LINES, MAX_CLASS_LINES, "; ".join(too_long))
