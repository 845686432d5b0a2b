#!/usr/bin/env bash
# Where a cold doctor's reads from storage go (issue 17, docs/speed.md "The
# binary's page cache"): the page cache dropped, one cold doctor, then how much
# of each file it could have touched is cached (the venv, the driver's and the
# toolkit's files, /usr/bin, /usr/lib), largest first and by area; then a cold
# doctor with fastpath's own binary kept cached. On the H200, from the repo
# root, with .device/gpuhost/fastpath.gz staged as for gpuhost.sh and
#   CGO_ENABLED=0 go build -o .device/coldio/resident scripts/device/resident.go
# run `bash scripts/device/coldio.sh` (needs root for drop_caches). Writes
# $OUT/coldio.log. About 10 s. Files reached through two links count twice.
set -u
D=.device/coldio; T=$(mktemp -d); out=${OUT:-/tmp}; log=$out/coldio.log
gunzip -c .device/gpuhost/fastpath.gz > $T/fastpath; chmod +x $T/fastpath
exec > "$log" 2>&1
uname -r
venv=/opt/torch/.venv
list() {
  { echo $T/fastpath; command -v nvidia-smi; command -v nvcc; ls /usr/local/cuda/bin/nvcc 2>/dev/null; command -v gcc g++ cc c++ python3;
    readlink -f $(command -v nvidia-smi) ; readlink -f $(command -v gcc);
    find / -xdev \( -name 'libnvidia-ml.so*' -o -name 'libcuda.so*' \) 2>/dev/null;
    find $venv -type f 2>/dev/null; find /usr/lib/x86_64-linux-gnu -maxdepth 1 -type f -name 'lib*.so*' 2>/dev/null;
    ls /usr/bin/* /usr/local/cuda/bin/* 2>/dev/null; find /usr/lib/gcc -type f 2>/dev/null; } | sort -u
}
list > $T/files.txt; wc -l < $T/files.txt
for round in 1; do
  sync; echo 3 > /proc/sys/vm/drop_caches; sleep 1
  s=$(date +%s%N); /usr/bin/time -f "%e s %I inblocks %M KB" $T/fastpath doctor --timings > $T/doc.txt 2> $T/time.txt; e=$(date +%s%N)
  echo "== round $round: cold doctor $(( (e-s)/1000000 )) ms; $(cat $T/time.txt | tail -1)"
  $D/resident < $T/files.txt | awk '{print $1, $3, $2}' | sort -rn > $T/fincore.txt
  awk '{s+=$1} END {printf "resident in listed files: %.1f MB in %d files\n", s/1e6, NR}' $T/fincore.txt
  head -45 $T/fincore.txt | awk '{printf "%10.2f MB of %8.1f MB  %s\n", $1/1e6, $3/1e6, $2}'
  echo "-- by area:"
  awk '{a=$2; if (a ~ /site-packages\/torch\/lib/) k="torch/lib"; else if (a ~ /site-packages\/nvidia/) k="site-packages/nvidia"; else if (a ~ /site-packages/) k="site-packages other"; else if (a ~ /fastpath$/) k="fastpath binary"; else if (a ~ /nvidia-ml|libcuda/) k="driver libs"; else if (a ~ /cuda\/bin|nvcc/) k="cuda bin"; else if (a ~ /\/usr\/lib\/x86_64/) k="/usr/lib"; else if (a ~ /gcc/) k="gcc"; else k="other"; s[k]+=$1} END {for (k in s) printf "%10.2f MB  %s\n", s[k]/1e6, k}' $T/fincore.txt | sort -rn
done
sed -n '/collector/,$p' $T/doc.txt
# The same with fastpath's own binary kept cached (it is what the runs share).
sync; echo 3 > /proc/sys/vm/drop_caches; sleep 1; cat $T/fastpath > /dev/null
s=$(date +%s%N); /usr/bin/time -f "%e s %I inblocks" $T/fastpath doctor > /dev/null 2> $T/time2.txt; e=$(date +%s%N)
echo "== cold except fastpath's binary: $(( (e-s)/1000000 )) ms; $(tail -1 $T/time2.txt)"
