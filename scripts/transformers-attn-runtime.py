#!/usr/bin/env python3
"""What transformers does with each attn_implementation in this environment.

Builds a tiny random-weight llama (1 layer, hidden 64; no download) with
AutoModelForCausalLM.from_config(config, attn_implementation=X) for each X and
records whether it raised (type, first line of the message) or loaded, and which
implementation the loaded model ended up with (config._attn_implementation).
On the GPU machine this is the runtime check of fastpath's attention verdicts
(model-will-not-load vs a silent downgrade). Usage: transformers-attn-runtime.py OUT.json
"""
import json
import sys
import time

IMPLS = ["eager", "sdpa", "flex_attention", "flash_attention_2", "flash_attention_3",
         "kernels-community/flash-attn2", "no_such_impl"]


def main():
    out = {"cases": []}
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, LlamaConfig

    out["transformers"] = transformers.__version__
    out["torch"] = torch.__version__
    out["cuda"] = torch.cuda.is_available()
    if torch.cuda.is_available():
        out["capability"] = "%d.%d" % torch.cuda.get_device_capability(0)
    for impl in IMPLS:
        cfg = LlamaConfig(num_hidden_layers=1, hidden_size=64, intermediate_size=128, num_attention_heads=2,
                          num_key_value_heads=2, vocab_size=128)
        case = {"requested": impl}
        t0 = time.time()
        try:
            m = AutoModelForCausalLM.from_config(cfg, attn_implementation=impl, dtype=torch.bfloat16)
            case["loaded"] = True
            case["effective"] = m.config._attn_implementation
        except BaseException as e:  # noqa: BLE001
            case["loaded"] = False
            case["error"] = type(e).__name__ + ": " + str(e).strip().splitlines()[0][:300]
        case["seconds"] = round(time.time() - t0, 2)
        out["cases"].append(case)
    with open(sys.argv[1], "w") as fh:
        json.dump(out, fh, indent=1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
