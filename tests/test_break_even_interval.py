"""Break-even calls come with their 95 % interval (issue 46's demanding user, second walk): the
figure divides T_compile by a difference of two medians, T_eager − T_compiled, whose spread is wider
than S's — a 2-layer GPT-2 at S = 3.04× [1.54–3.64] printed "120,491 calls" alone, where the rounds
support anything from 94,000 to 304,000. The interval is the rounds resampled as S's interval is."""

from __future__ import annotations

import re
import statistics

import pytest

from inspector.core.analysis.comparison import FASTER, compare_rounds
from inspector.core.analysis.speedup import break_even_calls


def _rounds() -> list[tuple[float, float]]:
    """Interleaved (eager, compiled) seconds per call, as a capture's results.json holds them: eager
    about 2.5× the compiled call, each round off by a few per cent the way a busy machine moves them."""
    wobble = [1.00, 1.07, 0.95, 1.12, 0.98, 1.03, 0.91, 1.09, 1.01, 0.97, 1.15, 0.94]
    return [(500e-6 * wobble[i], 200e-6 * wobble[(i * 5 + 3) % len(wobble)]) for i in range(len(wobble))]


def test_break_even_states_the_interval_its_rounds_support():
    rounds = _rounds()
    speedup = compare_rounds(rounds, None)
    assert speedup.state == FASTER and speedup.size_certain
    t_eager, t_compiled = (statistics.median(side) for side in zip(*rounds))
    calls, source = break_even_calls(speedup, 30.0, t_eager, t_compiled, rounds)
    assert calls == pytest.approx(30.0 / (t_eager - t_compiled))
    stated = re.search(r"95% interval ([\d,]+)–([\d,]+) calls", source)
    assert stated, source
    low, high = (float(end.replace(",", "")) for end in stated.groups())
    assert low <= calls <= high and low < high
    # each end is T_compile over a saving the rounds allow: between the least and the most any two
    # medians of these rounds can differ by
    savings = [e - c for e in (e for e, _ in rounds) for c in (c for _, c in rounds)]
    assert 30.0 / max(savings) <= low and high <= 30.0 / min(s for s in savings if s > 0)


def test_without_rounds_break_even_keeps_its_point():
    rounds = _rounds()
    speedup = compare_rounds(rounds, None)
    t_eager, t_compiled = (statistics.median(side) for side in zip(*rounds))
    calls, source = break_even_calls(speedup, 30.0, t_eager, t_compiled)
    assert calls == pytest.approx(30.0 / (t_eager - t_compiled)) and "interval" not in source
