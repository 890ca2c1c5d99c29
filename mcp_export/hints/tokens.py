"""Token counts by a real tokenizer that needs no network: OpenAI's ``o200k_base``.

``o200k_base`` is the encoding of OpenAI's GPT-4o, GPT-4.1 and o-series models. Its vocabulary
ships with this package (``data/o200k_base.tiktoken.gz``, checked against the SHA-256 tiktoken
itself expects for it) and ``tiktoken`` runs it, so counting never downloads anything. Other
models (Claude, Gemini, Llama, Qwen…) use other tokenizers and count the same text differently:
read these counts as one real model's, not every model's.

Loading the vocabulary takes a few tenths of a second, so it happens on the first count, never on
import: ``metaagent serve`` never counts and never pays for it.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import threading
from importlib import resources
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING

from mcp_export.errors import ExportError

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "TOKENIZER",
    "TOKENIZER_NOTE",
    "TokenizerError",
    "count_tokens",
    "encoding",
    "read_encoding",
]

TOKENIZER = "o200k_base"
"""The encoding counts are made with (tiktoken's name for it)."""

TOKENIZER_NOTE = (
    "tokens counted with o200k_base (OpenAI GPT-4o, GPT-4.1, o-series); other models' "
    "tokenizers count differently"
)

# tiktoken's own expected hash for o200k_base.tiktoken (tiktoken_ext/openai_public.py).
_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
_VOCABULARY = "o200k_base.tiktoken.gz"
_SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
# The pre-tokenizer pattern of o200k_base, as tiktoken_ext/openai_public.py defines it.
_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

_lock = threading.Lock()
_encoding: tiktoken.Encoding | None = None


class TokenizerError(ExportError):
    """The bundled vocabulary is missing or damaged (a broken install)."""


def encoding() -> tiktoken.Encoding:
    """The ``o200k_base`` encoding, loaded from the bundled vocabulary on first use.

    Raises:
        TokenizerError: the vocabulary file is missing or is not the one tiktoken expects.
    """
    global _encoding
    with _lock:
        if _encoding is None:
            _encoding = read_encoding(resources.files(__package__).joinpath("data", _VOCABULARY))
        return _encoding


def count_tokens(text: str) -> int:
    """How many ``o200k_base`` tokens ``text`` is (special-token text counts as plain text)."""
    return len(encoding().encode_ordinary(text))


def read_encoding(source: Traversable) -> tiktoken.Encoding:
    """The ``o200k_base`` encoding from ``source``: its ranks in tiktoken's format, gzipped.

    Raises:
        TokenizerError: ``source`` cannot be read or is not o200k_base's vocabulary.
    """
    import tiktoken  # only here: its import and the vocabulary cost nothing until a count

    try:
        raw = gzip.decompress(source.read_bytes())
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise TokenizerError(
            f"the tokenizer vocabulary {source} cannot be read ({exc}); reinstall meta-agent-studio"
        ) from exc
    if hashlib.sha256(raw).hexdigest() != _SHA256:
        raise TokenizerError(
            f"the tokenizer vocabulary {source} is damaged (its SHA-256 is not the one "
            "tiktoken expects for o200k_base); reinstall meta-agent-studio"
        )
    # Each line is "<token in base64> <rank>": split at every blank, tokens and ranks alternate.
    # map over C functions reads the 200 000 lines about twice as fast as a comprehension.
    fields = raw.split()
    ranks = dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))
    return tiktoken.Encoding(
        TOKENIZER, pat_str=_PATTERN, mergeable_ranks=ranks, special_tokens=_SPECIAL_TOKENS
    )
