#!/usr/bin/env bash
# What each program a cold doctor runs reads from storage on its own (GNU
# time's %I after the page cache is dropped), and fastpath's own start and
# doctor beside them; staged as coldio.sh says. Prints to standard output.
set -u
T=$(mktemp -d); gunzip -c .device/gpuhost/fastpath.gz > $T/fastpath; chmod +x $T/fastpath
D=.device/coldio
one() {
  sync; echo 3 > /proc/sys/vm/drop_caches; sleep 0.5
  s=$(date +%s%N); /usr/bin/time -f "%I" -o $T/t.txt "$@" > /dev/null 2>&1; e=$(date +%s%N)
  printf "%8.1f MB %6d ms  %s\n" $(awk '{print $1*512/1e6}' $T/t.txt | tail -1) $(( (e-s)/1000000 )) "$*"
}
smi=$(command -v nvidia-smi)
one $smi --query-gpu=index,name,uuid,pci.bus_id,pci.device_id,compute_cap,memory.total,memory.used,driver_version --format=csv,noheader,nounits
one $smi --query-compute-apps=pid,process_name,gpu_uuid,used_memory --format=csv,noheader,nounits
one $(command -v nvcc) --version
one /usr/local/cuda/bin/nvcc --version
one $(command -v gcc) --version
one $(command -v g++) --version
one $T/fastpath --version
one $T/fastpath doctor
one $T/fastpath doctor --gpu 9.0
echo "-- what the doctor runs:"; FASTPATH_TRACE=1 $T/fastpath doctor 2>&1 >/dev/null | grep -i -E "exec|run|smi|nvcc|gcc" | head -20
sync; echo 3 > /proc/sys/vm/drop_caches; sleep 0.5
$smi --query-gpu=index --format=csv >/dev/null 2>&1
echo "-- resident after one nvidia-smi:"; ls /usr/lib/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcrypto.so.3 /usr/lib/libnvidia-ml.so.1 $(readlink -f /usr/lib/libcuda.so.1) 2>/dev/null | $D/resident
sync; echo 3 > /proc/sys/vm/drop_caches; sleep 0.5
/usr/local/cuda/bin/nvcc --version >/dev/null 2>&1
echo "-- resident after nvcc --version:"; ls /usr/lib/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcrypto.so.3 /usr/local/cuda/bin/nvcc 2>/dev/null | $D/resident
