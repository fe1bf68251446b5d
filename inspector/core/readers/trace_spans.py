"""A rank's compile-stage spans, built from its chromium events when first asked for (a log's events
are its bulk, and opening it should not wait for them) and kept in the index cache beside its index:
`session_builder` hands each rank's `LazySpans` a `RankSpans`."""

from __future__ import annotations

from inspector.core.malloc_policy import give_back_free_memory
from inspector.core.model.compile_id import OUTSIDE_DYNAMO, CompileId
from inspector.core.model.compile_spans import SpanForest, build_spans, is_small_arg
from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers import index_cache
from inspector.core.readers.torch_trace import TraceLog
from inspector.core.readers.trace_records import TraceRecord


class RankSpans:
    """The builder a rank's `LazySpans` calls: its spans from the index cache, or made of its chromium
    events (by a forked copy of this process, `forked_parts.py`, or here), grouped by compile unit.
    With an `outside_dynamo` unit (torch.export, AOTInductor), the stages that name no compile id are
    that unit's."""

    def __init__(self, records: list[TraceRecord], log: TraceLog, outside_dynamo: bool):
        self.records, self.log = records, log
        self.unowned_key = OUTSIDE_DYNAMO.unit_key if outside_dynamo else None
        self.made: tuple[SpanForest, ReadProblems] | None = None  # the spans, once read from the cache or made
        self.fresh = False  # made, not read from the cache: to keep there

    @property
    def settled(self) -> bool:
        """Whether making the spans reads the log without settling any of it (every payload's md5 was
        checked): only then are spans made in another process the ones this one would make."""
        return self.log.checked

    def kept_in_cache(self) -> bool:
        """Whether the index cache holds these spans (read now, so they are not made again)."""
        if self.made is None:
            self.made = index_cache.load_spans(self.log)
        return self.made is not None

    def made_elsewhere(self, made: tuple[SpanForest, ReadProblems]) -> None:
        """Take the spans a forked copy of this process made of the same events."""
        self.made, self.fresh = made, True

    def forest(self) -> tuple[SpanForest, ReadProblems]:
        """The spans made of the log's events, and what is wrong in the events."""
        found = ReadProblems()  # what is wrong in the events, kept with the spans
        return build_spans(self._events(found), found), found

    def __call__(self) -> tuple[dict, list, dict]:
        log = self.log
        made, fresh = self.made, self.fresh
        if made is None:
            made = index_cache.load_spans(log)
        if made is None:
            made, fresh = self.forest(), True
            give_back_free_memory(log.size)
        if fresh:
            index_cache.store_spans(log, *made)
        forest, found = made
        log.problems.merge(found)
        by_unit: dict[tuple, list] = {}
        unowned = []
        for span in forest.roots:
            key = _unit_key(span.compile_id) or self.unowned_key
            (by_unit.setdefault(key, []) if key else unowned).append(span)
        markers: dict[tuple, list] = {}
        for marker in forest.markers:
            key = _unit_key(marker.compile_id) or self.unowned_key
            if key:
                markers.setdefault(key, []).append(marker)
        return by_unit, unowned, markers

    def _in_file_order(self):
        """(line, event, compile id, whether its payload was damaged) of each chromium event: the
        log's event rows, and the records of the odd event a row cannot hold, in the order of the log."""
        log = self.log
        rows = log.events
        records_left = iter(self.records)
        record = next(records_left, None)
        for row in range(len(rows)):
            line_no = rows.line_nos[row]
            while record is not None and record.line_no < line_no:
                yield self._record_event(record)
                record = next(records_left, None)
            event = log.event_json(row)
            yield line_no, event, rows.compile_ids[row], rows.states[row] == rows.DAMAGED
        while record is not None:
            yield self._record_event(record)
            record = next(records_left, None)

    def _record_event(self, record: TraceRecord):
        event = self.log.payload_json(record) if record.has_payload else record.meta
        return record.line_no, event, record.compile_id, record.payload_intact is False

    def _events(self, problems: ReadProblems):
        """Each event, read as build_spans takes it (one at a time: held together, a big log's tens
        of thousands of parsed events raise its peak memory: docs/benchmarks.md, "Hold less")."""
        for line_no, event, compile_id, damaged in self._in_file_order():
            if not isinstance(event, dict) or not event:
                if not damaged:  # damaged payloads are counted already
                    problems.add("bad_record", f"line {line_no}: chromium_event payload is not JSON")
                continue
            args = event.get("args")
            own = isinstance(args, dict)
            args = args if own else {}
            if not is_small_arg(args.get("compile_id")) and compile_id is not None:  # none a span keeps
                yield {**event, "args": {**args, "compile_id": str(compile_id)[1:-1]}}
            else:
                yield event if own else {**event, "args": args}  # as it is where it can be: build_spans only reads it


def _unit_key(compile_id_text: str | None) -> tuple | None:
    compile_id = CompileId.parse(compile_id_text) if compile_id_text else None
    return compile_id.unit_key if compile_id else None
