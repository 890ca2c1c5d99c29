"""Cached results: a tool that declares ``cache: {ttlSeconds: N}`` answers a call it answered
before, with the same arguments, from the history database instead of asking the model again.

- The key is the SHA-256 of the canonical JSON (keys sorted, no spaces) of the agent's name, the
  tool's name, the version fingerprint of what decides the answer (the tool's description,
  parameters, template and output schema, the system prompt, the model and its settings:
  ``versions.fingerprint.tool_version``, the one the Versions view lists) and the validated
  arguments with their defaults applied. An edit of any of these makes a new key, so it never
  serves an answer of another version.
- Only answers are kept (never an ``isError`` result), ``ttlSeconds`` long, in the history
  database (``history/result_cache.py``): instances on one PostgreSQL store share them. Without
  history there is no cache.
- Never used by a conversation tool (each turn depends on the ones before), by a call whose
  model is the client's (sampling), or by the calls of a test run unless it asks
  (``CallPolicy.read_cache``).
- A hit says so: ``_meta`` under :data:`CACHE_META` (when the answer was stored, its age, the
  thread of the call that answered it), the run trace (``cached``, no model turn, no tokens),
  and the history run of the call (no tokens, no tool calls, the hit's own duration).
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio
import mcp_types as types

from mcp_export.errors import ExportError
from mcp_export.history.result_cache import CachedAnswer
from mcp_export.server.result import RUN_META
from mcp_export.server.steps import THREAD_META
from mcp_export.versions.fingerprint import canonical, tool_version

if TYPE_CHECKING:
    from mcp_export.history.store import HistoryStore
    from mcp_export.server.steps import ServedRequest

__all__ = ["CACHE_META", "CallCache", "answer_from_cache"]

logger = logging.getLogger(__name__)

CACHE_META = "io.metaagent/cache"
"""The ``_meta`` key of a result answered from the cache."""


@dataclass
class CallCache:
    """The cache of one call of a tool that declares one."""

    store: HistoryStore
    key: str
    tool_name: str
    ttl_seconds: float
    started: float

    @classmethod
    def for_call(cls, request: ServedRequest) -> CallCache | None:
        """The call's cache, or None when it has none to use (no ``cache`` declared, a
        conversation tool, the client's model, a test run that did not ask, no history)."""
        tool, runtime = request.tool, request.runtime
        declared = tool.definition.cache
        if declared is None or tool.conversation or request.conversation is not None:
            return None
        if request.choice.sampling is not None or not runtime.policy.read_cache:
            return None
        store = runtime.policy.history.store
        if store is None:
            return None
        agent = runtime.agent
        key_data = {
            "agent": agent.metadata.name,
            "tool": tool.name,
            "version": tool_version(agent, tool.definition, request.choice.model).fingerprint,
            "arguments": request.arguments,
        }
        key = hashlib.sha256(canonical(key_data).encode("utf-8", "surrogatepass")).hexdigest()
        return cls(store, key, tool.name, declared.ttl_seconds, time.perf_counter())

    async def lookup(self) -> types.CallToolResult | None:
        """The kept result (marked as a hit), or None; a cache that cannot be read is a miss
        (logged), never a failed call."""
        now = time.time()
        try:
            found = await anyio.to_thread.run_sync(self.store.cached_answer, self.key, now)
        except ExportError as exc:
            logger.warning("the result cache could not be read: %s", exc)
            return None
        if found is None:
            return None
        result = types.CallToolResult.model_validate_json(found.result)
        meta = dict(result.meta or {})
        original = meta.pop(RUN_META, None)
        meta[RUN_META] = {
            "cached": True,
            "toolCalls": [],
            "turns": 0,
            "usage": {
                "inputTokens": 0,
                "inputTokensPartial": False,
                "outputTokens": 0,
                "outputTokensPartial": False,
            },
            "answeredBy": original,
        }
        meta[CACHE_META] = {
            "hit": True,
            "storedAt": found.stored_at,
            "ageSeconds": round(now - found.stored_at, 3),
            "expiresAt": found.expires_at,
            "threadId": found.thread_id,
        }
        result.meta = meta
        return result

    def elapsed_ms(self) -> float:
        """Milliseconds since the call's cache was looked for."""
        return (time.perf_counter() - self.started) * 1000

    async def keep(self, result: types.CallToolResult) -> None:
        """Keep ``result`` if it is an answer; a cache that cannot be written is logged."""
        if result.is_error:
            return
        meta = dict(result.meta or {})
        thread_id = meta.pop(THREAD_META, None)
        stored = result.model_copy(update={"meta": meta})
        now = time.time()
        answer = CachedAnswer(
            stored.model_dump_json(by_alias=True, exclude_none=True),
            now,
            now + self.ttl_seconds,
            thread_id if isinstance(thread_id, str) else None,
        )
        try:
            await anyio.to_thread.run_sync(self.store.keep_answer, self.key, self.tool_name, answer)
        except ExportError as exc:
            logger.warning("the result cache could not be written: %s", exc)


def answer_from_cache(
    request: ServedRequest, cache: CallCache, result: types.CallToolResult
) -> types.CallToolResult:
    """The result of a hit, recorded in history as a call answered from the cache (its thread
    titled so, in ``_meta`` under ``THREAD_META`` like any recorded call's)."""
    history = request.runtime.policy.history
    record = history.start(
        request.ctx,
        request.tool,
        request.prompt,
        request.arguments,
        None,
        cached=True,
        pricing=request.runtime.pricing(request.choice),
    )
    text = "".join(b.text for b in result.content if isinstance(b, types.TextContent))
    record.answered_from_cache(text, cache.elapsed_ms())
    meta = dict(result.meta or {})
    meta[CACHE_META] = {**meta[CACHE_META], "serverMs": round(cache.elapsed_ms(), 3)}
    if record.thread_id is not None:
        meta[THREAD_META] = record.thread_id
    result.meta = meta
    return result
