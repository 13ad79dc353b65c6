# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 28, item 5: memory stays flat in an event source that never ends.

The door keeps the endpoint tokens of the jobs it reads (``Query.endpoint_tokens``) so that diagnostics masks them.
It kept one entry per item built: a source watching 60 jobs held 113,000 entries after 30 s, and every masked line
went over all of them.  Here the source's ``main()`` (loaded as ansible-rulebook loads it) watches jobs that stay
``Running`` for many rounds against the emulator, by ids (a search by id per 10 jobs a round) and by name (the name
search every round): what the door keeps is each distinct token once, whatever the number of rounds.
"""

import asyncio

import pytest

from eda_helpers import connection_args, load_source, unique_id

ROUNDS = 25
JOBS = 4


@pytest.fixture(scope="module")
def src(collection_root):
    """The source module's globals."""
    return load_source(collection_root)


async def watch(src, args, rounds):
    """Run ``main()`` until the door has read the jobs ``rounds`` times; return the door (its ``Query``) and the events."""
    doors, reads = [], []
    build_watcher = src["main"].__globals__["build_watcher"]

    def recording(*given, **kwargs):
        watcher, query = build_watcher(*given, **kwargs)
        doors.append(query)
        for name in ("fetch", "search"):
            inner = getattr(query, name)

            def counted(*call, _inner=inner, **options):
                reads.append(1)
                return _inner(*call, **options)

            setattr(query, name, counted)
        # A search by id is not a fetch: count the rounds of the phase source too.
        if watcher.source is not None:
            observe = watcher.source.observe

            def observed(*call, **options):
                reads.append(1)
                return observe(*call, **options)

            watcher.source.observe = observed
        return watcher, query

    src["main"].__globals__["build_watcher"] = recording
    queue = asyncio.Queue()
    task = asyncio.ensure_future(src["main"](queue, args))
    try:
        while len(reads) < rounds and not task.done():
            await asyncio.sleep(0.02)
    finally:
        src["main"].__globals__["build_watcher"] = build_watcher
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    events = []
    while not queue.empty():
        events.append(queue.get_nowait())
    assert len(reads) >= rounds, "the source stopped after %d reads" % len(reads)
    return doors[0], events


@pytest.mark.parametrize("selector", ["ids", "name"])
def test_a_source_that_never_ends_keeps_each_endpoint_token_once(src, emulator, selector):
    name = unique_id("r28-flat")
    ids = [unique_id("r28-flat-%d" % index) for index in range(JOBS)]
    emulator.add_jobs([{"id": job, "name": name, "phase": "Running"} for job in ids])
    args = dict(connection_args(emulator), interval=0.01)
    args.update(training_job_ids=ids) if selector == "ids" else args.update(name=name)
    door, events = asyncio.run(asyncio.wait_for(watch(src, args, ROUNDS), 120))
    assert sorted(event["modelarts"]["training_job"]["id"] for event in events) == sorted(ids)  # one event each: Running
    tokens = list(door.endpoint_tokens)
    # Three endpoint tokens a job (JupyterLab, TensorBoard, MindStudio Insight), each kept once after every round.
    assert len(tokens) == len(set(tokens)) == 3 * JOBS, "%d tokens kept for %d distinct after %d rounds" % (len(tokens), len(set(tokens)), ROUNDS)
