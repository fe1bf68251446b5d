"""The developers' guide keeps lines at 120 characters or fewer: a reader sees a whole line without scrolling,
in a side-by-side diff too. That holds for the app's code, for its tests and for the bench scripts, which are
read and reviewed as often."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 120


@pytest.mark.parametrize("tree", ["inspector", "tests", "bench"])
def test_no_line_of_the_code_is_over_120_characters(tree):
    long = [f"{path.relative_to(ROOT)}:{number}: {len(line)} characters"
            for path in sorted((ROOT / tree).rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if len(line) > LIMIT]
    assert not long, f"{len(long)} line(s) over {LIMIT} characters:\n" + "\n".join(long)
