#!/usr/bin/env python3
"""Print, per kernel function, what the installed transformers itself resolves
for a model family, as JSON, to diff with `fastpath model CONFIG --json`
(its "kernels": function -> resolves).

usage: python model-verdict-compare.py MODEL_TYPE [MODEL_TYPE...]
Run it with the interpreter of the environment fastpath judged (it needs
transformers and torch; no weights are loaded, nothing is downloaded).

How it observes the resolution without loading a model:
- transformers >= 5.15: the modeling module's functions are wrapped by
  integrations.hub_kernels.use_kernel_func_from_hub_with_fallback, whose
  closure holds `implementation` (the package's function, or the torch
  reference itself). A function whose module is not transformers' is the
  package's.
- transformers <= 5.14: the modeling module binds the package functions at
  import (None, or the package's function).
A function transformers does not resolve at all on this version is absent.
"""
import importlib
import json
import sys
import warnings

warnings.filterwarnings("ignore")

FUNCTIONS = ["causal_conv1d_fn", "causal_conv1d_update", "chunk_gated_delta_rule", "fused_recurrent_gated_delta_rule",
             "chunk_kda", "fused_recurrent_kda", "selective_scan_fn", "selective_state_update", "mamba_inner_fn",
             "mamba_chunk_scan_combined", "mamba_split_conv1d_scan_combined"]


def closure_vars(fn):
    out = {}
    seen = set()
    stack = [fn]
    while stack:
        f = stack.pop()
        if id(f) in seen or f is None:
            continue
        seen.add(id(f))
        code = getattr(f, "__code__", None)
        cells = getattr(f, "__closure__", None) or ()
        if code is not None:
            for name, cell in zip(code.co_freevars, cells):
                try:
                    out.setdefault(name, cell.cell_contents)
                except ValueError:
                    pass
        stack.append(getattr(f, "__wrapped__", None))
    return out


def where(obj):
    mod = getattr(obj, "__module__", "") or ""
    if obj is None or mod.startswith("transformers"):
        return "torch", mod
    return "package", mod


def resolve(model_type):
    mod = importlib.import_module("transformers.models.%s.modeling_%s" % (model_type, model_type))
    found = {}
    for name in dir(mod):
        obj = getattr(mod, name)
        if not callable(obj) and obj is not None:
            continue
        cv = closure_vars(obj) if callable(obj) else {}
        if "implementation" in cv and "torch_function" in cv:
            # use_kernel_func_from_hub_with_fallback(func_name, package): the
            # wrapper's name is the torch function's; the kernel name is in
            # the decorator's closure.
            fname = cv.get("func_name") or name
            impl = cv["implementation"]
            kind, m = ("torch", impl.__module__) if impl is cv["torch_function"] else where(impl)
            found[fname] = {"resolves": kind, "module": m, "via": "use_kernel_func_from_hub_with_fallback"}
    for fname in FUNCTIONS:
        if fname in found or not hasattr(mod, fname):
            continue
        obj = getattr(mod, fname)
        kind, m = where(obj)
        found[fname] = {"resolves": kind, "module": m, "via": "module attribute"}
    return found


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
            out["models"][mt] = resolve(mt)
        except Exception as e:
            out["models"][mt] = {"error": "%s: %s" % (type(e).__name__, e)}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
