"""XLA dumps written by a real JAX run: modules, ops, kernels and fusions read from the dump agree with
what JAX itself reports (`lowered.as_text()`, `compiled.as_text()`), counted here independently by
regex; damaged dumps open with what is readable; the bundled example compared against torch.compile."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, SCENARIOS, run_traced

from inspector.cli import main as cli_main
from inspector.core.analysis.fusion_compare import compare_fusion
from inspector.core.graphs.graph_hierarchy import build_groups
from inspector.core.graphs.hlo_graph import hlo_graph
from inspector.core.readers.session_loader import open_path
from inspector.core.readers.xla_dump import looks_like_xla_dump, open_xla_dump

# a dev dependency: dumps are made by the real thing, in a child process (found here, not imported: a second)
pytestmark = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")

NOT_OPS = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast"}
_LINE_OPCODE = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*\S+\s+([a-z][\w\-]*)\(")
XLA_EXAMPLE = EXAMPLES / "xla_compare" / "attention_block.py"


def jax_env(dump: Path) -> dict:
    return dict(os.environ, XLA_FLAGS=f"--xla_dump_to={dump} --xla_dump_hlo_as_text", JAX_PLATFORMS="cpu")


@pytest.fixture(scope="module")
def jax_dump(tmp_path_factory) -> tuple[Path, dict]:
    """A dump of two jitted functions, and JAX's own HLO text of each (before and after optimisation)."""
    folder = tmp_path_factory.mktemp("jax")
    truth = folder / "truth.json"
    done = subprocess.run([sys.executable, str(SCENARIOS / "jax_dump.py"), str(truth)], env=jax_env(folder / "dump"),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder / "dump", json.loads(truth.read_text())


def entry_block(text: str) -> list[str]:
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("ENTRY"))
    end = next(i for i in range(start, len(lines)) if lines[i].strip() == "}")
    return lines[start + 1:end]


def opcodes(lines: list[str]) -> list[str]:
    return [match.group(1) for match in map(_LINE_OPCODE.match, lines) if match]


def test_modules_ops_kernels_and_fusions_match_what_jax_reports(jax_dump):
    folder, truth = jax_dump
    dump = open_xla_dump(folder)
    assert looks_like_xla_dump(folder)
    assert not dump.problems
    assert sorted(module.name for module in dump.modules) == sorted(truth)  # one module per jitted function
    for module in dump.modules:
        before, after = truth[module.name]["before"], truth[module.name]["after"]
        assert not re.search(r"\b(?:while|call|conditional)\(", before + after)  # no control flow: ENTRY is all
        entry_before, entry_after = opcodes(entry_block(before)), opcodes(entry_block(after))
        assert module.n_ops == sum(1 for op in entry_before if op not in NOT_OPS)
        assert module.n_kernels == sum(1 for op in entry_after if op not in NOT_OPS)
        assert len(module.fusions) == entry_after.count("fusion") > 0
        assert module.fusion_ratio == pytest.approx(module.n_ops / module.n_kernels)
        # the ops inside each fusion: count the op lines of the computation each fusion calls
        calls = dict(re.findall(r"^\s*(?:ROOT\s+)?%([\w.\-]+) = .* fusion\(.*\bcalls=%([\w.\-]+)", after, re.M))
        for kernel in module.fusions:
            body = re.search(rf"^%{re.escape(calls[kernel.name])} .*?\{{\n(.*?)\n\}}", after, re.M | re.S).group(1)
            assert len(kernel.ops) == sum(1 for op in opcodes(body.split("\n")) if op not in NOT_OPS)
    mlp = dump.module("jit_mlp")
    assert any(kernel.fused for kernel in mlp.kernels)  # gelu's elementwise chain ends up in one fusion
    assert dump.main_module is mlp


def test_hlo_graph_groups_fusions_and_keeps_source_lines(jax_dump):
    folder, _ = jax_dump
    module = open_xla_dump(folder).module("jit_mlp")
    graph, paths = hlo_graph(module.after)
    root = build_groups(graph, paths)
    sizes = {kernel.name: len(kernel.ops) for kernel in module.fusions}
    fused = {name: size for name, size in sizes.items() if size > 1}
    for name, size in fused.items():  # every fusion of several ops is a group holding exactly those ops
        assert root.children[name].size() == size
    names = {node.name for node in graph.nodes}
    assert all(source in names for source, _ in graph.edges)  # fusion parameters wired to real producers
    assert any(node.source and node.source.file.endswith("jax_dump.py") for node in graph.nodes)
    before, _ = hlo_graph(module.before)
    assert len(before.op_nodes) == module.n_ops


def test_cli_summary_of_a_dump(jax_dump, capsys):
    folder, _ = jax_dump
    assert cli_main(["summary", str(folder), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    dump = open_xla_dump(folder)
    by_label = {module["label"]: module for module in summary["modules"]}
    for module in dump.modules:
        row = by_label[module.label]
        assert ((row["ops_before"], row["kernels"], row["fusions"])
                == (module.n_ops, module.n_kernels, len(module.fusions)))
    assert cli_main(["summary", str(folder)]) == 0
    text = capsys.readouterr().out
    assert "jit_mlp" in text and "Largest fusions" in text
    assert cli_main(["report", str(folder), "-o", str(folder.parent / "report.html")]) == 2  # not a torch run
    assert "is an XLA dump" in capsys.readouterr().err


def test_damaged_dump_opens_with_what_is_readable(jax_dump, tmp_path, capsys):
    folder, truth = jax_dump
    damaged = tmp_path / "damaged"
    shutil.copytree(folder, damaged)
    after = next(damaged.glob("module_*.jit_mlp.*after_optimizations.txt"))
    lines = after.read_text().split("\n")
    entry = next(i for i, line in enumerate(lines) if line.startswith("ENTRY"))
    cut = max(i for i in range(entry, len(lines)) if " fusion(" in lines[i])  # the run died before the last fusion
    after.write_text("\n".join(lines[:cut]))
    next(damaged.glob("module_*.jit_norm.before_optimizations.txt")).unlink()
    before = next(damaged.glob("module_*.jit_mlp.before_optimizations.txt"))
    text = before.read_text()
    before.write_text(text.replace("parameter(0)", "parameter(0) \x00garbage", 1)
                      .replace("ENTRY", "\u2603 not hlo at all\nENTRY", 1))
    (damaged / "module_0099.jit_bad.before_optimizations.txt").write_bytes(b"HloModule jit_bad\n\xff\xfe\x00\x01")

    dump = open_xla_dump(damaged)
    counts = dump.problems.counts
    assert counts["truncated_hlo"] == 1
    assert counts["missing_hlo"] == 2  # jit_norm lost its before, jit_bad has no after
    assert counts["non_utf8"] == 1
    assert counts["unreadable_hlo_lines"] >= 1
    mlp = dump.module("jit_mlp")
    full_kernels = sum(1 for op in opcodes(entry_block(truth["jit_mlp"]["after"])) if op not in NOT_OPS)
    assert mlp.n_kernels == sum(1 for op in opcodes(lines[entry + 1:cut]) if op not in NOT_OPS) < full_kernels
    assert mlp.n_ops is not None  # the before file still reads, minus the garbled line
    norm = dump.module("jit_norm")
    assert norm.n_ops is None and norm.n_kernels and norm.fusion_ratio is None
    assert cli_main(["summary", str(damaged), "--strict"]) == 3
    out = capsys.readouterr().out
    assert "truncated" in out and "Could not read everything" in out


def test_a_dump_cut_before_its_entry_has_no_kernel_count(jax_dump, tmp_path):
    folder, _ = jax_dump
    damaged = tmp_path / "cut"
    shutil.copytree(folder, damaged)
    after = next(damaged.glob("module_*.jit_mlp.*after_optimizations.txt"))
    text = after.read_text()
    after.write_text(text[:text.index("ENTRY")])
    module = open_xla_dump(damaged).module("jit_mlp")
    assert module.n_kernels is None and module.fusion_ratio is None  # unknown, never a wrong count


def test_bundled_example_torch_compile_beside_xla(tmp_path_factory, inductor_cache, capsys):
    folder = tmp_path_factory.mktemp("xla_compare")
    done = subprocess.run([sys.executable, str(XLA_EXAMPLE), "--jax", str(folder / "dump")], cwd=folder,
                          env=dict(os.environ, JAX_PLATFORMS="cpu"), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    run = run_traced(XLA_EXAMPLE, folder / "torch", inductor_cache)
    session, dump = open_path(run.trace_dir), open_xla_dump(folder / "dump")
    result = compare_fusion(session, dump.main_module, str(dump.source))
    torch, xla = result["torch"], result["xla"]
    # the block has eight matrix products (q, k, v, q·kᵀ, ·v, out, two MLP layers): both sides see them all
    assert torch["families"]["matmul"]["ops"] == xla["families"]["matmul"]["ops"] == 8
    code = "\n".join(artifact.text for unit in session.units for artifact in unit.output_code)
    calls = "\n".join(artifact.text.split("def call(")[-1] for unit in session.units for artifact in unit.output_code)
    generated = set(re.findall(r"^(\w+) = async_compile\.\w+\(", code, re.M))
    launches = sum(1 for line in calls.splitlines() for name in generated if re.match(rf"\s*{name}(\.run)?\(", line))
    library = len(re.findall(r"\bextern_kernels\.\w+\(", calls))
    assert torch["kernels"] == launches + library  # K counts launches: a kernel per call to it, as XLA's ops
    after = dump.main_module.after_file.read_text()
    assert xla["kernels"] == sum(1 for op in opcodes(entry_block(after)) if op not in NOT_OPS)
    rows = {row["family"]: row for row in result["families"]}
    assert rows["elementwise"]["verdict"] == "both fuse"  # gelu and the norms fuse on either side
    assert torch["fusion_ratio"] > 1 and xla["fusion_ratio"] > 1
    assert cli_main(["diff", str(run.trace_dir), str(folder / "dump"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["xla"]["kernels"] == xla["kernels"]
    assert cli_main(["diff", str(folder / "dump"), str(run.trace_dir)]) == 0
    text = capsys.readouterr().out
    assert "K" in text and "matmul" in text and "Largest kernels, XLA" in text


BUNDLED = EXAMPLES.parent / "sessions" / "mlp_breaks"


def test_xla_view_shows_modules_kernels_graph_and_comparison(qtbot, window, jax_dump, tmp_path):
    from conftest import open_and_wait

    folder, _ = jax_dump
    dump = open_xla_dump(folder)
    open_and_wait(qtbot, window, BUNDLED)  # a torch.compile run is open: the dump is compared with it
    view = window.xla_view
    window.open_path(folder)
    assert window.tabs.currentWidget() is view
    qtbot.waitUntil(lambda: view.layer is not None and view.comparison is not None, timeout=60_000)
    assert view.modules.rowCount() == len(dump.modules)
    main = dump.main_module
    row = dump.modules.index(main)
    assert view.modules.item(row, 4).text() == f"{main.fusion_ratio:.2f}"
    assert view.kernels.rowCount() == main.n_kernels
    assert {view.families.item(r, 0).text() for r in range(view.families.rowCount())} >= {"matmul", "elementwise"}
    assert f"{main.fusion_ratio:.2f}" in view.compare_label.text()
    fused = next(index for index, kernel in enumerate(main.kernels) if kernel.fused)
    name = main.kernels[fused].name
    # the graph opens with every fusion folded into one box; a kernel's row opens its fusion, the frame folds it
    assert f"group:{name}" in view.layer.ids and not view.expanded
    view.kernels.cellDoubleClicked.emit(fused, 0)
    qtbot.waitUntil(lambda: view.layer is not None and name in view.expanded
                    and f"group:{name}" not in view.layer.ids, timeout=60_000)
    assert {op.name for op in main.kernels[fused].ops} <= set(view.layer.ids)
    view.view.sigActivated.emit(f"open:{name}")
    qtbot.waitUntil(lambda: view.layer is not None and f"group:{name}" in view.layer.ids, timeout=60_000)
    view.stage.setCurrentText("before optimisation")
    qtbot.waitUntil(lambda: view.layer is not None and "instructions" in view.graph_status.text(), timeout=60_000)
    for other in range(view.modules.rowCount()):  # every module shows without error
        view.modules.setCurrentCell(other, 0)
        qtbot.waitUntil(lambda: view.layer is not None or "No HLO" in view.graph_status.text(), timeout=60_000)
    window.grab().save(str(tmp_path / "xla_view.png"))


def test_reading_a_dump_imports_neither_jax_nor_torch(jax_dump):
    folder, _ = jax_dump
    probe = ("import sys; from inspector.cli import main; code = main(['summary', sys.argv[1], '--json']); "
             "assert code == 0; assert not {'jax', 'jaxlib', 'torch'} & set(sys.modules), sorted(sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe, str(folder)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent)))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["modules"]
