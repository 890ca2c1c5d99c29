"""The served server's garbage collector, set for many calls at once.

CPython collects its youngest generation every 700 new container objects. A served call makes
thousands (JSON-RPC messages, pydantic models, SSE events, the session's messages), and with
hundreds of calls in flight most of them are still alive at a collection: they are traversed,
survive, and are traversed again a generation up. With 256 calls at once over HTTP this was
about a third of the server's CPU per call (``bench/server_concurrency_wide.py --patches
gc-off``, docs/reference/benchmarks.md). So, once the agents are loaded and before the first call:

- the objects made so far (the imported SDKs, the agents, the catalogue) are frozen out of every
  later collection (``gc.freeze``): they live as long as the process;
- the youngest generation is collected every ``YOUNG_THRESHOLD`` objects instead of 700; the
  garbage cycles a call leaves are collected as before, a few megabytes later.
"""

from __future__ import annotations

import gc
import logging

__all__ = ["YOUNG_THRESHOLD", "tune_for_serving"]

logger = logging.getLogger(__name__)

YOUNG_THRESHOLD = 20_000


def tune_for_serving() -> None:
    """Freeze what start-up made and collect the young generation less often (see above).

    No collection first: a full one costs tens of milliseconds of start-up, for the little
    garbage start-up leaves."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    if logger.isEnabledFor(logging.DEBUG):  # counting walks every frozen object
        logger.debug(
            "collector: %d start-up objects frozen; the young generation is collected every %d",
            gc.get_freeze_count(),
            YOUNG_THRESHOLD,
        )
