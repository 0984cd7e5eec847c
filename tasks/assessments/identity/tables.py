"""The identity assessment's own tables: the names drawn per cell, each variant's identity, the
outcome read from each answer, the judge's pairwise judgements and the stored checks of a judge.
(docs/tables.md says what one row of each holds.)"""

from __future__ import annotations

from equilens.tasks.storage.schema import TABLES

TABLES.add("identity_names",
           "run_id VARCHAR, cell VARCHAR, gender VARCHAR, race VARCHAR, slot INTEGER, name VARCHAR, freq DOUBLE")
TABLES.add("identity_variants", """
        run_id VARCHAR, variant_id VARCHAR, signal VARCHAR, name VARCHAR, system VARCHAR, task VARCHAR,
        outcome VARCHAR, user_fields VARCHAR""")
TABLES.add("identity_readings", """
        run_id VARCHAR, variant_id VARCHAR, sample_idx INTEGER, kind VARCHAR, value DOUBLE, unit VARCHAR,
        reason VARCHAR, figure VARCHAR, reader VARCHAR, model_value DOUBLE, model_reason VARCHAR, disagree BOOLEAN""")
TABLES.add("identity_judgements", """
        run_id VARCHAR, attribute VARCHAR, prompt_id VARCHAR, sample_idx INTEGER, cell_a VARCHAR, cell_b VARCHAR,
        about_a DOUBLE, about_b DOUBLE, harm DOUBLE, calls INTEGER, via VARCHAR, error VARCHAR""")
TABLES.add("judge_checks", """
        check_id VARCHAR, checked_at TIMESTAMP, run_id VARCHAR, provider VARCHAR, model VARCHAR,
        endpoint_id VARCHAR, instructions_hash VARCHAR, check_set VARCHAR, check_set_hash VARCHAR,
        pairs INTEGER, harmful INTEGER, neutral INTEGER, tp INTEGER, fn INTEGER, tn INTEGER, fp INTEGER,
        unparsed INTEGER, sensitivity DOUBLE, sensitivity_low DOUBLE, sensitivity_high DOUBLE,
        specificity DOUBLE, specificity_low DOUBLE, specificity_high DOUBLE, kappa DOUBLE, kappa_low DOUBLE,
        kappa_high DOUBLE, kappa_interval VARCHAR, confidence DOUBLE, min_sensitivity DOUBLE,
        min_specificity DOUBLE, min_kappa DOUBLE, passed BOOLEAN, via VARCHAR, calls INTEGER, cost DOUBLE,
        details JSON""")
