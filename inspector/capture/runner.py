"""Runs inside the user's Python (their torch, their GPU): executes a model script under TORCH_TRACE
and, for entry-point scripts, measures eager against compiled. Standard library and torch only; it is
started by file path, so it needs nothing else of ours to be importable: the modules beside it that
it uses (options.py, torch_record.py, eager_vs_compiled.py, dynamo_code.py, source_snapshot.py) it
loads by file path under private names.

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
import runpy
import signal
import sys
import time
import traceback
from pathlib import Path


def _beside(file: str):
    """A module beside this file (options.py, torch_record.py, …), loaded by path under a private name:
    the runner is started by file path in the user's interpreter, where our package may not be
    importable and a user module called `options` must not be shadowed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_inspector_capture_{file[:-3]}", Path(__file__).with_name(file))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while they are built
    spec.loader.exec_module(module)
    return module


_OPTIONS = _beside("options.py")
TorchRecorder = _beside("torch_record.py").TorchRecorder  # torch's own record of the run (torch_record.json)
Measurer = _beside("eager_vs_compiled.py").Measurer  # eager against compiled, for an entry-point script
EXIT_SCRIPT_ERROR = 1
EXIT_NO_TORCH = 3
MIN_TORCH = (2, 1)


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
        progress.emit("warning",
                      message="structured graphs not recorded: this torch has no OutputGraph.call_user_compiler")
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
        "nn_module_stack": [[key, str(path), getattr(kind, "__name__", str(kind))]
                            for key, (path, kind) in stack.items()]
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
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if os.path.realpath(frame.filename) == target]
    return {"file": frames[-1].filename, "line": frames[-1].lineno} if frames else {}



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
    def warn(message: str) -> None:
        progress.emit("warning", message=message)

    for file, function, folder, extra in (("dynamo_code.py", "record_dynamo_code", "dynamo_code", ()),
                                          ("source_snapshot.py", "record_sources", "sources", (str(script),))):
        try:
            getattr(_beside(file), function)(torch, session / folder, warn, *extra)
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
        with script, TorchRecorder(torch, session):
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
