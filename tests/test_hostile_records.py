"""Hostile export, AOTInductor and dynamic-shape records (issue 48), each rebuilt on a real log: the
bundled session's, the public provenance log, the public multi-rank job. A field of the wrong type is
a counted problem, never a traceback (nor a PASS JUnit beside a missing SARIF); the joins and
de-duplications over export issues, exported-program nodes and provenance maps take time linear in
their input (timed at 1x and 10x, as tests/test_linear_parsing.py does); and the text summary stays
readable: a 4 MB guard is cut with a count, a job of hundreds of ranks is summarised per group."""

from __future__ import annotations

import gc
import json
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import CUDA_LOG, MULTI_RANK
from cli_runner import run_cli
from fuzz_cases import fix_md5, split_records
from inspector.core.analysis.export_report import export_findings
from inspector.core.model.output_code import parse_output_code
from inspector.core.readers.session_loader import open_path

ROOT = Path(__file__).resolve().parent.parent
LOG = next((ROOT / "resources" / "sessions" / "mlp_breaks" / "trace").glob("*.log"))
PREFIX = "V1207 03:06:10.598000 15316 torch/_logging/_internal.py:1578] "
MAX_RATIO = 50  # 10x the input: ~10x the time when linear, ~100x when quadratic
pytestmark = pytest.mark.timeout(240)
NO_CACHE = {"TCI_NO_CACHE": "1"}  # every read from the log itself, not from an index an earlier test wrote


def written_log(folder: Path, text: str, name: str = LOG.name) -> Path:
    """`text` as a log, every payload's md5 made to match (so an edit reads as what torch wrote)."""
    records = split_records(text)
    for record in records:
        fix_md5(record)
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / name
    out.write_text("\n".join(record.render() for record in records) + "\n", encoding="utf-8")
    return out


def timed(function, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        gc.disable()
        try:
            started = time.perf_counter()
            function()
            best = min(best, time.perf_counter() - started)
        finally:
            gc.enable()
    return best


def assert_linear(make_and_time, n: int) -> None:
    """`make_and_time(n)` returns a function doing the work on an input of size n: its time at 10n is
    within MAX_RATIO of its time at n (timed again side by side when a busy machine slowed one)."""
    small_run, big_run = make_and_time(n), make_and_time(10 * n)
    small_run()  # warm up
    small, big = timed(small_run), timed(big_run, repeats=1)
    for _ in range(3):
        if big <= small * MAX_RATIO:
            break
        small, big = min(small, timed(small_run)), min(big, timed(big_run, repeats=1))
    assert big <= small * MAX_RATIO, f"n: {small * 1000:.1f} ms, 10n: {big * 1000:.1f} ms: grows faster than the input"


# --- shape records with fields of the wrong type ------------------------------------------------------

def _wrong_typed_shapes(text: str) -> str:
    """The bundled log's first create_symbol with `sources` a number in place of its `source`, and a
    specialisation of it whose `reason` and `sources` are numbers."""
    first = next(line for line in text.split("\n") if '{"create_symbol"' in line)
    broken = first.replace('"source": "L[\'x\'].size()[0]"', '"sources": 7', 1)
    assert broken != first
    envelope = json.loads(first.partition("] ")[2])
    stack = envelope["create_symbol"]["user_stack"]
    special = {"symbolic_shape_specialization": {"symbol": "s77", "sources": 7, "value": "16", "reason": 3,
                                                 "user_stack": stack},
               **{key: value for key, value in envelope.items() if key != "create_symbol"}}
    return text.replace(first, broken + "\n" + first.partition("] ")[0] + "] " + json.dumps(special), 1)


def test_shape_records_with_numbers_for_text_are_counted_not_a_traceback(tmp_path):
    log = written_log(tmp_path / "trace", _wrong_typed_shapes(LOG.read_text(encoding="utf-8")))
    done = run_cli("summary", log, "--json", env=NO_CACHE)
    assert done.returncode == 0
    summary = json.loads(done.stdout)
    assert summary["unreadable"]["bad_record"]["count"] == 2
    assert any("`reason` is a number" in example for example in summary["unreadable"]["bad_record"]["examples"])
    events = [event for unit in summary["shapes"] for event in unit["events"]]
    specialised = [event for event in events if event["kind"] == "specialization"]
    assert specialised and specialised[0]["detail"] == "s77 specialised to 16"  # read without its bad reason
    text = run_cli("summary", log, env=NO_CACHE)
    assert text.returncode == 0 and "2 records with an unexpected shape for their kind" in text.stdout


def test_check_writes_both_reports_or_neither(tmp_path):
    """A crash while making the SARIF must not leave a JUnit saying PASS behind: both reports are
    made before either is written; here both are, whole."""
    log = written_log(tmp_path / "trace", _wrong_typed_shapes(LOG.read_text(encoding="utf-8")))
    junit, sarif = tmp_path / "checks.xml", tmp_path / "findings.sarif"
    done = run_cli("check", log, "--junit", junit, "--sarif", sarif, env=NO_CACHE)
    assert done.returncode in (0, 1, 4), done.stderr
    assert ET.parse(junit).getroot() is not None
    assert json.loads(sarif.read_text())["runs"]


# --- export issues: de-duplication and placing, linear ----------------------------------------------

def _export_log(folder: Path, issues: int, nodes: int = 0) -> Path:
    """A torch.export log as draft export writes one: `issues` data-dependent expressions (each its
    own, at its own line), then for an exported program of `nodes` custom-op calls, a missing fake
    kernel for each of them (named by op only: its line comes from the program's graph)."""
    lines = [PREFIX + json.dumps({"str": ["/home/user/model.py", 2]})]
    for i in range(issues):
        lines.append(PREFIX + json.dumps({"propagate_real_tensors_provenance": {
            "expr": f"u{i} > 2", "result": "True",
            "user_stack": [{"line": 20 + i, "name": "forward", "filename": 2, "loc": f"if total_{i} > 2:"}],
            "symbol_to_sources": {}, "frame_locals": {"locals": {f"total_{i}": [f"u{i}"]}}}}))
    if nodes:
        body = ["ExportedProgram:", "    class GraphModule(torch.nn.Module):",
                '        def forward(self, x: "f32[4]"):']
        previous = "x"
        for i in range(nodes):
            body += [f"            # File: /home/user/model.py:{100 + i} in forward, code: y{i} = op{i}({previous})",
                     f'            op{i}: "f32[4]" = torch.ops.tci.op{i}.default({previous});  {previous} = None']
            previous = f"op{i}"
        body += [f"            return ({previous},)", "", "Graph signature: "]
        lines.append(PREFIX + json.dumps({"exported_program": {}, "has_payload": "0" * 32}))
        lines += ["\t" + line for line in body]
        lines += [PREFIX + json.dumps({"missing_fake_kernel": {"op": f"tci.op{i}.default"}})
                  for i in reversed(range(nodes))]
    return written_log(folder, "\n".join(lines) + "\n", f"export_{issues}_{nodes}.log")


def test_export_issues_are_read_and_placed_right(tmp_path):
    session = open_path(_export_log(tmp_path, 3, nodes=4))
    findings = export_findings(session)
    data = [f for f in findings if f.issue.kind == "data_dependent"]
    assert [(f.expression, f.issue.location.line) for f in data] == [("total_0 > 2", 20), ("total_1 > 2", 21),
                                                                     ("total_2 > 2", 22)]
    fake = {f.issue.subject: f.issue.location for f in findings if f.issue.kind == "missing_fake_kernel"}
    assert {op: (where.file, where.line) for op, where in fake.items()} == {
        f"tci.op{i}.default": ("/home/user/model.py", 100 + i) for i in range(4)}


def test_de_duplicating_export_issues_is_linear(tmp_path):
    """An issue compared with every one kept before it makes this quadratic (8,000 issues: minutes)."""
    def make(n):
        log = _export_log(tmp_path / str(n), n)
        return lambda: open_path(log)

    assert_linear(make, 400)
    assert len(open_path(_export_log(tmp_path / "again", 50)).units[0].export_issues) == 50


def test_placing_fake_kernel_issues_is_linear_in_issues_and_nodes(tmp_path):
    """A missing-fake-kernel issue that scans the whole exported program for its op costs ~15 ms on
    300k nodes: n issues on n nodes, then 10n on 10n, must take ~10x, not ~100x."""
    def make(n):
        session = open_path(_export_log(tmp_path / str(n), 0, nodes=n))
        session.units[0].graphs["exported_program"].graph  # parsed before the timing: the join is timed
        return lambda: export_findings(session)

    assert_linear(make, 600)


def test_provenance_nodes_are_de_duplicated_in_linear_time():
    """The public provenance log's output code, its first kernel mapped to n post-grad nodes (each
    twice): a list searched per node would make this quadratic (100k nodes: minutes)."""
    if not CUDA_LOG.is_file():
        pytest.skip("the public provenance log is not here")
    unit = next(unit for unit in open_path(CUDA_LOG).units if unit.provenance and unit.output_code)
    text, provenance = unit.output_code[0].load_text(), unit.provenance
    key = next(iter(provenance["cppCodeToPost"]))

    def make(n):
        names = [f"node_{i}" for i in range(n)]
        inflated = {**provenance, "cppCodeToPost": {**provenance["cppCodeToPost"], key: names + names}}
        return lambda: parse_output_code(text, None, inflated)

    assert_linear(make, 2_000)
    names = [f"node_{i}" for i in range(5)]
    code = parse_output_code(text, None, {**provenance, "cppCodeToPost": {**provenance["cppCodeToPost"],
                                                                          key: names + names[::-1] + [7]}})
    assert next(kernel for kernel in code.kernels if kernel.name == key).source_nodes == names


# --- the text summary stays readable ------------------------------------------------------------------

def test_a_4_mb_guard_is_cut_in_the_text_with_a_count(tmp_path):
    expression = "s77 + " * 700_000 + "1 <= 4096"
    text = LOG.read_text(encoding="utf-8").replace('"expr": "128*s77 <= 4096"', f'"expr": "{expression}"', 1)
    log = written_log(tmp_path / "trace", text)
    done = run_cli("summary", log, env=NO_CACHE)
    assert done.returncode == 0
    assert len(done.stdout) < 100_000, len(done.stdout)
    guard = next(line for line in done.stdout.split("\n") if line.startswith("    guard s77 + s77"))
    assert re.search(r"… \([\d,]+ more characters; --json has it whole\)$", guard)
    shapes = json.loads(run_cli("summary", log, "--json", env=NO_CACHE).stdout)["shapes"]
    assert any(event["detail"].startswith(expression) for unit in shapes for event in unit["events"])


def test_a_job_of_hundreds_of_ranks_is_summarised_per_group(tmp_path):
    """400 ranks of the public multi-rank job's rank 0 (a compile that failed and ran eagerly): the
    text says it once for all of them, lists the first ranks and says how many more there are."""
    if not MULTI_RANK.is_dir():
        pytest.skip("the public multi-rank corpus is not here")
    template = (MULTI_RANK / "dedicated_log_torch_trace_rank_0.log").read_text(encoding="utf-8")
    job = tmp_path / "job"
    job.mkdir()
    for rank in range(400):
        (job / f"dedicated_log_torch_trace_rank_{rank}.log").write_text(template, encoding="utf-8")
    done = run_cli("summary", job, env=NO_CACHE)
    assert done.returncode == 0
    text = done.stdout
    assert len(text) < 16_000, len(text)
    assert "ATTENTION: ranks 0–399 [0/0] fn" in text and text.count("ATTENTION") == 1
    assert re.search(r"^  ranks 0–399 \[0/0\] +fn +failed", text, re.M)
    assert "  … 368 more rank(s) not listed (32–399): units 1, breaks 0, recompiles 0, failed 1" in text
    assert "(×400)" in text
    document = json.loads(run_cli("summary", job, "--json", env=NO_CACHE).stdout)
    assert len(document["per_rank"]["figures"]) == 400 and len(document["units"]) == 400
