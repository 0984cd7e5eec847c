"""The DuckDB tables of a store: every table's columns and types (docs/tables.md says what one row
of each holds), in one registry, :data:`TABLES`. The tables every run writes are declared here; an
assessment declares its own in a module its ``Assessment`` value names (``tables``, its folder's
``tables.py``), so this layer names none. :class:`equilens.tasks.storage.store.Store` creates them all (one file holds the
runs of every assessment) and adds the columns an older file lacks."""

from __future__ import annotations

from equilens.tasks.catalog import import_declared
from equilens.tasks.registry import Registry

TABLES: Registry[str] = Registry("table", discover=lambda: import_declared("tables"))
"""Table name -> its columns and types, as ``CREATE TABLE`` takes them."""

TABLES.add("runs", """
        run_id VARCHAR PRIMARY KEY, name VARCHAR, flow VARCHAR, status VARCHAR,
        started_at TIMESTAMP, finished_at TIMESTAMP, config JSON, config_hash VARCHAR,
        provider VARCHAR, model VARCHAR, versions JSON, timings JSON, summary JSON, pid INTEGER, host VARCHAR""")
TABLES.add("prompts", "run_id VARCHAR, prompt_id VARCHAR, text VARCHAR, mentions JSON")
TABLES.add("variants", """
        run_id VARCHAR, variant_id VARCHAR, prompt_id VARCHAR, attribute VARCHAR, grp VARCHAR,
        text VARCHAR, swapped JSON, valid BOOLEAN, problems JSON, role VARCHAR, control_kind VARCHAR""")
TABLES.add("responses", """
        run_id VARCHAR, variant_id VARCHAR, prompt_id VARCHAR, attribute VARCHAR, grp VARCHAR,
        role VARCHAR, sample_idx INTEGER, text VARCHAR, ok BOOLEAN, refusal BOOLEAN, error_class VARCHAR,
        error_message VARCHAR, attempts INTEGER, latency_s DOUBLE, prompt_tokens INTEGER,
        completion_tokens INTEGER, cached BOOLEAN, cache_key VARCHAR, cost DOUBLE, truncated BOOLEAN,
        first_token_s DOUBLE, turns JSON""")
TABLES.add("scores", "run_id VARCHAR, text_hash VARCHAR, scorer VARCHAR, value DOUBLE")
TABLES.add("prompt_order", "run_id VARCHAR, prompt_id VARCHAR, position INTEGER, look INTEGER")
TABLES.add("looks", """
        run_id VARCHAR, look INTEGER, looks INTEGER, prompts INTEGER, planned INTEGER, calls INTEGER,
        planned_calls INTEGER, found INTEGER, futile INTEGER, still_open INTEGER, stopped BOOLEAN, reason VARCHAR""")
TABLES.add("metrics", """
        run_id VARCHAR, family VARCHAR, attribute VARCHAR, group_a VARCHAR, group_b VARCHAR,
        metric VARCHAR, value DOUBLE, ci_low DOUBLE, ci_high DOUBLE, n INTEGER,
        direction VARCHAR, aggregation VARCHAR, details JSON""")
TABLES.add("metric_items", """
        run_id VARCHAR, family VARCHAR, metric VARCHAR, item_kind VARCHAR, item VARCHAR,
        value DOUBLE""")
TABLES.add("validations", """
        run_id VARCHAR, stage VARCHAR, expectation VARCHAR, success BOOLEAN, column_name VARCHAR,
        element_count INTEGER, unexpected_count INTEGER, examples JSON""")
TABLES.add("response_cache", """
        cache_key VARCHAR PRIMARY KEY, provider VARCHAR, model VARCHAR, text VARCHAR,
        refusal BOOLEAN, latency_s DOUBLE, prompt_tokens INTEGER, completion_tokens INTEGER,
        created_at TIMESTAMP, top_logprobs VARCHAR, first_token_s DOUBLE, turns VARCHAR""")
