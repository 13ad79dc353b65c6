# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Full-size v2 documents built from the SDK field tree, and the paths of their optional fields.

``full_document()`` fills every field of ``ShowTrainingJobDetailsResponse`` (the official SDK's
model, ``tests/unit/fixtures/sdk_v2_response_fields.json``) with a plausible value of its SDK type,
so a document exercises every part of the v2 schema; with the default sizes it is about 12 KB of
JSON, twice an ordinary job.  ``optional_field_paths()`` lists the fields a service built on the SDK
models may send as ``null`` (every named field except the ones the item needs).

Standard library only: ``hacking/time_validation.py`` loads this file by path.
"""

from __future__ import annotations

import json
import os

FIXTURES = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures"))

# The fields a document cannot do without (the schemas' "required" lists).
V2_REQUIRED = (("metadata",), ("status",), ("metadata", "id"), ("status", "phase"))
V1_REQUIRED = (("job_id",), ("version_id",), ("status",))

# Values that must be specific for the document to be valid (enum, epoch milliseconds, durations).
_SPECIAL = {
    ("metadata", "id"): "3faf5c03-aaa1-4cbe-879d-24b05d997347",
    ("status", "phase"): "Failed",
    ("status", "secondary_phase"): "Failed",
    ("metadata", "create_time"): 1714566896000,
    ("status", "start_time"): 1714566900123,
    ("status", "duration"): 532003,
}


def sdk_field_tree():
    """The SDK's field tree of the v2 job-details response."""
    with open(os.path.join(FIXTURES, "sdk_v2_response_fields.json"), encoding="utf-8") as handle:
        return json.load(handle)


def _value(node, path, width):
    special = _SPECIAL.get(tuple(part for part in path if not isinstance(part, int)))
    if special is not None:
        return special
    sdk_type = node["type"]
    if "fields" in node:
        return {child["json_key"]: _value(child, path + (child["json_key"],), width) for child in node["fields"].values()}
    if "items" in node:
        return [_value(node["items"], path + (index,), width) for index in range(width)]
    if "values" in node:
        return {"key-%d" % index: _value(node["values"], path + ("key-%d" % index,), width) for index in range(width)}
    if sdk_type == "int":
        return 1000 + len(path)
    if sdk_type == "float":
        return 1.5
    if sdk_type == "bool":
        return True
    if sdk_type == "str":
        return "%s-value" % path[-1] if not isinstance(path[-1], int) else "item-%d" % path[-1]
    raise ValueError("unexpected SDK type %s at %s" % (sdk_type, path))


def full_document(width=2):
    """A v2 document with every SDK field set; every list and map holds ``width`` entries."""
    tree = sdk_field_tree()
    return {child["json_key"]: _value(child, (child["json_key"],), width) for child in tree["fields"].values()}


def field_paths(doc, prefix=()):
    """Every path to a named field (a key of an object) in ``doc``, parents before children.

    Array elements are not fields, but the fields of objects inside arrays are.
    """
    if isinstance(doc, dict):
        for key, child in doc.items():
            yield prefix + (key,)
            yield from field_paths(child, prefix + (key,))
    elif isinstance(doc, list):
        for index, child in enumerate(doc):
            yield from field_paths(child, prefix + (index,))


def optional_field_paths(doc, required):
    """The field paths of ``doc`` that are not in ``required`` (paths of named keys only)."""
    required = set(required)
    return [path for path in field_paths(doc) if path not in required]


def optional_leaf_paths(doc, required):
    """The optional field paths of ``doc`` whose value is a string, number or boolean."""
    return [path for path in optional_field_paths(doc, required) if not isinstance(_at(doc, path), (dict, list))]


def _at(doc, path):
    for part in path:
        doc = doc[part]
    return doc


def set_null(doc, paths):
    """Set each field of ``paths`` to null in ``doc`` (in place); a path under an already-nulled field is skipped."""
    for path in sorted(paths, key=len):
        target = doc
        for part in path[:-1]:
            if target is None:
                break
            target = target[part]
        if isinstance(target, (dict, list)):
            target[path[-1]] = None
    return doc
