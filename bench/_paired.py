"""The spread of a ratio measured in interleaved pairs (bare, ours, bare, ours …).

Each sample of ours is divided by the baseline sample taken right before it, so both saw the same
moment of the machine; the median of those ratios and their quartiles say how steady the
comparison was, which a ratio of two medians alone does not.
"""

from __future__ import annotations

import statistics
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

__all__ = ["RatioSpread", "alternated", "paired_ratios", "paired_samples"]


@dataclass(frozen=True)
class RatioSpread:
    """Ratios ours ÷ baseline of paired samples: median, quartiles and extremes."""

    median: float
    low: float
    high: float
    least: float
    most: float

    def __str__(self) -> str:
        return (
            f"{self.median:.2f} × (quartiles {self.low:.2f}–{self.high:.2f}, "
            f"range {self.least:.2f}–{self.most:.2f})"
        )


def paired_ratios(ours: Sequence[float], baseline: Sequence[float]) -> RatioSpread:
    """The spread of ``ours[i] / baseline[i]``.

    Args:
        ours: our samples, in the order taken.
        baseline: the baseline's samples, each taken right before ours of the same index.
    """
    if len(ours) != len(baseline) or not ours:
        raise ValueError("paired samples need one baseline sample for each of ours")
    ratios = sorted(mine / base for mine, base in zip(ours, baseline, strict=True))
    if len(ratios) == 1:
        low = high = ratios[0]
    else:
        low, _, high = statistics.quantiles(ratios, n=4, method="inclusive")
    return RatioSpread(statistics.median(ratios), low, high, ratios[0], ratios[-1])


async def alternated(
    rep: int, baseline: Callable[[], Awaitable[float]], ours: Callable[[], Awaitable[float]]
) -> tuple[float, float]:
    """One pair of samples, ``(baseline, ours)``, taken back to back: the baseline first on even
    repetitions, ours first on odd ones, so neither always runs on the other's heels."""
    if rep % 2 == 0:
        base = await baseline()
        mine = await ours()
    else:
        mine = await ours()
        base = await baseline()
    return base, mine


async def paired_samples(
    pairs: int,
    baseline: Callable[[], Awaitable[float]],
    ours: Callable[[], Awaitable[float]],
    *,
    warm_up: int = 0,
) -> tuple[list[float], list[float]]:
    """``warm_up`` unrecorded samples of each (the baseline first), then ``pairs`` pairs taken
    by :func:`alternated`: the baseline's samples and ours, in the order taken."""
    for _ in range(warm_up):
        await baseline()
        await ours()
    base: list[float] = []
    mine: list[float] = []
    for rep in range(pairs):
        b, m = await alternated(rep, baseline, ours)
        base.append(b)
        mine.append(m)
    return base, mine
