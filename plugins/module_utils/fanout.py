# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fetch many training jobs at once, with bounded concurrency and one shared deadline.

``fetch_concurrently`` knows nothing about HTTP: it calls ``fetch_one(key, deadline)`` for every
key, at most ``max_concurrency`` at a time, and returns each key's item or the exception that
fetching it raised. The caller passes a ``fetch_one`` closure over one client session, so every
worker reuses the same connection pool.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

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
    ``Exception`` (``KeyboardInterrupt``, ``SystemExit``) propagates: requests not yet started are
    cancelled and the ones in flight are allowed to finish (each is bounded by the client's own
    timeouts).

    ``deadline`` is a reading of ``clock`` (``time.monotonic`` by default) shared by every request;
    it is handed to ``fetch_one`` so the client can bound its timeouts and retries by it. A key
    whose turn comes after the deadline is not fetched at all: its value is a ``DeadlineExceeded``.
    ``deadline=None`` means no deadline.

    One key is fetched inline, without a thread pool; otherwise ``min(max_concurrency, len(keys))``
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

    executor = ThreadPoolExecutor(max_workers=min(max_concurrency, len(unique_keys)))
    futures = []
    try:
        futures = [executor.submit(fetch_guarded, key) for key in unique_keys]
        return {key: future.result() for key, future in zip(unique_keys, futures)}
    except BaseException:
        # Python 3.8 lacks shutdown(cancel_futures=True); cancel by hand so an interrupt does not
        # first sit through every queued request.
        for future in futures:
            future.cancel()
        raise
    finally:
        executor.shutdown(wait=True)
