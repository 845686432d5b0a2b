"""fastpath's fallback benchmark: fast kernel vs transformers' torch reference.

Run by `fastpath bench` with the selected interpreter:
    python bench.py '{"config": PATH, "batches": [1], "seq_lens": [2048, 8192], "dtype": "bf16",
                      "families": [...], "functions": [{"name", "module", "torch_refs"}, ...]}'
The families and functions come from fastpath's knowledge base (families.json);
nothing here names a package, a module or a family.
For each kernel-dependent layer kind of the model (Gated DeltaNet for now),
times the package's function (when importable) and transformers' own torch
reference at the model's shapes on the GPU: the first call timed on its own
(Triton compiles there), warm-up, CUDA events, the median, min and p90 of
repeated runs, a cap on the seconds spent per measurement (after the first
call), and a flag when the two halves of the runs disagree by more than 10%. Progress goes to
stderr; ONE JSON object goes to stdout. Nothing is downloaded. Python 3.8+.
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

BENCH_VERSION = 2


def log(msg):
    sys.stderr.write("bench: %s\n" % msg)
    sys.stderr.flush()


# Written beside this script by fastpath's runner: one copy of the helpers
# that read exceptions and transformers' hub wrappers.
from probe import closure_vars, emit, exc_text, hold_stdout  # noqa: E402


def torch_reference(mod, names):
    """transformers' torch reference among the module attributes names: the
    wrapper's torch_function (5.15+) or a plain transformers function."""
    for n in names:
        obj = getattr(mod, n, None)
        if obj is None or not callable(obj):
            continue
        cv = closure_vars(obj)
        if "torch_function" in cv and callable(cv["torch_function"]):
            return cv["torch_function"], "%s.%s (torch_function of the hub wrapper)" % (mod.__name__, n)
        if (getattr(obj, "__module__", "") or "").startswith("transformers"):
            return obj, "%s.%s" % (mod.__name__, n)
    return None, None


class Timer(object):
    def __init__(self, torch, warmup, runs, cap_s):
        self.torch, self.warmup, self.runs, self.cap_s = torch, warmup, runs, cap_s

    def measure(self, fn):
        """Times fn() on the GPU. The first call is timed on its own
        (first_ms: Triton's compile and autotuning happen there) and does not
        count against the cap; then warm-up, then up to runs calls timed with
        CUDA events, stopping early once cap_s seconds are spent (at least one
        timed call). Reports the median, min, p90 and the runs, and the
        medians of the first and second half of the runs in the order they
        ran: when those disagree by more than 10% the result is unstable."""
        torch = self.torch
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        first_ms = (time.perf_counter() - t0) * 1000.0
        start = time.perf_counter()
        for _ in range(max(0, self.warmup - 1)):
            fn()
            torch.cuda.synchronize()
            if time.perf_counter() - start > self.cap_s / 2:
                break
        start = time.perf_counter()
        times = []
        capped = False
        for _ in range(self.runs):
            b, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            b.record()
            fn()
            e.record()
            e.synchronize()
            times.append(b.elapsed_time(e))
            if time.perf_counter() - start > self.cap_s:
                capped = len(times) < self.runs
                break
        n = len(times)
        out = {"ms": median(times), "runs": n, "capped": capped, "min_ms": min(times),
               "p90_ms": percentile(times, 90), "first_ms": first_ms}
        if n >= 4:
            h1, h2 = median(times[:n // 2]), median(times[n // 2:])
            out["halves_ms"] = [h1, h2]
            out["unstable"] = abs(h1 - h2) > 0.10 * min(h1, h2)
        return out


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2.0


def percentile(xs, p):
    """The nearest-rank percentile."""
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, int(-(-p * len(xs) // 100)) - 1))
    return xs[k]


def partial(out):
    """Writes everything measured so far as one stderr line, so that a run
    killed at its time limit still reports what it finished."""
    sys.stderr.write(PARTIAL + json.dumps(out, separators=(",", ":")) + "\n")
    sys.stderr.flush()


PARTIAL = "bench-partial: "


def put(r, which, m):
    """Copies a measurement into a result under which_* keys."""
    r[which + "_ms"], r[which + "_runs"], r[which + "_capped"] = m["ms"], m["runs"], m["capped"]
    r[which + "_min_ms"], r[which + "_p90_ms"], r[which + "_first_call_ms"] = m["min_ms"], m["p90_ms"], m["first_ms"]
    if "halves_ms" in m:
        r[which + "_halves_ms"] = m["halves_ms"]
        r[which + "_unstable"] = m["unstable"]


def text_config(d):
    tc = d.get("text_config")
    return tc if isinstance(tc, dict) and tc.get("linear_num_value_heads") else d


def gdn_shapes(cfg):
    tc = text_config(cfg)
    s = {
        "hidden_size": int(tc["hidden_size"]),
        "num_k_heads": int(tc.get("linear_num_key_heads", 16)),
        "num_v_heads": int(tc.get("linear_num_value_heads", 32)),
        "head_k_dim": int(tc.get("linear_key_head_dim", 128)),
        "head_v_dim": int(tc.get("linear_value_head_dim", 128)),
        "conv_kernel": int(tc.get("linear_conv_kernel_dim", 4)),
    }
    s["conv_dim"] = 2 * s["num_k_heads"] * s["head_k_dim"] + s["num_v_heads"] * s["head_v_dim"]
    types = tc.get("layer_types")
    if isinstance(types, list):
        s["layers"] = sum(1 for t in types if t == "linear_attention")
    else:
        n = int(tc.get("num_hidden_layers", 0))
        interval = int(tc.get("full_attention_interval", 4)) or 4
        s["layers"] = n - n // interval
    return s


def fast_functions(functions):
    """The packages' functions, or why each is missing."""
    fast = {}
    for f in functions:
        fname, modname = f["name"], f["module"]
        try:
            m = importlib.import_module(modname)
            fn = getattr(m, fname)
            fast[fname] = (fn, "%s.%s" % (modname, fname), None)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            fast[fname] = (None, None, "%s not importable: %s" % (modname, exc_text(e)))
    return fast


def fallback_functions(mod, torch, refs):
    """The torch reference of each function: refs[name] lists the modeling
    module's attributes that may hold it, in order."""
    F = torch.nn.functional
    fb = {}
    for fname, names in refs.items():
        fb[fname] = torch_reference(mod, names)
    fn, src = fb.get("causal_conv1d_fn") or (None, None)
    if fn is None:
        # Up to 5.14 the layer itself runs nn.Conv1d then the activation when
        # causal_conv1d_fn is None: the same computation.
        def conv_fn(x, weight, bias=None, activation=None, **kw):
            seq = x.shape[-1]
            y = F.conv1d(x, weight.unsqueeze(1), bias, padding=weight.shape[-1] - 1, groups=x.shape[1])[..., :seq]
            return F.silu(y) if activation in ("silu", "swish") else y
        fn, src = conv_fn, "F.conv1d + silu (what the layer runs when causal_conv1d_fn is None; no torch reference function in this transformers)"
    fb["causal_conv1d_fn"] = (fn, src)
    return fb


def gdn_cases(torch, s, dtype, batch, seq_len, dev):
    """(function, phase, seq_len, make_args) for one shape: prefill calls at
    seq_len, decode calls at one token."""
    H, K, V, D, W = s["num_v_heads"], s["head_k_dim"], s["head_v_dim"], s["conv_dim"], s["conv_kernel"]

    def conv_args():
        x = torch.randn(batch, D, seq_len, device=dev, dtype=dtype)
        w = torch.randn(D, W, device=dev, dtype=dtype) * 0.1
        return (x, w, None), {"activation": "silu"}

    def update_args():
        x = torch.randn(batch, D, 1, device=dev, dtype=dtype)
        st = torch.randn(batch, D, W, device=dev, dtype=dtype)
        w = torch.randn(D, W, device=dev, dtype=dtype) * 0.1
        return (x, st, w, None, "silu"), {}

    def gdr_args(t):
        def make():
            q = torch.randn(batch, t, H, K, device=dev, dtype=dtype)
            k = torch.randn(batch, t, H, K, device=dev, dtype=dtype)
            v = torch.randn(batch, t, H, V, device=dev, dtype=dtype)
            g = -torch.rand(batch, t, H, device=dev, dtype=torch.float32)
            beta = torch.rand(batch, t, H, device=dev, dtype=dtype)
            init = torch.zeros(batch, H, K, V, device=dev, dtype=torch.float32) if t == 1 else None
            return (q, k, v), {"g": g, "beta": beta, "initial_state": init, "output_final_state": True,
                               "use_qk_l2norm_in_kernel": True}
        return make

    return [("causal_conv1d_fn", "prefill", seq_len, conv_args),
            ("chunk_gated_delta_rule", "prefill", seq_len, gdr_args(seq_len)),
            ("causal_conv1d_update", "decode", 1, update_args),
            ("fused_recurrent_gated_delta_rule", "decode", 1, gdr_args(1))]


def layer_forward(torch, mod, cfg_dict, model_type, fast, fb, refs, dtype, batch, seq_len, dev, timer):
    """One whole GatedDeltaNet layer's prefill forward with random weights,
    with the module-level functions bound to the fast ones, then the torch
    references; returns a result dict."""
    r = {"kind": "linear_attention", "batch": batch, "seq_len": seq_len}
    try:
        from transformers import AutoConfig
        cfg = AutoConfig.for_model(model_type, **{k: v for k, v in cfg_dict.items() if k != "model_type"})
        tc = getattr(cfg, "text_config", None) or cfg
        cls = None
        for name in dir(mod):
            if name.endswith("GatedDeltaNet"):
                cls = getattr(mod, name)
        if cls is None:
            r["error"] = "no *GatedDeltaNet class in %s" % mod.__name__
            return r
        types = list(getattr(tc, "layer_types", None) or [])
        idx = types.index("linear_attention") if "linear_attention" in types else 0
        layer = cls(tc, idx).to(device=dev, dtype=dtype).eval()
        x = torch.randn(batch, seq_len, tc.hidden_size, device=dev, dtype=dtype) * 0.1
        # The prefill functions, under every attribute that may hold them.
        names = {f: refs.get(f) or [f] for f in ("causal_conv1d_fn", "chunk_gated_delta_rule")}
        saved = {}
        for fname, attrs in names.items():
            for a in attrs:
                if hasattr(mod, a):
                    saved[a] = getattr(mod, a)

        def bind(which):
            for fname, attrs in names.items():
                impl = (fast[fname][0] if which == "fast" else fb[fname][0])
                for a in attrs:
                    if a in saved:
                        setattr(mod, a, impl)

        try:
            for which in ("fallback", "fast"):
                if which == "fast" and any(fast[f][0] is None for f in names):
                    r["fast_error"] = "; ".join(fast[f][2] for f in names if fast[f][0] is None)
                    continue
                if which == "fallback" and any(fb[f][0] is None for f in names):
                    r["fallback_error"] = "no torch reference for " + ", ".join(f for f in names if fb[f][0] is None)
                    continue
                bind(which)
                # Up to 5.14 the layer keeps its own references.
                for fname in names:
                    if hasattr(layer, fname):
                        setattr(layer, fname, fast[fname][0] if which == "fast" else fb[fname][0])
                with torch.no_grad():
                    m = timer.measure(lambda: layer(x))
                put(r, which, m)
        finally:
            for a, v in saved.items():
                setattr(mod, a, v)
        del layer, x
    except Exception as e:
        r["error"] = exc_text(e)
    return r


def run(args, out):
    cfg_path = args["config"]
    with open(cfg_path) as fh:
        cfg = json.load(fh)
    model_type = str(cfg.get("model_type", ""))
    out["model_type"] = model_type
    families = [str(f) for f in args.get("families") or []]
    functions = [f for f in args.get("functions") or [] if isinstance(f, dict) and f.get("name") and f.get("module")]
    if not families or not functions:
        out["errors"].append("no families or functions given: fastpath passes them from its knowledge base")
        return
    if model_type not in families:
        out["skipped"].append("model_type %s: no benchmark for its layer kinds yet (Gated DeltaNet families: %s)" %
                              (model_type, ", ".join(families)))
        return
    refs = {f["name"]: [str(r) for r in f.get("torch_refs") or []] for f in functions}
    s = gdn_shapes(cfg)
    out["shapes"] = s
    out["layers"] = {"linear_attention": s["layers"]}
    try:
        import torch
    except BaseException as e:
        out["errors"].append("torch not importable: " + exc_text(e))
        return
    out["torch"] = torch.__version__
    if not torch.cuda.is_available():
        out["errors"].append("torch.cuda.is_available() is False: nothing to time on a GPU")
        return
    dev = torch.device("cuda", 0)
    out["device"] = torch.cuda.get_device_name(0)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.get("dtype", "bf16")]
    try:
        import transformers
        out["transformers"] = transformers.__version__
        mod = importlib.import_module("transformers.models.%s.modeling_%s" % (model_type, model_type))
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        out["errors"].append("transformers' %s modeling not importable: %s" % (model_type, exc_text(e)))
        return
    fast = fast_functions(functions)
    fb = fallback_functions(mod, torch, refs)
    for fname in sorted(fast):
        if fast[fname][0] is None:
            out["skipped"].append("%s fast: %s" % (fname, fast[fname][2]))
        if fb[fname][0] is None:
            out["skipped"].append("%s fallback: transformers %s has no torch reference for it in %s" %
                                  (fname, out["transformers"], mod.__name__))
    timer = Timer(torch, int(args.get("warmup", 3)), int(args.get("runs", 20)), float(args.get("cap_seconds", 20)))
    seen = set()
    for batch in args.get("batches") or [1]:
        for seq_len in args.get("seq_lens") or [2048]:
            for fname, phase, t, make in gdn_cases(torch, s, dtype, batch, seq_len, dev):
                if (fname, batch, t) in seen or fname not in fast:
                    continue
                seen.add((fname, batch, t))
                r = {"kind": "linear_attention", "function": fname, "phase": phase, "batch": batch, "seq_len": t,
                     "layers": s["layers"], "calls_per_layer": 1}
                for which, (fn, src) in (("fast", fast[fname][:2]), ("fallback", fb[fname])):
                    if fn is None:
                        r[which + "_error"] = fast[fname][2] if which == "fast" else "no torch reference in transformers"
                        continue
                    r[which + "_from"] = src
                    log("%s %s batch=%d seq_len=%d %s" % (fname, which, batch, t, src))
                    try:
                        a, kw = make()
                        with torch.no_grad():
                            m = timer.measure(lambda: fn(*a, **kw))
                        put(r, which, m)
                    except Exception as e:
                        r[which + "_error"] = exc_text(e)
                    finally:
                        a = kw = None
                        torch.cuda.empty_cache()
                out["results"].append(r)
                partial(out)
            if not args.get("no_layer"):
                log("whole layer forward batch=%d seq_len=%d" % (batch, seq_len))
                out["layer_forward"].append(layer_forward(torch, mod, cfg, model_type, fast, fb, refs, dtype, batch,
                                                          seq_len, dev, timer))
                partial(out)
                torch.cuda.empty_cache()


def main():
    real = hold_stdout()
    out = {"bench": BENCH_VERSION, "results": [], "layer_forward": [], "skipped": [], "errors": []}
    try:
        args = json.loads(sys.argv[1])
        out["dtype"] = args.get("dtype", "bf16")
        out["config"] = args.get("config", "")
        run(args, out)
    except BaseException as e:
        out["errors"].append("bench: " + exc_text(e))
        out["errors"].append(traceback.format_exc()[-2000:])
    emit(real, out, "bench", BENCH_VERSION)

if __name__ == "__main__":
    main()
