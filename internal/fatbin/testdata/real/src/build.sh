#!/usr/bin/env bash
# Builds axpy.cu the ways the reference README lists, with the nvcc on PATH
# (or $NVCC), and records cuobjdump's listings of each output beside it:
#   NAME.so  NAME.so.list-elf.txt  NAME.so.list-ptx.txt  (stdout of cuobjdump --list-elf / --list-ptx)
#   NAME.so.list-elf.stderr.txt  NAME.so.list-ptx.stderr.txt  (their stderr, the output
#   folder's absolute path written as OUTDIR; absent when empty)
# Usage: build.sh OUTDIR   (run on a machine with nvcc and cuobjdump; no GPU needed)
set -euo pipefail
out=${1:?usage: build.sh OUTDIR}
src=$(cd "$(dirname "$0")" && pwd)/axpy.cu
nvcc=${NVCC:-nvcc}
cuobjdump=${CUOBJDUMP:-cuobjdump}
mkdir -p "$out"
ver=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
so() { # so NAME FLAGS...
  local name=$1; shift
  "$nvcc" -shared -Xcompiler -fPIC -o "$out/$name.so" "$src" "$@"
}
so plain
so sm80_sm90_ptx90 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
case $ver in
  12.[0-7]*) ;;
  12.8*) so arch_specific -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_100a,code=sm_100a -gencode arch=compute_120a,code=sm_120a ;;
  *) so arch_specific -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_100a,code=sm_100a -gencode arch=compute_120f,code=sm_120f ;;
esac
so compressed -Xfatbin=-compress-all -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
so uncompressed -Xfatbin=--compress=false -gencode arch=compute_75,code=sm_75 -gencode arch=compute_75,code=compute_75
case $ver in
  12.[0-7]*) ;;
  *) so cmode_size --compress-mode=size -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90
     so cmode_speed --compress-mode=speed -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90 ;;
esac
# -lineinfo (and -G) record the source file name in each fatbin entry's header;
# cuobjdump then names the entries after it (axpy.sm_80.cubin), without a number.
so lineinfo -lineinfo -cudart none -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90
# A shared object built with -rdc keeps the relocatable code (__nv_relfatbin) beside
# the device-linked executable fatbin (.nv_fatbin); cuobjdump lists only the latter
# unless -all (recorded as NAME.all-list-elf.txt / NAME.all-list-ptx.txt). The
# committed copy was linked with -cudart shared (28 KB instead of 1 MB; the pip
# wheels have no libcudart.so link name, so it was made by hand there).
so rdc_shared -rdc=true -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90
"$nvcc" -c -rdc=true -Xcompiler -fPIC -o "$out/rdc.o" "$src" -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90
"$nvcc" -cubin -arch=sm_90 -o "$out/axpy.sm_90.cubin" "$src"
"$nvcc" -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90 -o "$out/axpy.fatbin" "$src"
# cuobjdump names a file in its messages by its absolute path; recorded as OUTDIR so
# the listings do not depend on where they were made.
abs=$(cd "$out" && pwd)
for f in "$abs"/*.so "$abs"/*.o "$abs"/*.cubin "$abs"/*.fatbin; do
  for l in elf ptx; do
    "$cuobjdump" --list-$l "$f" > "$f.list-$l.txt" 2> "$f.list-$l.stderr.txt" || true
    if [ -s "$f.list-$l.stderr.txt" ]; then
      sed -i "s|'$abs/|'OUTDIR/|g" "$f.list-$l.stderr.txt"
    else
      rm -f "$f.list-$l.stderr.txt"
    fi
  done
done
"$cuobjdump" -all --list-elf "$abs/rdc_shared.so" > "$abs/rdc_shared.so.all-list-elf.txt"
"$cuobjdump" -all --list-ptx "$abs/rdc_shared.so" > "$abs/rdc_shared.so.all-list-ptx.txt"
echo "built with nvcc $ver into $out"
