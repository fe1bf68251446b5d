#!/usr/bin/env bash
# The GPU paths of the capture and the reader, checked in one short run (issue 25): CUDA timing,
# CUDA memory, Triton code, the profiler join and CUDA graphs (reduce-overhead). What it measured goes
# to $OUT (gpu_check.json, gpu_check.txt, the two sessions as .tcinspect bundles); exit 1 if a check
# FAILs. Without a CUDA device every check SKIPs (exit 0); --cpu-dry-run runs the pipeline on CPU.
# For a lent GPU machine only, never CI:  bash bench/gpu_check.sh [--cpu-dry-run] [--budget S]
# The interpreter: $PYTHON, else the first of python3 and .venv/bin/python whose torch sees CUDA,
# else the first with torch. Hard wall limit: $GPU_CHECK_TIMEOUT seconds (default 300) for it all.
set -u
cd "$(dirname "$0")/.." || exit 2
LIMIT="${GPU_CHECK_TIMEOUT:-300}"
OUT="${OUT:-bench/out/gpu_check}"
mkdir -p "$OUT"
export OUT PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

pick_python() {
    local candidate with_torch=""
    for candidate in python3 .venv/bin/python; do
        command -v "$candidate" >/dev/null 2>&1 || continue
        case "$(timeout 60 "$candidate" -c 'import torch; print(torch.cuda.is_available())' 2>/dev/null)" in
            True) echo "$candidate"; return ;;
            False) with_torch="${with_torch:-$candidate}" ;;
        esac
    done
    echo "${with_torch:-python3}"
}
PY="${PYTHON:-$(pick_python)}"

# The driver keeps its own budget 20 s inside the limit; timeout is the backstop (SIGKILL 10 s later).
BUDGET=$((LIMIT - 20))
timeout -k 10 "$LIMIT" "$PY" bench/gpu_check.py --python "$PY" --budget "$BUDGET" --out "$OUT" "$@"
status=$?
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "gpu_check: stopped at the ${LIMIT} s limit; $OUT/gpu_check.json holds what was checked by then" >&2
fi
exit "$status"
