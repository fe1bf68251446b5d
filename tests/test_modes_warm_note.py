"""A warm compile that torch counted no cache hit for, yet took a fifth of the cold one, is not "a
run that hit no cache" (issue 46's demanding user, second walk: `modes --warm` on a model holding a
torch.cond, whose graph bypasses the FX graph and AOTAutograd caches, took 47.0 s cold and 9.0 s warm:
its C++ kernels were loaded from the folder instead of compiled again — `compile_file` 24 s of own
time cold, 0.8 s warm). A warm run no faster than the cold one did compile again, and says so."""

from __future__ import annotations

from pathlib import Path

from inspector.core.analysis.mode_comparison import ModeRow, cold_warm_text


def _row(cold_s: float, warm_s: float, warm_hits: int) -> ModeRow:
    return ModeRow("default", Path("default"), cold_s, 1.2e-4, 13.3, 0, 0, 6, None,
                   warm_compile_s=warm_s, warm_cache_hits=warm_hits)


def test_a_much_shorter_warm_compile_without_a_counted_hit_names_the_caches_torch_does_not_count():
    text = cold_warm_text(_row(47.04, 9.00, 0))
    assert "hit no cache" not in text
    assert f"{47.04 / 9.00:.3g}× less with no FX graph or AOTAutograd cache hit" in text


def test_a_warm_compile_as_long_as_the_cold_one_compiled_again():
    assert "(warm run hit no cache)" in cold_warm_text(_row(23.2, 22.9, 0))
    assert f"({23.2 / 2.0:.3g}× less)" in cold_warm_text(_row(23.2, 2.0, 3))
