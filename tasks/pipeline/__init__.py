"""The pipeline every assessment shares, as plain functions over DataFrames: prompts to variants
(:mod:`.variants`: the FTU check and the counterfactual expansion), variants to answers
(:mod:`.answers`), answers to scores (:mod:`.scores`), and pairs of groups to metric rows
(:mod:`.metric_stage`, over :mod:`.pairs` and :mod:`.parity`).

The Prefect flows wrap each function in a task; tests and scripts can call them directly. No
function here writes to DuckDB: persistence is the flow's job, so a cached stage never skips a write.
"""

from equilens.tasks.pipeline.answers import RESPONSE_COLUMNS, build_requests, call_cost, results_frame
from equilens.tasks.pipeline.scores import ProgressFn, ScoreSet, needs_embeddings, score_texts
from equilens.tasks.pipeline.variants import (
                                              NONE_JSON,
                                              VARIANT_COLUMNS,
                                              FTUReport,
                                              as_json,
                                              check_ftu_stage,
                                              expand_stage,
                                              lexicons_for,
                                              names_lexicon,
                                              uses_controls,
                                              variant_id,
)

__all__ = ["NONE_JSON", "RESPONSE_COLUMNS", "VARIANT_COLUMNS", "FTUReport", "ProgressFn", "ScoreSet", "as_json",
           "build_requests", "call_cost", "check_ftu_stage", "expand_stage", "lexicons_for", "names_lexicon",
           "needs_embeddings", "results_frame", "score_texts", "uses_controls", "variant_id"]
