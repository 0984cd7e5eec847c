"""The DuckDB tables of a store: every table's columns and types (docs/tables.md says what one row
of each holds). :class:`equilens.tasks.storage.store.Store` creates them and adds the columns an
older file lacks."""

from __future__ import annotations

SCHEMA: dict[str, str] = {
    "runs": """
        run_id VARCHAR PRIMARY KEY, name VARCHAR, flow VARCHAR, status VARCHAR,
        started_at TIMESTAMP, finished_at TIMESTAMP, config JSON, config_hash VARCHAR,
        provider VARCHAR, model VARCHAR, versions JSON, timings JSON, summary JSON, pid INTEGER, host VARCHAR""",
    "prompts": "run_id VARCHAR, prompt_id VARCHAR, text VARCHAR, mentions JSON",
    "variants": """
        run_id VARCHAR, variant_id VARCHAR, prompt_id VARCHAR, attribute VARCHAR, grp VARCHAR,
        text VARCHAR, swapped JSON, valid BOOLEAN, problems JSON, role VARCHAR, control_kind VARCHAR""",
    "decision_answers": """
        run_id VARCHAR, item_id VARCHAR, scenario VARCHAR, fill_type VARCHAR, age VARCHAR, gender VARCHAR,
        race VARCHAR, p_yes DOUBLE, via VARCHAR, samples INTEGER, read INTEGER, reason VARCHAR""",
    "identity_names": "run_id VARCHAR, cell VARCHAR, gender VARCHAR, race VARCHAR, slot INTEGER, name VARCHAR, freq DOUBLE",
    "identity_variants": """
        run_id VARCHAR, variant_id VARCHAR, signal VARCHAR, name VARCHAR, system VARCHAR, task VARCHAR,
        outcome VARCHAR, user_fields VARCHAR""",
    "identity_readings": """
        run_id VARCHAR, variant_id VARCHAR, sample_idx INTEGER, kind VARCHAR, value DOUBLE, unit VARCHAR,
        reason VARCHAR, figure VARCHAR, reader VARCHAR, model_value DOUBLE, model_reason VARCHAR, disagree BOOLEAN""",
    "identity_judgements": """
        run_id VARCHAR, attribute VARCHAR, prompt_id VARCHAR, sample_idx INTEGER, cell_a VARCHAR, cell_b VARCHAR,
        about_a DOUBLE, about_b DOUBLE, harm DOUBLE, calls INTEGER, via VARCHAR, error VARCHAR""",
    "judge_checks": """
        check_id VARCHAR, checked_at TIMESTAMP, run_id VARCHAR, provider VARCHAR, model VARCHAR,
        endpoint_id VARCHAR, instructions_hash VARCHAR, check_set VARCHAR, check_set_hash VARCHAR,
        pairs INTEGER, harmful INTEGER, neutral INTEGER, tp INTEGER, fn INTEGER, tn INTEGER, fp INTEGER,
        unparsed INTEGER, sensitivity DOUBLE, sensitivity_low DOUBLE, sensitivity_high DOUBLE,
        specificity DOUBLE, specificity_low DOUBLE, specificity_high DOUBLE, kappa DOUBLE, kappa_low DOUBLE,
        kappa_high DOUBLE, kappa_interval VARCHAR, confidence DOUBLE, min_sensitivity DOUBLE,
        min_specificity DOUBLE, min_kappa DOUBLE, passed BOOLEAN, via VARCHAR, calls INTEGER, cost DOUBLE,
        details JSON""",
    "responses": """
        run_id VARCHAR, variant_id VARCHAR, prompt_id VARCHAR, attribute VARCHAR, grp VARCHAR,
        role VARCHAR, sample_idx INTEGER, text VARCHAR, ok BOOLEAN, refusal BOOLEAN, error_class VARCHAR,
        error_message VARCHAR, attempts INTEGER, latency_s DOUBLE, prompt_tokens INTEGER,
        completion_tokens INTEGER, cached BOOLEAN, cache_key VARCHAR, cost DOUBLE, truncated BOOLEAN,
        first_token_s DOUBLE, turns JSON""",
    "scores": "run_id VARCHAR, text_hash VARCHAR, scorer VARCHAR, value DOUBLE",
    "prompt_order": "run_id VARCHAR, prompt_id VARCHAR, position INTEGER, look INTEGER",
    "looks": """
        run_id VARCHAR, look INTEGER, looks INTEGER, prompts INTEGER, planned INTEGER, calls INTEGER,
        planned_calls INTEGER, found INTEGER, futile INTEGER, still_open INTEGER, stopped BOOLEAN, reason VARCHAR""",
    "metrics": """
        run_id VARCHAR, family VARCHAR, attribute VARCHAR, group_a VARCHAR, group_b VARCHAR,
        metric VARCHAR, value DOUBLE, ci_low DOUBLE, ci_high DOUBLE, n INTEGER,
        direction VARCHAR, aggregation VARCHAR, details JSON""",
    "metric_items": """
        run_id VARCHAR, family VARCHAR, metric VARCHAR, item_kind VARCHAR, item VARCHAR,
        value DOUBLE""",
    "bias_sentences": """
        run_id VARCHAR, bias VARCHAR, "group" VARCHAR, group_term VARCHAR, attribute VARCHAR,
        attribute_term VARCHAR, sample INTEGER, prompt VARCHAR, raw VARCHAR, sentence VARCHAR,
        discarded BOOLEAN, reason VARCHAR""",
    "bias_pairs": """
        run_id VARCHAR, bias VARCHAR, template VARCHAR, attribute VARCHAR, attribute_term VARCHAR,
        stereotyped_sentence VARCHAR, anti_stereotyped_sentence VARCHAR, stereotyped_logprob DOUBLE,
        anti_stereotyped_logprob DOUBLE, stereotyped INTEGER, discarded BOOLEAN, reason VARCHAR""",
    "validations": """
        run_id VARCHAR, stage VARCHAR, expectation VARCHAR, success BOOLEAN, column_name VARCHAR,
        element_count INTEGER, unexpected_count INTEGER, examples JSON""",
    "response_cache": """
        cache_key VARCHAR PRIMARY KEY, provider VARCHAR, model VARCHAR, text VARCHAR,
        refusal BOOLEAN, latency_s DOUBLE, prompt_tokens INTEGER, completion_tokens INTEGER,
        created_at TIMESTAMP, top_logprobs VARCHAR, first_token_s DOUBLE, turns VARCHAR""",
}
