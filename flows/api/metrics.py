"""``equilens.metrics``: counterfactual and stereotype metrics of responses you already have, without Prefect.

Like LangFair's ``CounterfactualMetrics.evaluate(texts1, texts2)`` and ``StereotypeMetrics.evaluate(responses)``
these take Python lists and return a dict (metric name -> value). They call the same stage functions as
the flows (``tasks/pipeline/metric_stage.py``, ``tasks/assessments/stereotype/stages.py``), so every value has the
flows' cluster-bootstrap interval (``result.intervals``), a statistic without the data it needs is
``None`` with its reason in ``result.skipped``, and ``result.rows`` holds the full metric rows (details:
noise floors, p-values, per-group non-completion). Nothing is written to DuckDB.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from equilens.tasks.errors import InputDataError


class MetricResults(dict):
    """``metric -> value`` (None when skipped), plus ``intervals`` (metric -> (low, high)), ``skipped``
    (metric -> reason), ``details`` (metric -> the row's details), ``rows`` (a DataFrame of every row) and
    ``metric_items`` (word- and prompt-level values, as the DuckDB table of that name)."""

    def __init__(self, rows: pd.DataFrame, keep: pd.Series, items: pd.DataFrame | None = None) -> None:
        chosen = rows[keep]
        super().__init__({m: _num(v) for m, v in zip(chosen["metric"], chosen["value"], strict=True)})
        self.intervals = {m: (_num(lo), _num(hi)) for m, lo, hi in
                          zip(chosen["metric"], chosen["ci_low"], chosen["ci_high"], strict=True)
                          if _num(lo) is not None}
        self.details = dict(zip(chosen["metric"], chosen["details"], strict=True))
        self.skipped = {m: d["skipped"] for m, d in self.details.items() if isinstance(d, dict) and d.get("skipped")}
        self.rows = rows.reset_index(drop=True)
        self.metric_items = items if items is not None else pd.DataFrame()


def _num(v: Any) -> float | None:
    return None if v is None or pd.isna(v) else float(v)


def _texts(values: Sequence[str | None], what: str) -> list[str | None]:
    if isinstance(values, str):
        raise InputDataError(f"{what}: pass a list of texts, not one string.")
    out = list(values)
    bad = [i for i, t in enumerate(out) if t is not None and not isinstance(t, str)]
    if bad:
        raise InputDataError(f"{what}: item {bad[0]} is {type(out[bad[0]]).__name__}, not a string "
                             "(None marks a missing answer).")
    return out


def _clusters(prompts: Sequence[str] | None, n: int, label: str, what: str) -> list[str]:
    """One cluster id per response: its prompt's id (answers to one prompt are resampled together),
    or one cluster per response when no prompts are given."""
    from equilens.tasks.inputs.prompts import prompt_id

    if prompts is None:
        return [f"{label}-{i:06d}" for i in range(n)]
    ps = _texts(prompts, f"{what}: prompts")
    if len(ps) != n:
        raise InputDataError(f"{what}: {len(ps)} prompts for {n} responses; give one prompt per response.")
    if any(p is None for p in ps):
        raise InputDataError(f"{what}: a prompt is None; every response needs its prompt.")
    return [prompt_id(p) for p in ps]


def _response_rows(texts: list[str | None], clusters: list[str], attribute: str, group: str) -> pd.DataFrame:
    frame = pd.DataFrame({"prompt_id": clusters, "text": texts})
    ok = frame["text"].map(lambda t: isinstance(t, str) and bool(t.strip()))
    return frame.assign(
        variant_id=[f"{c}|{group}" for c in clusters], attribute=attribute, grp=group,
        sample_idx=frame.groupby("prompt_id").cumcount(), ok=ok, refusal=False,
        error_class=[None if good else "MissingResponse" for good in ok], cached=False,
    )


def counterfactual(
    texts_a: Sequence[str | None],
    texts_b: Sequence[str | None],
    *,
    prompts: Sequence[str] | None = None,
    attribute: str | None = None,
    groups: tuple[str, str] | None = None,
    metrics: list[str] | None = None,
    neutralize: bool = True,
    weak_parity_threshold: float = 0.1,
    sentiment_polarity: str = "neg",
    embedding_model: str = "all-MiniLM-L6-v2",
    bootstrap_resamples: int = 1000,
    permutations: int = 1000,
    confidence: float = 0.95,
    seed: int = 12345,
) -> MetricResults:
    """Counterfactual metrics of two row-aligned lists of responses (``texts_a[i]`` and ``texts_b[i]``
    answer the two variants of the same prompt), as LangFair's ``CounterfactualMetrics.evaluate``.

    Returns ``{strict_sentiment_parity, weak_sentiment_parity, cosine_similarity, bleu_similarity,
    rougel_similarity}`` (or the ``metrics`` named). ``attribute`` names a built-in lexicon (gender, race,
    ...): then BLEU and ROUGE-L see the attribute words neutralised first (as in a run) and ``groups``
    defaults to its first two groups; without it the groups are called ``a`` and ``b`` and nothing is
    neutralised. ``prompts`` (one per response, repeats allowed) makes the bootstrap resample all answers
    to one prompt together, and two answers of one group to the same prompt give the noise floor
    (``details[metric]["noise_floor"]``, ``gap``, ``p_holm``). ``None`` in a list is a missing answer:
    its row is left out of the pairs and counted by ``non_completion_rate`` in ``rows``.
    """
    from equilens.tasks.config import MetricsConfig, ScoringConfig
    from equilens.tasks.pipeline import lexicons_for, needs_embeddings, score_texts
    from equilens.tasks.pipeline.metric_stage import metric_stage

    a, b = _texts(texts_a, "texts_a"), _texts(texts_b, "texts_b")
    if len(a) != len(b):
        raise InputDataError(f"texts_a has {len(a)} responses and texts_b {len(b)}; they must be row-aligned.")
    if not a:
        raise InputDataError("texts_a and texts_b are empty.")
    cf_cfg, label, pair = _attribute_setup(attribute, groups)
    clusters = _clusters(prompts, len(a), "pair", "counterfactual")
    responses = pd.concat([_response_rows(a, clusters, label, pair[0]), _response_rows(b, clusters, label, pair[1])],
                          ignore_index=True)
    mcfg = MetricsConfig(names=metrics, weak_parity_threshold=weak_parity_threshold,
                         neutralize=neutralize and bool(cf_cfg.attributes), bootstrap_resamples=bootstrap_resamples,
                         permutations=permutations, confidence=confidence, seed=seed)
    scoring = ScoringConfig(sentiment_polarity=sentiment_polarity, embedding_model=embedding_model)
    answered = responses.loc[responses["ok"], "text"]
    scores = score_texts(sorted(set(answered)), scoring, embeddings=needs_embeddings(metrics))
    lexicons_for(cf_cfg)  # an unknown lexicon fails here, before any metric
    rows = metric_stage(responses, scores, cf_cfg, mcfg)
    cross = rows["group_b"].notna() & (rows["group_a"] != rows["group_b"])
    return MetricResults(rows, cross)


def _attribute_setup(attribute: str | None, groups: tuple[str, str] | None):  # noqa: ANN202
    """(counterfactual config, attribute label, the two group names) for brought texts."""
    from typing import get_args

    from equilens.tasks.config import CounterfactualConfig

    built_in = get_args(CounterfactualConfig.model_fields["attributes"].annotation.__args__[0])
    if attribute is None:
        pair = tuple(groups) if groups else ("a", "b")
        _check_pair(pair)
        return CounterfactualConfig(attributes=[], detect_names=False, noise_floor="samples"), "group", pair
    if attribute not in built_in:
        raise InputDataError(f"attribute {attribute!r} is not a built-in lexicon ({', '.join(built_in)}); "
                             "leave it out to compare two lists without neutralising words.")
    from equilens.tasks.inputs.lexicon import load_lexicon

    lexicon = load_lexicon(attribute)
    known = list(lexicon.groups)
    pair = tuple(groups) if groups else tuple(known[:2])
    _check_pair(pair)
    unknown = [g for g in pair if g not in known]
    if unknown:
        raise InputDataError(f"groups {unknown} are not groups of the {attribute} lexicon ({', '.join(known)}).")
    # brought answers have no same-group controls: two answers of one group to a prompt are the floor
    return CounterfactualConfig(attributes=[attribute], detect_names=False, noise_floor="samples"), attribute, pair


def _check_pair(pair: tuple) -> None:
    if len(pair) != 2 or pair[0] == pair[1] or not all(isinstance(g, str) and g for g in pair):
        raise InputDataError(f"groups must be two different names, got {pair!r}.")


def stereotype(
    responses: Sequence[str | None],
    prompts: Sequence[str] | None = None,
    *,
    metrics: list[str] | None = None,
    toxicity_model: str | None = None,
    toxicity_label: str = "toxic",
    stereotype_model: str | None = None,
    stereotype_label: str = "stereotype",
    threshold: float = 0.5,
    cobs_targets: str | None = None,
    honest_lexicon: str | None = None,
    bootstrap_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 12345,
) -> MetricResults:
    """Stereotype and toxicity metrics of a list of responses, as LangFair's ``StereotypeMetrics.evaluate``
    and ``ToxicityMetrics.evaluate`` together.

    Returns ``{cobs, stereotypical_associations, demographic_representation, toxic_fraction,
    expected_maximum_toxicity, toxicity_probability, stereotype_fraction, expected_maximum_stereotype,
    stereotype_probability, honest}`` (or the ``metrics`` named); metrics needing a model or lexicon
    nobody configured are ``None`` with the reason in ``skipped``. ``prompts`` (one per response) groups
    several answers to one prompt: expected maximum toxicity and toxicity probability are per prompt,
    and the bootstrap resamples prompts. Toxicity uses alt-profanity-check unless ``toxicity_model``
    names a Hugging Face classifier. ``result.metric_items`` holds COBS per word and the maximum per prompt.
    """
    from equilens.tasks.assessments.stereotype.config import StereotypeConfig
    from equilens.tasks.assessments.stereotype.stages import score_classifiers, stereotype_metrics
    from equilens.tasks.config import MetricsConfig

    texts = _texts(responses, "responses")
    if not texts:
        raise InputDataError("responses is empty.")
    clusters = _clusters(prompts, len(texts), "response", "stereotype")
    frame = _response_rows(texts, clusters, "none", "none")
    cfg = StereotypeConfig(toxicity_model=toxicity_model, toxicity_label=toxicity_label,
                           stereotype_model=stereotype_model, stereotype_label=stereotype_label,
                           threshold=threshold, cobs_targets=cobs_targets, honest_lexicon=honest_lexicon)
    mcfg = MetricsConfig(names=metrics, bootstrap_resamples=bootstrap_resamples, confidence=confidence, seed=seed)
    scores = score_classifiers(sorted(set(frame.loc[frame["ok"], "text"])), cfg)
    rows, items, _ = stereotype_metrics(frame, scores, cfg, mcfg)
    return MetricResults(rows, pd.Series(True, index=rows.index), items)
