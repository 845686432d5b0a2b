"""fastpath's live probe: what importing things in this environment really does.

Run by `fastpath doctor --live` with the selected interpreter:
    python probe.py '{"packages": [{"name": ..., "import": ...}], "models": [...], "functions": [...]}'
It prints ONE JSON object on stdout (anything the imported libraries print is
sent to stderr). Standard library only, plus what it probes; Python 3.8+.
Nothing is downloaded: the Hugging Face libraries are put offline. Every step
is guarded: a failure is recorded in the JSON, never a crash.

scripts/model-verdict-compare.py runs resolve_model() of this file, so the
resolution logic exists once.
"""
import importlib
import json
import os
import sys
import time
import traceback

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

PROBE_VERSION = 1

# The kernel functions to look up come from the caller (fastpath passes the
# knowledge base's function sets as "functions"); nothing here names one.


def exc_text(e):
    """The exception as Python prints its last line: 'Type: message'."""
    msg = str(e)
    name = type(e).__name__
    return "%s: %s" % (name, msg) if msg else name


def closure_vars(fn):
    """Free variables of fn and of every function it wraps (__wrapped__)."""
    out = {}
    seen = set()
    stack = [fn]
    while stack:
        f = stack.pop()
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        code = getattr(f, "__code__", None)
        cells = getattr(f, "__closure__", None) or ()
        if code is not None:
            for name, cell in zip(code.co_freevars, cells):
                try:
                    out.setdefault(name, cell.cell_contents)
                except ValueError:  # an empty cell
                    pass
        stack.append(getattr(f, "__wrapped__", None))
    return out


def where(obj):
    mod = getattr(obj, "__module__", "") or ""
    if obj is None or mod.startswith("transformers"):
        return "torch", mod
    return "package", mod


def modeling_module(model_type):
    return importlib.import_module("transformers.models.%s.modeling_%s" % (model_type, model_type))


def resolve_model(model_type, functions=None):
    """Per kernel function, what the installed transformers resolves for model_type.

    transformers >= 5.15 wraps each function with
    integrations.hub_kernels.use_kernel_func_from_hub_with_fallback, whose
    closure holds `implementation` (the package's function, or the torch
    reference `torch_function` itself). Up to 5.14 the modeling module binds
    the package functions at import (None, or the package's function).
    """
    functions = functions or []
    mod = modeling_module(model_type)
    found = {}
    for name in dir(mod):
        try:
            obj = getattr(mod, name)
        except Exception:
            continue
        if not callable(obj):
            continue
        cv = closure_vars(obj)
        if "implementation" in cv and "torch_function" in cv:
            # The wrapper is named after the torch function; the kernel's
            # name is the decorator's func_name.
            fname = cv.get("func_name") or name
            impl = cv["implementation"]
            if impl is cv["torch_function"]:
                kind, m = "torch", getattr(impl, "__module__", "") or ""
            else:
                kind, m = where(impl)
            found[fname] = {"resolves": kind, "module": m, "via": "use_kernel_func_from_hub_with_fallback"}
    for fname in functions:
        if fname in found or not hasattr(mod, fname):
            continue
        kind, m = where(getattr(mod, fname))
        found[fname] = {"resolves": kind, "module": m, "via": "module attribute"}
    return found


def timed_import(name):
    t0 = time.perf_counter()
    try:
        mod = importlib.import_module(name)
        return mod, time.perf_counter() - t0, None
    except BaseException as e:  # SystemExit and KeyboardInterrupt from broken packages too
        if isinstance(e, KeyboardInterrupt):
            raise
        return None, time.perf_counter() - t0, e


def probe_torch(out):
    t = out["torch"]
    torch, secs, err = timed_import("torch")
    t["import_seconds"] = round(secs, 4)
    if err is not None:
        t["ok"] = False
        t["error"] = exc_text(err)
        return None
    t["ok"] = True
    t["version"] = str(getattr(torch, "__version__", ""))
    t["file"] = str(getattr(torch, "__file__", "") or "")
    try:
        t["cuda"] = str(torch.version.cuda or "")
        t["hip"] = str(getattr(torch.version, "hip", None) or "")
    except Exception as e:
        out["errors"].append("torch.version: " + exc_text(e))
    try:
        t["cxx11_abi"] = bool(torch.compiled_with_cxx11_abi())
    except Exception as e:
        out["errors"].append("torch.compiled_with_cxx11_abi(): " + exc_text(e))
    try:
        t["cuda_available"] = bool(torch.cuda.is_available())
    except Exception as e:
        t["cuda_error"] = exc_text(e)
        return torch
    try:
        t["arch_list"] = [str(a) for a in torch.cuda.get_arch_list()]
    except Exception as e:
        out["errors"].append("torch.cuda.get_arch_list(): " + exc_text(e))
    if not t["cuda_available"]:
        return torch
    try:
        t["device_count"] = int(torch.cuda.device_count())
    except Exception as e:
        t["cuda_error"] = exc_text(e)
        return torch
    for i in range(t["device_count"]):
        d = {"index": i, "name": "", "capability": ""}
        try:
            d["name"] = str(torch.cuda.get_device_name(i))
            major, minor = torch.cuda.get_device_capability(i)
            d["capability"] = "%d.%d" % (major, minor)
        except Exception as e:
            d["error"] = exc_text(e)
        t["devices"].append(d)
    return torch


def probe_package(name, import_name, smoke=None):
    p = {"name": name, "import": import_name, "ok": False, "seconds": 0.0}
    mod, secs, err = timed_import(import_name)
    p["seconds"] = round(secs, 4)
    if err is not None:
        p["error_type"] = type(err).__name__
        p["error"] = exc_text(err)
        return p
    p["ok"] = True
    p["version"] = str(getattr(mod, "__version__", "") or "")
    p["file"] = str(getattr(mod, "__file__", "") or "")
    if smoke:
        # One tiny kernel from the knowledge base (loading.json "smoke"): the
        # import alone does not launch anything, so "no code for the GPU" shows
        # only here.
        p["smoke"] = smoke
        try:
            exec(compile(smoke, "<smoke %s>" % name, "exec"), {"__name__": "__fastpath_smoke__"})
            p["smoke_ok"] = True
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            p["smoke_error"] = exc_text(e)
    return p


def run(args):
    out = {"probe": PROBE_VERSION,
           "python": {"version": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable, "prefix": sys.prefix},
           "torch": {"ok": False, "import_seconds": 0.0, "cuda_available": False, "device_count": 0, "devices": []},
           "packages": [], "transformers": {"import": "transformers", "ok": False, "seconds": 0.0},
           "models": {}, "errors": []}
    try:
        import warnings
        warnings.filterwarnings("ignore")
    except Exception:
        pass
    try:
        probe_torch(out)
    except Exception as e:
        out["errors"].append("torch: " + exc_text(e))
    for pkg in args.get("packages") or []:
        try:
            out["packages"].append(probe_package(str(pkg.get("name", "")), str(pkg["import"]), pkg.get("smoke") or None))
        except Exception as e:
            out["errors"].append("package %r: %s" % (pkg, exc_text(e)))
    models = args.get("models") or []
    try:
        out["transformers"] = probe_package("transformers", "transformers")
    except Exception as e:
        out["errors"].append("transformers: " + exc_text(e))
    if models and not args.get("functions"):
        out["errors"].append("no kernel functions given: fastpath passes the knowledge base's function sets")
    if out["transformers"].get("ok"):
        for mt in models:
            try:
                out["models"][mt] = {"functions": resolve_model(mt, args.get("functions"))}
            except Exception as e:
                out["models"][mt] = {"functions": {}, "error": exc_text(e)}
    elif models:
        for mt in models:
            out["models"][mt] = {"functions": {}, "error": "transformers not importable: " +
                                 str(out["transformers"].get("error", ""))}
    return out


def hold_stdout():
    """Libraries print on stdout at import (banners, warnings): send fd 1 to
    stderr and return the real stdout (None if it cannot be kept) for the
    one JSON line emit writes."""
    try:
        sys.stdout.flush()
        real = os.dup(1)
        os.dup2(2, 1)
        return real
    except Exception:
        return None


def emit(real, out, kind, version):
    """Write out as one JSON line on the real stdout; an answer that cannot
    be encoded becomes an error answer of its own."""
    try:
        text = json.dumps(out, default=str, allow_nan=False, sort_keys=True)
    except Exception as e:
        text = json.dumps({kind: version, "errors": ["encoding the answer: " + exc_text(e)]})
    try:
        sys.stdout.flush()
    except Exception:
        pass
    if real is None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return
    data = (text + "\n").encode("utf-8", "replace")
    while data:  # a pipe may take less than all of it at once
        data = data[os.write(real, data):]


def main():
    real = hold_stdout()
    try:
        args = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
        if not isinstance(args, dict):
            raise ValueError("argument is not a JSON object")
    except Exception as e:
        args = {}
        arg_error = "arguments: " + exc_text(e)
    else:
        arg_error = None
    try:
        out = run(args)
    except BaseException as e:  # never leave without a JSON answer
        out = {"probe": PROBE_VERSION, "errors": ["probe: " + exc_text(e), traceback.format_exc()[-2000:]]}
    if arg_error:
        out.setdefault("errors", []).append(arg_error)
    emit(real, out, "probe", PROBE_VERSION)

if __name__ == "__main__":
    main()
