#!/usr/bin/env python3
"""Independent reading of transformers' kernel gates with Python's own parser.

For every transformers/models/<type>/modeling_<type>.py under SITE (a folder
holding the transformers package), parse the file with the ast module (the
file is never imported or run) and print, as JSON, the gates fastpath's Go
scanner should find:

- `from causal_conv1d|fla|mamba_ssm|flash_attn|flash_attn_interface... import f [as g]`
  anywhere: how "import-if-available" when an enclosing `if` tests a call to
  an is_*_available() function (and the import is in its body, not its else),
  else "import";
- `@use_kernel_func_from_hub_with_fallback("f", "pkg"[, internal_path=...])`
  and `@use_kernel_func_from_hub("f")` on a def: "hub-fallback" / "hub-only",
  local name the def's;
- `v = lazy_load_kernel("dist")` then `g = getattr(v, "f", ...)` or
  `g = resolve_internal_import(v, chained_path="a.b.f")`: "lazy-load-kernel".

Output: {"transformers": VERSION, "modules": {type: [{"local", "function",
"import", "how", "line"}]}} (line: the decorator's line for decorators, the
statement's line otherwise). Usage: transformers-gates-ast.py SITE
"""
import ast
import json
import os
import re
import sys

KERNEL_ROOTS = {"causal_conv1d", "fla", "mamba_ssm", "flash_attn", "flash_attn_interface"}


def call_name(node):
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Name):
            return f.id
        if isinstance(f, ast.Attribute):
            return f.attr
    return None


def tests_availability(test):
    return any(isinstance(n, ast.Call) and (call_name(n) or "").endswith("_available") for n in ast.walk(test))


def str_args(call):
    return [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]


def kw(call, name):
    for k in call.keywords:
        if k.arg == name and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str):
            return k.value.value
    return None


class Reader(ast.NodeVisitor):
    def __init__(self):
        self.gates = []
        self.lazy = {}
        self.guard = []  # stack: True inside the body of an if testing availability

    def visit_If(self, node):
        avail = tests_availability(node.test)
        self.guard.append(avail)
        for s in node.body:
            self.visit(s)
        self.guard.pop()
        self.guard.append(False)
        for s in node.orelse:
            self.visit(s)
        self.guard.pop()

    def visit_ImportFrom(self, node):
        mod = node.module or ""
        if node.level == 0 and mod.split(".")[0] in KERNEL_ROOTS:
            how = "import-if-available" if self.guard and self.guard[-1] else "import"
            for a in node.names:
                self.gates.append({"local": a.asname or a.name, "function": a.name, "import": mod, "how": how,
                                   "line": node.lineno})

    def visit_FunctionDef(self, node):
        for d in node.decorator_list:
            n = call_name(d)
            if n in ("use_kernel_func_from_hub_with_fallback", "use_kernel_func_from_hub"):
                args = str_args(d)
                if not args:
                    continue
                g = {"local": node.name, "function": args[0], "how": "hub-only", "import": "", "line": d.lineno}
                if n == "use_kernel_func_from_hub_with_fallback":
                    pkg = args[1] if len(args) > 1 else (kw(d, "package") or "")
                    ip = kw(d, "internal_path")
                    g["how"], g["import"] = "hub-fallback", pkg + ("." + ip if ip else "")
                self.gates.append(g)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node):
        v = node.value
        target = node.targets[0] if len(node.targets) == 1 else None
        name = None
        if isinstance(target, ast.Name):
            name = target.id
        elif isinstance(target, ast.Attribute):
            name = target.attr
        n = call_name(v)
        if name and n == "lazy_load_kernel" and str_args(v):
            self.lazy[name] = str_args(v)[0]
        elif name and n in ("getattr", "resolve_internal_import") and v.args and isinstance(v.args[0], ast.Name) \
                and v.args[0].id in self.lazy:
            pkg = self.lazy[v.args[0].id].replace("-", "_")
            if n == "getattr":
                s = str_args(v)
                if s:
                    self.gates.append({"local": name, "function": s[0], "import": pkg, "how": "lazy-load-kernel",
                                       "line": node.lineno})
            else:
                p = kw(v, "chained_path") or (str_args(v) or [None])[0]
                if p:
                    mod, _, fn = p.rpartition(".")
                    self.gates.append({"local": name, "function": fn, "import": pkg + ("." + mod if mod else ""),
                                       "how": "lazy-load-kernel", "line": node.lineno})
        self.generic_visit(node)


def main():
    site = sys.argv[1]
    root = os.path.join(site, "transformers")
    version = None
    with open(os.path.join(root, "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__\s*=\s*"([^"]+)"', f.read(), re.M)
        version = m.group(1) if m else None
    out = {"transformers": version, "modules": {}, "errors": {}}
    models = os.path.join(root, "models")
    for t in sorted(os.listdir(models)):
        p = os.path.join(models, t, "modeling_%s.py" % t)
        if not os.path.isfile(p):
            continue
        try:
            with open(p, encoding="utf-8") as f:
                tree = ast.parse(f.read(), p)
        except SyntaxError as e:
            out["errors"][t] = str(e)
            continue
        r = Reader()
        r.visit(tree)
        out["modules"][t] = sorted(r.gates, key=lambda g: (g["line"], g["local"]))
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
