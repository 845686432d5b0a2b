#!/usr/bin/env bash
# Device check for issue 11 (safety helper): on a real GPU host, are the facts
# fix --apply fingerprints stable between two collections (F1)? Anything that
# differs besides free memory and GPU memory in use would make --apply refuse
# for nothing. Also: the hostile FIFO/escape checks on the live host's doctor.
# Run from the repo root: bash .device/safety/run.sh
set -x
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
BIN=.device/safety/fastpath
LOG=$OUT/safety.log
exec > >(tee -a "$LOG") 2>&1
W=$(mktemp -d)
PY=/opt/torch/.venv/bin/python3
for i in 1 2 3; do
  /usr/bin/time -v timeout 60 $BIN facts --python $PY > $W/facts$i.json 2> $W/time$i.txt; echo "facts $i rc=$?"
  grep -E "Maximum resident|Elapsed" $W/time$i.txt
  sleep 2
done
for i in 2 3; do
  echo "== diff facts1 facts$i (mem_available and memory_used are ignored by the fingerprint)"
  diff <(grep -v -E 'mem_available_bytes|memory_used_mib' $W/facts1.json) <(grep -v -E 'mem_available_bytes|memory_used_mib' $W/facts$i.json) && echo "IDENTICAL apart from ignored fields"
done
echo "== fix (no --apply) with stdin /dev/null, plan only"
timeout 60 $BIN fix --offline --python $PY </dev/null | tail -5; echo "rc=$?"
echo "== fix --apply without --yes, stdin /dev/null and /dev/zero: must refuse without reading"
timeout 60 $BIN fix --apply --offline --python $PY </dev/null; echo "rc=$?"
timeout 60 /usr/bin/time -v $BIN fix --apply --offline --python $PY </dev/zero 2>&1 | grep -E "refusing|Maximum resident|Nothing|rc"; echo "rc=${PIPESTATUS[0]}"
echo "== doctor timing on the live host"
/usr/bin/time -v timeout 60 $BIN doctor --python $PY > $W/doctor.txt 2> $W/doctor.time; echo "rc=$?"; grep -E "Maximum resident|Elapsed" $W/doctor.time; head -5 $W/doctor.txt
tar -czf $OUT/safety.tar.gz -C $W .
