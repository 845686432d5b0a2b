#!/usr/bin/env python3
"""Runtime oracle for fastpath's static reading of transformers' kernel gates.

Imports every transformers.models.<type>.modeling_<type> module in the running
interpreter (which needs torch) and records, per module, what each kernel gate
bound at import time:

- functions wrapped by use_kernel_func_from_hub_with_fallback (5.15 on): the
  wrapper's closure holds `implementation` and `torch_function`; recorded are
  the kernel name, the implementation's module and name, and whether it is the
  torch function;
- module globals that are objects from causal_conv1d / fla / mamba_ssm /
  flash_attn (the 4.x `if is_*_available(): from X import f` gates);
- module globals that are None (the `else: f = None` side of those gates);
- is_fast_path_available where the module defines it;
- lazy_load_kernel(name) (5.0-5.14), called once per kernel name.

Usage: transformers-gate-runtime.py without|with OUT.json

"with" installs FAKE kernel packages before transformers is imported: a
sys.meta_path finder that answers every import of causal_conv1d, fla and
mamba_ssm (and their submodules) with an empty package whose module
__getattr__ returns, for any public name, a stub function of that name (it
raises if called), and a folder on sys.path holding dist-info METADATA for
causal-conv1d 1.6.0, fla-core 0.5.0, flash-linear-attention 0.5.0 and
mamba-ssm 2.3.0, so importlib.metadata and importlib.util.find_spec see them
installed. No kernel code exists or runs: the run shows which names each gate
binds when the packages are importable, nothing about whether they work.
flash_attn is not faked (it would change attention selection everywhere).

Never used by fastpath itself; refreshed on the GPU machine by
scripts/device/models.sh. Output: testdata for internal/model's oracle test.
"""
import importlib
import importlib.abc
import importlib.machinery
import json
import os
import sys
import tempfile
import time
import types

FAKE_ROOTS = ("causal_conv1d", "fla", "mamba_ssm")
FAKE_DISTS = {"causal-conv1d": "1.6.0", "fla-core": "0.5.0", "flash-linear-attention": "0.5.0", "mamba-ssm": "2.3.0"}
KERNEL_ROOTS = FAKE_ROOTS + ("flash_attn", "flash_attn_interface")


class _FakeModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)

        def stub(*args, **kwargs):
            raise RuntimeError("fastpath fake kernel %s.%s" % (self.__name__, name))

        stub.__module__ = self.__name__
        stub.__name__ = stub.__qualname__ = name
        setattr(self, name, stub)
        return stub


class _FakeFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in FAKE_ROOTS:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        m = _FakeModule(spec.name)
        m.__path__ = []
        m.__version__ = "0.5.0" if spec.name.startswith("fla") else "2.3.0"
        m.__fastpath_fake__ = True
        return m

    def exec_module(self, module):
        pass


def install_fakes():
    d = tempfile.mkdtemp(prefix="fastpath-fake-dists-")
    for dist, ver in FAKE_DISTS.items():
        info = os.path.join(d, "%s-%s.dist-info" % (dist.replace("-", "_"), ver))
        os.makedirs(info)
        with open(os.path.join(info, "METADATA"), "w") as f:
            f.write("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (dist, ver))
    sys.path.insert(0, d)
    sys.meta_path.insert(0, _FakeFinder())
    return d


def describe(obj):
    mod = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    return mod, name


def closure_cells(fn, depth=0):
    """Yield (name, value) for every closure cell of fn and of functions in it."""
    if depth > 3:
        return
    code = getattr(fn, "__code__", None)
    cl = getattr(fn, "__closure__", None)
    if code is None or not cl:
        return
    for name, cell in zip(code.co_freevars, cl):
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        yield name, v
        if callable(v) and name not in ("implementation", "torch_function"):
            yield from closure_cells(v, depth + 1)


def read_module(modname):
    m = importlib.import_module(modname)
    gates, nones = [], []
    for g, v in sorted(vars(m).items()):
        if g.startswith("__"):
            continue
        if v is None:
            nones.append(g)
            continue
        if callable(v) and getattr(v, "__module__", "") == modname:
            cells = dict(closure_cells(v))
            if "implementation" in cells and "torch_function" in cells:
                impl, tf = cells["implementation"], cells["torch_function"]
                imod, iname = describe(impl)
                gates.append({"global": g, "how": "hub-fallback", "kernel": cells.get("func_name"),
                              "package": cells.get("package"), "implementation": imod + "." + iname,
                              "torch_function": describe(tf)[1], "bound_to_torch": impl is tf})
            continue
        mod, name = describe(v)
        if mod.split(".")[0] in KERNEL_ROOTS:
            gates.append({"global": g, "how": "import", "implementation": mod + "." + name, "bound_to_torch": False})
    out = {"gates": gates, "none_globals": nones}
    if hasattr(m, "is_fast_path_available"):
        out["is_fast_path_available"] = bool(m.is_fast_path_available)
    return out


def main():
    mode, path = sys.argv[1], sys.argv[2]
    fake_dir = install_fakes() if mode == "with" else None
    t0 = time.time()
    import transformers
    from importlib import metadata

    result = {"mode": mode, "transformers": transformers.__version__, "python": sys.version.split()[0],
              "fake_dists_dir": fake_dir, "dists": {}, "lazy_load_kernel": {}, "modules": {}}
    try:
        import torch
        result["torch"] = torch.__version__
        result["cuda_available"] = torch.cuda.is_available()
    except Exception as e:  # noqa: BLE001
        result["torch_error"] = repr(e)
    for dist in list(FAKE_DISTS) + ["flash-attn", "flash_attn_3", "kernels"]:
        try:
            result["dists"][dist] = metadata.version(dist)
        except Exception:  # noqa: BLE001
            result["dists"][dist] = None
    try:
        from transformers.integrations import hub_kernels

        for k in ("causal-conv1d", "mamba-ssm", "fla"):
            try:
                mod = hub_kernels.lazy_load_kernel(k)
                result["lazy_load_kernel"][k] = None if mod is None else getattr(mod, "__name__", repr(mod))
            except Exception as e:  # noqa: BLE001
                result["lazy_load_kernel"][k] = "error: " + repr(e)[:200]
    except Exception as e:  # noqa: BLE001
        result["lazy_load_kernel_error"] = repr(e)[:200]
    models_dir = os.path.join(os.path.dirname(transformers.__file__), "models")
    for t in sorted(os.listdir(models_dir)):
        f = os.path.join(models_dir, t, "modeling_%s.py" % t)
        if not os.path.isfile(f):
            continue
        modname = "transformers.models.%s.modeling_%s" % (t, t)
        try:
            result["modules"][t] = read_module(modname)
        except BaseException as e:  # noqa: BLE001
            result["modules"][t] = {"error": (type(e).__name__ + ": " + str(e))[:300]}
    result["seconds"] = round(time.time() - t0, 1)
    with open(path, "w") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)
    print("%s: %d modules, %.1fs" % (mode, len(result["modules"]), result["seconds"]))


if __name__ == "__main__":
    main()
