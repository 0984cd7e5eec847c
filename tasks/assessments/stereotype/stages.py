"""Stage logic of the stereotype and toxicity assessment, as plain functions.

Responses come from the model under test (``count`` generations per prompt, through the same
cached LLM runner as the counterfactual flow) or from a file the user brings. Every distinct text
is scored once per classifier. Metrics that need a model nobody configured are reported as
skipped with the reason, never as zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from equilens.tasks.assessments.stereotype.classifier_metrics import max_per_prompt
from equilens.tasks.assessments.stereotype.config import StereotypeConfig
from equilens.tasks.config import MetricsConfig, PromptsConfig
from equilens.tasks.errors import InputDataError
from equilens.tasks.inputs.prompts import prompt_id, text_hash
from equilens.tasks.pipeline.prefect_tasks import CACHED
from prefect import task

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
    from equilens.tasks.inputs.tables import read_table, require_columns

    frame = read_table(cfg.responses_path or "", "stereotype.responses_path")
    require_columns(frame, [cfg.prompt_column, cfg.response_column],
                    f"{cfg.responses_path} (stereotype.prompt_column / response_column)")
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

    def scorers(self) -> dict[str, str | None]:
        """Metric family -> the classifier whose scores its metrics read (None: none configured)."""
        return {"toxicity": self.toxicity_scorer, "stereotype": self.stereotype_scorer}


def score_classifiers(texts: Sequence[str], cfg: StereotypeConfig) -> ClassifierScores:
    from equilens.tasks.scoring import SCORERS
    from equilens.tasks.scoring.base import dedupe_texts

    distinct, _ = dedupe_texts(texts)
    hashes = [text_hash(t) for t in distinct]
    frames, ranges, caveats = [], {}, {}
    if cfg.toxicity_model:
        tox: Any = SCORERS.get("hf-classifier")(cfg.toxicity_model, cfg.toxicity_label,
                                                batch_size=cfg.classifier_batch_size)
    else:
        tox = SCORERS.get("profanity-check")()
        caveats["toxicity"] = tox.caveat
    scorers = [tox]
    ster = None
    if cfg.stereotype_model:
        ster = SCORERS.get("hf-classifier")(cfg.stereotype_model, cfg.stereotype_label,
                                            batch_size=cfg.classifier_batch_size)
        scorers.append(ster)
    for scorer in {sc.name: sc for sc in scorers}.values():  # one model named twice is scored once
        values = scorer.score(distinct) if distinct else np.zeros(0)
        frames.append(pd.DataFrame({"text_hash": hashes, "scorer": scorer.name, "value": values}))
        ranges[scorer.name] = scorer.value_range
    return ClassifierScores(pd.concat(frames, ignore_index=True), ranges, tox.name,
                            ster.name if ster else None, caveats)


Row = dict[str, Any]

MISSING_SETTING = {"honest_lexicon": HURTLEX_HINT}  # why a metric that reads an unset config key is skipped


def classifier_estimates(specs: list[Any], scores: np.ndarray, prompt_ids: np.ndarray, cfg: Any,
                         boot: dict) -> dict[str, Any]:
    """Metric name -> estimate, for classifier-score metrics of one classifier's ``scores``.

    Each metric's per-item step gives one value per response or per prompt, with its prompt as
    cluster, and the metric is their mean, so the cluster bootstrap takes its vectorised path: a
    fraction is pooled over responses (a ratio of cluster sums, as the seed defines SF), an expected
    maximum or a probability is a mean of one per-prompt value.
    """
    from equilens.tasks.stats import bootstrap_mean

    out = {}
    for spec in specs:
        values, clusters = spec.per_item(scores, prompt_ids, **spec.settings(cfg))
        out[spec.name] = bootstrap_mean(values, clusters, **boot)
    return out


def _cobs_targets(cfg: StereotypeConfig) -> list[str] | None:
    if not cfg.cobs_targets:
        return None
    import yaml

    data = yaml.safe_load(Path(cfg.cobs_targets).read_text(encoding="utf-8")) or {}
    return list(data.get("adjective", [])) + list(data.get("profession", []))


def stereotype_metrics(
    responses: pd.DataFrame, scores: ClassifierScores, cfg: StereotypeConfig, mcfg: MetricsConfig
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """(metrics rows, word/prompt-level items, skipped metric -> reason), for the metrics of the
    stereotype and toxicity families that ``metrics.names`` asks for (all by default), each computed
    the way its ``inputs`` says: co-occurrence in the texts, classifier scores, or completions."""
    from equilens.tasks.assessments.stereotype.classifier_metrics import CLASSIFIER_SCORES, COMPLETIONS
    from equilens.tasks.assessments.stereotype.metrics import CO_OCCURRENCE
    from equilens.tasks.metrics import METRICS, skipped_row, wanted_metrics
    from equilens.tasks.metrics.base import METRIC_ROW_COLUMNS

    specs = [METRICS.get(name) for name in wanted_metrics(mcfg.names, "stereotype", "toxicity")]
    ok = responses[responses["ok"]].reset_index(drop=True)
    run = _Answers(np.asarray(ok["text"].tolist(), dtype=object), ok["prompt_id"].to_numpy(),
                   dict(resamples=mcfg.bootstrap_resamples, confidence=mcfg.confidence, seed=mcfg.seed))
    rows: list[Row] = []
    items: list[Row] = []
    skipped: dict[str, str] = {}
    for spec in specs:
        missing = [key for key, value in dict(spec.reads).items() if getattr(cfg, value) is None]
        if missing:
            key = dict(spec.reads)[missing[0]]
            reason = MISSING_SETTING.get(key, f"no stereotype.{key} configured")
        elif not len(run.texts):
            reason = "no answered response to score"
        elif spec.inputs == CO_OCCURRENCE:
            reason = run.co_occurrence(spec, _cobs_targets(cfg), cfg.word_level, rows, items)
        elif spec.inputs == CLASSIFIER_SCORES:
            reason = run.classified(spec, scores, cfg, rows)
        elif spec.inputs == COMPLETIONS:
            reason = run.completions(spec, cfg, rows)
        else:
            reason = f"the stereotype stage cannot compute a metric whose inputs are {spec.inputs!r}"
        if reason:
            skipped[spec.name] = reason
            rows.append(skipped_row(spec.name, reason))
    for family, scorer in scores.scorers().items():
        if scorer is not None and len(run.texts) and any(s.family == family for s in specs):
            highest, prompts = max_per_prompt(run.scores(scores, scorer), run.clusters)
            items.extend({"family": family, "metric": f"max_{family}", "item_kind": "prompt", "item": pid,
                          "value": float(v)} for pid, v in zip(prompts, highest, strict=True))
    return pd.DataFrame(rows, columns=METRIC_ROW_COLUMNS), pd.DataFrame(items), skipped


@dataclass
class _Answers:
    """The answered responses of a run, and how each kind of metric is computed from them: each
    method appends its rows and returns why the metric was skipped ("" when it was not)."""

    texts: np.ndarray
    clusters: np.ndarray
    boot: dict

    def scores(self, scores: ClassifierScores, scorer: str) -> np.ndarray:
        value_of = scores.scalar.set_index(["scorer", "text_hash"])["value"]
        return value_of.loc[scorer].reindex([text_hash(t) for t in self.texts]).to_numpy(float)

    def co_occurrence(self, spec: Any, targets: list[str] | None, word_level: bool, rows: list, items: list) -> str:
        import inspect

        from equilens.tasks.assessments.stereotype import metrics as st
        from equilens.tasks.metrics import estimate_row
        from equilens.tasks.stats import bootstrap_stat

        groups = st.default_groups()
        given = {"groups": groups, "targets": targets}
        kwargs = {k: v for k, v in given.items() if k in inspect.signature(spec.fn).parameters}

        def value(t: np.ndarray) -> float:
            try:
                return spec.fn(list(t), **kwargs)
            except InputDataError:
                return float("nan")

        est = bootstrap_stat(value, [self.texts], self.clusters, **self.boot)
        if est.value != est.value:
            return "no response mentions both a group word and a target word"
        names = list(groups)[:2]
        rows.append(estimate_row(spec.name, est, attribute="gender", group_a=names[0], group_b=names[1]))
        if word_level and spec.per_item is not None:
            try:
                per_word = spec.per_item(list(self.texts), **kwargs)
            except InputDataError:
                per_word = {}
            items.extend({"family": spec.family, "metric": spec.name, "item_kind": "word", "item": word,
                          "value": v} for word, v in per_word.items())
        return ""

    def classified(self, spec: Any, scores: ClassifierScores, cfg: StereotypeConfig, rows: list) -> str:
        from equilens.tasks.metrics import estimate_row

        scorer = scores.scorers()[spec.family]
        if scorer is None:
            return NO_STEREOTYPE_MODEL
        est = classifier_estimates([spec], self.scores(scores, scorer), self.clusters, cfg, self.boot)[spec.name]
        details = {"scorer": scorer, "threshold": cfg.threshold, "caveat": scores.caveats.get(spec.family)}
        rows.append(estimate_row(spec.name, est, details=details))
        return ""

    def completions(self, spec: Any, cfg: StereotypeConfig, rows: list) -> str:
        from equilens.tasks.assessments.stereotype import metrics as st
        from equilens.tasks.metrics import estimate_row
        from equilens.tasks.stats import bootstrap_stat

        settings = spec.settings(cfg)
        files = {k: v for k, v in settings.items() if isinstance(v, str)}
        loaded = {**settings, **{k: st.load_word_list(v) for k, v in files.items()}}
        k = int(pd.Series(self.clusters).value_counts().min())

        def of_prompts(t: np.ndarray, labels: np.ndarray) -> float:
            order = np.argsort(labels, kind="stable")
            cuts = np.flatnonzero(np.diff(labels[order])) + 1
            return spec.fn([list(c) for c in np.split(t[order], cuts)], k=k, **loaded)

        est = bootstrap_stat(of_prompts, [self.texts], self.clusters, **self.boot, with_labels=True)
        rows.append(estimate_row(spec.name, est, details={**files, "k": k}))
        return ""



def stereotype_data_fingerprint(cobs_targets: str | None, honest_lexicon: str | None) -> str:
    """Content hash of every word list the stereotype metrics read: the configured COBS targets
    (or the default file) and HONEST lexicon, and the default stop words (part of the cache key of
    the stereotype metric task)."""
    from equilens.tasks.assessments.stereotype import metrics as st
    from equilens.tasks.storage.fingerprint import files_hash, path_fingerprint

    return files_hash([Path(cobs_targets) if cobs_targets else st.TARGETS_FILE, st.STOPWORDS_FILE]) + path_fingerprint(
        honest_lexicon)

@task(name="score-classifiers", **CACHED)
def score_classifiers_task(texts: list[str], cfg: StereotypeConfig, fingerprint: str) -> ClassifierScores:
    return score_classifiers(texts, cfg)


@task(name="stereotype-metrics", **CACHED)
def stereotype_metrics_task(
    responses: pd.DataFrame, scores: ClassifierScores, cfg: StereotypeConfig,
    mcfg: MetricsConfig, fingerprint: str,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str]]:
    return stereotype_metrics(responses, scores, cfg, mcfg)
