"""Reads documents written by fastpath's manifest YAML writer with two YAML
readers that are not Go's: PyYAML (YAML 1.1, which resolves yes/no/on/off,
sexagesimal numbers and dates) and ruamel.yaml (YAML 1.2), and checks that
each document decodes to the JSON value it was written from.

Input (argv[1]): JSON lines, each {"json": <value>, "yaml": "<document>"}.
Prints one line per mismatch and a summary; exits 1 on any mismatch."""
import json
import sys

import ruamel.yaml
import yaml

reader12 = ruamel.yaml.YAML(typ="safe", pure=True)
bad = 0
n = 0
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        case = json.loads(line)
        want, doc = case["json"], case["yaml"]
        n += 1
        for name, load in (("PyYAML " + yaml.__version__, yaml.safe_load), ("ruamel.yaml " + ruamel.yaml.__version__, reader12.load)):
            try:
                got = load(doc)
            except Exception as e:  # a document either reader refuses is a failure too
                got = "error: %s" % e
            if got != want:
                bad += 1
                print("%s read %r as %r, want %r" % (name, doc, got, want))
print("%d documents, %d mismatches" % (n, bad))
sys.exit(1 if bad else 0)
