"""The production recorder: one call in a service's own Python keeps a compact record of what
torch.compile does there — one JSON line per compile (frame, compile id, recompile reason, breaks,
compile time, cache hits/misses, CUDA-graph skips) and a periodic summary of torch's counters — in a
size-rotated file the app and `compile-inspector summary` open and the run history keeps.

    from inspector.capture.recorder import install
    install("/var/log/model/compile-events.jsonl")

Standard library and torch only (no Qt, nothing of inspector.core), no TORCH_TRACE. It works in
torch's compile-start/end callbacks and on a sleeping daemon thread: once compiles stop, a step of
the model runs no code of the recorder at all."""

from __future__ import annotations

import atexit
import json
import os
import platform
import socket
import sys
import threading
import time
from pathlib import Path

FORMAT = "torch-compile-inspector/recorder"
FORMAT_VERSION = 1
MAX_BYTES = 8 * 1024 * 1024  # a file is rotated past this size
BACKUPS = 3  # rotated files kept: FILE.1 (newest) … FILE.3
SUMMARY_EVERY_S = 60.0
REASON_CHARS = 2000  # a reason or message is cut here: a line stays small
BREAK_COUNTERS = ("graph_break", "unimplemented")  # torch counts explicit and data-dependent breaks apart
CACHE_COUNTERS = {("inductor", "fxgraph_cache_hit"): ("fx_graph", "hit"),
                  ("inductor", "fxgraph_cache_miss"): ("fx_graph", "miss"),
                  ("inductor", "fxgraph_cache_bypass"): ("fx_graph", "bypass"),
                  ("aot_autograd", "autograd_cache_hit"): ("aotautograd", "hit"),
                  ("aot_autograd", "autograd_cache_miss"): ("aotautograd", "miss"),
                  ("aot_autograd", "autograd_cache_bypass"): ("aotautograd", "bypass")}

_installed: Recorder | None = None
_lock = threading.Lock()


class Recorder:
    """Writes the compile events of this process to `path`; made by `install`."""

    def __init__(self, path: Path, max_bytes: int, backups: int, summary_every_s: float):
        import torch

        self.path, self.max_bytes, self.backups = path, max_bytes, backups
        self._torch = torch
        self._lock = threading.Lock()
        self._file = None
        self._seen_metrics = 0  # compilation metrics written so far (torch keeps its last 64)
        self._last_metrics = None
        self._breaks_before: dict[str, int] = {}  # break counter keys → counts at the last compile's end
        self._at_end: dict[str, tuple[list[str], int]] = {}  # compile id → (new break reasons, cudagraph skips)
        self._compiles = 0
        self._changed = False
        self._process_started = time.time()  # with the pid and host, tells this process from a restart
        self._stop = threading.Event()
        self._breaks_before = self._break_counts()
        self._open()
        self._start_callback = torch._dynamo.callback.on_compile_start(self._on_start)
        self._end_callback = torch._dynamo.callback.on_compile_end(self._on_end)
        self._thread = threading.Thread(target=self._summaries, args=(summary_every_s,), daemon=True,
                                        name="compile-inspector-recorder")
        self._thread.start()
        atexit.register(self.close)

    # --- torch's callbacks (compile time only) ---------------------------------------------------
    def _on_start(self, args) -> None:
        self._started = time.time()

    def _on_end(self, args) -> None:
        """A compile ended: note the breaks it added (torch's counters), and write the metrics of
        every compile torch has finished recording (its metrics land just after this callback)."""
        try:
            counts = self._break_counts()
            new = [reason for reason, count in counts.items() if count > self._breaks_before.get(reason, 0)]
            self._breaks_before = counts
            skips = self._counter("inductor", "cudagraph_skips")
            with self._lock:
                self._at_end[str(args.compile_id)] = (new, skips)
            self._drain()
        except Exception as error:  # noqa: BLE001 - the recorder never breaks the program it watches
            self._problem(error)

    def _problem(self, error: Exception) -> None:
        """What went wrong in the recorder, as a line of its file (the program goes on)."""
        self._write({"kind": "problem", "t": time.time(), "message": f"{type(error).__name__}: {error}"[:REASON_CHARS]})

    # --- reading torch's records -----------------------------------------------------------------
    def _break_counts(self) -> dict[str, int]:
        counters = self._torch._dynamo.utils.counters
        return {f"{group}:{key}": int(count) for group in BREAK_COUNTERS for key, count in counters[group].items()}

    def _counter(self, group: str, key: str) -> int:
        return int(self._torch._dynamo.utils.counters[group].get(key, 0))

    def _drain(self) -> None:
        """Write the compilation metrics torch recorded since the last drain (one line each)."""
        metrics = self._torch._dynamo.utils.get_compilation_metrics()
        with self._lock:
            fresh = _after(metrics, self._last_metrics)
            if metrics:
                self._last_metrics = metrics[-1]
            for entry in fresh:
                self._compiles += 1
                self._changed = True
                new_breaks, skips = self._at_end.pop(str(entry.compile_id), ([], None))
                self._write_locked(_event(entry, new_breaks, skips))

    def summary(self) -> dict:
        counters = self._torch._dynamo.utils.counters
        caches: dict[str, dict[str, int]] = {}
        for (group, key), (cache, outcome) in CACHE_COUNTERS.items():
            caches.setdefault(cache, {"hit": 0, "miss": 0, "bypass": 0})[outcome] = int(counters[group].get(key, 0))
        return {"kind": "summary", "t": time.time(), "compiles": self._compiles,
                "frames": int(counters["frames"].get("total", 0)),
                "unique_graphs": int(counters["stats"].get("unique_graphs", 0)),
                "breaks": sum(self._break_counts().values()), "cache": caches,
                "cudagraph_skips": self._counter("inductor", "cudagraph_skips")}

    def _summaries(self, every_s: float) -> None:
        """The periodic summary, on a daemon thread that sleeps between: written only when compiles
        happened since the last one, so a steady service adds nothing to its file."""
        while not self._stop.wait(every_s):
            self.flush()

    def flush(self) -> None:
        """Write what torch recorded since the last write and, if anything did, a summary line."""
        try:
            self._drain()
            with self._lock:
                changed, self._changed = self._changed, False
            if changed:
                self._write(self.summary())
        except Exception as error:  # noqa: BLE001
            self._problem(error)

    def close(self) -> None:
        """Stop recording: the last events and a summary written, the callbacks removed."""
        if self._stop.is_set():
            return
        self._stop.set()
        self.flush()
        handler = self._torch._dynamo.callback.callback_handler
        handler.remove_start_callback(self._start_callback)
        handler.remove_end_callback(self._end_callback)
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    # --- the file --------------------------------------------------------------------------------
    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "a", encoding="utf-8")
        # every process starts with its header, in a new file or after a restart's predecessor, so a
        # reader tells the processes' compiles apart and sees a torch upgrade between them
        self._write_locked(self._header())

    def _header(self) -> dict:
        torch = self._torch
        try:
            import triton

            triton_version = getattr(triton, "__version__", None)
        except ImportError:
            triton_version = None
        return {"kind": "header", "format": FORMAT, "format_version": FORMAT_VERSION, "t": time.time(),
                "pid": os.getpid(), "started": self._process_started, "host": socket.gethostname(),
                "python": platform.python_version(),
                "torch": torch.__version__, "triton": triton_version, "program": sys.argv[0] if sys.argv else None}

    def _write(self, line: dict) -> None:
        with self._lock:
            self._write_locked(line)

    def _write_locked(self, line: dict) -> None:
        if self._file is None:
            return
        text = json.dumps(line, default=str, separators=(",", ":")) + "\n"
        if self._file.tell() + len(text) > self.max_bytes and line.get("kind") != "header":
            self._rotate()
        self._file.write(text)
        self._file.flush()

    def _rotate(self) -> None:
        self._file.close()
        for number in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{number}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{self.path.name}.{number + 1}"))
        if self.backups > 0:
            os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
        else:
            self.path.unlink(missing_ok=True)
        self._file = open(self.path, "a", encoding="utf-8")
        self._write_locked(self._header())


def _after(metrics: list, last) -> list:
    """The entries of torch's metrics list (a bounded deque's copy) after `last`, by identity."""
    if last is None:
        return list(metrics)
    for index in range(len(metrics) - 1, -1, -1):
        if metrics[index] is last:
            return list(metrics[index + 1:])
    return list(metrics)  # `last` fell off torch's bounded list: everything in it is new


def _event(entry, new_breaks: list[str], cudagraph_skips: int | None) -> dict:
    """One compile as a compact line."""
    def cut(text):
        return None if text is None else str(text)[:REASON_CHARS]

    return {"kind": "compile", "t": (entry.end_time_us or 0) / 1e6 or time.time(),
            "compile_id": cut(entry.compile_id), "frame": cut(entry.co_name), "file": cut(entry.co_filename),
            "line": entry.co_firstlineno, "compile_s": entry.entire_frame_compile_time_s,
            "backend_s": entry.backend_compile_time_s, "recompile_reason": cut(entry.recompile_reason),
            "breaks": len(new_breaks), "break_reasons": [cut(reason.split(":", 1)[1].split("\n", 1)[0])
                                                         for reason in new_breaks][:16],
            "restart_reasons": sorted(cut(reason) for reason in (entry.restart_reasons or ()))[:16],
            "cache": {"fx_graph": {"hit": entry.inductor_fx_local_cache_hit_count or 0,
                                   "miss": entry.inductor_fx_local_cache_miss_count or 0},
                      "aotautograd": {"hit": entry.aotautograd_local_cache_hit_count or 0,
                                      "miss": entry.aotautograd_local_cache_miss_count or 0}},
            "cudagraph_skip": cut(entry.cudagraph_skip_reason), "cudagraph_skips": cudagraph_skips,
            "fail_type": cut(entry.fail_type), "fail_reason": cut(entry.fail_reason),
            "graph_ops": entry.graph_op_count, "guards": entry.guard_count, "is_forward": entry.is_forward}


def install(path: str | os.PathLike | None = None, *, max_bytes: int = MAX_BYTES, backups: int = BACKUPS,
            summary_every_s: float = SUMMARY_EVERY_S) -> Recorder:
    """Start recording this process's compiles to `path` (default: TCI_RECORDER_FILE, else
    ./compile-events-PID.jsonl). Once per process: a second call returns the recorder installed."""
    global _installed
    with _lock:
        if _installed is None or _installed._stop.is_set():
            chosen = path or os.environ.get("TCI_RECORDER_FILE") or f"compile-events-{os.getpid()}.jsonl"
            _installed = Recorder(Path(chosen), max_bytes, backups, summary_every_s)
        return _installed
