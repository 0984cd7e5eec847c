"""Masked target probabilities (Kurita et al. 2019), the inputs of LPBS and CBS: the probability
a masked LM gives a target word at its [MASK], and its prior with the attribute masked too.

Batched on the model's device with the padding helpers of :mod:`equilens.tasks.scoring.lm_batches`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from equilens.tasks.errors import ConfigError, InputDataError
from equilens.tasks.scoring.lm_batches import check_sentences, index_batches, pad_rows, pad_token_id

TARGET = "[T]"
ATTRIBUTE = "[A]"


def single_token_id(tokenizer: Any, word: str) -> int | None:
    """The vocabulary id of ``word`` when the tokenizer keeps it as one token, else None."""
    pieces = tokenizer.tokenize(word)
    if len(pieces) != 1:
        return None
    tid = tokenizer.convert_tokens_to_ids(pieces[0])
    return None if tid is None or tid == tokenizer.unk_token_id else int(tid)


def _kurita_texts(tokenizer: Any, template: str, attribute: str) -> tuple[str, str, int]:
    """(text with the target masked, text with target and attribute masked, index among the masks
    of the prior text at which the target sits)."""
    if template.count(TARGET) != 1 or template.count(ATTRIBUTE) != 1:
        raise InputDataError(f"Template {template!r} needs exactly one {TARGET} and one {ATTRIBUTE}.")
    mask = tokenizer.mask_token
    n_attr = max(1, len(tokenizer.tokenize(attribute)))
    with_attr = template.replace(TARGET, mask).replace(ATTRIBUTE, attribute)
    prior = template.replace(TARGET, mask).replace(ATTRIBUTE, " ".join([mask] * n_attr))
    target_at = n_attr if template.index(ATTRIBUTE) < template.index(TARGET) else 0
    return with_attr, prior, target_at


def mask_logprobs(
    model: Any, tokenizer: Any, texts: Sequence[str], target_ids: Sequence[int], which_mask: Sequence[int],
    batch_size: int = 16,
) -> np.ndarray:
    """``log P(target_ids[i] | texts[i])`` at the ``which_mask[i]``-th mask token of each text."""
    import torch

    texts = check_sentences(texts)
    if not len(texts) == len(target_ids) == len(which_mask):
        raise InputDataError("texts, target_ids and which_mask differ in length.")
    enc = tokenizer(texts, add_special_tokens=True, truncation=True).input_ids
    positions = []
    for i, ids in enumerate(enc):
        at = np.flatnonzero(np.asarray(ids) == tokenizer.mask_token_id)
        if which_mask[i] >= len(at):
            raise InputDataError(f"Text {texts[i]!r} has {len(at)} mask tokens; mask {which_mask[i]} was asked for.")
        positions.append(int(at[which_mask[i]]))
    order = np.argsort(-np.array([len(r) for r in enc]), kind="stable")
    out = np.empty(len(texts))
    device = model.device
    with torch.inference_mode():
        for idx in index_batches(order, batch_size):
            ids, mask = pad_rows([enc[i] for i in idx], pad_token_id(tokenizer))
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
            pos = torch.as_tensor([positions[i] for i in idx], device=device)
            at = logits[torch.arange(len(idx), device=device), pos].float().log_softmax(-1)
            tgt = torch.as_tensor([int(target_ids[i]) for i in idx], device=device)
            out[idx] = at.gather(-1, tgt.unsqueeze(-1)).squeeze(-1).cpu().numpy()
    return out


def kurita_logprobs(
    model: Any, tokenizer: Any, items: Sequence[tuple[str, str, str]], batch_size: int = 16
) -> tuple[np.ndarray, np.ndarray]:
    """For each (template, target word, attribute word): ``log p`` and ``log p_prior`` (Kurita et al.).

    The template holds ``[T]`` (the target, e.g. *he*) and ``[A]`` (the attribute, e.g. *nurse*).
    ``p`` is the probability of the target at its [MASK] with the attribute written out
    ("[MASK] is a nurse"); ``p_prior`` the same with every token of the attribute masked too
    ("[MASK] is a [MASK]"), which removes the target's overall frequency. A target that is not a
    single token of the vocabulary gets NaN in both (the caller records it as skipped).
    """
    if tokenizer.mask_token_id is None:
        raise ConfigError("Masked target probabilities need a masked LM (its tokenizer has no mask token).")
    texts, prior_texts, ids, where, keep = [], [], [], [], []
    for i, (template, target, attribute) in enumerate(items):
        tid = single_token_id(tokenizer, target)
        if tid is None:
            continue
        with_attr, prior, target_at = _kurita_texts(tokenizer, template, attribute)
        texts.append(with_attr)
        prior_texts.append(prior)
        ids.append(tid)
        where.append(target_at)
        keep.append(i)
    lp, lprior = np.full(len(items), np.nan), np.full(len(items), np.nan)
    if keep:
        both = mask_logprobs(model, tokenizer, texts + prior_texts, ids + ids, [0] * len(texts) + where, batch_size)
        lp[keep], lprior[keep] = both[: len(keep)], both[len(keep) :]
    return lp, lprior
