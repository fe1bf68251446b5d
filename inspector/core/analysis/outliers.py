"""Which ranks stand out: a rank is slow when its figure exceeds median + max(K·1.4826·MAD,
`min_share`·median, `floor`) over all ranks with that figure (K = 5; 1.4826·MAD estimates the
standard deviation robustly). The floors keep a job of identical ranks, whose MAD is 0, from flagging
ordinary jitter. The compile-time and first-collective stragglers of rank logs and the slow ranks of
profiler traces are judged by this one rule."""

from __future__ import annotations

import statistics
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

K = 5.0
MIN_RANKS = 3  # of two ranks, neither is the odd one out


@dataclass(frozen=True)
class HighOutliers:
    median: float
    threshold: float
    keys: list = field(default_factory=list)  # those above the threshold, in the figures' order


def high_outliers(values: Mapping[Hashable, float], min_share: float, floor: float) -> HighOutliers | None:
    """The figures above median + max(K·1.4826·MAD, min_share·median, floor); None under MIN_RANKS figures."""
    if len(values) < MIN_RANKS:
        return None
    median = statistics.median(values.values())
    mad = statistics.median(abs(value - median) for value in values.values())
    threshold = median + max(K * 1.4826 * mad, min_share * median, floor)
    return HighOutliers(median, threshold, [key for key, value in values.items() if value > threshold])


def rule(min_share: float, floor_text: str) -> str:
    """The rule in words, for a finding to cite (`floor_text`: the floor with its unit, "1 s")."""
    return f"more than median + max({K:g}·1.4826·MAD, {min_share:g}·median, {floor_text}) over the ranks"
