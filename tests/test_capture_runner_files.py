"""The capture runner is started by file path in the user's interpreter and loads the modules beside it
by file path: each must ship with the frozen app (or a capture from the app fails on its first line)
and import nothing but the standard library and torch (the user's Python has nothing else of ours)."""

from __future__ import annotations

import ast
import re
import sys

from conftest import ROOT

CAPTURE = ROOT / "inspector" / "capture"
OPTIONAL = {"depyf"}  # dynamo_code.py decompiles with it where the user's Python has it, else says so


def _loaded_by_path() -> list[str]:
    """The files runner.py names to load beside itself (`"name.py"` literals), runner.py first."""
    text = (CAPTURE / "runner.py").read_text(encoding="utf-8")
    named = dict.fromkeys(re.findall(r"\"(\w+\.py)\"", text))
    return ["runner.py", *(name for name in named if (CAPTURE / name).is_file())]


def _top_level_imports(path) -> set[str]:
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: a relative import fails when it is loaded by file path"
            imported.add(node.module.split(".")[0])
    return imported


def test_every_module_the_runner_loads_is_shipped_with_the_app():
    files = _loaded_by_path()
    assert {"options.py", "torch_record.py", "eager_vs_compiled.py"} <= set(files)
    spec = (ROOT / "packaging" / "compile-inspector.spec").read_text(encoding="utf-8")
    shipped = set(re.findall(r"\"inspector\" / \"capture\" / \"(\w+\.py)\"", spec))
    assert set(files) <= shipped, f"not shipped in the frozen app: {sorted(set(files) - shipped)}"


def test_the_runner_and_every_module_it_loads_import_only_the_standard_library_and_torch():
    for name in _loaded_by_path():
        outside = _top_level_imports(CAPTURE / name) - set(sys.stdlib_module_names) - {"torch"} - OPTIONAL
        assert not outside, f"{name} imports {sorted(outside)}"
