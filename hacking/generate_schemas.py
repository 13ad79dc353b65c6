# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write docs/schemas/*.json from plugins/module_utils/schemas.py.

Usage: ``.venv/bin/python hacking/generate_schemas.py [--check]``.  ``--check`` writes nothing and
exits 1 when a committed file differs from what would be generated.  The unit tests call
``expected_files()`` to keep the committed JSON identical to the Python source.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMAS_PY = os.path.join(ROOT, "plugins", "module_utils", "schemas.py")
OUTPUTS = (
    ("docs/schemas/v2_training_job.schema.json", "V2_TRAINING_JOB_SCHEMA"),
    ("docs/schemas/v1_training_job_version.schema.json", "V1_JOB_VERSION_SCHEMA"),
)


def _load_schemas_module():
    # Loaded by path: schemas.py is plain data, and this avoids needing the
    # ansible_collections/ tree on sys.path.
    spec = importlib.util.spec_from_file_location("_modelarts_training_schemas", SCHEMAS_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def render(schema):
    """Serialise a schema the way docs/schemas is committed: sorted keys, 2-space indent, final newline."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def expected_files():
    """Return ``{relative path: file content}`` for every generated schema file."""
    module = _load_schemas_module()
    return {path: render(getattr(module, name)) for path, name in OUTPUTS}


def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def main(argv=None):
    """Generate (or with --check, verify) docs/schemas/*.json; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify only; exit 1 if a file is stale")
    args = parser.parse_args(argv)
    stale = []
    for relative, content in expected_files().items():
        path = os.path.join(ROOT, relative)
        if _read(path) == content:
            continue
        stale.append(relative)
        if not args.check:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(content)
    if args.check and stale:
        sys.stderr.write("stale generated schema files (run hacking/generate_schemas.py): %s\n" % ", ".join(stale))
        return 1
    for relative in stale:
        sys.stdout.write("wrote %s\n" % relative)
    return 0


if __name__ == "__main__":
    sys.exit(main())
