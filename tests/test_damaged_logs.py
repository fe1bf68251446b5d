"""Damaged input opens with everything readable and a count of what was not; it never raises."""

from __future__ import annotations

import shutil

import pytest

from conftest import on_two_threads_at_once
from inspector.core.readers.session_builder import build_trace_session
from inspector.core.readers.session_loader import open_path
from inspector.core.readers.torch_trace import read_trace_log


@pytest.mark.parametrize("damaged", [False, True], ids=["intact", "one payload damaged"])
def test_payloads_checked_on_first_read_by_two_threads_at_once_are_counted_once(cuda_log, damaged):
    """A preview reads payloads unchecked; the app's views then read the same ones from several threads.
    Whichever checks a payload first settles it: the other neither finds an intact payload damaged
    nor counts real damage twice."""
    if damaged:
        cuda_log.write_text(cuda_log.read_text().replace("def forward(self", "def f0rward(self", 1))
    for _trial in range(20):
        log = read_trace_log(cuda_log, verify_md5=False)
        with_payload = [record for record in log.records if record.has_payload]
        on_two_threads_at_once(lambda: [log.payload_bytes(record) for record in with_payload])
        assert log.problems.counts.get("md5_mismatch", 0) == (1 if damaged else 0)
        assert [record.payload_intact for record in with_payload].count(False) == (1 if damaged else 0)


@pytest.fixture
def cuda_log(corpus, tmp_path):
    copy = tmp_path / "dedicated_log_torch_trace_cuda.log"
    shutil.copy(corpus / "inductor_provenance_jit_cuda_log.txt", copy)
    return copy


def _records_by_line(path):
    return {record.line_no: record for record in read_trace_log(path).records}


def test_intact_log_has_no_problems(cuda_log):
    log = read_trace_log(cuda_log)
    assert not log.problems
    assert len(log.records) + len(log.events) > 100  # chromium events are rows, the rest records


def test_truncated_last_record_keeps_everything_before_it(cuda_log):
    intact = open_path(cuda_log)
    data = cuda_log.read_bytes()
    cuda_log.write_bytes(data[: int(len(data) * 0.6)])
    cut = open_path(cuda_log)
    assert cut.problems.counts["truncated"] == 1
    assert cut.problems.total == 1
    assert not cut.complete
    # what was written before the cut is all there: the unit, its graphs and its break-free status
    assert [str(u.compile_id) for u in cut.units] == [str(u.compile_id) for u in intact.units]
    assert "dynamo" in cut.units[0].graphs


def test_corrupted_json_line_is_counted_and_skipped(cuda_log):
    lines = cuda_log.read_text().split("\n")
    target = next(i for i, line in enumerate(lines) if '"dynamo_start"' in line)
    lines[target] = lines[target].split("] ", 1)[0] + "] {{{ not json"
    cuda_log.write_text("\n".join(lines))
    log = read_trace_log(cuda_log)
    assert log.problems.counts["bad_json"] == 1
    assert not any(record.kind == "dynamo_start" for record in log.records)
    assert any(record.kind == "dynamo_output_graph" for record in log.records)


def test_what_could_not_be_read_is_said_in_the_singular_for_one_and_the_plural_for_more(cuda_log):
    """`summary` said "1 records whose JSON could not be decoded"."""
    from cli_runner import run_cli

    lines = cuda_log.read_text().split("\n")
    starts = [i for i, line in enumerate(lines) if '"dynamo_start"' in line]
    lines[starts[0]] = lines[starts[0]].split("] ", 1)[0] + "] {{{ not json"
    cuda_log.write_text("\n".join(lines))
    assert "\n  1 record whose JSON could not be decoded" in run_cli("summary", cuda_log).stdout
    other = next(i for i, line in enumerate(lines) if '"dynamo_output_graph"' in line)
    lines[other] = lines[other].split("] ", 1)[0] + "] {{{ not json"
    cuda_log.write_text("\n".join(lines))
    assert "\n  2 records whose JSON could not be decoded" in run_cli("summary", cuda_log).stdout


def test_every_kind_of_damage_reads_right_for_one_and_for_more():
    """Each category's sentence names what it counts in the plural ("2 empty file" was printed), and
    said of one item its noun and the pronouns pointing back to it are singular."""
    from inspector.core.model.read_problems import CATEGORIES, said_of

    for category, meaning in CATEGORIES.items():
        one = said_of(1, meaning)
        assert said_of(2, meaning) == meaning and one != meaning, category
        assert not {"them", "their"} & set(one.split()), category


def test_md5_mismatch_is_counted_and_payload_still_readable(cuda_log):
    text = cuda_log.read_text()
    marker = "def forward(self"
    cuda_log.write_text(text.replace(marker, marker.replace("forward", "f0rward"), 1))
    log = read_trace_log(cuda_log)
    assert log.problems.counts["md5_mismatch"] == 1
    graph = next(r for r in log.records if r.kind == "dynamo_output_graph")
    assert "f0rward" in log.payload(graph)


def test_binary_garbage_and_non_utf8_bytes(cuda_log):
    data = cuda_log.read_bytes()
    middle = data.index(b"\nV", len(data) // 2) + 1
    garbage = b"\x00\xff\xfe garbage \x89PNG\r\n\x1a\n" + b"V0521 11:50:39.474000 1 x.py:1] {\"weird\": \"caf\xe9\"}\n"
    cuda_log.write_bytes(data[:middle] + garbage + data[middle:])
    log = read_trace_log(cuda_log)
    assert log.problems.counts["bad_prefix"] >= 1
    assert log.problems.counts["non_utf8"] == 2  # the garbage line and the record with a Latin-1 byte
    assert any(record.kind == "weird" for record in log.records)
    assert len(log.records) == len(read_trace_log(cuda_log).records)


def test_unknown_kinds_and_artifacts_are_kept_and_counted(cuda_log):
    extra = ('V0521 11:50:39.474000 1 x.py:1] {"brand_new_record": {"x": 1}, "frame_id": 0, '
             '"frame_compile_id": 0, "attempt": 0}\n')
    cuda_log.write_text(cuda_log.read_text() + extra)
    session = open_path(cuda_log)
    assert session.unknown_kinds == {"brand_new_record": 1}
    assert not session.problems
    assert any(a.name == "unknown: brand_new_record" for a in session.units[0].artifacts)


def test_missing_string_table_entry(cuda_log):
    lines = [line for line in cuda_log.read_text().split("\n") if '{"str": [' not in line]
    cuda_log.write_text("\n".join(lines))
    session = open_path(cuda_log)
    assert session.problems.counts["missing_string"] > 0
    assert session.units[0].user_stack[0].file.startswith("<unknown file")


def test_empty_file(tmp_path):
    empty = tmp_path / "dedicated_log_torch_trace_empty.log"
    empty.write_bytes(b"")
    session = open_path(empty)
    assert session.units == []
    assert session.problems.counts["empty_file"] == 1


def test_only_garbage_is_rejected_with_a_clear_message(tmp_path):
    junk = tmp_path / "notes.log"
    junk.write_bytes(b"\x00\x01binary junk\n")
    with pytest.raises(ValueError, match="not a TORCH_TRACE log"):
        open_path(junk)


def test_every_corpus_log_cut_at_any_point_keeps_what_came_before_and_counts_the_cut(corpus, tmp_path):
    """Cut each corpus log at many points: the reader returns the compile units that began before the
    cut (in order, as in the whole log), every lazy part can be touched, and the cut is counted."""
    for source in [corpus / "inductor_provenance_jit_cuda_log.txt",
                   *sorted((corpus / "multi_rank_logs").glob("*.log"))]:
        data = source.read_bytes()
        whole = [str(unit.compile_id) for unit in build_trace_session([source], source).units]
        for fraction in (0.05, 0.33, 0.5, 0.77, 0.999):
            cut = tmp_path / f"{source.stem}_{fraction}.log"
            cut.write_bytes(data[: int(len(data) * fraction)])
            session = build_trace_session([cut], cut)
            for unit in session.units:  # touching every lazy part must not raise either
                for artifact in unit.graphs.values():
                    artifact.graph
                unit.kernels
            kept = [str(unit.compile_id) for unit in session.units]
            assert kept == whole[:len(kept)], f"{cut.name}: units out of order or invented"
            if fraction >= 0.33:
                assert kept, f"{cut.name}: nothing kept of a third of a log"
            assert session.problems.total > 0 and not session.complete, f"{cut.name}: the cut went unnoticed"


def test_chunked_reading_gives_the_same_index_at_any_chunk_size(corpus, monkeypatch):
    """Records cut by a chunk boundary must be read whole once the next chunk arrives."""
    from inspector.core.readers import trace_scanner

    log = corpus / "multi_rank_logs" / "dedicated_log_torch_trace_rank_1.log"  # CRLF line ends too
    def index(read) -> list:
        rows = read.events
        return [(r.line_no, r.kind, r.payload_start, r.payload_end, r.payload_intact) for r in read.records] + \
            list(zip(rows.line_nos, rows.starts, rows.ends, rows.states))

    whole = index(read_trace_log(log))
    for chunk in (1000, 4096, 65536):
        monkeypatch.setattr(trace_scanner, "CHUNK_BYTES", chunk)
        chunked = read_trace_log(log)
        assert index(chunked) == whole
        assert not chunked.problems


def test_index_only_load_counts_damage_when_the_payload_is_read(cuda_log):
    text = cuda_log.read_text()
    cuda_log.write_text(text.replace("def forward(self", "def f0rward(self", 1))
    session = build_trace_session([cuda_log], cuda_log, verify_md5=False)
    assert not session.problems  # nothing read yet
    session.units[0].graphs["dynamo"].text
    assert session.problems.counts["md5_mismatch"] == 1


@pytest.mark.parametrize("duration", [-40.0, float("nan"), float("inf"), "40"])
def test_a_stage_that_ends_before_it_begins_is_counted_and_never_gives_negative_time(duration):
    """A complete (X) stage event whose duration is negative or no finite number is left out and
    counted; the compile's own times stay ≥ 0 and within the compile."""
    from inspector.core.analysis.compile_wall import wall_breakdown
    from inspector.core.model.compile_spans import build_spans
    from inspector.core.model.read_problems import ReadProblems

    events = [{"name": "dynamo", "ph": "B", "ts": 0.0, "pid": 0, "tid": 0, "args": {"compile_id": "0/0"}},
              {"name": "inductor_compile", "ph": "X", "ts": 50.0, "dur": duration, "pid": 0, "tid": 0},
              {"name": "code_gen", "ph": "X", "ts": 20.0, "dur": 40.0, "pid": 0, "tid": 0},
              {"name": "dynamo", "ph": "E", "ts": 100.0, "pid": 0, "tid": 0, "args": {"compile_id": "0/0"}}]
    problems = ReadProblems()
    forest = build_spans(events, problems)
    assert problems.counts["bad_trace_field"] == 1 and problems.total == 1
    assert [span.name for root in forest.roots for span in root.walk()] == ["dynamo", "code_gen"]
    breakdown = wall_breakdown([forest.roots])
    assert breakdown.own_s == pytest.approx({"dynamo": 60e-6, "code_gen": 40e-6})
    assert all(seconds >= 0 for seconds in breakdown.own_s.values())
