# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fetch many training jobs at once, with bounded concurrency and one shared deadline.

``fetch_concurrently`` knows nothing about HTTP: it calls ``fetch_one(key, deadline)`` for every
key, at most ``max_concurrency`` at a time, and returns each key's item or the exception that
fetching it raised. The caller passes a ``fetch_one`` closure over one client session, so every
worker reuses the same connection pool.
"""

from __future__ import annotations

import threading
import time

from ansible_collections.modelarts.training.plugins.module_utils.text import name_key

DEFAULT_MAX_CONCURRENCY = 16


class DeadlineExceeded(Exception):
    """The shared deadline had passed before a key's request was started, so it was never sent.

    It carries the same classification attributes as the client's errors: it is ``transient`` (a
    wait that sees it simply runs out of time) and ``not_found`` is false. ``not_sent`` tells a
    caller that no request was made, so it must not be counted as a poll.
    """

    transient = True
    not_found = False
    not_sent = True

    def __init__(self, key):
        super().__init__("the deadline passed before the request for %s was sent" % (name_key(key),))
        self.key = key


def fetch_concurrently(keys, fetch_one, max_concurrency=DEFAULT_MAX_CONCURRENCY, deadline=None, clock=time.monotonic):
    """Call ``fetch_one(key, deadline)`` for every key, at most ``max_concurrency`` at a time.

    Returns a dict ``key -> item or Exception`` whose order follows ``keys``; a key given twice is
    fetched once. An ``Exception`` raised by ``fetch_one`` becomes that key's value and never
    propagates, so one bad job cannot hide the others' results. A ``BaseException`` that is not an
    ``Exception`` propagates: raised by ``fetch_one`` in a worker, it is raised here once every
    started key has ended; raised in the calling thread while it waits (``KeyboardInterrupt``, the
    ``TaskTimeoutError`` of a task's ``timeout:`` in the controller's process), it propagates at once.
    Then the calling thread never waits for the workers: keys not yet started are never fetched, the
    requests in flight are abandoned (their answers dropped; the caller ends them, see
    ``ModelArtsClient.abandon``), and the workers are daemon threads, so no join at exit waits for
    them either.

    ``deadline`` is a reading of ``clock`` (``time.monotonic`` by default) shared by every request;
    it is handed to ``fetch_one`` so the client can bound its timeouts and retries by it. A key
    whose turn comes after the deadline is not fetched at all: its value is a ``DeadlineExceeded``.
    ``deadline=None`` means no deadline.

    One key is fetched inline, in the calling thread; otherwise ``min(max_concurrency, len(keys))``
    worker threads are used.
    """
    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1:
        raise ValueError("max_concurrency must be a positive integer, got %r" % (max_concurrency,))
    unique_keys = list(dict.fromkeys(keys))
    if not unique_keys:
        return {}

    def fetch_guarded(key):
        if deadline is not None and clock() >= deadline:
            return DeadlineExceeded(key)
        try:
            return fetch_one(key, deadline)
        except Exception as exc:
            # Captured, not raised: the caller reports every job's own error.
            return exc

    if len(unique_keys) == 1:
        return {unique_keys[0]: fetch_guarded(unique_keys[0])}
    return _Fanout(unique_keys, fetch_guarded).run(min(max_concurrency, len(unique_keys)))


class _Fanout(object):
    """The keys of one :func:`fetch_concurrently` call, taken in order by daemon worker threads."""

    def __init__(self, keys, fetch):
        self.keys = keys
        self.fetch = fetch
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.next = 0
        self.left = len(keys)
        self.results = {}
        self.abandoned = False

    def run(self, workers):
        try:
            for _index in range(workers):
                threading.Thread(target=self.work, name="modelarts-fetch", daemon=True).start()
            # Interruptible: a signal's exception (a task's timeout) is raised here while the workers run.
            self.done.wait()
        except BaseException:
            with self.lock:
                # The keys not yet started are never fetched; the answers of those in flight are dropped.
                self.abandoned = True
            raise
        for value in self.results.values():
            if isinstance(value, BaseException) and not isinstance(value, Exception):
                raise value
        return dict((key, self.results[key]) for key in self.keys)

    def work(self):
        while True:
            with self.lock:
                if self.abandoned or self.next >= len(self.keys):
                    return
                key = self.keys[self.next]
                self.next += 1
            try:
                value = self.fetch(key)
            except BaseException as exc:  # pylint: disable=broad-except  # raised in the calling thread (run)
                value = exc
            with self.lock:
                self.results[key] = value
                self.left -= 1
                if isinstance(value, BaseException) and not isinstance(value, Exception):
                    # As an interrupt would: no key is started after it.
                    self.left -= len(self.keys) - self.next
                    self.next = len(self.keys)
                if self.left <= 0:
                    self.done.set()
