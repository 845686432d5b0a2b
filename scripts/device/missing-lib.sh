#!/usr/bin/env bash
# Hide one of torch's nvidia libraries (and every system CUDA copy) in a private mount namespace; doctor must name it.
FP=$PWD/.device/packages/fastpath; PY=/opt/torch/.venv/bin/python3
LIBDIR=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib
unshare -m --propagation private env FP=$FP PY=$PY LIBDIR=$LIBDIR bash -c '
set -x
for d in /usr/local/cuda /usr/local/cuda-13 /usr/local/cuda-13.0; do [ -d "$d" ] && mount -t tmpfs none "$d"; done
mkdir -p /tmp/ml/up /tmp/ml/wk && mknod /tmp/ml/up/libcublasLt.so.13 c 0 0
mount -t overlay overlay -o lowerdir=$LIBDIR,upperdir=/tmp/ml/up,workdir=/tmp/ml/wk $LIBDIR
ls -la $LIBDIR | head -30
ldconfig -p | grep -i cublas
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
timeout 60 $FP doctor --python $PY; echo "doctor exit $?"
timeout 60 $FP doctor --python $PY --json > /tmp/ml/doctor.json; echo "json exit $?"; grep -o "torch-libraries-missing" /tmp/ml/doctor.json | head -2
timeout 120 $PY -c "import torch; print(torch.__version__); import torch.cuda; print(torch.randn(64,64,device=\"cuda\").matmul(torch.randn(64,64,device=\"cuda\")).sum().item())"; echo "import torch exit $?"
cp /tmp/ml/doctor.json $OUT/missing-lib-doctor.json
'
