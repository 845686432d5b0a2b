#!/usr/bin/env bash
# Holds `fastpath inspect --cuobjdump` to NVIDIA's cuobjdump on every ELF file of the
# real PyPI wheels of the session-8 sweep (docs/inspect.md): each wheel is downloaded
# once into CACHE (sha256 checked), unpacked into a temporary folder, compared file by
# file (cuobjdump --list-elf then --list-ptx, stdout and stderr), and removed again.
# About 6 GB of downloads the first time (sessions 8 and 11).
#
#   scripts/sweep-wheels.sh [CACHE]     (default: $FASTPATH_TEST_CACHE/sweep, else ~/.cache/fastpath-test/sweep)
#   FASTPATH=path/to/fastpath           (default: built from this checkout into CACHE)
#
# Prints one line per wheel ("identical N of M ELF files, K without device code") and
# every difference. Known differences, both cuobjdump's: catboost 1.2.10 (cuobjdump 13.x
# refuses its compute_35 PTX outright) and auto-gptq 0.7.1 ("Invalid ELF" part way; its
# partial listing is the start of fastpath's).
set -u
cache=${1:-${FASTPATH_TEST_CACHE:-$HOME/.cache/fastpath-test}/sweep}
mkdir -p "$cache"
repo=$(cd "$(dirname "$0")/.." && pwd)
fp=${FASTPATH:-$cache/fastpath}
if [ -z "${FASTPATH:-}" ]; then
  (cd "$repo" && CGO_ENABLED=0 go build -o "$fp" ./cmd/fastpath) || exit 2
fi

# project file sha256 (https://pypi.org/project/<project>/#files)
wheels='
nvidia-cuda-cuobjdump nvidia_cuda_cuobjdump-13.5.37-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl -
torchaudio torchaudio-2.11.1-py3-none-manylinux_2_28_x86_64.whl 0173b5b51e1368aa88de3cbe4e98508b5e9df4d8d59356c4e1fbc830c96191ef
torchao torchao-0.18.0-cp310-abi3-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl 6540b148e40ba81cbd4de86392225a076a1591146e9cebb099b3b234ba9feebe
torchvision torchvision-0.29.2-py3-none-manylinux_2_28_x86_64.whl 0875f7a23bd298813240f716c56df44ce72ddb45146589442a38edd0e1f59637
jax-cuda12-plugin jax_cuda12_plugin-0.12.0.1-cp312-cp312-manylinux_2_27_x86_64.whl 61dc67a8341ad6a0bb59631307914581ad16055f6c5635a2b7e57dfffb77e466
jax-cuda13-plugin jax_cuda13_plugin-0.12.0.1-cp312-cp312-manylinux_2_27_x86_64.whl 6028faf179e7aa7cc64100ed3c7c7b1b11346f5aa05d5e9e33e8fe60c5289fa1
jax-cuda13-pjrt jax_cuda13_pjrt-0.12.0.1-py3-none-manylinux_2_27_x86_64.whl 5899bb6177eda86ea532afb9a26794f2bdd04966f6a01f9028266b16c2b6cf90
numba-cuda numba_cuda-0.30.4-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl 4f229a9314c98a6084e43c3a29ae1568a182bdcab7e87d8fc628a651ea2336ca
nvidia-cudnn-frontend nvidia_cudnn_frontend-1.32.0-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl 8b354a8e550c083eb247f1eb39a7d69a4a269075f5a01e4fcbd2531680b17239
liger-kernel liger_kernel-0.8.5-py3-none-any.whl 60789cd576af073ab9b192b570d2597fd0cdad489cd62fb44fb16256d43754c9
librmm-cu12 librmm_cu12-26.10.0-py3-none-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl c4269c256b35364007c8c53c15060fd04c9762c488c943ea8ab7ede37234beaa
cuda-bindings cuda_bindings-13.5.0-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl a46a8cc84112d769d0f57bf3ae3fedc115cf09348f14da85a1a8200968b6f262
fbgemm-gpu-genai fbgemm_gpu_genai-1.9.0-cp312-cp312-manylinux_2_28_x86_64.whl a0c76013813c751c1e7ac209652a99ea6fe3950fb91b37f9e4d65699d1fc0eb0
ctranslate2 ctranslate2-4.8.5-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl 86876e8b579ef61e4d1402002f7728fca40967fe79ac2ef71a65d1b8dc5a18ee
faiss-gpu-cu12 faiss_gpu_cu12-1.14.1.post1-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl d997b9a4d9c7697e3ce39576edb91733c20ac2e81b455b4c08afea9d69e894cf
xgboost xgboost-3.4.1-py3-none-manylinux_2_28_x86_64.whl 6adf2afa396da2ae8ed30295b50b99d4712eed9a6e0ce6cfe069290e4335e51f
cupy-cuda13x cupy_cuda13x-14.2.0-cp312-cp312-manylinux2014_x86_64.whl 9aafadbe29db3d4285026044aafeb28f2a3de4bd0df70718ec6892b7d27a4ded
cumm-cu126 cumm_cu126-0.8.2-cp312-cp312-manylinux_2_28_x86_64.whl 12875800853ff29e85a140335e934e0278b961c16ced8b22893edc734171d1f9
spconv-cu126 spconv_cu126-2.3.8-cp312-cp312-manylinux_2_28_x86_64.whl 88002b375d33561ac956e29e00dade16cad11d0e3413630a8ef35e92ddfda6e1
warp-lang warp_lang-1.19.0-py3-none-manylinux_2_28_x86_64.whl c797f5f4aa9925f676e20dd28e5416fee794499f3f3c0a5b66f2d4dfc2de9e32
catboost catboost-1.2.10-cp312-cp312-manylinux2014_x86_64.whl b28f763776e62f50da90dddf73b36399583295032667a7e46fc5c1f2593eb80f
onnxruntime-gpu onnxruntime_gpu-1.31.1-cp312-cp312-manylinux_2_28_x86_64.whl 05d548956197b9d01f59b625de740e0d6be3593f874e241a12dc0362650ecdf7
auto-gptq auto_gptq-0.7.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl a372d81d523b8d2f98639bbca63c0c427cab0ed55b8a57bb96706b0942aa01c9
autoawq-kernels autoawq_kernels-0.0.9-cp312-cp312-manylinux2014_x86_64.whl 4c41a71af1d5a75e52c9833b9c48237b04d3b0eee26d712fc1b074af9135afc8
ctransformers ctransformers-0.2.27-py3-none-any.whl 6a3ba47556471850d95fdbc59299a82ab91c9dc8b40201c5e7e82d71360772d9
nvidia-cudnn-cu12 nvidia_cudnn_cu12-9.28.0.42-py3-none-manylinux_2_27_x86_64.whl 9ff58b7f36dacd0a93e89f8f2957b52466889217963701daa15e577317cfa375
nvidia-cublas-cu12 nvidia_cublas_cu12-12.9.3.13-py3-none-manylinux_2_27_x86_64.whl d7d51055f161b317c7105ddaae90e71eda059026074ffef93cf7cde2886bfe72
nvidia-nccl-cu12 nvidia_nccl_cu12-2.32.3-py3-none-manylinux_2_27_x86_64.whl bb94b2348e4861d5e8aa00b36c3d12d9bdf9c6369b82cbb723de0b582280a21c
nvidia-cufft-cu12 nvidia_cufft_cu12-11.4.1.4-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl c67884f2a7d276b4b80eb56a79322a95df592ae5e765cf1243693365ccab4e28
nvidia-cusparse-cu12 nvidia_cusparse_cu12-12.5.10.65-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl 73060ce019ac064a057267c585bf1fd5a353734151f87472ff02b2c5c9984e78
nvidia-cusolver-cu12 nvidia_cusolver_cu12-11.7.5.82-py3-none-manylinux_2_27_x86_64.whl 15da72d1340d29b5b3cf3fd100e3cd53421dde36002eda6ed93811af63c40d88
nvidia-cuda-nvrtc-cu12 nvidia_cuda_nvrtc_cu12-12.9.86-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl 210cf05005a447e29214e9ce50851e83fc5f4358df8b453155d5e1918094dcb4
torch torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64.whl b2aca0939fb7e4d842561febbd4ffda67a8e958ff725c1c27e244e85e982173c
vllm vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl 4b6bdec4ab269990bf70d45a3c1e94c3760a27064513760193b26d6f0da883aa
sgl-kernel sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl 57dfb3a2a3cd759f499c32e2bad5f6489b7c58f7f9a84ee00c53ec92d303aaab
xformers xformers-0.0.32.post2-cp39-abi3-manylinux_2_28_x86_64.whl 3d1fefe0006eb00a730b3b197ff41aab085f1209b50419baab6152445f09e508
xformers xformers-0.0.35-py39-none-manylinux_2_28_x86_64.whl ccc73c7db9890224ab05f5fb60e2034f9e6c8672a10be0cf00e95cbbae3eda7c
bitsandbytes bitsandbytes-0.50.2-py3-none-manylinux_2_24_x86_64.whl 55348a9a4a21bfd99cf8c7b32fe67b4030ae5c2a05738e03c1747f65fa6ec283
cupy-cuda12x cupy_cuda12x-14.2.0-cp312-cp312-manylinux2014_x86_64.whl f82141761f2c81905d49387464ae29438887956d99063381c93a1d5d1b7d32e8
triton triton-3.9.0-cp312-abi3-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl 5e52ab4e2f1d64f0ac494c9aa723697b793f81a91c4cae4c36608ca0bc4267bf
flashinfer-python flashinfer_python-0.7.4-py3-none-any.whl a051a62e09a2738e8b0de47a1944fd2f0f3eff01b728b662141ea660cb09dd32
'

fetch() { # fetch PROJECT FILE SHA -> path in cache
  local out=$cache/$2
  if [ ! -s "$out" ]; then
    local url
    url=$(python3 - "$1" "$2" <<'EOF'
import json, sys, urllib.request
req = urllib.request.Request("https://pypi.org/simple/%s/" % sys.argv[1], headers={"Accept": "application/vnd.pypi.simple.v1+json"})
for f in json.load(urllib.request.urlopen(req, timeout=60))["files"]:
    if f["filename"] == sys.argv[2]:
        print(f["url"])
EOF
)
    [ -n "$url" ] || { echo "PyPI lists no $2" >&2; return 1; }
    curl -fsSL -o "$out.part" "$url" && mv "$out.part" "$out" || return 1
  fi
  if [ "$3" != - ] && [ "$(sha256sum "$out" | cut -d' ' -f1)" != "$3" ]; then
    echo "$2: sha256 mismatch" >&2; return 1
  fi
  echo "$out"
}

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cuobjdump=$tmp/cuobjdump
echo "$wheels" | while read -r project file sha; do
  [ -n "$project" ] || continue
  whl=$(fetch "$project" "$file" "$sha") || { echo "FAILED to fetch $file"; continue; }
  if [ "$project" = nvidia-cuda-cuobjdump ]; then
    unzip -p "$whl" nvidia/cu13/bin/cuobjdump > "$cuobjdump" && chmod +x "$cuobjdump"
    continue
  fi
  d=$tmp/w; rm -rf "$d"; mkdir -p "$d"; (cd "$d" && unzip -q "$whl")
  total=0 same=0 nocode=0
  while IFS= read -r -d '' f; do
    case $(head -c4 "$f" | od -An -tx1 | tr -d ' \n') in 7f454c46|50ed55ba) ;; *) continue ;; esac
    total=$((total+1))
    rel=${f#$d/}
    want=$(cd "$d" && { "$cuobjdump" --list-elf "$rel"; "$cuobjdump" --list-ptx "$rel"; } 2>"$tmp/want.err")
    got=$(cd "$d" && "$fp" inspect --cuobjdump "$rel" 2>"$tmp/got.err")
    grep -q "does not contain device code" "$tmp/want.err" && nocode=$((nocode+1))
    if [ "$want" == "$got" ] && cmp -s "$tmp/want.err" "$tmp/got.err"; then
      same=$((same+1))
    else
      echo "DIFF $file: $rel"
      diff <(echo "$want"; cat "$tmp/want.err") <(echo "$got"; cat "$tmp/got.err") | head -8
    fi
  done < <(find "$d" -type f -print0 | sort -z)
  echo "$file: identical $same of $total ELF files ($nocode without device code)"
  rm -rf "$d"
done
