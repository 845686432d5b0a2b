#!/usr/bin/env python3
"""Write, for the transformers installed in this interpreter, the config.json
files its own config classes produce for fastpath's model families, and the
per-layer kinds transformers itself derives from each, as JSON.

usage: transformers-layer-kinds.py OUTDIR [FAMILIES_JSON]

The families and their config variants are internal/kb/data/families.json's
(oracle_variants), or those of FAMILIES_JSON.

OUTDIR/manifest.json: {"transformers": VERSION, "cases": [...], "skipped": [...]}
Each case: {"name", "model_type", "file" (relative to OUTDIR), "attr" (the
attribute read: layer_types, layers_block_type, text_config.layer_types, or
null when transformers exposes none), "kinds" (list or null), "num_layers"}.
Two files per variant: "saved" (save_pretrained of the config object) and
"raw" (the minimal dict a Hub config.json would hold: model_type plus the
variant's fields), whose kinds come from loading that raw file back.
Needs no torch: only configuration classes are used.
"""
import json
import os
import sys
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import transformers  # noqa: E402
from transformers import AutoConfig  # noqa: E402

# Variants: the defaults, and non-default layouts in the fields each family
# uses (legacy spellings where older releases required them), are data:
# internal/kb/data/families.json's oracle_variants.
FAMILIES_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "internal", "kb", "data", "families.json")


def load_variants(families_json):
    """The configs to write per family: families.json's oracle_variants."""
    with open(families_json) as f:
        fams = json.load(f)["families"]
    return {mt: fam.get("oracle_variants") or [{}] for mt, fam in fams.items()}


def derived(cfg):
    """The per-layer kinds transformers exposes, and the attribute read."""
    owner, prefix = cfg, ""
    if getattr(cfg, "text_config", None) is not None and hasattr(cfg.text_config, "num_hidden_layers"):
        owner, prefix = cfg.text_config, "text_config."
    for attr in ("layer_types", "layers_block_type"):
        try:
            v = getattr(owner, attr, None)
        except Exception:
            v = None
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, str) for x in v):
            return prefix + attr, list(v), len(v)
    return None, None, getattr(owner, "num_hidden_layers", None)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    VARIANTS = load_variants(sys.argv[2] if len(sys.argv) > 2 else FAMILIES_JSON)
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    cases, skipped = [], []
    for mt, variants in VARIANTS.items():
        if mt not in CONFIG_MAPPING_NAMES:
            skipped.append({"model_type": mt, "why": "not in transformers %s" % transformers.__version__})
            continue
        for i, kw in enumerate(variants):
            name = "%s-%d" % (mt, i)
            try:
                cfg = AutoConfig.for_model(mt, **json.loads(json.dumps(kw)))
                d = os.path.join(out, name, "saved")
                cfg.save_pretrained(d)
                attr, kinds, n = derived(AutoConfig.from_pretrained(d))
                cases.append({"name": name + "/saved", "model_type": mt, "file": name + "/saved/config.json",
                              "attr": attr, "kinds": kinds, "num_layers": n})
                if kw:
                    d = os.path.join(out, name, "raw")
                    os.makedirs(d, exist_ok=True)
                    with open(os.path.join(d, "config.json"), "w") as f:
                        json.dump(dict(kw, model_type=mt), f, indent=2)
                    attr, kinds, n = derived(AutoConfig.from_pretrained(d))
                    cases.append({"name": name + "/raw", "model_type": mt, "file": name + "/raw/config.json",
                                  "attr": attr, "kinds": kinds, "num_layers": n})
            except Exception as e:  # a variant this release rejects
                skipped.append({"model_type": mt, "variant": kw, "why": "%s: %s" % (type(e).__name__, e)})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"transformers": transformers.__version__, "cases": cases, "skipped": skipped}, f, indent=1)


if __name__ == "__main__":
    main()
