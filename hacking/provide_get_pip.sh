#!/usr/bin/env bash
# Make ansible-test's pip bootstrap work without its download host: when
# ~/.ansible/test/cache/get_pip_<version>.py is missing, install the offline
# stand-in (hacking/get_pip_offline.py) under that name.
set -euo pipefail
python=${1:?usage: provide_get_pip.sh PYTHON}
here=$(cd "$(dirname "$0")" && pwd)
version=$("$python" - <<'PY'
import re, ansible_test, os
path = os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py")
print(re.search(r"pip='([0-9.]+)'", open(path).read()).group(1).replace(".", "_"))
PY
)
cache="$HOME/.ansible/test/cache"
mkdir -p "$cache"
if [ ! -s "$cache/get_pip_${version}.py" ]; then
    # Copied, then renamed into place: suites running side by side never see half a file.
    cp "$here/get_pip_offline.py" "$cache/get_pip_${version}.py.$$"
    mv -f "$cache/get_pip_${version}.py.$$" "$cache/get_pip_${version}.py"
    echo "provided $cache/get_pip_${version}.py (offline pip bootstrap)"
fi
