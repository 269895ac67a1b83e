#!/usr/bin/env python3
"""Golden data for the pure-Swift all-MiniLM-L6-v2 (issue 19): token ids and sentence embeddings.

How it was run (2026-11-24, Debian 12, Python 3.11.7):
    pip install tokenizers==0.23.3 numpy      # numpy 2.4.6 was installed
    SANAD_MODELS=<models folder> python3 scripts/golden/make_minilm_golden.py

Writes Tests/Fixtures/minilm/tokens.json and embeddings.json from Tests/Fixtures/minilm/corpus.json.

- Token ids come from Hugging Face `tokenizers` loading the model's own tokenizer.json, with truncation and padding
  switched off (the Swift side truncates to the model's 256 and says so; that is tested separately).
- Embeddings come from an exact NumPy re-implementation of BertModel + mean pooling + L2 normalisation in float64,
  reading model.safetensors directly (no torch, no safetensors package): word + position + token-type embeddings,
  LayerNorm (eps from config.json), 6 post-norm layers of bidirectional attention and a GELU (erf) feed-forward.
  The ids it embeds are the `tokenizers` ids (truncated to max_seq_length from sentence_bert_config.json).
"""
import json
import math
import os
import struct
import sys

import numpy as np
from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.environ.get("SANAD_MODELS", os.path.join(ROOT, "models"))
MODEL = os.path.join(MODELS, "all-MiniLM-L6-v2")
FIXTURES = os.path.join(ROOT, "Tests", "Fixtures", "minilm")


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] != "F32":
            continue
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(raw[base + b : base + e], dtype="<f4").reshape(t["shape"]).astype(np.float64)
    return out


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


ERF = np.frompyfunc(math.erf, 1, 1)


def gelu(x):
    return 0.5 * x * (1.0 + ERF(x / math.sqrt(2.0)).astype(np.float64))


def embed(ids, w, cfg):
    n = len(ids)
    heads = cfg["num_attention_heads"]
    hd = cfg["hidden_size"] // heads
    eps = cfg["layer_norm_eps"]
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
    x = x + w["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        lin = lambda v, name: v @ w[p + name + ".weight"].T + w[p + name + ".bias"]
        q = lin(x, "attention.self.query").reshape(n, heads, hd).transpose(1, 0, 2)
        k = lin(x, "attention.self.key").reshape(n, heads, hd).transpose(1, 0, 2)
        v = lin(x, "attention.self.value").reshape(n, heads, hd).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        a = (s @ v).transpose(1, 0, 2).reshape(n, heads * hd)
        x = layer_norm(x + lin(a, "attention.output.dense"), w[p + "attention.output.LayerNorm.weight"],
                       w[p + "attention.output.LayerNorm.bias"], eps)
        h = gelu(lin(x, "intermediate.dense"))
        x = layer_norm(x + lin(h, "output.dense"), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def main():
    corpus = json.load(open(os.path.join(FIXTURES, "corpus.json"), encoding="utf-8"))
    tok = Tokenizer.from_file(os.path.join(MODEL, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    tokens = [{"text": t, "ids": tok.encode(t).ids} for t in corpus]
    with open(os.path.join(FIXTURES, "tokens.json"), "w", encoding="utf-8") as f:
        json.dump({"made_by": "scripts/golden/make_minilm_golden.py (tokenizers 0.23.3)", "lines": tokens}, f,
                  ensure_ascii=False, indent=0)
    cfg = json.load(open(os.path.join(MODEL, "config.json")))
    max_len = json.load(open(os.path.join(MODEL, "sentence_bert_config.json")))["max_seq_length"]
    w = read_safetensors(os.path.join(MODEL, "model.safetensors"))
    sentences = corpus + ["word " * 300]  # the last one is truncated to max_seq_length
    out = []
    for t in sentences:
        ids = tok.encode(t).ids
        if len(ids) > max_len:
            ids = ids[: max_len - 1] + [ids[-1]]
        out.append({"text": t, "ids": ids, "embedding": [round(float(v), 7) for v in embed(ids, w, cfg)]})
    with open(os.path.join(FIXTURES, "embeddings.json"), "w", encoding="utf-8") as f:
        json.dump({"made_by": "scripts/golden/make_minilm_golden.py (NumPy float64 BERT, mean pooling, L2)",
                   "max_seq_length": max_len, "sentences": out}, f, ensure_ascii=False, indent=0)
    print(f"wrote {len(tokens)} token lines and {len(out)} embeddings", file=sys.stderr)


if __name__ == "__main__":
    main()
