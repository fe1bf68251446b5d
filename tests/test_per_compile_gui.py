"""The Code pane lists each compile's page beside its graph stages: the call that triggered it, its
failure, cache lookups and every compilation-metrics field, as a person reads them in the app."""

from __future__ import annotations

import json

from conftest import open_and_wait
from test_per_compile_summary import cond_run  # noqa: F401 (a fixture: one traced run for both files)

PAGE = "compile: trigger, restarts, cache, metrics"


def _show_page(qtbot, window, unit) -> str:
    window.model.select_unit(unit)
    window.tabs.setCurrentWidget(window.code_view)
    code = window.code_view
    labels = [code.texts.itemText(index) for index in range(code.texts.count())]
    assert PAGE in labels
    code.texts.setCurrentIndex(labels.index(PAGE))
    qtbot.waitUntil(lambda: "Compilation metrics:" in code.editor.toPlainText(), timeout=60_000)
    return code.editor.toPlainText()


def test_the_code_pane_shows_a_failed_compiles_page(corpus, qtbot, window, no_slot_errors):
    log = corpus / "multi_rank_logs" / "dedicated_log_torch_trace_rank_0.log"
    loaded = open_and_wait(qtbot, window, log)
    (unit,) = loaded.session.units
    text = _show_page(qtbot, window, unit)
    lines = text.splitlines()
    stack = lines[lines.index("Triggered from (the user's frames of the stack, outermost first):") + 1:]
    assert stack[0].strip() == "/data/users/xmfan/a/pytorch/test/dynamo/test_misc.py:12143 in <module>"
    assert "failure: BackendCompilerFailed: backend='broken_backend' raised: RuntimeError: broken backend" in text
    # every field of torch's own record, with its value
    logged = next(json.loads(line.partition("] ")[2])["compilation_metrics"] for line in log.read_text().splitlines()
                  if '{"compilation_metrics"' in line)
    assert f"Compilation metrics: {len(logged)} fields, in torch's order" in text
    row = next(line for line in lines if line.strip().startswith("fail_type "))
    assert row.split(None, 1)[1].strip() == logged["fail_type"]


def test_the_code_pane_shows_why_the_cache_was_bypassed_and_the_resume_bytecode(cond_run, qtbot, window,
                                                                                 no_slot_errors):
    loaded = open_and_wait(qtbot, window, cond_run.trace_dir)
    resumed = next(unit for unit in loaded.session.units if str(unit.compile_id) == "[1/0]")
    text = _show_page(qtbot, window, resumed)
    assert "fx graph cache bypass: Can't cache HigherOrderOperator: cond" in text
    # every compile of the run, folded on the calls that triggered them, this one marked
    trie = text[text.index("Every compile of the run"):text.index("Restarts, failure")].splitlines()
    call = next(i for i, line in enumerate(trie) if "per_compile_cond.py:16 in <module>: f(torch.randn(4, 8))" in line)
    assert trie[call + 1].index("/") > trie[call].index("/")  # one level below the call
    assert trie[call + 1].strip().endswith("per_compile_cond.py:8 in branchy (resumed at line 8)  -> [1/0]"
                                           "   <- this compile")
    code = window.code_view
    labels = [code.texts.itemText(index) for index in range(code.texts.count())]
    code.texts.setCurrentIndex(labels.index("torch_dynamo_resume_in_branchy_at_8_MODIFIED_BYTECODE"))
    qtbot.waitUntil(lambda: "LOAD_GLOBAL" in code.editor.toPlainText(), timeout=60_000)
    assert "__compiled_fn_" in code.editor.toPlainText()
