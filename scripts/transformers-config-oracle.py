#!/usr/bin/env python3
"""Record what the installed transformers makes of each config.json in a folder:
the language model it finds (get_text_config), its layer count and its per-layer
kinds, as JSON, for fastpath's model reading to be checked against.

usage: transformers-config-oracle.py [--write-defaults] CONFIG_DIR OUT_JSON

--write-defaults first writes into CONFIG_DIR, for every model_type of the
installed transformers, its configuration class's defaults
(AutoConfig.for_model(TYPE).save_pretrained), as TYPE.json.

OUT_JSON: {"transformers": VERSION, "configs": {FILE: {...}}}, per file:
  model_type       the config's model_type
  text_model_type  the language model's model_type (get_text_config()), or null
                   when it is the config itself
  num_layers       get_text_config().num_hidden_layers (attribute_map aliases
                   such as n_layer resolved by transformers); null when it is
                   not an integer
  layer_kinds      {kind: count} from layer_types or layers_block_type, or null
                   when transformers exposes no per-layer list
  kinds_attr       the attribute read (layer_types, layers_block_type) or null
  via              "AutoConfig.from_pretrained", or, for a config whose class is
                   remote code (not in transformers), the nested language-model
                   dict loaded with AutoConfig.for_model and the key it was under
  error            when transformers refuses the file (the other fields absent)

Needs no torch: configuration classes only. Never asks the network
(HF_HUB_OFFLINE=1 is set).
"""
import json
import os
import shutil
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ["HF_HUB_OFFLINE"] = "1"

import transformers  # noqa: E402
from transformers import AutoConfig  # noqa: E402
from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES  # noqa: E402

# The keys remote-code wrappers keep their language model under (InternVL's
# InternVLChatConfig: llm_config; DeepSeek-VL2: language_config). Only used when
# transformers has no class for the top-level model_type.
REMOTE_TEXT_KEYS = ("llm_config", "language_config", "text_config")


def text_of(cfg):
    try:
        return cfg.get_text_config()
    except ValueError:
        # Several text configs (an encoder and a decoder): the decoder's.
        return cfg.get_text_config(decoder=True)


def kinds_of(text):
    for attr in ("layer_types", "layers_block_type"):
        try:
            v = getattr(text, attr, None)
        except Exception:
            v = None
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, str) for x in v):
            counts = {}
            for k in v:
                counts[k] = counts.get(k, 0) + 1
            return attr, counts, len(v)
    return None, None, None


def record(raw):
    mt = raw.get("model_type")
    if mt in CONFIG_MAPPING_NAMES:
        d = tempfile.mkdtemp()
        try:
            with open(os.path.join(d, "config.json"), "w") as f:
                json.dump(raw, f)
            cfg = AutoConfig.from_pretrained(d)
        finally:
            shutil.rmtree(d)
        via = "AutoConfig.from_pretrained"
    else:
        for key in REMOTE_TEXT_KEYS:
            sub = raw.get(key)
            if isinstance(sub, dict) and sub.get("model_type") in CONFIG_MAPPING_NAMES:
                cfg = AutoConfig.for_model(**sub)
                via = "AutoConfig.for_model(**%s): %s is remote code" % (key, mt)
                break
        else:
            return {"model_type": mt, "error": "model_type %r is not in transformers %s" % (mt, transformers.__version__)}
    text = text_of(cfg)
    attr, counts, n = kinds_of(text)
    if n is None:
        n = getattr(text, "num_hidden_layers", None)
        if not isinstance(n, int) or isinstance(n, bool):
            n = None  # some classes keep a per-stage list or nothing here
    nested = text is not cfg or via != "AutoConfig.from_pretrained"
    return {
        "model_type": mt,
        "text_model_type": text.model_type if nested else None,
        "num_layers": n,
        "layer_kinds": counts,
        "kinds_attr": attr,
        "via": via,
    }


def write_defaults(dst):
    os.makedirs(dst, exist_ok=True)
    for mt in CONFIG_MAPPING_NAMES:
        d = tempfile.mkdtemp()
        try:
            AutoConfig.for_model(mt).save_pretrained(d)
            shutil.move(os.path.join(d, "config.json"), os.path.join(dst, mt + ".json"))
        except Exception:
            pass  # a class without usable defaults: nothing to compare
        finally:
            shutil.rmtree(d, ignore_errors=True)


def main():
    args = sys.argv[1:]
    if args and args[0] == "--write-defaults":
        args = args[1:]
        write_defaults(args[0])
    src, out = args[0], args[1]
    configs = {}
    for name in sorted(os.listdir(src)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(src, name)) as f:
            raw = json.load(f)
        try:
            configs[name] = record(raw)
        except Exception as e:  # recorded, so the Go test sees what transformers refused
            configs[name] = {"model_type": raw.get("model_type"), "error": "%s: %s" % (type(e).__name__, e)}
    with open(out, "w") as f:
        json.dump({"transformers": transformers.__version__, "configs": configs}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
