#!/usr/bin/env python3
"""The inputs of explain's benchmark against grep -E (scripts/bench.sh and
scripts/device/explainspeed.sh, one copy for both):

  explain-bench-inputs.py log OUT
      50 MB of build and training noise (nvcc lines, [rank0] steps, vLLM
      throughput lines, traceback frames) with three real failures at known
      lines: fast-path-fallback, build-out-of-memory, no-cuda-compiler.
  explain-bench-inputs.py patterns SIGNATURES.json OUT
      every signature pattern of the knowledge base, rewritten for grep -E
      (named groups as plain groups, \\d \\s \\S \\w as POSIX classes, no
      inline flags): the floor explain is compared with.
"""
import json
import re
import sys


def log(out_path):
    noise = [
        "      [{0}/4211] /usr/local/cuda-12.8/bin/nvcc -c csrc/flash_attn/src/flash_fwd_hdim128_bf16_sm80.cu -o build/temp/flash_fwd_{1}.o -O3 -std=c++17 --threads 4 -gencode arch=compute_90,code=sm_90\n",
        "[rank0]: step {0}/100000 loss 2.{1:04d} lr 1.0e-05 (0.48 s/step)\n",
        "      /tmp/pip-install-3j2k/csrc/selective_scan/selective_scan_fwd_kernel.cuh({0}): warning #177-D: variable \"kNRows\" was declared but never referenced\n",
        "INFO 11-28 09:14:{1:02d} [engine.py:{0}] Avg prompt throughput: 1523.4 tokens/s, Avg generation throughput: 88.1 tokens/s, Running: 12 reqs\n",
        "  File \"/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line {0}, in _call_impl (frame {1})\n",
    ]
    place = {
        1000: "[transformers] `chunk_gated_delta_rule` is falling back to its reference PyTorch implementation because `flash-linear-attention` is not installed. This is correct but much slower; install `flash-linear-attention` for the optimized kernel.\n",
        250000: "      nvcc error   : 'cicc' died due to signal 9 (Kill signal)\n",
        350000: "      NameError: name 'bare_metal_version' is not defined\n",
    }
    out, n, line = [], 0, 0
    while n < 50 << 20:
        line += 1
        s = place.get(line) or noise[line % len(noise)].format(line, line % 9973)
        out.append(s)
        n += len(s)
    with open(out_path, "w") as f:
        f.write("".join(out))


def patterns(signatures_path, out_path):
    sigs = json.load(open(signatures_path))["signatures"]
    pats = []
    for s in sigs:
        p = s.get("pattern", "")
        p = re.sub(r"\(\?P<[^>]+>", "(", p)  # named groups: plain groups for grep -E
        p = p.replace(r"\d", "[0-9]").replace(r"\s", "[[:space:]]").replace(r"\S", "[^[:space:]]").replace(r"\w", "[[:alnum:]_]")
        p = re.sub(r"\(\?[a-z]+\)", "", p)  # inline flags
        p = p.replace("(?:", "(")
        if p:
            pats.append(p)
    with open(out_path, "w") as f:
        f.write("\n".join(pats) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "log":
        log(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "patterns":
        patterns(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
