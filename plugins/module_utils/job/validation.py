# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""JSON-schema validation of API documents, with every error reported by JSON path.

``jsonschema`` is optional at import time so that a module can report it with
``missing_required_lib('jsonschema')`` (``HAS_JSONSCHEMA``/``JSONSCHEMA_IMPORT_ERROR``).
"""

from __future__ import annotations

import importlib.util
import re
import traceback

from ansible_collections.modelarts.training.plugins.module_utils.text import describe_value, truncate

# jsonschema takes tens of milliseconds to import, and a valid document (every poll of
# every job, normally) never needs it: the pre-check below decides validity alone. So it
# is only looked for here, and imported the first time a document needs its errors listed.
try:
    HAS_JSONSCHEMA = importlib.util.find_spec("jsonschema") is not None
except (ImportError, ValueError):
    HAS_JSONSCHEMA = False
JSONSCHEMA_IMPORT_ERROR = None if HAS_JSONSCHEMA else "ModuleNotFoundError: No module named 'jsonschema'"
Draft202012Validator = None
ValidationError = None
_extend_validator = None


def _load_jsonschema():
    """Import jsonschema on first use; False when it cannot be imported."""
    global Draft202012Validator, ValidationError, _extend_validator, HAS_JSONSCHEMA, JSONSCHEMA_IMPORT_ERROR  # pylint: disable=global-statement
    if Draft202012Validator is not None:
        return True
    if not HAS_JSONSCHEMA:
        return False
    try:
        from jsonschema import Draft202012Validator as validator_class  # pylint: disable=import-outside-toplevel
        from jsonschema.exceptions import ValidationError as error_class  # pylint: disable=import-outside-toplevel
        from jsonschema.validators import extend  # pylint: disable=import-outside-toplevel
    except ImportError:
        HAS_JSONSCHEMA = False
        JSONSCHEMA_IMPORT_ERROR = traceback.format_exc()
        return False
    Draft202012Validator, ValidationError, _extend_validator = validator_class, error_class, extend
    return True


# What the collection does with a document that breaks its schema (the ``validate`` option):
# strict fails, warn reports the errors in the item, off skips the schema.
VALIDATE_MODES = ("strict", "warn", "off")

MAX_KEY_CHARS = 64
MAX_MESSAGE_CHARS = 300
STR_ERRORS_SHOWN = 10

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class MissingJsonSchemaError(RuntimeError):
    """Validation was asked for but the ``jsonschema`` library is not importable."""


class SchemaValidationError(Exception):
    """A document broke its JSON schema while ``validate=strict``.

    ``job_ref`` names the job (id, name or v1 job/version), ``errors`` is the full list of
    ``{path, message}``, ``api_version`` says which schema was used and ``item`` (when given)
    is the normalised item, so a caller can still report the job's last state.  ``str()`` is
    bounded: it lists the first few errors and counts the rest.
    """

    def __init__(self, job_ref, errors, api_version=None, item=None):
        self.job_ref = job_ref
        self.errors = list(errors)
        self.api_version = api_version
        self.item = item
        super().__init__(self._summary())

    def _summary(self):
        schema = "the %s schema" % self.api_version if self.api_version else "its schema"
        head = "training job %s: the response does not match %s (%d error%s)" % (
            truncate(str(self.job_ref), 200),
            schema,
            len(self.errors),
            "" if len(self.errors) == 1 else "s",
        )
        shown = ["%s: %s" % (e.get("path"), truncate(str(e.get("message")), 160)) for e in self.errors[:STR_ERRORS_SHOWN]]
        rest = len(self.errors) - len(shown)
        if rest > 0:
            shown.append("... and %d more" % rest)
        return head + ": " + "; ".join(shown) if shown else head


def _path_key(key):
    if isinstance(key, int) and not isinstance(key, bool):
        return "[%d]" % key
    text = str(key)
    if len(text) <= MAX_KEY_CHARS and _IDENTIFIER.match(text):
        return "." + text
    text = truncate(text, MAX_KEY_CHARS)
    return "['%s']" % text.replace("\\", "\\\\").replace("'", "\\'")


def json_path(parts):
    """Render path parts (keys and indexes) as ``$.a.b[0]['odd key']``."""
    return "$" + "".join(_path_key(part) for part in parts)


def _path_sort_key(parts):
    return tuple((0, part, "") if isinstance(part, int) and not isinstance(part, bool) else (1, 0, str(part)) for part in parts)


# The stock keyword implementations build their message with repr(instance) eagerly; these
# replacements keep messages short for huge or deeply nested values.
def _type_keyword(validator, types, instance, schema):
    types = types if isinstance(types, list) else [types]
    # "null" is left out of the message: every optional field accepts it, and a field that is not
    # null says the same thing with or without it (as does a nullable reference, see _null_branch).
    shown = [each for each in types if each != "null"] or types
    if not _is_declared_type(validator, instance, schema):
        yield ValidationError("%s is not of type %s" % (describe_value(instance), ", ".join(repr(t) for t in shown)))


def _is_declared_type(validator, instance, schema):
    types = schema.get("type")
    if types is None:
        return True
    return any(validator.is_type(instance, name) for name in (types if isinstance(types, list) else [types]))


def _enum_keyword(validator, enums, instance, schema):
    # A value of the wrong type is already reported once by "type"; repeating it as
    # "not one of" would only add noise at the same path.
    if not _is_declared_type(validator, instance, schema):
        return
    for allowed in enums:
        # bool is an int in Python; JSON keeps them apart (true is not 1).
        if isinstance(allowed, bool) == isinstance(instance, bool) and allowed == instance:
            return
    shown = ", ".join(describe_value(each, 20) for each in enums[:30])
    yield ValidationError("%s is not one of [%s%s]" % (describe_value(instance), shown, ", ..." if len(enums) > 30 else ""))


def _minimum_keyword(validator, minimum, instance, schema):
    if validator.is_type(instance, "number") and instance < minimum:
        yield ValidationError("%s is less than the minimum of %r" % (describe_value(instance), minimum))


def _maximum_keyword(validator, maximum, instance, schema):
    if validator.is_type(instance, "number") and instance > maximum:
        yield ValidationError("%s is greater than the maximum of %r" % (describe_value(instance), maximum))


def _bounded_validator_class():
    return _extend_validator(
        Draft202012Validator,
        validators={
            "type": _type_keyword,
            "enum": _enum_keyword,
            "minimum": _minimum_keyword,
            "maximum": _maximum_keyword,
        },
    )


# The pre-check: a compiled validity test for the keywords below, used because jsonschema is slow
# for these documents (about 1 ms for the documented v2 example and 7 ms for a 12 KB document with
# every SDK field, against 0.03 and 0.2 ms here; see hacking/time_validation.py).  It answers
# "valid or not" exactly as jsonschema does for a schema made only of these keywords (the unit tests
# compare the two at every path of the documented examples); a schema with any other keyword is
# validated by jsonschema alone, and jsonschema always lists the errors.  Every keyword of a node
# applies, ``$ref`` included (draft 2020-12 no longer ignores the siblings of ``$ref``).
_FAST_KEYWORDS = frozenset(
    (
        "$schema",
        "$id",
        "$defs",
        "$ref",
        "anyOf",
        "title",
        "description",
        "type",
        "enum",
        "required",
        "properties",
        "items",
        "additionalProperties",
        "minimum",
        "maximum",
    )
)
_FAST_TYPES = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "integer": lambda value: not isinstance(value, bool) and (isinstance(value, int) or (isinstance(value, float) and value.is_integer())),
}


def _fast_supported(node, root):
    """Whether the fast pre-check can decide validity for every part of ``node``."""
    if not isinstance(node, dict) or not set(node) <= _FAST_KEYWORDS:
        return False
    ref = node.get("$ref")
    if ref is not None and not (isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in root.get("$defs", {})):
        return False
    types = node.get("type", [])
    if any(name not in _FAST_TYPES for name in (types if isinstance(types, list) else [types])):
        return False
    if any(isinstance(each, (dict, list)) for each in node.get("enum", [])):
        return False
    if "anyOf" in node and not (isinstance(node["anyOf"], list) and node["anyOf"]):
        return False
    children = list(node.get("properties", {}).values()) + list(node.get("$defs", {}).values()) + list(node.get("anyOf", []))
    children += [node[key] for key in ("items", "additionalProperties") if key in node]
    return all(child is False if child is False else _fast_supported(child, root) for child in children)


def _type_test(node):
    types = node.get("type")
    if types is None:
        return None
    names = types if isinstance(types, list) else [types]
    tests = [_FAST_TYPES[name] for name in names if name != "null"]
    if "null" in names:
        # The common nullable field: one type or null.
        if not tests:
            return _FAST_TYPES["null"]
        if len(tests) == 1:
            only = tests[0]
            return lambda value: value is None or only(value)
        tests.append(_FAST_TYPES["null"])
    return _any_of(tests)


def _enum_test(node):
    if "enum" not in node:
        return None
    # jsonschema compares enum members by value, except that booleans never equal numbers.
    flags = frozenset(each for each in node["enum"] if isinstance(each, bool))
    others = frozenset(each for each in node["enum"] if not isinstance(each, bool))

    def test(value):
        try:
            return value in flags if isinstance(value, bool) else value in others
        except TypeError:  # an unhashable instance (object or array) is in no scalar enum
            return False

    return test


def _bounds_test(node):
    low, high = node.get("minimum"), node.get("maximum")
    if low is None and high is None:
        return None
    is_number = _FAST_TYPES["number"]
    return lambda value: not is_number(value) or ((low is None or value >= low) and (high is None or value <= high))


def _all_of(tests):
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        first, second = tests
        return lambda value: first(value) and second(value)

    def test(value):
        for check in tests:
            if not check(value):
                return False
        return True

    return test


def _any_of(tests):
    if len(tests) == 1:
        return tests[0]

    def test(value):
        for check in tests:
            if check(value):
                return True
        return False

    return test


class _FastChecker(object):
    """A schema turned once into nested closures: deciding validity is then plain function calls.

    It answers exactly like jsonschema for schemas ``_fast_supported`` accepts, without
    collecting errors (jsonschema does that when a document is not valid).
    """

    def __init__(self, root):
        self.root = root
        self.defs = {}

    def compile(self, node):
        """The validity test of one schema node: every keyword of the node must hold."""
        tests = [
            test
            for test in (
                self._ref_test(node),
                self._any_of_test(node),
                _type_test(node),
                _enum_test(node),
                _bounds_test(node),
                self._object_test(node),
                self._items_test(node),
            )
            if test is not None
        ]
        return _all_of(tests) if tests else (lambda value: True)

    def _ref_test(self, node):
        if "$ref" not in node:
            return None
        name = node["$ref"][8:]
        if name not in self.defs:
            self.defs[name] = None  # a placeholder, for recursive definitions
            self.defs[name] = self.compile(self.root["$defs"][name])
        if self.defs[name] is not None:
            return self.defs[name]
        defs = self.defs

        def follow(value):
            # A recursive definition: still a placeholder now, looked up at call time.
            return defs[name](value)

        return follow

    def _any_of_test(self, node):
        if "anyOf" not in node:
            return None
        branches = [self.compile(branch) for branch in node["anyOf"]]
        if len(branches) == 2 and {"type": "null"} in node["anyOf"]:
            # A nullable reference: null, or valid against the other branch.
            other = branches[1 - node["anyOf"].index({"type": "null"})]
            return lambda value: value is None or other(value)
        return _any_of(branches)

    def _items_test(self, node):
        if "items" not in node:
            return None
        if node["items"] is False:
            return lambda value: not isinstance(value, list) or not value
        item_test = self.compile(node["items"])

        def test(value):
            if isinstance(value, list):
                for each in value:
                    if not item_test(each):
                        return False
            return True

        return test

    def _object_test(self, node):
        required = tuple(node.get("required", ()))
        properties = dict((key, self.compile(sub)) for key, sub in node.get("properties", {}).items())
        extra = node.get("additionalProperties")
        extra_test = self.compile(extra) if isinstance(extra, dict) else None
        if not required and not properties and extra is None:
            return None

        def test(value):
            if not isinstance(value, dict):
                return True
            for key in required:
                if key not in value:
                    return False
            for key, each in value.items():
                check = properties.get(key)
                if check is not None:
                    if not check(each):
                        return False
                elif extra is False or (extra_test is not None and not extra_test(each)):
                    return False
            return True

        return test


def _fast_valid(node, instance, root):
    """True when ``instance`` is valid against ``node`` (a node of ``root``); decides exactly like jsonschema."""
    return _FastChecker(root).compile(node)(instance)


_VALIDATOR_CLASS = []
_VALIDATOR_CACHE = {}
_FAST_CACHE = {}


def _fast_checker(schema):
    """The compiled pre-check of ``schema`` (None when it uses keywords the pre-check does not know)."""
    cached = _FAST_CACHE.get(id(schema))
    if cached is None or cached[0] is not schema:
        check = _FastChecker(schema).compile(schema) if _fast_supported(schema, schema) else None
        cached = _FAST_CACHE[id(schema)] = (schema, check)
    return cached[1]


def prepare(*schemas):
    """Compile the pre-check of each of ``schemas`` now: once per process, as the first document would otherwise
    (``job_info.prepare`` does it in the controller's main process, so that the workers forked from it find them
    compiled).  ``jsonschema`` itself is still imported only for a document that fails the pre-check."""
    for schema in schemas:
        _fast_checker(schema)


def _compiled(schema):
    if not _load_jsonschema():
        raise MissingJsonSchemaError("the jsonschema Python library is required to validate responses; install it or set validate=off")
    cached = _VALIDATOR_CACHE.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached
    if not _VALIDATOR_CLASS:
        _VALIDATOR_CLASS.append(_bounded_validator_class())
    cached = (schema, _VALIDATOR_CLASS[0](schema))
    _VALIDATOR_CACHE[id(schema)] = cached
    return cached


def get_validator(schema):
    """Return the compiled jsonschema validator of ``schema``, built once per process.

    Keyed by object identity (the schema is kept alive in the cache, so the id cannot be
    reused by another object).
    """
    return _compiled(schema)[1]


def _null_branch(error, child):
    """Whether ``child`` is the failure of the ``{"type": "null"}`` branch of an ``anyOf``.

    A nullable field that is neither null nor valid fails both branches; "is not of type 'null'"
    would only repeat, at the same path, what the other branch says.
    """
    if error.validator != "anyOf" or not child.relative_schema_path:
        return False
    index = child.relative_schema_path[0]
    return isinstance(index, int) and error.validator_value[index] == {"type": "null"}


def _leaf_errors(error):
    # A failed anyOf reports its causes in ``context``; the leaves name the exact path.
    leaves = [leaf for child in error.context or () if not _null_branch(error, child) for leaf in _leaf_errors(child)]
    return leaves or [error]


def _all_errors(validator, doc):
    found = []
    try:
        for error in validator.iter_errors(doc):
            for leaf in _leaf_errors(error):
                parts = list(leaf.absolute_path)
                found.append((_path_sort_key(parts), json_path(parts), truncate(leaf.message, MAX_MESSAGE_CHARS)))
    except RecursionError:
        found.append(((), "$", "the document is nested too deeply to validate"))
    found.sort(key=lambda entry: (entry[0], entry[2]))
    seen = set()
    unique = []
    for _sort_key, path, message in found:
        if (path, message) not in seen:
            seen.add((path, message))
            unique.append({"path": path, "message": message})
    return unique


def validate_document(doc, schema):
    """Validate ``doc`` against ``schema`` and return every error.

    Returns a list of ``{"path": "$.status.phase", "message": "..."}`` sorted by path (array
    indexes numerically), then message; an empty list means valid.  Messages quote at most a
    short excerpt of the offending value.  Raises ``MissingJsonSchemaError`` when jsonschema
    is not installed.

    Valid documents (the common case: every poll of every job) are recognised by a compiled
    pre-check (about 0.03 ms for the documented v2 example, against 1 ms for jsonschema);
    jsonschema runs only when the pre-check finds a problem, to report every error with its path.
    """
    if not HAS_JSONSCHEMA:
        raise MissingJsonSchemaError("the jsonschema Python library is required to validate responses; install it or set validate=off")
    fast = _fast_checker(schema)
    if fast is not None:
        try:
            if fast(doc):
                return []
        except RecursionError:
            pass
    return _all_errors(_compiled(schema)[1], doc)
