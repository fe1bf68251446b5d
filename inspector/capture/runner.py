"""Runs inside the user's Python (their torch, their GPU): executes a model script under TORCH_TRACE
and, for entry-point scripts, measures eager against compiled. Standard library and torch only; it is
started by file path, so it needs nothing else of ours to be importable.

    python runner.py --session DIR [--mode M] [--dynamic auto|true|false] [--fullgraph] [--backend B]
                     [--device cpu|cuda] [--runs ROUNDS] [--warmup N] [--round-time S] [--no-profile]
                     SCRIPT [ARGS...]

It talks to the app through files in DIR: progress.jsonl (one JSON event per line, flushed as it
happens), results.json (rewritten after every phase, so a crash keeps what was measured), profile/,
graphs/. The event and file formats are documented in docs/capture-session.md.
"""

from __future__ import annotations

import argparse
import ast
import json
import logging
import os
import platform
import resource
import runpy
import signal
import statistics
import sys
import time
import traceback
from pathlib import Path



def _load_options():
    """options.py beside this file, loaded by path under a private name: the runner is started by file
    path in the user's interpreter, where our package may not be importable and a user module called
    `options` must not be shadowed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_inspector_capture_options", Path(__file__).with_name("options.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while they are built
    spec.loader.exec_module(module)
    return module


_OPTIONS = _load_options()
EXIT_SCRIPT_ERROR = 1
EXIT_NO_TORCH = 3
MIN_TORCH = (2, 1)
RTOL, ATOL = 1e-4, 1e-5
PROFILE_WARMUP = 1
PROFILE_CALLS = (10, 50)  # fewest and most profiled calls (the Chrome trace grows with each)
PROFILE_BUDGET_S = 0.2  # profiled time aimed for, between those bounds
TOP_KERNELS = 60


class Progress:
    """The line-delimited JSON event stream the app reads while the run goes on."""

    def __init__(self, path: Path):
        self.handle = open(path, "a", buffering=1, encoding="utf-8")

    def emit(self, event: str, **fields) -> None:
        self.handle.write(json.dumps({"t": time.time(), "event": event, **fields}, default=str) + "\n")

    def phase(self, name: str, state: str, **fields) -> None:
        self.emit("phase", phase=name, state=state, **fields)


class Results:
    """results.json, rewritten atomically after each phase."""

    def __init__(self, path: Path):
        self.path = path
        self.data: dict = {"format_version": 1}

    def update(self, **fields) -> None:
        self.data.update(fields)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.data, indent=1, default=str), encoding="utf-8")
        os.replace(temporary, self.path)


class StageRelay(logging.Handler):
    """Forwards torch's compile-stage begin/end events (chromium events of the structured trace) to
    the progress stream, so the app lights up each stage as it happens."""

    def __init__(self, progress: Progress):
        super().__init__(logging.DEBUG)
        self.progress = progress

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if not isinstance(metadata, dict) or "chromium_event" not in metadata:
            return
        try:
            event = json.loads(getattr(record, "payload", "") or "{}")
        except ValueError:
            return
        if event.get("ph") in ("B", "E"):
            self.progress.emit("stage", name=event.get("name"), ph=event["ph"],
                               compile_id=(event.get("args") or {}).get("compile_id"))


def record_graphs(torch, folder: Path, progress: Progress) -> None:
    """Save every graph Dynamo hands to a backend with its exact node metadata (module stack, source
    stack, shapes), then pass it on unchanged. Hooks OutputGraph.call_user_compiler; on a torch
    without it, says so and records nothing."""
    from torch._dynamo import output_graph

    original = getattr(output_graph.OutputGraph, "call_user_compiler", None)
    if original is None:
        progress.emit("warning", message="structured graphs not recorded: this torch has no OutputGraph.call_user_compiler")
        return
    folder.mkdir(parents=True, exist_ok=True)

    def recording(self, gm, example_inputs):
        try:
            compile_id = str(torch._guards.CompileContext.current_compile_id())
            document = {"compile_id": compile_id, "nodes": [_node_record(node) for node in gm.graph.nodes]}
            name = compile_id.replace("/", "_").replace("!", "ca") + ".json"
            (folder / name).write_text(json.dumps(document, default=str), encoding="utf-8")
        except Exception as error:  # recording must never change the compile
            progress.emit("warning", message=f"graph not recorded: {type(error).__name__}: {error}")
        return original(self, gm, example_inputs)

    output_graph.OutputGraph.call_user_compiler = recording


TORCH_RECORD = "torch_record.json"  # as inspector/core/readers/session_format.py names it
KERNEL_DEFINITION = ("= async_compile.cpp_pybinding(", "= async_compile.cpp(", "= async_compile.triton(")


class TorchRecord:
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

    def __enter__(self) -> "TorchRecord":
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


def _node_record(node) -> dict:
    meta = node.meta
    value = meta.get("example_value", meta.get("val"))
    shape = dtype = stride = None
    if hasattr(value, "shape"):
        shape = [str(dim) for dim in value.shape]
        dtype = str(getattr(value, "dtype", ""))
        try:
            stride = [str(s) for s in value.stride()]
        except Exception:
            stride = None
    stack = meta.get("nn_module_stack") or {}
    return {
        "name": node.name, "op": node.op, "target": _target_name(node.target),
        "inputs": [arg.name for arg in node.all_input_nodes],
        "shape": shape, "dtype": dtype, "stride": stride,
        "nn_module_stack": [[key, str(path), getattr(kind, "__name__", str(kind))] for key, (path, kind) in stack.items()]
        if isinstance(stack, dict) else [],
        "source_fn_stack": [[name, getattr(fn, "__name__", str(fn))] for name, fn in meta.get("source_fn_stack") or []],
        "stack_trace": meta.get("stack_trace"),
    }


def _target_name(target) -> str:
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or str(target)
    return f"{module}.{name}" if module and not str(name).startswith(module) else str(name)


def defines_entry_point(script: Path) -> bool:
    """Whether the script defines inspector_model() at top level, read from its syntax (not run)."""
    try:
        tree = ast.parse(script.read_text(encoding="utf-8"), str(script))
    except (OSError, SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.FunctionDef) and node.name == "inspector_model" for node in tree.body)


def explain(error: BaseException) -> tuple[str, str]:
    """(kind, one line) for the errors people hit when compiling."""
    name = type(error).__name__
    text = str(error).strip().split("\n")[0][:400]
    if name == "InvalidCxxCompiler" or "InvalidCxxCompiler" in text:
        return "no_cxx_compiler", "Inductor on CPU needs a C++ compiler (g++): install it or set CXX. " + text
    if name == "Unsupported" or "fullgraph" in str(error)[:2000]:
        return "graph_break_in_fullgraph", f"fullgraph=True but the graph breaks: {text}"
    if name == "BackendCompilerFailed":
        return "backend_failed", f"the backend failed: {text}"
    if name in ("TorchRuntimeError", "UserError", "InternalTorchDynamoError"):
        return "dynamo_error", f"Dynamo could not compile the model: {text}"
    return "script_error", f"{name}: {text}"


def script_line(error: BaseException, script: Path) -> dict:
    """{file, line} of the script's last line the error passed through (where the user's code called
    what raised), or {} when it never did."""
    target = os.path.realpath(script)
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if os.path.realpath(frame.filename) == target]
    return {"file": frames[-1].filename, "line": frames[-1].lineno} if frames else {}


class Measurer:
    """Eager against compiled for an entry-point script: times, correctness, memory, profiles."""

    def __init__(self, torch, args, session: Path, progress: Progress, results: Results):
        self.torch, self.args, self.session = torch, args, session
        self.progress, self.results = progress, results
        self.cuda = args.device == "cuda"

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()

    def to_device(self, value):
        torch = self.torch
        if isinstance(value, torch.Tensor) or isinstance(value, torch.nn.Module):
            return value.to(self.args.device)
        if isinstance(value, (list, tuple)):
            return type(value)(self.to_device(item) for item in value)
        if isinstance(value, dict):
            return {key: self.to_device(item) for key, item in value.items()}
        return value

    def warm(self, fn, inputs, calls: int):
        output = None
        for _ in range(calls):
            output = fn(*inputs)
        self.sync()
        return output

    def round_time(self, fn, inputs) -> tuple[float, int]:
        """(seconds per call, calls) of one round: as many calls as fit the round's time budget.
        On CPU torch.utils.benchmark's Timer picks the block size and runs with the torch threads the
        user set (its default would be 1); on CUDA, CUDA events around the same calls, synchronised."""
        budget = self.args.round_time
        if self.cuda:
            return cuda_round(self.torch, fn, inputs, budget)
        from torch.utils.benchmark import Timer

        timer = Timer("fn(*inputs)", globals={"fn": fn, "inputs": inputs}, num_threads=self.torch.get_num_threads())
        measured = timer.blocked_autorange(min_run_time=budget)
        return measured.median, len(measured.times) * measured.number_per_run

    def interleaved(self, eager, compiled, inputs) -> list[dict]:
        """Eager and compiled in alternating rounds (the order swapped every round: eager, compiled,
        compiled, eager, …) so both see the same machine; a burst of other work hits both."""
        rounds = []
        for index in range(max(1, self.args.runs)):
            order = (("eager", eager), ("compiled", compiled))
            row = {"order": "eager first" if index % 2 == 0 else "compiled first"}
            for label, fn in order if index % 2 == 0 else reversed(order):
                row[f"{label}_s"], row[f"{label}_calls"] = self.round_time(fn, inputs)
            rounds.append(row)
            self.progress.emit("round", index=index, eager_s=row["eager_s"], compiled_s=row["compiled_s"])
        return rounds

    def memory_phase_start(self) -> dict:
        """Start one phase's memory figure: the peaks reset so the phase inherits no earlier one's
        (RSS high-water via /proc/self/clear_refs, CUDA peak stats); what is held now, to compare."""
        start = {"cpu_rss_start_mb": rss_mb("VmRSS")}
        if self.cuda:
            self.sync()
            self.torch.cuda.reset_peak_memory_stats()
            start["cuda_allocated_start_mb"] = self.torch.cuda.memory_allocated() / 2**20
        if reset_rss_peak():
            self.results.update(memory_method=MEMORY_ISOLATED + (MEMORY_CUDA if self.cuda else ""))
        else:  # the kernel refused: the running peak, which a later phase can only equal or exceed
            self.results.update(memory_method=MEMORY_RUNNING + (MEMORY_CUDA if self.cuda else ""))
        return start

    def memory_phase_end(self, start: dict) -> dict:
        """The phase's peak: RSS high-water since its start, and CUDA's peak allocated since its start."""
        self.sync()
        usage = {"cpu_rss_high_water_mb": rss_mb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                 **start}
        if self.cuda:
            usage["cuda_max_allocated_mb"] = self.torch.cuda.max_memory_allocated() / 2**20
        return {key: value for key, value in usage.items() if value is not None}

    def run(self, module: dict) -> None:
        torch, args = self.torch, self.args
        from torch._dynamo.utils import calculate_time_spent, counters

        model, example = module["inspector_model"]()
        model, example = self.to_device(model), tuple(self.to_device(example))
        more = [tuple(self.to_device(inputs)) for inputs in module.get("inspector_inputs", lambda: [])()]
        self.results.update(threads=torch.get_num_threads(), runs=args.runs, warmup=args.warmup,
                            tolerance={"rtol": RTOL, "atol": ATOL}, grad_mode="no_grad")
        with torch.no_grad():
            self.progress.phase("baseline", "start")
            memory = self.memory_phase_start()
            eager_out = self.warm(model, example, max(1, args.warmup))
            self.results.update(memory_eager=self.memory_phase_end(memory))
            self.progress.phase("baseline", "end")

            if args.profile and not self.cuda:
                torch._inductor.config.cpp.enable_kernel_profile = True  # C++ kernels show in the profile
            compiled = torch.compile(model, **compile_kwargs(args))
            self.progress.phase("compile", "start")
            before = calculate_time_spent()
            memory = self.memory_phase_start()
            start = time.perf_counter()
            first_out = compiled(*example)
            self.sync()
            first_call = time.perf_counter() - start
            self.results.update(memory_compile=self.memory_phase_end(memory))
            phases = {key: value - before.get(key, 0.0) for key, value in calculate_time_spent().items()}
            t_compile = phases.get("entire_frame_compile")
            self.results.update(t_first_call_s=first_call, t_compile_s=t_compile, compile_phases_s=phases)
            self.progress.phase("compile", "end", seconds=first_call)

            self.progress.phase("inputs", "start", count=len(more))
            checks = [compare(torch, eager_out, first_out, "example")]
            for index, inputs in enumerate(more):
                checks.append(compare(torch, model(*inputs), compiled(*inputs), f"inputs[{index}]"))
            self.results.update(correctness=checks, allclose=all(check["allclose"] for check in checks))
            self.progress.phase("inputs", "end")

            self.progress.phase("benchmark", "start")
            memory = self.memory_phase_start()
            self.warm(compiled, example, max(1, args.warmup))
            self.results.update(memory_compiled=self.memory_phase_end(memory))
            watch = MachineWatch(torch)
            rounds = self.interleaved(model, compiled, example)
            eager = spread([row["eager_s"] for row in rounds])
            steady = spread([row["compiled_s"] for row in rounds])
            self.results.update(eager=eager, compiled=steady, timing={
                "method": "interleaved rounds" + (", CUDA events" if self.cuda else ", torch.utils.benchmark.Timer.blocked_autorange"),
                "round_budget_s": args.round_time, "rounds": rounds, "environment": watch.finish()})
            self.progress.phase("benchmark", "end", median_s=steady["median_s"])

            if args.profile:
                self.progress.phase("profile", "start")
                calls = profile_calls(steady["median_s"])
                profiles = {label: self.profile(fn, example, label, calls)
                            for label, fn in (("eager", model), ("compiled", compiled))}
                self.results.update(profile=profiles)
                self.progress.phase("profile", "end")
        self.results.update(counters={group: dict(values) for group, values in counters.items()})

    def profile(self, fn, inputs, label: str, calls: int) -> dict:
        """`calls` profiled calls after one profiled warm-up call that the schedule discards (the
        profiler's own start-up lands there), so per-call times divide by calls that were measured."""
        from torch.profiler import ProfilerActivity, profile, schedule

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.cuda else [])
        wall = 0.0
        with profile(activities=activities, schedule=schedule(wait=0, warmup=PROFILE_WARMUP, active=calls, repeat=1)) as prof:
            for step in range(PROFILE_WARMUP + calls):
                start = time.perf_counter()
                fn(*inputs)
                self.sync()
                if step >= PROFILE_WARMUP:
                    wall += time.perf_counter() - start
                prof.step()
        folder = self.session / "profile"
        folder.mkdir(exist_ok=True)
        prof.export_chrome_trace(str(folder / f"{label}.json"))
        rows = []
        for event in prof.key_averages():
            device_us = getattr(event, "self_device_time_total", None)
            if device_us is None:
                device_us = getattr(event, "self_cuda_time_total", 0)
            rows.append({"name": event.key, "count": event.count, "self_cpu_us": event.self_cpu_time_total,
                         "cpu_total_us": event.cpu_time_total, "self_device_us": device_us})
        key = "self_device_us" if self.cuda else "self_cpu_us"
        rows.sort(key=lambda row: -row[key])
        return {"trace": f"profile/{label}.json", "runs": calls, "warmup_excluded": PROFILE_WARMUP, "wall_s": wall,
                "time_key": key, "ops": rows[:TOP_KERNELS]}


MEMORY_ISOLATED = ("peak per phase: the process's RSS high-water mark reset at each phase's start "
                   "(/proc/self/clear_refs)")
MEMORY_RUNNING = ("the process's running RSS high-water mark (could not be reset here): a later phase includes "
                  "every earlier phase's peak")
MEMORY_CUDA = "; CUDA: peak allocated, its statistics reset at each phase's start"


def reset_rss_peak() -> bool:
    """Reset this process's RSS high-water mark (VmHWM) to what it holds now: Linux, writing 5 to
    /proc/self/clear_refs. False where that is refused or absent."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        return False
    return rss_mb("VmHWM") is not None


def rss_mb(field: str) -> float | None:
    """A memory line of /proc/self/status (VmRSS, VmHWM) in MB; None without /proc."""
    status = _read("/proc/self/status") or ""
    for line in status.splitlines():
        if line.startswith(field + ":"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) / 1024
    return None


def cuda_round(torch, fn, inputs, budget: float) -> tuple[float, int]:
    """One GPU round: blocks of calls between CUDA events, doubling the block until a block fills
    a tenth of the budget, then blocks until the budget is spent; the median block's time per call.
    (Written for CUDA machines; the CPU path above is the one tested here.)"""
    block, times, spent = 1, [], 0.0
    while spent < budget:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(block):
            fn(*inputs)
        end.record()
        end.synchronize()
        seconds = start.elapsed_time(end) / 1e3
        spent += seconds
        if seconds < budget / 10 and not times:
            block *= 2
            continue
        times.append((seconds / block, block))
    if not times:  # the budget ran out while sizing the block: the last block is the round
        times.append((seconds / block, block))
    per_call = statistics.median(t for t, _ in times)
    return per_call, sum(calls for _, calls in times)


def profile_calls(call_s: float) -> int:
    """Enough calls for the profile to mean something, bounded so a slow model is not profiled for long."""
    low, high = PROFILE_CALLS
    return int(min(high, max(low, PROFILE_BUDGET_S / call_s))) if call_s > 0 else low


class MachineWatch:
    """What else the machine was doing while we timed: load average before and after, CPU time all
    processes used (/proc/stat, Linux) less our own, torch threads against cores, the thread
    variables, CPU model and frequency governor where readable."""

    THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_PROC_BIND",
                        "OMP_PLACES", "KMP_AFFINITY", "GOMP_CPU_AFFINITY", "TORCHINDUCTOR_COMPILE_THREADS")

    def __init__(self, torch):
        self.torch = torch
        self.load_before = _load_average()
        self.start = time.perf_counter(), _busy_cpu_seconds(), _own_cpu_seconds()

    def finish(self) -> dict:
        wall0, busy0, own0 = self.start
        wall, busy, own = time.perf_counter() - wall0, _busy_cpu_seconds(), _own_cpu_seconds()
        others = max(0.0, (busy - busy0) - (own - own0)) / wall if busy is not None and busy0 is not None and wall > 0 else None
        try:
            cores = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cores = os.cpu_count()
        return {"cores": cores, "cpu_count": os.cpu_count(), "torch_threads": self.torch.get_num_threads(),
                "torch_interop_threads": self.torch.get_num_interop_threads(),
                "load_before": self.load_before, "load_during": _load_average(), "benchmark_wall_s": wall,
                "others_cpu_cores": others, "own_cpu_cores": (own - own0) / wall if wall > 0 else None,
                "thread_variables": {key: os.environ[key] for key in self.THREAD_VARIABLES if key in os.environ},
                "cpu_model": _cpu_model(), "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")}


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _busy_cpu_seconds() -> float | None:
    """Non-idle CPU seconds of all processes since boot (first line of /proc/stat), or None."""
    line = (_read("/proc/stat") or "").split("\n")[0].split()
    if not line or line[0] != "cpu":
        return None
    ticks = [int(value) for value in line[1:9]]
    idle = ticks[3] + ticks[4]  # idle + iowait
    return (sum(ticks) - idle) / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def _cpu_model() -> str | None:
    for line in (_read("/proc/cpuinfo") or "").split("\n"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def spread(times: list[float]) -> dict:
    ordered = sorted(times)
    quarter = max(0, len(ordered) // 4)
    return {"n": len(times), "median_s": statistics.median(times), "min_s": ordered[0], "max_s": ordered[-1],
            "mean_s": statistics.fmean(times), "stdev_s": statistics.stdev(times) if len(times) > 1 else 0.0,
            "p25_s": ordered[quarter], "p75_s": ordered[-1 - quarter]}


def compare(torch, expected, actual, label: str) -> dict:
    pairs = list(zip(_leaves(torch, expected), _leaves(torch, actual)))
    worst_abs = worst_rel = 0.0
    close = len(_leaves(torch, expected)) == len(_leaves(torch, actual))
    for want, got in pairs:
        want, got = want.detach().float(), got.detach().float()
        if want.shape != got.shape:
            close = False
            continue
        diff = (want - got).abs()
        if diff.numel():
            worst_abs = max(worst_abs, diff.max().item())
            worst_rel = max(worst_rel, (diff / want.abs().clamp_min(1e-12)).max().item())
        close = close and torch.allclose(want, got, rtol=RTOL, atol=ATOL)
    return {"inputs": label, "outputs": len(pairs), "max_abs_error": worst_abs, "max_rel_error": worst_rel,
            "allclose": bool(close)}


def _leaves(torch, value) -> list:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(torch, item)]
    if isinstance(value, dict):
        return [leaf for key in sorted(value, key=str) for leaf in _leaves(torch, value[key])]
    return []


def compile_kwargs(args) -> dict:
    kwargs = {"backend": args.backend, "fullgraph": args.fullgraph,
              "dynamic": {"auto": None, "true": True, "false": False}[args.dynamic]}
    if args.mode != "default":
        kwargs["mode"] = args.mode
    return kwargs


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="runner.py")
    parser.add_argument("--session", required=True, type=Path)
    _OPTIONS.add_arguments(parser, runner_only=True)  # the options' one declaration, in options.py
    parser.add_argument("script", type=Path)
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    return parser.parse_args(argv)


def copy_break_registry(torch, session: Path) -> None:
    """Keep this torch's graph-break registry (GB ids, explanations, hints) with the session: the app
    that opens it later may have another torch, or none."""
    registry = Path(torch.__file__).parent / "_dynamo" / "graph_break_registry.json"
    try:
        (session / registry.name).write_bytes(registry.read_bytes())
    except OSError:
        pass  # torch < 2.7 has no registry: the app falls back to its own copy


class ScriptAsMain:
    """The user's script run as `python script.py` would run it: its module is `sys.modules['__main__']`
    for the whole run (Dynamo imports a compiled function's module by its `__name__` to store a
    global or guard on an import; pickle finds the script's classes there), `__file__` is set, its
    folder is first on `sys.path` in place of the runner's, and `sys.argv` is what the user gave. All
    of it is put back when the run ends.

    An entry-point script (one defining `inspector_model()`) is named `__mp_main__`, aliased as
    `__main__`, as multiprocessing's spawn runs a main module: its `if __name__ == "__main__":` block,
    which usually compiles and calls the model itself, does not run, so the measured compile is ours."""

    MAIN = "__main__"
    ENTRY_POINT_NAME = "__mp_main__"

    def __init__(self, script: Path, script_args: list[str], entry_point: bool):
        self.script, self.argv = script, [str(script), *script_args]
        self.name = self.ENTRY_POINT_NAME if entry_point else self.MAIN
        self.module = None
        self.saved = None

    def __enter__(self) -> "ScriptAsMain":
        import importlib.machinery
        import types

        self.module = types.ModuleType(self.name)
        path = str(self.script)
        self.module.__dict__.update(__file__=path, __cached__=None, __package__=None, __spec__=None,
                                    __loader__=importlib.machinery.SourceFileLoader(self.name, path))
        names = {self.MAIN, self.name}
        self.saved = ({name: sys.modules.get(name) for name in names}, list(sys.path), list(sys.argv))
        for name in names:
            sys.modules[name] = self.module
        folder = str(self.script.parent.resolve())
        runner_folder = str(Path(__file__).resolve().parent)
        if sys.path and os.path.realpath(sys.path[0] or ".") == runner_folder:
            sys.path[0] = folder  # python script.py puts the script's folder there, not ours
        else:
            sys.path.insert(0, folder)
        sys.argv = list(self.argv)
        return self

    def run(self) -> dict:
        """Execute the script in its module; its namespace (the module's dict, alive for the run)."""
        if not self.script.is_file():  # a folder or zip with __main__.py, as python runs them
            return runpy.run_path(str(self.script), run_name=self.name)
        code = compile(self.script.read_bytes(), str(self.script), "exec", dont_inherit=True)
        exec(code, self.module.__dict__)
        return self.module.__dict__

    def __exit__(self, *exc_info) -> None:
        modules, path, argv = self.saved
        for name, module in modules.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        sys.path[:], sys.argv = path, argv


LAUNCHER_ENV = "TORCH_COMPILE_INSPECTOR_LAUNCHER"  # as inspector/core/readers/session_format.py names it
PR_SET_PDEATHSIG = 1


def die_with_launcher() -> None:
    """Ask the kernel to end this run when the launcher dies, even by SIGKILL (Linux): nobody would
    read what it goes on writing into the session. If the launcher is already gone, end now."""
    launcher = os.environ.get(LAUNCHER_ENV, "")
    if not launcher.isdigit() or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != int(launcher):  # it died before the request was made
        os._exit(128 + signal.SIGKILL)


# --- Dynamo's code and the user's files as they were (dynamo_code.py, source_snapshot.py beside this) ---

def record_code_as_compiled(torch, session: Path, script: Path, progress: Progress) -> None:
    """The code Dynamo writes for each compiled frame and resume function (dynamo_code/), and a copy
    of each user file the compile stacks name (sources/). Each module is loaded by path under a
    private name, as options.py is; a failure is a warning, never the end of the run."""
    import importlib.util

    def warn(message: str) -> None:
        progress.emit("warning", message=message)

    for file, function, folder, extra in (("dynamo_code.py", "record_dynamo_code", "dynamo_code", ()),
                                          ("source_snapshot.py", "record_sources", "sources", (str(script),))):
        try:
            spec = importlib.util.spec_from_file_location(f"_inspector_capture_{file[:-3]}",
                                                          Path(__file__).with_name(file))
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            getattr(module, function)(torch, session / folder, warn, *extra)
        except Exception as error:
            warn(f"{file} not started: {type(error).__name__}: {error}")


def main(argv: list[str]) -> int:
    die_with_launcher()
    try:  # lead a process group, so the app can stop this run and every compile worker it starts
        os.setpgid(0, 0)
    except OSError:
        pass
    args = parse_args(argv)
    session = args.session
    session.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TORCH_TRACE", str(session / "trace"))
    os.environ.setdefault("INDUCTOR_PROVENANCE", "1")
    progress = Progress(session / "progress.jsonl")
    results = Results(session / "results.json")
    try:
        import torch
    except ImportError as error:
        progress.emit("error", kind="no_torch", message=f"{sys.executable} cannot import torch: {error}")
        return EXIT_NO_TORCH
    version = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2] if part.isdigit())
    environment = {"python": sys.version.split()[0], "executable": sys.executable, "platform": platform.platform(),
                   "torch": torch.__version__, "cuda_available": torch.cuda.is_available(),
                   "device": args.device, "threads": torch.get_num_threads(),
                   "device_name": torch.cuda.get_device_name() if args.device == "cuda" and torch.cuda.is_available()
                   else platform.processor() or platform.machine()}
    results.update(environment=environment, entry_point=defines_entry_point(args.script))
    copy_break_registry(torch, session)
    progress.emit("environment", **environment)
    if version < MIN_TORCH:
        progress.emit("error", kind="torch_too_old",
                      message=f"{sys.executable} has torch {torch.__version__}; captures need torch ≥ 2.1")
        return EXIT_NO_TORCH
    if args.device == "cuda" and not torch.cuda.is_available():
        progress.emit("error", kind="no_cuda", message=f"--device cuda but {sys.executable} sees no CUDA device")
        return EXIT_SCRIPT_ERROR
    logging.getLogger("torch.__trace").addHandler(StageRelay(progress))
    record_graphs(torch, session / "graphs", progress)
    record_code_as_compiled(torch, session, args.script, progress)
    script = ScriptAsMain(args.script, args.script_args, entry_point=results.data["entry_point"])
    try:
        with script, TorchRecord(torch, session):
            if results.data["entry_point"]:
                progress.phase("load", "start")
                module = script.run()
                progress.phase("load", "end")
                Measurer(torch, args, session, progress, results).run(module)
            else:
                progress.phase("run_script", "start")
                script.run()
                progress.phase("run_script", "end")
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        if code:
            progress.emit("error", kind="script_exit", message=f"the script called sys.exit({exit_.code!r})")
        progress.emit("done", status="ok" if code == 0 else "error")
        return code
    except BaseException as error:
        kind, line = explain(error)
        text = traceback.format_exc()
        results.update(error={"kind": kind, "message": line, "traceback": text, **script_line(error, args.script)})
        progress.emit("error", kind=kind, message=line, traceback=text)
        progress.emit("done", status="error")
        sys.stderr.write(text)
        return EXIT_SCRIPT_ERROR
    progress.emit("done", status="ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
