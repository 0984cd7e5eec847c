"""The bias test's own tables: the generated test sentences and the sentence pairs it scores.
(docs/tables.md says what one row of each holds.)"""

from __future__ import annotations

from equilens.tasks.storage.schema import TABLES

TABLES.add("bias_sentences", """
        run_id VARCHAR, bias VARCHAR, "group" VARCHAR, group_term VARCHAR, attribute VARCHAR,
        attribute_term VARCHAR, sample INTEGER, prompt VARCHAR, raw VARCHAR, sentence VARCHAR,
        discarded BOOLEAN, reason VARCHAR""")
TABLES.add("bias_pairs", """
        run_id VARCHAR, bias VARCHAR, template VARCHAR, attribute VARCHAR, attribute_term VARCHAR,
        stereotyped_sentence VARCHAR, anti_stereotyped_sentence VARCHAR, stereotyped_logprob DOUBLE,
        anti_stereotyped_logprob DOUBLE, stereotyped INTEGER, discarded BOOLEAN, reason VARCHAR""")
