"""The decisions assessment's own table: P(yes) per decision and how it was read.
(docs/tables.md says what one row of each holds.)"""

from __future__ import annotations

from equilens.tasks.storage.schema import TABLES

TABLES.add("decision_answers", """
        run_id VARCHAR, item_id VARCHAR, scenario VARCHAR, fill_type VARCHAR, age VARCHAR, gender VARCHAR,
        race VARCHAR, p_yes DOUBLE, via VARCHAR, samples INTEGER, read INTEGER, reason VARCHAR""")
