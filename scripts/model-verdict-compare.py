#!/usr/bin/env python3
"""Print, per kernel function, what the installed transformers itself resolves
for a model family, as JSON, to diff with `fastpath model CONFIG --json`
(its "kernels": function -> resolves).

usage: python model-verdict-compare.py MODEL_TYPE [MODEL_TYPE...]
Run it with the interpreter of the environment fastpath judged (it needs
transformers and torch; no weights are loaded, nothing is downloaded).

The resolution logic is the live probe's (internal/live/probe.py, which
`fastpath doctor --live` embeds): this script loads that file, so there is
one implementation. `fastpath doctor --live --model CONFIG` gives the same
answer joined to the static verdicts.
"""
import importlib.util
import json
import os
import sys
import warnings

warnings.filterwarnings("ignore")

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("fastpath_probe", os.path.join(HERE, "..", "internal", "live", "probe.py"))
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)


def main():
    import transformers
    out = {"transformers": transformers.__version__, "models": {}}
    try:
        import torch
        out["torch"] = torch.__version__
        out["cuda_available"] = torch.cuda.is_available()
    except Exception as e:
        out["torch"] = "unavailable: %s" % e
    try:
        from transformers.utils.import_utils import is_kernels_available
        out["kernels_available"] = bool(is_kernels_available())
    except Exception:
        pass
    for mt in sys.argv[1:] or ["qwen3_5"]:
        try:
            out["models"][mt] = probe.resolve_model(mt)
        except Exception as e:
            out["models"][mt] = {"error": probe.exc_text(e)}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
