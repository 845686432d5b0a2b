#!/usr/bin/env python3
"""Writes corpus.json: Python packaging's answers for the inputs in inputs.json.

Usage: python3 gen.py [OUT]   (OUT defaults to corpus.json next to this file)

Run it with the packaging named in PIN on sys.path, for example
  pip download --no-deps packaging==25.0 -d /tmp/w
  PYTHONPATH=/tmp/w/packaging-25.0-py3-none-any.whl PYTHONHASHSEED=0 python3 gen.py
internal/pep440's TestCorpusNetwork does exactly that and compares the
result with the committed corpus.json byte for byte.

corpus.json holds:
  versions: [input, normalised form or null when packaging rejects it]
  order: the valid inputs sorted by packaging.version.Version, inputs that
         compare equal grouped in one list
"""
import functools
import json
import os
import sys

import packaging
from packaging.version import InvalidVersion, Version

PIN = "25.0"


def main():
    if packaging.__version__ != PIN:
        sys.exit(f"gen.py wants packaging {PIN}, found {packaging.__version__} at {packaging.__file__}")
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus.json")
    with open(os.path.join(here, "inputs.json"), encoding="utf-8") as f:
        inputs = json.load(f)

    versions, valid = [], []
    for s in inputs["versions"]:
        try:
            v = Version(s)
        except InvalidVersion:
            versions.append([s, None])
            continue
        versions.append([s, str(v)])
        valid.append((s, v))

    ordered = sorted(valid, key=lambda p: p[1])
    groups = []
    for s, v in ordered:
        if groups and groups[-1][0][1] == v:
            groups[-1].append((s, v))
        else:
            groups.append([(s, v)])

    dump = functools.partial(json.dumps, ensure_ascii=True)
    with open(out, "w", encoding="ascii") as f:
        f.write('{"packaging": %s,\n' % dump(packaging.__version__))
        f.write('"versions": [\n%s\n],\n' % ",\n".join(dump(x) for x in versions))
        f.write('"order": [\n%s\n]}\n' % ",\n".join(dump([s for s, _ in g]) for g in groups))


if __name__ == "__main__":
    main()
