"""Bias that builds over a conversation: the cells compared at every turn, not only at the last.

With ``identity.per_turn``, each turn of a conversation whose answer carries the outcome (an amount,
a yes or no, a choice) is read against that turn's own message and compared across cells like the
last turn's answer is: one comparison per turn position, ``race | turn 2``, with its own Holm family.
A turn position at which no answer could be read (the turn where the user only says who they are)
gives no comparison. The verdict then says when a gap appears only after some turn
(:func:`equilens.tasks.reporting.verdict.turn_onsets`).
"""

from __future__ import annotations

import json

import pandas as pd
from equilens.tasks.inputs.personas import SEP

TURN = "turn"


def turn_label(attribute: str, turn: int) -> str:
    """The comparison of one turn position: ``race | turn 2``."""
    return f"{attribute}{SEP}{TURN} {turn}"


def turn_frames(responses: pd.DataFrame, variants: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(responses, variants) with one row per turn of every answered conversation: the turn's answer as
    ``text``, the turn's own message as its variant's ``text`` (the question its answer is read
    against), ``attribute`` the turn's comparison, ``variant_id`` the variant's with ``#K``. Single
    prompts and failed conversations give no rows."""
    if "turns" not in responses:
        return responses.iloc[0:0], variants.iloc[0:0]
    by_variant = variants.drop_duplicates("variant_id").set_index("variant_id")
    rows, asked = [], {}
    for r in responses[responses["turns"].notna() & responses["ok"].astype(bool)].to_dict("records"):
        turns = json.loads(r["turns"]) if isinstance(r["turns"], str) else r["turns"]
        for t in turns or []:
            vid = f"{r['variant_id']}#{t['turn']}"
            rows.append({**r, "variant_id": vid, "text": t["answer"], "attribute": turn_label(r["attribute"], t["turn"])})
            if vid not in asked:
                asked[vid] = {**by_variant.loc[r["variant_id"]].to_dict(), "variant_id": vid, "text": t["user"]}
    return (pd.DataFrame(rows, columns=responses.columns),
            pd.DataFrame(list(asked.values()), columns=["variant_id", *by_variant.columns]))


def readable_turns(answered: pd.DataFrame) -> pd.DataFrame:
    """The rows of the turn positions at which some answer was read (the others compare nothing)."""
    read = answered.groupby("attribute")["outcome_value"].transform(lambda v: v.notna().any())
    return answered[read.astype(bool)]
