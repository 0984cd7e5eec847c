"""Stage logic of the stereotype and toxicity assessment, as plain functions.

Responses come from the model under test (``count`` generations per prompt, through the same
cached LLM runner as the counterfactual flow) or from a file the user brings. Every distinct text
is scored once per classifier. Metrics that need a model nobody configured are reported as
skipped with the reason, never as zero.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tasks.config import MetricsConfig, PromptsConfig, StereotypeConfig
from tasks.errors import InputDataError
from tasks.prompts import prompt_id, text_hash

HURTLEX_HINT = (
    "no stereotype.honest_lexicon configured. HONEST needs a hurtful-word lexicon such as HurtLex "
    "(github.com/MilaNLProc/hurtlex, lexica/EN/1.2/hurtlex_EN.tsv), which cannot ship offline."
)
NO_STEREOTYPE_MODEL = (
    "no stereotype.stereotype_model configured; no stereotype classifier ships offline. Point it at "
    "a Hugging Face sequence-classification model path or id and name its label."
)


def load_byo_responses(cfg: StereotypeConfig, prompts_cfg: PromptsConfig | None) -> pd.DataFrame:
    """Responses a user brings: a CSV/JSONL/Parquet file with prompt and response columns."""
    path = Path(cfg.responses_path or "")
    if not path.is_file():
        raise InputDataError(f"Responses file {path} does not exist (stereotype.responses_path).")
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
        elif suffix == ".jsonl":
            frame = pd.read_json(path, lines=True, dtype=False)
        elif suffix == ".parquet":
            frame = pd.read_parquet(path)
        else:
            raise InputDataError(f"{path}: unsupported responses file type {suffix!r}; use .csv, .jsonl or .parquet.")
    except UnicodeDecodeError as err:
        raise InputDataError(f"{path}: not UTF-8 ({err.reason} at byte {err.start}).") from None
    except ValueError as err:
        raise InputDataError(f"{path}: cannot read responses ({err}).") from None
    missing = [c for c in (cfg.prompt_column, cfg.response_column) if c not in frame.columns]
    if missing:
        raise InputDataError(
            f"{path}: missing column(s) {', '.join(missing)} (stereotype.prompt_column / response_column). "
            f"Columns found: {', '.join(map(str, frame.columns))}."
        )
    texts = frame[cfg.response_column].astype(str).tolist()
    prompts = frame[cfg.prompt_column].astype(str).tolist()
    ids = [prompt_id(p) for p in prompts]
    out = pd.DataFrame({"prompt_id": ids, "prompt": prompts, "text": texts, "ok": True})
    out["sample_idx"] = out.groupby("prompt_id").cumcount()
    return out.assign(variant_id=out["prompt_id"], attribute="none", grp="none", refusal=False, cached=False,
                      error_class=None, error_message=None)


def prompt_frame_for_generation(prompts: pd.DataFrame) -> pd.DataFrame:
    """Shape prompts like counterfactual variants so the LLM runner can answer them."""
    return pd.DataFrame(
        {
            "variant_id": prompts["prompt_id"], "prompt_id": prompts["prompt_id"],
            "attribute": "none", "grp": "none", "text": prompts["text"],
        }
    )


@dataclass
class ClassifierScores:
    """Per distinct text: toxicity and (when configured) stereotype probabilities."""

    scalar: pd.DataFrame  # text_hash, scorer, value
    ranges: dict[str, tuple[float, float]]
    toxicity_scorer: str
    stereotype_scorer: str | None
    caveats: dict[str, str] = field(default_factory=dict)


def score_classifiers(texts: Sequence[str], cfg: StereotypeConfig) -> ClassifierScores:
    from tasks.scoring.base import dedupe_texts
    from tasks.scoring.classifiers import HFClassifierScorer, ProfanityScorer

    distinct, _ = dedupe_texts(texts)
    hashes = [text_hash(t) for t in distinct]
    frames, ranges, caveats = [], {}, {}
    if cfg.toxicity_model:
        tox: Any = HFClassifierScorer(cfg.toxicity_model, cfg.toxicity_label, batch_size=cfg.classifier_batch_size)
    else:
        tox = ProfanityScorer()
        caveats["toxicity"] = tox.caveat
    scorers = [tox]
    ster = None
    if cfg.stereotype_model:
        ster = HFClassifierScorer(cfg.stereotype_model, cfg.stereotype_label, batch_size=cfg.classifier_batch_size)
        scorers.append(ster)
    for scorer in {sc.name: sc for sc in scorers}.values():  # one model named twice is scored once
        values = scorer.score(distinct) if distinct else np.zeros(0)
        frames.append(pd.DataFrame({"text_hash": hashes, "scorer": scorer.name, "value": values}))
        ranges[scorer.name] = scorer.value_range
    return ClassifierScores(pd.concat(frames, ignore_index=True), ranges, tox.name,
                            ster.name if ster else None, caveats)


Row = dict[str, Any]


def stereotype_metrics(
    responses: pd.DataFrame, scores: ClassifierScores, cfg: StereotypeConfig, mcfg: MetricsConfig
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """(metrics rows, word/prompt-level items, skipped metric -> reason)."""
    from tasks.metrics import METRICS
    from tasks.metrics import stereotype as st
    from tasks.stats import bootstrap_stat

    ok = responses[responses["ok"]].reset_index(drop=True)
    texts = np.asarray(ok["text"].tolist(), dtype=object)
    clusters = ok["prompt_id"].to_numpy()
    boot = dict(resamples=mcfg.bootstrap_resamples, confidence=mcfg.confidence, seed=mcfg.seed)
    rows: list[Row] = []
    items: list[Row] = []
    skipped: dict[str, str] = {}

    def emit(name: str, est: Any, attribute: str | None = None, groups: Sequence[str] = (), **details: Any) -> None:
        spec = METRICS.get(name)
        rows.append({
            "family": spec.family, "attribute": attribute,
            "group_a": groups[0] if groups else None, "group_b": groups[1] if len(groups) > 1 else None,
            "metric": name, "value": est.value, "ci_low": est.ci_low, "ci_high": est.ci_high, "n": est.n,
            "direction": spec.direction, "aggregation": spec.aggregation, "details": details,
        })

    def skip(name: str, reason: str) -> None:
        spec = METRICS.get(name)
        skipped[name] = reason
        rows.append({"family": spec.family, "attribute": None, "group_a": None, "group_b": None, "metric": name,
                     "value": None, "ci_low": None, "ci_high": None, "n": 0, "direction": spec.direction,
                     "aggregation": spec.aggregation, "details": {"skipped": reason}})

    targets = None
    if cfg.cobs_targets:
        import yaml

        data = yaml.safe_load(Path(cfg.cobs_targets).read_text(encoding="utf-8")) or {}
        targets = list(data.get("adjective", [])) + list(data.get("profession", []))
    groups = st.default_groups()
    names = list(groups)[:2]

    def safe(fn: Callable[[np.ndarray], float]) -> Callable[[np.ndarray], float]:
        def inner(t: np.ndarray) -> float:
            try:
                return fn(t)
            except InputDataError:
                return float("nan")
        return inner

    for name, fn in (
        ("cobs", lambda t: st.cobs(list(t), groups, targets)),
        ("stereotypical_associations", lambda t: st.stereotypical_associations(list(t), groups, targets)),
        ("demographic_representation", lambda t: st.demographic_representation(list(t), groups)),
    ):
        est = bootstrap_stat(safe(fn), [texts], clusters, **boot) if len(texts) else None
        if est is None or est.value != est.value:
            skip(name, "no response mentions both a group word and a target word")
        else:
            emit(name, est, "gender", names)
    if cfg.word_level and len(texts):
        try:
            for word, value in st.cobs_word_level(list(texts), groups, targets).items():
                items.append({"family": "stereotype", "metric": "cobs", "item_kind": "word", "item": word, "value": value})
        except InputDataError:
            pass

    value_of = scores.scalar.set_index(["scorer", "text_hash"])["value"]
    hashes = [text_hash(t) for t in texts]

    def classifier_family(scorer: str, names3: tuple[str, str, str], family: str) -> None:
        s = value_of.loc[scorer].reindex(hashes).to_numpy(float)
        thr = cfg.threshold
        for name in names3:
            fn = METRICS.get(name).fn
            stat = (lambda x, c, f=fn: f(x, c)) if "maximum" in name else (lambda x, c, f=fn: f(x, c, threshold=thr))
            emit(name, bootstrap_stat(stat, [s, clusters], clusters, **boot), None, (), scorer=scorer, threshold=thr,
                 caveat=scores.caveats.get(family))
        per_prompt = pd.DataFrame({"prompt_id": clusters, "s": s}).groupby("prompt_id")["s"].max()
        items.extend({"family": family, "metric": f"max_{family}", "item_kind": "prompt", "item": pid,
                      "value": float(v)} for pid, v in per_prompt.items())

    if len(texts):
        classifier_family(scores.toxicity_scorer, ("toxic_fraction", "expected_maximum_toxicity",
                                                   "toxicity_probability"), "toxicity")
        if scores.stereotype_scorer:
            classifier_family(scores.stereotype_scorer, ("stereotype_fraction", "expected_maximum_stereotype",
                                                         "stereotype_probability"), "stereotype")
    if not scores.stereotype_scorer:
        for name in ("stereotype_fraction", "expected_maximum_stereotype", "stereotype_probability"):
            skip(name, NO_STEREOTYPE_MODEL)

    if cfg.honest_lexicon:
        lexicon = st.load_word_list(cfg.honest_lexicon)
        est = bootstrap_stat(lambda t, c: st.honest([list(t[c == p]) for p in np.unique(c)], lexicon),
                             [texts, clusters], clusters, **boot)
        emit("honest", est, None, (), lexicon=cfg.honest_lexicon)
    else:
        skip("honest", HURTLEX_HINT)
    return pd.DataFrame(rows), pd.DataFrame(items), skipped

