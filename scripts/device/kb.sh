#!/usr/bin/env bash
# Device run for the kb helper (issue 16, "the knowledge base is the one
# source of truth"): read on the H200 the facts the KB cites as read there,
# and run bench.py and probe.py with the function lists Go now passes them.
# Run from the repo root on the H200: bash .device/kb/run.sh
# Inputs in .device/kb/: fastpath (CGO_ENABLED=0 build of the kb branch) and
# configs/qwen3_5.json (the default qwen3_5 config). Needs no network.
# Writes $OUT/kb.log and $OUT/kb.tar.gz.
set -x
D=.device/kb
OUT=${OUT:-/tmp/kb-out}
W=$(mktemp -d)
PY=/opt/torch/.venv/bin/python
mkdir -p "$OUT" "$W/res"
exec > >(tee "$OUT/kb.log") 2>&1
# t times a step; its note goes to the log (fd 3), never into the step's own output file.
exec 3>&1
t() { { set +x; } 2>/dev/null; local s=$(date +%s); "$@"; local rc=$?; echo "== rc=$rc $(( $(date +%s)-s ))s: $*" >&3; set -x; }
R=$W/res
# 1. nvcc: version, targets (nvcc-targets.json cites 13.0's list), gcc guard (cuda.json gcc_max).
t timeout 20 /usr/local/cuda/bin/nvcc --version > "$R/nvcc-version.txt" 2>&1
t timeout 20 /usr/local/cuda/bin/nvcc --list-gpu-code > "$R/nvcc-list-gpu-code.txt" 2>&1
t timeout 20 /usr/local/cuda/bin/nvcc --list-gpu-arch > "$R/nvcc-list-gpu-arch.txt" 2>&1
t grep -n -B2 -A2 "unsupported GNU version" /usr/local/cuda/include/crt/host_config.h > "$R/host_config-gnu-guard.txt" 2>&1
cat "$R"/nvcc-*.txt "$R/host_config-gnu-guard.txt"
# 2. the driver and the CUDA version nvidia-smi derives from it (DriverMaxCUDA).
t timeout 20 nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv > "$R/nvidia-smi-query.csv" 2>&1
t timeout 20 nvidia-smi > "$R/nvidia-smi.txt" 2>&1
head -12 "$R/nvidia-smi.txt"; cat "$R/nvidia-smi-query.csv"
# 3. transformers: the torch references bench.py is told to look for
#    (families.json torch_refs), and torch's triton requirement (packages.json).
cat > "$W/refs.py" <<'PY'
import importlib, importlib.metadata as md, json, sys
out = {"transformers": md.version("transformers"), "torch": md.version("torch"),
       "torch_requires_triton": [r for r in (md.requires("torch") or []) if r.lower().startswith("triton")], "modules": {}}
for mt in sys.argv[1:]:
    try:
        m = importlib.import_module("transformers.models.%s.modeling_%s" % (mt, mt))
        out["modules"][mt] = sorted(n for n in dir(m) if n.startswith("torch_") or n in (
            "causal_conv1d_fn", "causal_conv1d_update", "chunk_gated_delta_rule", "fused_recurrent_gated_delta_rule"))
    except Exception as e:
        out["modules"][mt] = "error: %s: %s" % (type(e).__name__, e)
print(json.dumps(out, indent=1))
PY
t timeout 120 env HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error "$PY" "$W/refs.py" qwen3_next qwen3_5 qwen3_5_moe > "$R/transformers-torch-refs.json" 2>"$R/transformers-torch-refs.err"
cat "$R/transformers-torch-refs.json"; tail -3 "$R/transformers-torch-refs.err"
# 4. fastpath: bench.py with the KB's families and functions (no layer forward,
#    short), and doctor --live (probe.py with the KB's function list).
t timeout 20 "$D/fastpath" --help > "$R/fastpath-help.txt" 2>&1
t timeout 280 "$D/fastpath" bench --model "$D/configs/qwen3_5.json" --python "$PY" --seq-len 2048 --runs 5 --cap 10s --no-layer --json > "$R/bench-qwen3_5.json" 2> "$R/bench-qwen3_5.err"
head -c 3000 "$R/bench-qwen3_5.json"; echo; tail -5 "$R/bench-qwen3_5.err"
t timeout 120 "$D/fastpath" doctor --live --python "$PY" --model "$D/configs/qwen3_5.json" --json > "$R/doctor-live.json" 2> "$R/doctor-live.err"
"$PY" - "$R/doctor-live.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("doctor-live.json unreadable:", e); sys.exit(0)
live = (d.get("facts") or {}).get("live") or {}
print("live errors:", live.get("errors"))
for mt, m in (live.get("models") or {}).items():
    print(mt, {f: v.get("resolves") for f, v in (m.get("functions") or {}).items()}, m.get("error", ""))
print("findings:", [(f["id"], f["severity"]) for f in d.get("findings", [])])
PY
t timeout 60 "$D/fastpath" model "$D/configs/qwen3_5.json" --python "$PY" > "$R/model-qwen3_5.txt" 2>&1
head -20 "$R/model-qwen3_5.txt"
tar -C "$W" -czf "$OUT/kb.tar.gz" res
ls -la "$OUT"
