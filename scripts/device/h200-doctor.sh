#!/usr/bin/env bash
# Runs fastpath on a real GPU machine next to the vendor's own tools and
# records both, for the README and the closing notes. Usage:
#   scripts/device/h200-doctor.sh FASTPATH_BINARY OUTDIR [PYTHON]
# PYTHON defaults to python3 on PATH. Nothing here needs the network.
set -uo pipefail
fp=${1:?binary}; out=${2:?outdir}; py=${3:-$(command -v python3)}
mkdir -p "$out"
ms() { date +%s%N; }
{
  echo "== uname"; uname -a
  echo "== python3: $(command -v python3) -> $py"; "$py" --version
  echo "== pip on PATH: $(command -v pip)"; head -1 "$(command -v pip)" 2>/dev/null
  echo "== nvidia-smi"; nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,pci.device_id,compute_cap,memory.total,memory.used,driver_version --format=csv,noheader,nounits
  echo "== /proc/driver/nvidia/version"; cat /proc/driver/nvidia/version
  echo "== gpus/*/information"; cat /proc/driver/nvidia/gpus/*/information
  echo "== nvcc"; command -v nvcc; nvcc --version | tail -2; ls -la /usr/local/ | grep cuda
  echo "== CUDA_HOME=${CUDA_HOME:-} TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-}"
  echo "== gcc"; gcc -dumpfullversion
  echo "== torch"; "$py" -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_arch_list(), torch.compiled_with_cxx11_abi())'
} > "$out/machine.txt" 2>&1
"$fp" doctor > "$out/doctor.txt" 2>&1; echo "exit $?" >> "$out/doctor.txt"
"$fp" doctor --json > "$out/doctor.json" 2>/dev/null
"$fp" doctor --markdown > "$out/doctor.md" 2>/dev/null
# packages vs pip list, byte for byte, for python3 and for pip on PATH's interpreter.
"$fp" packages --json > "$out/packages.json"
"$py" -m pip list --format=json > "$out/pip-list.json" 2>/dev/null
if cmp -s "$out/packages.json" "$out/pip-list.json"; then echo "packages == pip list: IDENTICAL" ; else echo "packages != pip list"; diff <(tr '}' '\n' < "$out/packages.json") <(tr '}' '\n' < "$out/pip-list.json") | head -20; fi > "$out/compare.txt"
# Timings: 10 runs each, median, same run.
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_cmd() { for i in $(seq 10); do s=$(ms); "$@" >/dev/null 2>&1; e=$(ms); echo $(( (e-s)/1000 )); done | median; }
{
  echo "doctor_us $(time_cmd "$fp" doctor)"
  echo "doctor_json_us $(time_cmd "$fp" doctor --json)"
  echo "packages_us $(time_cmd "$fp" packages --json)"
  echo "pip_list_us $(time_cmd "$py" -m pip list --format=json)"
  s=$(ms); "$py" -m torch.utils.collect_env >/dev/null 2>&1; e=$(ms); echo "collect_env_us $(( (e-s)/1000 ))"
  s=$(ms); nvidia-smi >/dev/null 2>&1; e=$(ms); echo "nvidia_smi_us $(( (e-s)/1000 ))"
} > "$out/timings.txt"
if [ -x /usr/bin/time ]; then /usr/bin/time -v "$fp" doctor > /dev/null 2> "$out/doctor-time-v.txt"; fi
cat "$out/compare.txt" "$out/timings.txt"
