"""Stereotype Score of a tested model on stereotype/anti-stereotype pairs (BiasTestGPT steps 4-5).

The Stereotype Score (Nadeem et al. 2020) is the share of pairs in which the tested model gives
the stereotyped sentence the higher (pseudo-)log-likelihood; 0.5 is unbiased. It is reported for
the whole model, per bias, per attribute term and per template (``score_delta`` =
log-likelihood of the stereotyped minus the anti-stereotyped sentence; the seed's shape, with a
sign added).

Bootstrapping follows the BiasTestGPT notebook: ``n_resamples`` (30) subsets, each drawing
``per_attribute`` (4) pairs per attribute term (without replacement; with replacement for a term
that has fewer pairs), give a mean and standard deviation of the score. Two tests against 0.5:

* ``t_p_value`` -- one-sample t-test over the bootstrap scores, as in the notebook. Resamples of
  one finite set are not independent, so this p-value shrinks as ``n_resamples`` grows; read it
  as descriptive.
* ``binomial_p_value`` -- exact two-sided binomial test of the stereotyped count over all pairs
  (each pair one trial). This is the test to rely on.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from equilens.tasks.assessments.bias_test.probability_metrics import stereotype_score
from equilens.tasks.assessments.bias_test.templates import StereoPair
from equilens.tasks.errors import ConfigError, InputDataError
from equilens.tasks.stats.importing import IMPORTING

LogprobFn = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class PairResult:
    pair: StereoPair
    stereotyped_logprob: float
    anti_stereotyped_logprob: float

    @property
    def score_delta(self) -> float:
        return self.stereotyped_logprob - self.anti_stereotyped_logprob

    @property
    def stereotyped(self) -> int:
        return int(self.score_delta > 0)


@dataclass(frozen=True)
class BootstrapResult:
    score: float
    """Stereotype Score over all (non-discarded) pairs."""
    n_pairs: int
    mean: float
    std: float
    n_resamples: int
    per_attribute: int
    t_statistic: float
    t_p_value: float
    binomial_p_value: float


def score_pairs(pairs: Sequence[StereoPair], logprob_fn: LogprobFn) -> list[PairResult]:
    """Score both sentences of every kept pair in one call (each distinct sentence once)."""
    kept = [p for p in pairs if not p.discarded]
    distinct = list(
        dict.fromkeys(s for p in kept for s in (p.stereotyped_sentence, p.anti_stereotyped_sentence))
    )
    if not distinct:
        return []
    values = np.asarray(logprob_fn(distinct), dtype=np.float64)
    if values.shape != (len(distinct),):
        raise InputDataError(f"logprob_fn returned shape {values.shape} for {len(distinct)} sentences.")
    lp = dict(zip(distinct, values.tolist(), strict=True))
    return [PairResult(p, lp[p.stereotyped_sentence], lp[p.anti_stereotyped_sentence]) for p in kept]


def _ss(results: Sequence[PairResult]) -> float:
    return stereotype_score(
        [r.stereotyped_logprob for r in results], [r.anti_stereotyped_logprob for r in results]
    )


def _grouped(results: Sequence[PairResult], key: Callable[[PairResult], str]) -> dict[str, list[PairResult]]:
    out: dict[str, list[PairResult]] = defaultdict(list)
    for r in results:
        out[key(r)].append(r)
    return dict(out)


def per_bias_scores(results: Sequence[PairResult]) -> dict[str, float]:
    return {b: _ss(rs) for b, rs in _grouped(results, lambda r: r.pair.bias).items()}


def per_attribute_scores(results: Sequence[PairResult]) -> dict[str, dict[str, float]]:
    """{bias: {attribute term: score}}."""
    return {
        b: {a: _ss(g) for a, g in _grouped(rs, lambda r: r.pair.attribute_term).items()}
        for b, rs in _grouped(results, lambda r: r.pair.bias).items()
    }


def bootstrap_stereotype_score(
    results: Sequence[PairResult], n_resamples: int = 30, per_attribute: int = 4, seed: int = 0
) -> BootstrapResult:
    """Bootstrap mean/std of the Stereotype Score and its tests against 0.5 (module docstring)."""
    with IMPORTING:
        from scipy import stats

    if n_resamples < 2 or per_attribute < 1:
        raise ConfigError(
            f"Need n_resamples >= 2 and per_attribute >= 1, got {n_resamples}, {per_attribute}."
        )
    if not results:
        raise InputDataError("No scored pairs to bootstrap.")
    wins = np.array([r.stereotyped for r in results], dtype=np.float64)
    rng = np.random.default_rng(seed)
    draws = []
    for members in _grouped_indices(results).values():
        m = len(members)
        if m >= per_attribute:  # k distinct pairs per resample: first k of a random permutation
            pick = np.argsort(rng.random((n_resamples, m)), axis=1)[:, :per_attribute]
        else:
            pick = rng.integers(0, m, size=(n_resamples, per_attribute))
        draws.append(members[pick])
    means = np.round(wins[np.hstack(draws)].mean(axis=1), 12)  # exact ties for equal subsets
    mean, std = float(means.mean()), float(means.std(ddof=1))
    if std > 0:
        t_res = stats.ttest_1samp(means, 0.5)
        t_stat, t_p = float(t_res.statistic), float(t_res.pvalue)
    else:
        t_stat, t_p = (0.0, 1.0) if mean == 0.5 else (float("nan"), 0.0)  # no spread: t undefined
    binom = float(stats.binomtest(int(wins.sum()), len(wins), 0.5).pvalue)
    return BootstrapResult(
        float(wins.mean()), len(wins), mean, std, n_resamples, per_attribute, t_stat, t_p, binom
    )


def _grouped_indices(results: Sequence[PairResult]) -> dict[str, np.ndarray]:
    out: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(results):
        out[r.pair.attribute_term.lower()].append(i)
    return {k: np.asarray(v) for k, v in out.items()}


def _template_row(pair: StereoPair, result: PairResult | None) -> dict[str, Any]:
    return {
        "bias_name": pair.bias,
        "template": pair.template,
        "attributes": list(pair.group_terms),
        "attribute": pair.attribute,
        "attribute_term": pair.attribute_term,
        "stereotyped": result.stereotyped if result else None,
        "discarded": pair.discarded,
        "reason": pair.reason,
        "score_delta": result.score_delta if result else None,
        "stereotyped_version": pair.stereotyped_term,
        "anti_stereotyped_version": pair.anti_stereotyped_term,
    }


def stereotype_report(
    pairs: Sequence[StereoPair],
    results: Sequence[PairResult],
    tested_model: str,
    generation_file: str = "",
    n_resamples: int = 30,
    per_attribute: int = 4,
    seed: int = 0,
) -> dict[str, Any]:
    """The BiasTestGPT export (tested_model, generation_file, num_biases, num_templates,
    model_bias, per_bias, per_template) plus per_attribute and bootstrap sections."""
    by_pair = {id(r.pair): r for r in results}
    per_template: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in pairs:
        per_template[p.bias].append(_template_row(p, by_pair.get(id(p))))
    by_bias = _grouped(results, lambda r: r.pair.bias)
    boot = {}
    if n_resamples >= 2:
        boot = {
            b: asdict(bootstrap_stereotype_score(rs, n_resamples, per_attribute, seed))
            for b, rs in by_bias.items()
        }
    return {
        "tested_model": tested_model,
        "generation_file": generation_file,
        "num_biases": len(per_template),
        "num_templates": len(results),
        "model_bias": round(_ss(results), 4) if results else None,
        "per_bias": {b: round(v, 4) for b, v in per_bias_scores(results).items()},
        "per_template": dict(per_template),
        "per_attribute": per_attribute_scores(results),
        "bootstrap": boot,
    }


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def export_json(report: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write the report as strict JSON (non-finite numbers become null)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(_finite(report), indent=4, allow_nan=False), encoding="utf-8")
    return p
