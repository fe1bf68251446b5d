"""`check RUN --history` reads its run once: the gate's checks and the record the history keeps and
compares come from the same opened session, so a log still growing cannot be judged as one run and
kept as another, and a big log is not read twice."""

from __future__ import annotations

from pathlib import Path

from history_stores import data_home  # noqa: F401 (fixture)

from cli_runner import run_cli
from inspector.core.readers import session_loader

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
BUNDLED_LOG = next((BUNDLED / "trace").glob("*.log"))


def test_check_history_opens_its_run_once_and_says_the_gate_then_the_history(data_home, monkeypatch):
    assert run_cli("summary", str(BUNDLED_LOG)).returncode == 0  # an earlier run of the same script
    gate_alone = run_cli("check", str(BUNDLED))
    opened, open_session = [], session_loader.open_session

    def counted(source, *args, **kwargs):  # the real open, counted
        opened.append(source.path)
        return open_session(source, *args, **kwargs)

    monkeypatch.setattr(session_loader, "open_session", counted)
    checked = run_cli("check", str(BUNDLED), "--history")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert opened == [BUNDLED], f"the run was opened {len(opened)} times: {opened}"
    assert checked.stdout.startswith(gate_alone.stdout)  # the gate's lines, as `check` alone says them
    history = checked.stdout[len(gate_alone.stdout):].splitlines()
    assert history[0].startswith("PASS history-breaks: no new graph-break site (graph breaks 4 → 4); "
                                 "compared with run #1 of")
    assert any(line.startswith("PASS history-recompiles: no new recompile cause (recompiles 3 → 3)")
               for line in history)
