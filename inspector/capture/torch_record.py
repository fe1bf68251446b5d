"""Torch's own record of a capture's run (torch_record.json), kept by hooks inside the user's Python:
the oracle the app's facts are held to. Apart from the runner because it is the one part that patches
torch's functions, and so the part whose promise — nothing the program does changes — needs its own
reading and tests (tests/test_capture_torch_record.py). Standard library and torch only (torch is
handed in); loaded by file path by runner.py, as options.py is."""

from __future__ import annotations

import json
import os
from pathlib import Path

TORCH_RECORD = "torch_record.json"  # as inspector/core/readers/session_format.py names it
KERNEL_DEFINITION = ("= async_compile.cpp_pybinding(", "= async_compile.cpp(", "= async_compile.triton(")


class TorchRecorder:
    """Torch's own in-process record of the run, written at its end to torch_record.json: the oracle
    the app's facts are held to (bench/oracle). Counters as torch keeps them; every compilation's
    metrics (torch keeps only the last 64: ours are taken as each is appended); every failed guard of
    every recompile (torch names the first failure of each cache entry: each guarded source is
    checked on its own here); the kernels each output code defines, subgraphs included.

    Nothing here may change what the program does: each hook passes torch's values through
    untouched, an error inside a hook is counted in `hook_errors` and never raised, and `write()`
    puts torch's functions back before it writes. A guard is only ever checked on a copy of its tree
    (torch counts the failures of its own tree's nodes to choose which to check first)."""

    def __init__(self, torch, session: Path):
        self.torch, self.path = torch, session / TORCH_RECORD
        self.metrics: list = []
        self.recompiles: list[dict] = []
        self.output_code: dict[tuple[str, str], dict] = {}
        self.hook_errors: list[str] = []
        self.undo: list = []

    def _failed(self, where: str, error: BaseException) -> None:
        if len(self.hook_errors) < 100:
            self.hook_errors.append(f"{where}: {type(error).__name__}: {error}"[:500])

    def __enter__(self) -> "TorchRecorder":
        self.install()
        return self

    def __exit__(self, *exc_info) -> None:
        self.write()

    def install(self) -> None:
        for hook in (self._keep_every_metric, self._read_every_guard_failure, self._count_output_kernels):
            try:
                hook()
            except Exception as error:  # a torch without the hooked function: that part is not recorded
                self._failed(hook.__name__, error)

    def _keep_every_metric(self) -> None:
        import collections

        from torch._dynamo import utils

        sink = self.metrics

        class Recording(collections.deque):
            def append(self, item):
                super().append(item)
                sink.append(item)

        original = utils._compilation_metrics
        utils._compilation_metrics = Recording(original, maxlen=original.maxlen)
        self.undo.append(lambda: setattr(utils, "_compilation_metrics", collections.deque(
            utils._compilation_metrics, maxlen=original.maxlen)))

    def _read_every_guard_failure(self) -> None:
        from torch._dynamo import convert_frame

        original = convert_frame.get_and_maybe_log_recompilation_reasons
        record = self

        def reading(cache_entries, frame, backend, skip_logging=False, *rest, **named):
            reasons = original(cache_entries, frame, backend, skip_logging, *rest, **named)
            if not skip_logging:
                try:
                    record._note_recompile(cache_entries, frame, backend, reasons)
                except Exception as error:
                    record._failed("recompile", error)
            return reasons

        convert_frame.get_and_maybe_log_recompilation_reasons = reading
        self.undo.append(lambda: setattr(convert_frame, "get_and_maybe_log_recompilation_reasons", original))

    def _note_recompile(self, cache_entries, frame, backend, reasons) -> None:
        code = frame.f_code
        logged = [str(reason).split("\nUser stack trace:")[0].strip() for reason in reasons]
        entries = []
        for entry in cache_entries:
            entries.append({"compile_id": str(entry.compile_id),
                            "failures": self._every_failure(entry, frame.f_locals, backend, logged)})
        compile_id = self.torch._guards.CompileContext.current_compile_id()
        self.recompiles.append({
            "compile_id": None if compile_id is None else str(compile_id), "co_name": code.co_name,
            "co_filename": code.co_filename, "co_firstlineno": code.co_firstlineno,
            "reasons": [str(reason) for reason in reasons], "cache_entries": entries})

    def _every_failure(self, entry, f_locals, backend, logged: list[str]) -> list[str]:
        """Every guarded source of the cache entry whose guards fail now, each as torch words its
        first failure: the entry's guard tree cut down to the path to that one source (as torch cuts
        its diff guard tree, `clone_manager`) and checked alone."""
        import copy

        from torch._dynamo.guards import get_guard_fail_reason_helper

        wrapper = entry.guard_manager
        invalidated = getattr(wrapper, "invalidation_reason", None)
        if invalidated:  # torch deleted the entry (a global it relied on changed): its own words
            return [f"{entry.compile_id}: {invalidated}"]
        root = getattr(wrapper, "root", None)
        if root is None or wrapper.global_scope is None:
            return []
        failures = []
        for chain in _guarded_paths(root, MAX_GUARDED_PATHS):
            kept = {root.get_source(), *chain}
            alone_root = root.clone_manager(lambda node, kept=kept: node.get_source() in kept)
            if alone_root is None or alone_root.check(f_locals):
                continue
            alone = copy.copy(wrapper)
            alone.root = alone_root
            reason = get_guard_fail_reason_helper(alone, f_locals, entry.compile_id, backend)
            first = reason.split("\nUser stack trace:")[0].strip()
            if first and first not in failures:
                failures.append(first)
        if not failures:  # a guard of no one source (relations between sizes): what torch logged
            failures.extend(reason for reason in logged if reason.startswith(f"{entry.compile_id}:"))
        return failures

    def _count_output_kernels(self) -> None:
        from torch._inductor.codecache import PyCodeCache

        original = PyCodeCache.__dict__["load_by_key_path"]
        record = self

        def loading(cls, key, path, *args, **named):
            module = original.__func__(cls, key, path, *args, **named)
            try:
                record._note_output_code(key, path)
            except Exception as error:
                record._failed("output code", error)
            return module

        PyCodeCache.load_by_key_path = classmethod(loading)
        self.undo.append(lambda: setattr(PyCodeCache, "load_by_key_path", original))

    def _note_output_code(self, key: str, path: str) -> None:
        """One output code per compile: a cache hit loads the same file as the compile it hit."""
        compile_id = self.torch._guards.CompileContext.current_compile_id()
        if (str(compile_id), path) in self.output_code:
            return
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        if "def call(" not in text:  # a kernel's own module, not a graph's output code
            return
        self.output_code[str(compile_id), path] = {
            "compile_id": None if compile_id is None else str(compile_id), "key": key,
            "kernels": sum(text.count(marker) for marker in KERNEL_DEFINITION),
            "extern_calls": text.count("extern_kernels.")}

    def write(self) -> None:
        """Write what was recorded, then take the hooks out. Never raises."""
        import dataclasses

        document = {"format_version": 1, "torch": self.torch.__version__}
        try:
            from torch._dynamo.utils import counters

            document["counters"] = {group: {str(name): count for name, count in values.items()}
                                    for group, values in counters.items()}
        except Exception as error:
            self._failed("counters", error)
        metrics = []
        for item in self.metrics:
            try:
                fields = dataclasses.asdict(item) if dataclasses.is_dataclass(item) else dict(item)
                metrics.append({key: sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
                                for key, value in fields.items()})
            except Exception as error:
                self._failed("metrics", error)
        document.update(compilation_metrics=metrics, recompiles=self.recompiles,
                        output_code=list(self.output_code.values()))
        for undo in reversed(self.undo):
            try:
                undo()
            except Exception as error:
                self._failed("remove", error)
        document["hook_errors"] = self.hook_errors
        try:
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text(json.dumps(document, indent=1, default=str), encoding="utf-8")
            os.replace(temporary, self.path)
        except (OSError, TypeError, ValueError):
            pass


MAX_GUARDED_PATHS = 4000  # guarded sources checked one by one per cache entry at a recompile


def _guarded_paths(root, limit: int):
    """The source of each guard manager holding guards, with the sources on its way from the root."""
    pending = [(root, ())]
    while pending and limit > 0:
        manager, chain = pending.pop()
        children = list(manager.get_child_managers())
        if hasattr(manager, "get_key_value_managers"):  # a dict's guards hang off key and value managers
            for key_manager, value_manager in manager.get_key_value_managers().values():
                children += [child for child in (key_manager, value_manager) if child is not None]
        for child in children:
            path = (*chain, child.get_source())
            if child.get_leaf_guards():
                limit -= 1
                yield path
            pending.append((child, path))
