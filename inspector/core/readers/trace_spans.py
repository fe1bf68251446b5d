"""A rank's compile-stage spans, built from its chromium events when first asked for (a log's events
are its bulk, and opening it should not wait for them) and kept in the index cache beside its index:
`session_builder` hands each rank's `LazySpans` the builder made here."""

from __future__ import annotations

from inspector.core.malloc_policy import give_back_free_memory
from inspector.core.model.compile_id import OUTSIDE_DYNAMO, CompileId
from inspector.core.model.compile_spans import build_spans, is_small_arg
from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers import index_cache
from inspector.core.readers.torch_trace import TraceLog
from inspector.core.readers.trace_records import TraceRecord


def span_builder(records: list[TraceRecord], log: TraceLog, outside_dynamo: bool):
    """A deferred build of the rank's spans, grouped by compile unit; with an `outside_dynamo` unit
    (torch.export, AOTInductor), the stages that name no compile id are that unit's."""
    unowned_key = OUTSIDE_DYNAMO.unit_key if outside_dynamo else None

    def in_file_order():
        """(line, event, compile id, whether its payload was damaged) of each chromium event: the
        log's event rows, and the records of the odd event a row cannot hold, in the order of the log."""
        rows = log.events
        records_left = iter(records)
        record = next(records_left, None)
        for row in range(len(rows)):
            line_no = rows.line_nos[row]
            while record is not None and record.line_no < line_no:
                yield _record_event(record)
                record = next(records_left, None)
            event = log.event_json(row)
            yield line_no, event, rows.compile_ids[row], rows.states[row] == rows.DAMAGED
        while record is not None:
            yield _record_event(record)
            record = next(records_left, None)

    def _record_event(record: TraceRecord):
        event = log.payload_json(record) if record.has_payload else record.meta
        return record.line_no, event, record.compile_id, record.payload_intact is False

    def events(problems: ReadProblems):
        """Each event, read as build_spans takes it (one at a time: held together, a big log's tens
        of thousands of parsed events cost ~2.5 KB each)."""
        for line_no, event, compile_id, damaged in in_file_order():
            if not isinstance(event, dict) or not event:
                if not damaged:  # damaged payloads are counted already
                    problems.add("bad_record", f"line {line_no}: chromium_event payload is not JSON")
                continue
            args = event.get("args") if isinstance(event.get("args"), dict) else {}
            if not is_small_arg(args.get("compile_id")) and compile_id is not None:  # none a span keeps
                args = {**args, "compile_id": str(compile_id)[1:-1]}
            yield {**event, "args": args}

    def build():
        cached = index_cache.load_spans(log)
        if cached is None:
            found = ReadProblems()  # what is wrong in the events, kept with the spans
            forest = build_spans(events(found), found)
            give_back_free_memory(log.size)
            index_cache.store_spans(log, forest, found)
        else:
            forest, found = cached
        log.problems.merge(found)
        by_unit: dict[tuple, list] = {}
        unowned = []
        for span in forest.roots:
            key = _unit_key(span.compile_id) or unowned_key
            (by_unit.setdefault(key, []) if key else unowned).append(span)
        markers: dict[tuple, list] = {}
        for marker in forest.markers:
            key = _unit_key(marker.compile_id) or unowned_key
            if key:
                markers.setdefault(key, []).append(marker)
        return by_unit, unowned, markers

    return build


def _unit_key(compile_id_text: str | None) -> tuple | None:
    compile_id = CompileId.parse(compile_id_text) if compile_id_text else None
    return compile_id.unit_key if compile_id else None
