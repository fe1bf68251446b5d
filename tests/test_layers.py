"""The layer rule: inspector.core imports no Qt and no torch (the desktop bundle carries neither)."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_linter_contracts_hold():
    done = subprocess.run([str(Path(sys.executable).parent / "lint-imports")], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_core_has_no_lazy_torch_or_qt_import_either():
    """import-linter sees module-level imports; this also catches imports inside functions."""
    offenders = []
    for path in (ROOT / "inspector" / "core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {name}" for name in names
                          if name.split(".")[0] in {"torch", "PySide6", "shiboken6", "pyqtgraph"}]
    assert offenders == []
