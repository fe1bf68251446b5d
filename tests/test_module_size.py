"""No module of the app is over 600 lines: past that a module holds several jobs, and an engineer new
to it reads all of them to change one (issue 49, "modules with one job"). A module that grows past it
is split by job, each part named for what it holds."""

from __future__ import annotations

from conftest import ROOT

MAX_LINES = 600


def test_no_module_under_inspector_is_over_600_lines():
    sizes = {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in sorted((ROOT / "inspector").rglob("*.py"))}
    assert len(sizes) > 100  # the whole package was read, not an empty folder
    over = {path: lines for path, lines in sizes.items() if lines > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines: {over}"
