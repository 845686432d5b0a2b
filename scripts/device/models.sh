#!/usr/bin/env bash
# Device run for issue 15 (static reading of transformers' kernel gates).
# Run from the repo root on the H200: bash .device/models/run.sh
# Inputs in .device/models/: fastpath (CGO_ENABLED=0 build of the models
# branch), transformers-gate-runtime.py, transformers-attn-runtime.py,
# configs/ (the reference configs + the new-family configs).
# Writes $OUT/models.log and $OUT/models.tar.gz. Needs no network.
set -x
D=.device/models
OUT=${OUT:-/tmp/models-out}
W=$(mktemp -d)
PY=/opt/torch/.venv/bin/python
mkdir -p "$OUT" "$W/res"
exec > >(tee "$OUT/models.log") 2>&1
t() { local s=$(date +%s); "$@"; echo "== rc=$? $(( $(date +%s)-s ))s: $*"; }
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader
t "$PY" -c 'import transformers, torch; print(transformers.__version__, transformers.__file__, torch.__version__)'
t "$PY" -m pip list --format=freeze 2>/dev/null | grep -iE 'transformers|causal|fla|mamba|flash|kernels|torch|triton' | tee "$W/res/pip-kernel-packages.txt"
# 1. runtime gate bindings, without and with the fake kernel packages (in parallel)
TRANSFORMERS_VERBOSITY=error HF_HUB_OFFLINE=1 timeout 450 "$PY" "$D/transformers-gate-runtime.py" without "$W/res/gates-without.json" > "$W/res/gates-without.out" 2>&1 &
P1=$!
TRANSFORMERS_VERBOSITY=error HF_HUB_OFFLINE=1 timeout 450 "$PY" "$D/transformers-gate-runtime.py" with "$W/res/gates-with.json" > "$W/res/gates-with.out" 2>&1 &
P2=$!
# 2. attention implementations: raise or downgrade
t timeout 200 env HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error "$PY" "$D/transformers-attn-runtime.py" "$W/res/attn.json" > "$W/res/attn.out" 2>&1
# 3. fastpath model on each config against this machine's environment
for c in "$D"/configs/*.json; do
  n=$(basename "$c" .json)
  timeout 20 "$D/fastpath" model "$c" --python "$PY" > "$W/res/model-$n.txt" 2>&1; echo "exit $?" >> "$W/res/model-$n.txt"
  timeout 20 "$D/fastpath" model "$c" --python "$PY" --json > "$W/res/model-$n.json" 2>/dev/null
done
s=$(date +%s%N); for i in 1 2 3 4 5; do "$D/fastpath" model "$D/configs/qwen3_5.json" --python "$PY" >/dev/null 2>&1; done; e=$(date +%s%N)
echo "model_qwen3_5_mean_ms $(( (e-s)/5000000 ))" | tee "$W/res/timing.txt"
wait $P1; echo "== gates without rc=$?"; wait $P2; echo "== gates with rc=$?"
tail -5 "$W/res/gates-without.out" "$W/res/gates-with.out" "$W/res/attn.out"
head -40 "$W/res/model-qwen3_5.txt"
tar -C "$W" -czf "$OUT/models.tar.gz" res
ls -la "$OUT"
