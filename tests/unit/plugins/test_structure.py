# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shape of the code (issue 39): no import cycle between module_utils files (nor between the emulator's modules),
lazy imports inside functions included, and no file under plugins/ over 700 lines of code nor class over 250.  The
house (issue 58): module_utils in packages whose imports run one way, no file below the door taking the raw options.

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
    graph = _house_graph()
    assert graph["service.client"] >= {"service.transport", "service.endpoints", "service.credentials"}  # the parser reads this package's imports
    assert "service.credential_sources" in graph["service.client"]  # ... lazy ones included
    assert find_cycle(graph) is None, "import cycle between module_utils files: %s" % " -> ".join(find_cycle(graph))


# -- the house (issue 58): packages that show the architecture, imports one way ----------------------------------

# The floors of plugins/module_utils, lowest first: a file imports files of its own floor and of floors below it,
# never one above (waiting and results stand side by side: neither imports the other).  The shared ground is two files
# at the top; every other floor - the door included - is a package whose section of README.md says what it holds and,
# on a line "May import: ...", the floors below it - the test reads that line, so the text and this table cannot drift.
GROUND = ("errors", "text")
FLOORS = {"ground": 0, "service": 1, "job": 2, "waiting": 3, "results": 3, "door": 4, "watch": 5}
MAX_FOLDER_FILES = 12


def _floor(module):
    top = module.split(".")[0]
    return "ground" if top in GROUND else top


def _house_modules(folder=MODULE_UTILS):
    """``{dotted name below module_utils: path}``; a package's ``__init__.py`` is the package's own name."""
    modules = {}
    for path in _python_files(folder):
        name = os.path.relpath(path, folder)[: -len(".py")].replace(os.sep, ".")
        if name == "__init__" or name.endswith(".__init__"):
            name = name[: -len("__init__")].rstrip(".")
        modules[name] = path
    return modules


def _house_imports(tree, modules, package=PACKAGE):
    """The modules of ``modules`` that ``tree`` imports anywhere (lazy imports inside functions too): ``from P.a import
    b`` is ``a.b`` when that is a module, else ``a`` (a name of ``a``); ``from P.a.b import x`` is ``a.b``."""

    def deepest(dotted):
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            if ".".join(parts[:end]) in modules:
                return ".".join(parts[:end])
        return None

    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(deepest(alias.name[len(package) + 1 :]) for alias in node.names if alias.name.startswith(package + "."))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (node.module + ".").startswith(package + "."):
            base = node.module[len(package) + 1 :]
            for alias in node.names:
                full = "%s.%s" % (base, alias.name) if base else alias.name
                found.add(full if full in modules else deepest(base) if base else None)
    return found - {None, ""}


def _house_graph(folder=MODULE_UTILS, package=PACKAGE):
    modules = _house_modules(folder)
    return dict((name, _house_imports(_parse(path)[1], modules, package) - {name}) for name, path in sorted(modules.items()))


def upward_imports(graph):
    """``["a imports b", ...]`` for each import of a floor above the importer's, or beside it (waiting and results)."""
    found = []
    for module, imported in sorted(graph.items()):
        for other in sorted(imported):
            here, there = _floor(module), _floor(other)
            if here != there and FLOORS[there] >= FLOORS[here]:
                found.append("%s (%s) imports %s (%s)" % (module, here, other, there))
    return found


def mutual_imports(graph):
    return ["%s <-> %s" % (a, b) for a in sorted(graph) for b in sorted(graph[a]) if a < b and a in graph.get(b, ())]


def params_below_the_door(tree):
    """Functions of ``tree`` with a parameter named ``params`` (the raw option dict): ``["f(line)", ...]``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = node.args
            names = [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
            names += [a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None]
            if "params" in names:
                found.append("%s(line %d)" % (getattr(node, "name", "lambda"), node.lineno))
    return found


def may_import(docstring):
    """The floors a package's docstring says it may import (its line ``May import: a, b, c.``), or None."""
    for line in (docstring or "").splitlines():
        if line.strip().lower().startswith("may import:"):
            return sorted(word.strip(" .`") for word in line.split(":", 1)[1].split(",") if word.strip(" .`"))
    return None


def test_the_house_checks_see_an_upward_import_a_pair_a_params_argument_and_the_may_import_line():
    upward = upward_imports({"service.client": {"door.options"}, "job.jobs": {"service.transport", "text"}})
    assert upward == ["service.client (service) imports door.options (door)"]
    assert upward_imports({"results.metrics": {"waiting.waiter"}}) == ["results.metrics (results) imports waiting.waiter (waiting)"]
    assert mutual_imports({"job.a": {"job.b"}, "job.b": {"job.a"}, "job.c": {"job.a"}}) == ["job.a <-> job.b"]
    tree = ast.parse("def f(connection):\n    pass\n\n\nclass C:\n    def g(self, *, params=None):\n        pass\n")
    assert params_below_the_door(tree) == ["g(line 6)"]
    modules = {"service": "", "service.client": "", "door": "", "door.options": ""}
    lazy = ast.parse("def f():\n    from %s.service import client\n    from %s.service.client import X\n    import %s.door.options\n" % ((PACKAGE,) * 3))
    assert _house_imports(lazy, modules) == {"service.client", "door.options"}
    assert may_import("What lives here.\n\nMay import: ground, `service`.\n") == ["ground", "service"]


def hidden_imports(tree):
    """Imports of ``tree`` the floor checks cannot read: relative ones (``from .. import query``) and
    ``importlib.import_module``/``__import__`` calls; ``["line N: ...", ...]``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            found.append("line %d: a relative import (from %s%s)" % (node.lineno, "." * node.level, node.module or ""))
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in ("import_module", "__import__"):
                found.append("line %d: %s()" % (node.lineno, name))
    return found


def test_the_floor_checks_see_every_import_no_relative_or_dynamic_one():
    """The floors are checked on absolute imports (test_structure's parser); a relative or dynamic import would pass
    them unseen, so module_utils has none."""
    assert hidden_imports(ast.parse("from .. import query\nimport importlib\nimportlib.import_module('x')\n")) == [
        "line 1: a relative import (from ..)",
        "line 3: import_module()",
    ]
    found = []
    for name, path in sorted(_house_modules().items()):
        found += ["%s: %s" % (name, each) for each in hidden_imports(_parse(path)[1])]
    assert not found, "imports the floor checks cannot see: %s" % "; ".join(found)


def test_module_utils_packages_import_only_the_floors_below_them():
    graph = _house_graph()
    assert set(_floor(name) for name in graph) == set(FLOORS), sorted(graph)
    assert not upward_imports(graph), "module_utils imports that run upwards: %s" % "; ".join(upward_imports(graph))


def test_no_two_module_utils_files_import_each_other():
    pairs = mutual_imports(_house_graph())
    assert not pairs, "files importing each other: %s" % "; ".join(pairs)


def test_no_file_below_the_door_receives_the_raw_option_dict():
    """Options are resolved once at the door into typed parts: no function below it takes ``params``."""
    found = []
    for name, path in sorted(_house_modules().items()):
        if FLOORS[_floor(name)] < FLOORS["door"]:
            found += ["%s: %s" % (name, each) for each in params_below_the_door(_parse(path)[1])]
    assert not found, "functions below the door taking params: %s" % "; ".join(found)


HOUSE_README = os.path.join(MODULE_UTILS, "README.md")


def package_sections(text):
    """``{package: its section's text}`` of plugins/module_utils/README.md (a ``## <package>/`` heading each)."""
    sections, current = {}, None
    for line in text.splitlines():
        if line.startswith("## ") and line.rstrip().endswith("/"):
            current = line[3:].strip().rstrip("/").strip("`")
            sections[current] = ""
        elif line.startswith("#"):
            current = None
        elif current is not None:
            sections[current] += line + "\n"
    return sections


def test_each_package_says_what_it_holds_and_may_import_the_floors_below_it():
    """Each package is a folder with an empty ``__init__.py`` (ansible-core 2.16's sanity test empty-init requires it
    under module_utils), and a section of plugins/module_utils/README.md that says what it holds and, on its
    ``May import:`` line, the floors below it."""
    assert package_sections("# t\n\n## job/\n\nWhat a job is.\n\nMay import: ground.\n## x\nno\n") == {"job": "\nWhat a job is.\n\nMay import: ground.\n"}
    modules = _house_modules()
    packages = sorted(name for name in modules if "." not in name and _floor(name) != "ground")
    assert packages == sorted(floor for floor in FLOORS if floor != "ground")
    with open(HOUSE_README, encoding="utf-8") as handle:
        sections = package_sections(handle.read())
    assert sorted(sections) == packages, "plugins/module_utils/README.md must have a section for each package and no other"
    for package in packages:
        path = modules[package]
        assert os.path.basename(path) == "__init__.py", "%s is not a package" % package
        assert os.path.getsize(path) == 0, "%s/__init__.py must be empty (ansible-test sanity empty-init on ansible-core 2.16)" % package
        text = sections[package]
        assert len(text.split()) >= 12, "the README's section of %s/ must say in a few lines what lives there" % package
        below = sorted(floor for floor, level in FLOORS.items() if level < FLOORS[package])
        assert may_import(text) == below, "the README's section of %s/: its 'May import:' line must name %s" % (package, ", ".join(below))


def test_no_module_utils_folder_over_12_files_and_only_the_ground_and_the_packages_at_the_top():
    for folder, dirs, files in os.walk(MODULE_UTILS):
        dirs[:] = [name for name in dirs if name != "__pycache__"]
        assert len(files) <= MAX_FOLDER_FILES, "%s holds %d files" % (os.path.relpath(folder, ROOT), len(files))
    top = sorted(name[:-3] for name in os.listdir(MODULE_UTILS) if name.endswith(".py"))
    assert top == sorted(GROUND), top


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
