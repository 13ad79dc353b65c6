#!/usr/bin/env bash
# Render the docsite offline: antsibull-docs writes the plugin reference as RST, the Markdown
# guides in docs/ are added as they are, and Sphinx builds HTML (warnings are errors).
# Run inside a staged copy (hacking/in_staged_copy.sh) so antsibull-docs sees this checkout.
#
#   build_docs.sh BIN_DIR OUTPUT_DIR
set -euo pipefail
bin=${1:?usage: build_docs.sh BIN_DIR OUTPUT_DIR}
out=${2:?usage: build_docs.sh BIN_DIR OUTPUT_DIR}
work=$(mktemp -d "${TMPDIR:-/tmp}/modelarts-docsite-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rst/guides"
chmod og-w "$work/rst"
"$bin/antsibull-docs" collection --use-current --cleanup everything --dest-dir "$work/rst" modelarts.training
cp docs/*.md "$work/rst/guides/"
[ -d docs/images ] && cp -r docs/images "$work/rst/guides/images"
cp -r docs/schemas "$work/rst/guides/schemas"
cp docs/docsite/ansible_links.rst "$work/rst/ansible_links.rst"
cat > "$work/rst/index.rst" <<'RST'
modelarts.training
==================

Query Huawei Cloud ModelArts training jobs, wait for them, and gate deployments on the
``Completed`` phase.

.. toctree::
   :maxdepth: 1
   :caption: Guides
   :glob:

   guides/*

.. toctree::
   :maxdepth: 2
   :caption: Reference

   collections/index
RST
"$bin/sphinx-build" -q -b html -c "$(pwd)/docs/docsite" -W --keep-going "$work/rst" "$out"
echo "docsite: $out/index.html"
