"""The pairs of answers the counterfactual metric stage compares: across groups (the same prompt and
sample, two groups), within a group (its variant against its same-group control, or two samples of
it: the noise floor), and against another prompt's content (what a full change of content scores)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tasks.assessments.counterfactual.parity import PairData

NOISE_FLOOR_SAMPLES = "two independent samples of the same group for the same prompt"
NOISE_FLOOR_CONTROLS = ("each variant against its same-group control (another term or name of the group, "
                        "or a neutral edit)")


def by_prompt_sample(answered: pd.DataFrame) -> pd.DataFrame:
    """One row per (prompt, sample index), one column of response text per group."""
    return answered.pivot_table(index=["prompt_id", "sample_idx"], columns="grp", values="text", aggfunc="first")


def cross_group_pairs(wide: pd.DataFrame, a: str, b: str) -> PairData:
    if a not in wide or b not in wide:
        return PairData([], [], np.array([]))
    pair = wide[[a, b]].dropna()
    return PairData(pair[a].tolist(), pair[b].tolist(), pair.index.get_level_values("prompt_id").to_numpy())


def same_group_pairs(answered: pd.DataFrame, g: str) -> PairData:
    """Sample 2k vs sample 2k+1 of the same variant: what pure sampling noise looks like."""
    sub = answered[answered["grp"] == g]
    wide = sub.pivot_table(index="prompt_id", columns="sample_idx", values="text", aggfunc="first")
    t1, t2, clusters = [], [], []
    for k in range(0, max(wide.columns, default=-1), 2):
        if k not in wide or k + 1 not in wide:
            continue
        both = wide[[k, k + 1]].dropna()
        t1 += both[k].tolist()
        t2 += both[k + 1].tolist()
        clusters += both.index.tolist()
    return PairData(t1, t2, np.asarray(clusters, dtype=object))


def control_pairs(answered: pd.DataFrame, controls: pd.DataFrame, g: str) -> PairData:
    """Each answer to group ``g``'s variant against the answer to its same-group control with the
    same sample index: what a change of the prompt that keeps the group does to the answer."""
    if controls.empty:
        return PairData([], [], np.array([]))
    keys = ["prompt_id", "sample_idx"]
    both = answered[answered["grp"] == g][[*keys, "text"]].merge(
        controls[controls["grp"] == g][[*keys, "text"]], on=keys, suffixes=("_v", "_c"))
    return PairData(both["text_v"].tolist(), both["text_c"].tolist(), both["prompt_id"].to_numpy(dtype=object))


def floor_pairs(answered: pd.DataFrame, controls: pd.DataFrame, g: str, source: str) -> tuple[PairData, str]:
    """The same-group pairs of ``g`` that the noise floor compares, and how they were made."""
    parts = []
    if source in ("controls", "both"):
        parts.append((control_pairs(answered, controls, g), NOISE_FLOOR_CONTROLS))
    if source in ("samples", "both"):
        parts.append((same_group_pairs(answered, g), NOISE_FLOOR_SAMPLES))
    parts = [(p, m) for p, m in parts if p.texts1]
    if not parts:
        return PairData([], [], np.array([])), ""
    return joined(*(p for p, _ in parts)), "; ".join(m for _, m in parts)


def joined(*pairs: PairData) -> PairData:
    return PairData(sum((p.texts1 for p in pairs), []), sum((p.texts2 for p in pairs), []),
                    np.concatenate([p.clusters.astype(object) for p in pairs]))


def other_content(pair: PairData) -> PairData:
    """Each pair's first answer against the second answer at the same place of the next prompt:
    what a pair would score if the group swap had changed what the answer says."""
    clusters = np.asarray(pair.clusters, dtype=str)
    order = np.argsort(clusters, kind="stable")
    prompts, starts, sizes = np.unique(clusters[order], return_index=True, return_counts=True)
    second = [pair.texts2[i] for i in order]
    other = list(pair.texts2)
    for p in range(len(prompts)):
        q = (p + 1) % len(prompts)
        for j in range(sizes[p]):
            other[order[starts[p] + j]] = second[starts[q] + j % sizes[q]]
    return PairData(list(pair.texts1), other, pair.clusters)
