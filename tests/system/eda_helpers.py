# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers for the event source tests: run ansible-rulebook against the emulator, load the source, parse output.

* ``run_rulebook(rulebook, variables, env, ...)`` runs the real ``ansible-rulebook`` over the staged
  collection and returns the completed process (stdout/stderr as text).
* ``event_lines(stdout)`` returns the ``EVENT|id|previous|phase`` lines the test rulebook prints, as tuples.
* ``load_source(collection_root)`` imports the staged source file the way ansible-rulebook does (runpy).
* ``connection_args(emu)`` are the source's connection arguments for the emulator (AK/SK).
* ``source_events(src, args, until)`` runs the loaded source's ``main()`` until ``until(events)`` holds; its events.
"""

import asyncio
import os
import runpy
import sys
import uuid

import yaml

from conftest import run_in_group

HERE = os.path.dirname(os.path.abspath(__file__))
RULEBOOKS = os.path.join(HERE, "rulebooks")
BIN = os.path.dirname(sys.executable)
SOURCE_PATH = ("extensions", "eda", "plugins", "event_source", "training_job_phase.py")


def unique_id(prefix):
    """A job id no other test uses (the emulator is shared by the session)."""
    return "%s-%s" % (prefix, uuid.uuid4().hex[:12])


def connection_args(emu):
    """Connection arguments of the source for the emulator."""
    return emu.connection("aksk")


def rulebook_inputs(workdir, variables=None):
    """``(inventory, vars file)`` for ansible-rulebook, written in ``workdir``: localhost on this Python, ``variables``."""
    workdir = str(workdir)
    inventory = os.path.join(workdir, "inventory.yml")
    with open(inventory, "w") as handle:
        handle.write("all:\n  hosts:\n    localhost:\n      ansible_connection: local\n      ansible_python_interpreter: %s\n" % sys.executable)
    vars_file = os.path.join(workdir, "vars.yml")
    with open(vars_file, "w") as handle:
        yaml.safe_dump(variables or {}, handle)
    return inventory, vars_file


# The least time a rulebook run is given before it counts as hung: ansible-rulebook's start (a JVM) and each playbook
# it runs take minutes on a machine that two test suites load, and the limit is a bound for a hang, never a timing.
HANG_SECONDS = 600


def run_rulebook(ansible_env, workdir, rulebook, variables=None, env=None, shutdown_delay=2, timeout=60, verbosity=0):
    """Run ansible-rulebook with ``rulebook`` (a path) and ``variables`` (written to a vars file); return the process.
    ``timeout``: how long it may run before it counts as hung, at least :data:`HANG_SECONDS`."""
    workdir = str(workdir)
    inventory, vars_file = rulebook_inputs(workdir, variables)
    command = [os.path.join(BIN, "ansible-rulebook"), "--rulebook", rulebook, "-i", inventory, "--vars", vars_file, "--shutdown-delay", str(shutdown_delay)]
    if verbosity:
        command.append("-" + "v" * verbosity)
    # HOME in the work directory: the shipped rulebook keeps its state file under ~/.local/state by default, and a test's
    # watch must not meet another test's (or an earlier session's) file there.
    merged = dict(ansible_env, HOME=workdir)
    merged.update(env or {})
    return run_in_group(command, merged, workdir, max(timeout, HANG_SECONDS))


def event_lines(stdout, prefix="EVENT"):
    """The ``PREFIX|a|b|...`` lines of ``stdout``, split into tuples (without the prefix)."""
    found = []
    for line in stdout.splitlines():
        if line.startswith(prefix + "|"):
            found.append(tuple(line.split("|")[1:]))
    return found


def load_source(collection_root):
    """The staged source's globals, loaded like ansible-rulebook does (``runpy.run_path``)."""
    path = os.path.join(collection_root, "ansible_collections", "modelarts", "training", *SOURCE_PATH)
    return runpy.run_path(path)


async def source_events(src, args, until, wait=60):
    """The events the loaded source's ``main(queue, args)`` puts, until ``until(events)`` is true; fewer when ``main``
    ends first or no event comes for ``wait`` seconds.  ``main`` is cancelled at the end."""
    queue = asyncio.Queue()
    task = asyncio.ensure_future(src["main"](queue, args))
    events = []
    try:
        while not until(events):
            getter = asyncio.ensure_future(queue.get())
            done, _pending = await asyncio.wait({task, getter}, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
            if getter not in done:
                getter.cancel()
                break
            events.append(getter.result())
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    return events
