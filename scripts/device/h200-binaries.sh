#!/usr/bin/env bash
# On a GPU machine with nvcc, cuobjdump and torch: checks fastpath's binary
# reader and its torch/model verdicts against the vendor's own answers, with
# wall time and peak memory of both. Usage:
#   scripts/device/h200-binaries.sh FASTPATH_BINARY OUTDIR [PYTHON]
set -uo pipefail
fp=$(realpath "${1:?binary}"); out=${2:?outdir}; py=${3:-$(command -v python3)}
mkdir -p "$out"
lib=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
tv() { /usr/bin/time -f "%e s %M KB" "$@"; }   # wall seconds, peak RSS

# 1. Our kernels built by the real toolkit, listed by the real cuobjdump.
bash internal/fatbin/testdata/real/src/build.sh "$out/nvcc-h200" > "$out/build.log" 2>&1
for f in "$out"/nvcc-h200/*.so "$out"/nvcc-h200/*.o "$out"/nvcc-h200/*.cubin "$out"/nvcc-h200/*.fatbin; do
  "$fp" inspect --cuobjdump "$f" > /tmp/fp.out 2>/dev/null
  cat "$f.list-elf.txt" "$f.list-ptx.txt" > /tmp/cu.out
  if cmp -s /tmp/fp.out /tmp/cu.out; then echo "SAME $(basename "$f")"; else echo "DIFF $(basename "$f")"; diff /tmp/fp.out /tmp/cu.out | head -5; fi
done > "$out/small-kernels.txt"

# 2. torch's libraries: byte-identical listings, time and memory side by side.
for l in libtorch_cuda.so libtorch_cuda_linalg.so; do
  { tv cuobjdump --list-elf "$lib/$l" > "$out/$l.cuobjdump-elf.txt"; } 2> "$out/$l.cuobjdump-elf.time"
  { tv "$fp" inspect --cuobjdump "$lib/$l" > "$out/$l.fastpath.txt"; } 2> "$out/$l.fastpath.time"
  { tv cuobjdump --list-ptx "$lib/$l" > "$out/$l.cuobjdump-ptx.txt"; } 2> "$out/$l.cuobjdump-ptx.time"
  cat "$out/$l.cuobjdump-elf.txt" "$out/$l.cuobjdump-ptx.txt" > /tmp/both.txt
  if cmp -s /tmp/both.txt "$out/$l.fastpath.txt"; then r=IDENTICAL; else r=DIFFERENT; fi
  echo "$l: fastpath --cuobjdump vs cuobjdump --list-elf+--list-ptx: $r ($(wc -l < "$out/$l.cuobjdump-elf.txt") ELF lines)"
  echo "  cuobjdump --list-elf: $(tail -1 "$out/$l.cuobjdump-elf.time")   --list-ptx: $(tail -1 "$out/$l.cuobjdump-ptx.time")"
  echo "  fastpath inspect --cuobjdump: $(tail -1 "$out/$l.fastpath.time")"
done > "$out/torch-libs.txt" 2>&1
"$fp" inspect --json "$lib/libtorch_cuda.so" --gpu 9.0 > "$out/inspect-libtorch_cuda.json"
{ tv "$fp" inspect --gpu 9.0 --gpu 12.0 --gpu 7.0 "$lib" > "$out/inspect-torch-lib-dir.txt"; } 2> "$out/inspect-dir.time"

# 3. torch's own answers vs fastpath's facts.
"$py" -c 'import torch, json; print(json.dumps({"arch_list": torch.cuda.get_arch_list(), "cxx11_abi": torch.compiled_with_cxx11_abi(), "cuda": torch.version.cuda}))' > "$out/torch-says.json"
"$fp" facts > "$out/facts.json"
"$py" - "$out/torch-says.json" "$out/facts.json" > "$out/torch-compare.txt" <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); f = json.load(open(sys.argv[2]))["torch"]
print("get_arch_list:", t["arch_list"]); print("fastpath archs:", f.get("archs"), "same:", t["arch_list"] == f.get("archs"))
print("compiled_with_cxx11_abi:", t["cxx11_abi"], "fastpath:", f.get("cxx11_abi"), f.get("cxx11_abi_from"))
PY

# 4. Model verdicts: transformers' own resolution vs fastpath's.
for m in qwen3_5 qwen3_next; do
  "$py" scripts/model-verdict-compare.py "$m" > "$out/tf-$m.json" 2> "$out/tf-$m.err"
  "$fp" model "internal/model/testdata/reference-5.17/$m/config.json" --json > "$out/fp-$m.json" 2>&1
done
"$fp" doctor --model internal/model/testdata/reference-5.17/qwen3_5/config.json > "$out/doctor-model.txt" 2>&1; echo "exit $?" >> "$out/doctor-model.txt"
"$fp" doctor --json > "$out/doctor.json"
# 5. Speed again (median of 10).
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { date +%s%N; }
t10() { for i in $(seq 10); do s=$(ms); "$@" >/dev/null 2>&1; e=$(ms); echo $(( (e-s)/1000 )); done | median; }
{ echo "doctor_us $(t10 "$fp" doctor)"; echo "doctor_model_us $(t10 "$fp" doctor --model internal/model/testdata/reference-5.17/qwen3_5/config.json)"
  echo "packages_us $(t10 "$fp" packages --json)"; echo "pip_list_us $(t10 "$py" -m pip list --format=json)"; } > "$out/timings.txt"
cat "$out/small-kernels.txt" "$out/torch-libs.txt" "$out/torch-compare.txt" "$out/timings.txt"
