# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plain ``pytest tests/unit`` runs the unit tests the way ``ansible-test units`` does.

``ansible-test units`` installs ansible-core's collection finder before any test is imported, so that
``ansible_collections.modelarts.training`` is this checkout and ``lookup_loader.get('modelarts.training.*')``
finds our plugins. Under plain ``pytest`` nothing does that; this file does, once, and only when the finder
is not installed already (under ``ansible-test`` it is, and this file changes nothing).

The collection root is the checkout itself when it already sits at ``.../ansible_collections/modelarts/training``;
otherwise a temporary directory holds ``ansible_collections/modelarts/training`` as a symbolic link to the checkout
(Python's import system follows it; only ``ansible-test`` itself refuses symbolic links). Nothing is written to
``~/.ansible`` or to the checkout.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYOUT = ("ansible_collections", "modelarts", "training")


def _finder_installed(finder_class):
    return any(isinstance(entry, finder_class) for entry in sys.meta_path)


def _collections_base():
    """The directory whose ``ansible_collections/modelarts/training`` is this checkout."""
    parts = CHECKOUT.split(os.sep)
    if tuple(parts[-3:]) == LAYOUT:
        return os.sep.join(parts[:-3]) or os.sep
    base = tempfile.mkdtemp(prefix="modelarts-training-units-")
    atexit.register(shutil.rmtree, base, True)
    namespace = os.path.join(base, *LAYOUT[:2])
    os.makedirs(namespace)
    os.symlink(CHECKOUT, os.path.join(namespace, LAYOUT[2]))
    return base


def _install_collection_finder():
    # pylint: disable-next=import-outside-toplevel
    from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder

    if _finder_installed(_AnsibleCollectionFinder):
        return
    base = _collections_base()
    _AnsibleCollectionFinder(paths=[base])._install()  # pylint: disable=protected-access


_install_collection_finder()
