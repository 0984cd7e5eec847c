"""ONNX Runtime backend for sentence-transformers models: the transformer runs in ONNX Runtime (fp32).

Only the transformer's forward pass moves to ONNX Runtime. Tokenisation, pooling and
normalisation stay the sentence-transformers modules of the loaded model, and texts are batched in
the same length order as ``SentenceTransformer.encode``, so embeddings equal the torch backend's up
to float rounding (about 1e-7 per component for all-MiniLM-L6-v2). The model is exported once with
``torch.onnx.export`` (offline, no optimum needed) into a cache folder keyed by the model files
and the torch version: ``$EQUILENS_ONNX_CACHE`` or ``~/.cache/equilens/onnx``.

Needs the optional extra ``pip install -e '.[onnx]'`` (onnxruntime, onnx); without it
:func:`onnx_available` is False and asking for the backend raises ``ConfigError``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from equilens.tasks.errors import ConfigError, ModelLoadError

OPSET = 17


def onnx_available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


def cache_dir() -> Path:
    root = os.environ.get("EQUILENS_ONNX_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "equilens" / "onnx"


def _fingerprint(path: str, input_names: Sequence[str]) -> str:
    import torch

    h = hashlib.sha256(f"{path}|{torch.__version__}|{OPSET}|{','.join(input_names)}".encode())
    folder = Path(path)
    if folder.is_dir():
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                st = f.stat()
                h.update(f"{f.relative_to(folder)}|{st.st_size}|{st.st_mtime_ns}".encode())
    return h.hexdigest()[:20]


def _export(transformer: Any, input_names: list[str], target: Path) -> None:
    """Write the transformer (ids, mask[, token types] -> last hidden state) to ``target`` atomically."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: Any) -> Any:
            return self.model(**dict(zip(input_names, inputs, strict=True))).last_hidden_state

    sample = transformer.preprocess(["an example sentence", "a second, longer example sentence here"])
    args = tuple(sample[name] for name in input_names)
    axes = {name: {0: "batch", 1: "tokens"} for name in [*input_names, "last_hidden_state"]}
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".onnx", dir=target.parent)
    os.close(fd)
    try:
        import warnings

        with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(LastHiddenState(transformer.auto_model.eval()), args, tmp,
                              input_names=input_names, output_names=["last_hidden_state"],
                              dynamic_axes=axes, opset_version=OPSET, dynamo=False)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class OnnxSentenceEncoder:
    """``encode`` like ``SentenceTransformer.encode(normalize_embeddings=True)``, forward pass in ONNX Runtime."""

    def __init__(self, st_model: Any, model_path: str, threads: int | None = None) -> None:
        import onnxruntime as ort  # pyright: ignore[reportMissingImports] - the optional [onnx] extra

        modules = list(st_model)
        first = modules[0] if modules else None
        if first is None or not hasattr(first, "auto_model") or not hasattr(first, "preprocess"):
            raise ModelLoadError(f"The onnx backend needs a sentence-transformers model whose first module is a "
                                 f"Transformer; {model_path!r} is not (use scoring.backend: torch).")
        self.model, self.transformer, self.rest = st_model, first, modules[1:]
        probe = first.preprocess(["probe"])
        self.input_names = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in probe]
        self.path = cache_dir() / f"{_fingerprint(model_path, self.input_names)}.onnx"
        if not self.path.exists():
            _export(first, self.input_names, self.path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or 0
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        import torch

        texts = list(texts)
        out: np.ndarray | None = None
        order = np.argsort([-len(t) for t in texts], kind="stable")  # as SentenceTransformer.encode
        for start in range(0, len(texts), batch_size):
            idx = order[start : start + batch_size]
            features = self.transformer.preprocess([texts[i] for i in idx])
            feed = {name: features[name].numpy() for name in self.input_names}
            hidden = self.session.run(None, feed)[0]
            features["token_embeddings"] = torch.from_numpy(hidden)
            with torch.inference_mode():
                for module in self.rest:
                    features = module(features)
                vectors = torch.nn.functional.normalize(features["sentence_embedding"], p=2, dim=1).numpy()
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), np.float32)
            out[idx] = vectors
        return out if out is not None else np.zeros((0, 0), np.float32)


@lru_cache(maxsize=4)
def load_onnx_encoder(name: str, threads: int | None = None) -> OnnxSentenceEncoder:
    from equilens.tasks.scoring.sentence_models import load_sentence_transformer, resolve_embedding_model

    if not onnx_available():
        raise ConfigError("scoring.backend: onnx needs onnxruntime and onnx: pip install -e '.[onnx]' "
                          "(or use scoring.backend: torch).")
    return OnnxSentenceEncoder(load_sentence_transformer(name, "cpu"), resolve_embedding_model(name), threads)
