"""Real logs from other machines and torch versions: a CUDA run with Triton kernels and provenance,
and a 4-rank distributed run in the older (2024) format."""

from __future__ import annotations

import re

from inspector.core.readers.session_loader import open_path
from inspector.core.readers.torch_trace import read_trace_log


def test_cuda_log_triton_kernels_match_output_code_and_provenance(corpus):
    log_path = corpus / "inductor_provenance_jit_cuda_log.txt"
    session = open_path(log_path)
    (unit,) = session.units
    code, text = unit.output_code[0].code, unit.output_code[0].text
    assert code.language == "triton"
    defined = re.findall(r"^(\w+) = async_compile\.triton\(", text, re.M)
    triton = [kernel for kernel in unit.kernels if kernel.kind == "triton"]
    assert [kernel.name for kernel in triton] == defined and len(defined) == 3
    mapping = unit.provenance["cppCodeToPost"]
    for kernel in triton:
        assert kernel.source_origin == "provenance"
        assert sorted(kernel.source_nodes) == sorted(mapping[kernel.name])
        assert text.split("\n")[kernel.start_line - 1].startswith(f"{kernel.name} = async_compile.triton(")
        assert kernel.call_lines, "each Triton kernel is launched in call()"
    externs = [kernel for kernel in unit.kernels if kernel.kind == "extern"]
    assert [kernel.name for kernel in externs] == ["extern_kernels.mm", "extern_kernels.mm"]


def test_cuda_log_post_grad_nodes_named_by_provenance_exist_in_the_graph(corpus):
    session = open_path(corpus / "inductor_provenance_jit_cuda_log.txt")
    (unit,) = session.units
    graph = unit.graphs["after_post_grad_graph"].graph
    for kernel in unit.kernels:
        for node in kernel.source_nodes:
            assert graph.node(node) is not None, (kernel.name, node)


def test_multi_rank_folder_opens_as_one_session_with_four_ranks(corpus):
    session = open_path(corpus / "multi_rank_logs")
    assert [rank.rank for rank in session.ranks] == [0, 1, 2, 3]
    assert not session.problems
    per_rank = {rank.rank: rank.units for rank in session.ranks}
    assert len(per_rank[1]) == 15 and len(per_rank[3]) == 7
    # ranks 0 and 2 hit a broken backend with errors suppressed: a silent fallback to eager
    for rank in (0, 2):
        (unit,) = per_rank[rank]
        assert unit.status.value == "failed" and unit.fail_type == "BackendCompilerFailed"
        assert any("fell back to eager" in warning for warning in unit.warnings)
    assert len([u for u in per_rank[1] if u.recompile]) == 14


def test_multi_rank_records_per_rank_match_the_files(corpus):
    for path in sorted((corpus / "multi_rank_logs").glob("*.log")):
        log = read_trace_log(path)
        rank = int(path.stem.rsplit("_", 1)[1])
        assert log.rank == rank
        text = path.read_bytes()
        envelope_lines = len(re.findall(rb"^[VIWEC]\d{4} ", text, re.M))
        strings = len(re.findall(rb'^[VIWEC]\d{4} [^\n]*\] \{"str": \[', text, re.M))
        assert len(log.records) + len(log.events) + strings == envelope_lines
