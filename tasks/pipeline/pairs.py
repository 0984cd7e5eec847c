"""The pairs of answers the counterfactual metric stage compares: across groups (the same prompt and
sample, two groups), within a group (its variant against its same-group control, or two samples of
it: the noise floor), and against another prompt's content (what a full change of content scores).

The stage numbers an attribute's answers and prompts once (:func:`number_answers`): a pair holds
the two answers' places among the attribute's distinct texts and its prompt's code, so no step after
reads, hashes or sorts a string again."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from equilens.tasks.pipeline.parity import PairData

NOISE_FLOOR_SAMPLES = "two independent samples of the same group for the same prompt"
NOISE_FLOOR_CONTROLS = ("each variant against its same-group control (another term or name of the group, "
                        "or a neutral edit)")
_NONE = np.zeros(0, np.int64)


def no_pairs() -> PairData:
    return PairData(_NONE, _NONE, _NONE)


def number_answers(frame: pd.DataFrame) -> tuple[pd.DataFrame, Any]:
    """``frame`` with ``text`` as each answer's place among the distinct texts (-1: no answer) and
    ``prompt_id`` as an integer numbered in the ids' text order (the cluster steps then sort integers,
    many times faster than id strings, in the same order: the same bootstrap draws); and the distinct
    texts, in pandas' Arrow buffers when the answers were (read a chunk at a time, they never all
    become Python strings: 800,000 of them took ~120 MB)."""
    texts, distinct = pd.factorize(frame["text"])
    prompts, _ = pd.factorize(frame["prompt_id"].astype(str), sort=True)
    numbered = frame.assign(text=texts.astype(np.int64), prompt_id=prompts.astype(np.int64))
    return numbered, distinct if isinstance(distinct, pd.api.extensions.ExtensionArray) \
        else np.asarray(distinct, dtype=object)


def by_prompt_sample(answered: pd.DataFrame) -> pd.DataFrame:
    """One row per (prompt, sample index), one column of answers (their places) per group."""
    return answered.pivot_table(index=["prompt_id", "sample_idx"], columns="grp", values="text", aggfunc="first")


def cross_group_pairs(wide: pd.DataFrame, a: str, b: str) -> PairData:
    if a not in wide or b not in wide:
        return no_pairs()
    pair = wide[[a, b]].dropna()
    return PairData(pair[a].to_numpy(np.int64), pair[b].to_numpy(np.int64),
                    pair.index.get_level_values("prompt_id").to_numpy(np.int64))


def same_group_pairs(answered: pd.DataFrame, g: str) -> PairData:
    """Sample 2k vs sample 2k+1 of the same variant: what pure sampling noise looks like."""
    sub = answered[answered["grp"] == g]
    wide = sub.pivot_table(index="prompt_id", columns="sample_idx", values="text", aggfunc="first")
    parts = []
    for k in range(0, max(wide.columns, default=-1), 2):
        if k not in wide or k + 1 not in wide:
            continue
        both = wide[[k, k + 1]].dropna()
        parts.append(PairData(both[k].to_numpy(np.int64), both[k + 1].to_numpy(np.int64),
                              both.index.to_numpy(np.int64)))
    return joined(*parts)


def control_pairs(answered: pd.DataFrame, controls: pd.DataFrame, g: str) -> PairData:
    """Each answer to group ``g``'s variant against the answer to its same-group control with the
    same sample index: what a change of the prompt that keeps the group does to the answer."""
    if controls.empty:
        return no_pairs()
    keys = ["prompt_id", "sample_idx"]
    both = answered[answered["grp"] == g][[*keys, "text"]].merge(
        controls[controls["grp"] == g][[*keys, "text"]], on=keys, suffixes=("_v", "_c"))
    return PairData(both["text_v"].to_numpy(np.int64), both["text_c"].to_numpy(np.int64),
                    both["prompt_id"].to_numpy(np.int64))


def floor_pairs(answered: pd.DataFrame, controls: pd.DataFrame, g: str, source: str) -> tuple[PairData, str]:
    """The same-group pairs of ``g`` that the noise floor compares, and how they were made."""
    parts = []
    if source in ("controls", "both"):
        parts.append((control_pairs(answered, controls, g), NOISE_FLOOR_CONTROLS))
    if source in ("samples", "both"):
        parts.append((same_group_pairs(answered, g), NOISE_FLOOR_SAMPLES))
    parts = [(p, m) for p, m in parts if len(p)]
    if not parts:
        return no_pairs(), ""
    return joined(*(p for p, _ in parts)), "; ".join(m for _, m in parts)


def joined(*pairs: PairData) -> PairData:
    """The pairs one after the other."""
    if not pairs:
        return no_pairs()
    return PairData(np.concatenate([p.left for p in pairs]), np.concatenate([p.right for p in pairs]),
                    np.concatenate([p.clusters for p in pairs]))


def both_sides(pairs: list[PairData]) -> np.ndarray:
    """The left answers of every pair list, then their right answers, in one int32 array (half the
    memory of the lists' int64: at 100,000 prompts one attribute compares about 4 million pairs)."""
    return np.concatenate([p.left for p in pairs] + [p.right for p in pairs], dtype=np.int32, casting="same_kind")


def distinct_pairs(left: np.ndarray, right: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct pairs ``(left[i], right[i])`` of codes in ``0..n-1`` as two arrays, and each pair's
    place among them (int32). A hash table over the pairs' keys: its memory follows the distinct
    pairs, where a sort of every key would copy them all several times."""
    each, keys = pd.factorize(left.astype(np.int64) * n + right)
    return keys // n, keys % n, each.astype(np.int32)


def neutral_codes(texts: Any, lexicon, chunk: int = 50_000) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """Each text's place among the distinct texts left once the lexicon's terms are masked
    (:func:`equilens.tasks.inputs.neutralization.neutralize`), and those masked texts. Masked a chunk at a time,
    so only the distinct masked texts are ever held (answers that differ only in the group's words,
    the usual case, are one masked text)."""
    from equilens.tasks.inputs.neutralization import neutralize

    places: dict[str, int] = {}
    codes = np.empty(len(texts), np.int32)
    for lo in range(0, len(texts), chunk):
        for i, masked in enumerate(neutralize(list(texts[lo:lo + chunk]), lexicon), lo):
            codes[i] = places.setdefault(masked, len(places))
    return codes, np.fromiter(places, dtype=object, count=len(places))


def other_content(pair: PairData) -> PairData:
    """Each pair's first answer against the second answer at the same place of the next prompt:
    what a pair would score if the group swap had changed what the answer says."""
    from equilens.tasks.stats import cluster_keys

    if not len(pair):
        return pair
    keys = cluster_keys(pair.clusters)[0]
    order = np.argsort(keys, kind="stable")
    _, starts, sizes = np.unique(keys[order], return_index=True, return_counts=True)
    prompt = np.repeat(np.arange(len(starts)), sizes)  # of each row in sorted order
    nth = np.arange(len(order)) - starts[prompt]  # its place among its prompt's rows
    following = (prompt + 1) % len(starts)
    source = np.empty(len(order), np.int64)
    source[order] = order[starts[following] + nth % sizes[following]]
    return PairData(pair.left, pair.right[source], pair.clusters)
