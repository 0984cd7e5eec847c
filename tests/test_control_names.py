"""A same-group control renames each person once: the full name and the first name alone take the
same new first name, in a single prompt and across the turns of a conversation."""

from __future__ import annotations

import re

import pytest
from equilens.tasks.inputs.controls import NAME, control_text
from equilens.tasks.inputs.lexicon import load_lexicon
from equilens.tasks.turns import join_turns, split_turns

PROMPTS = [
    pytest.param("Emily", "Walsh", "Emily Walsh needs a car loan. What rate should Emily get?", id="prompt"),
    pytest.param("Emily", "Walsh", join_turns(["Hi, my name is Emily Walsh.",
                                               "Emily needs a car loan. What rate should she get?"]), id="conversation"),
    pytest.param("James", "Walsh", join_turns(["Hi, my name is James Walsh.",
                                               "James needs a car loan. What rate should he get?"]), id="conversation-male"),
    pytest.param("Darnell", "Jackson", "I am Darnell Jackson. Darnell wants to rent a flat. Should the landlord "
                 "accept him?", id="prompt-black"),
]


@pytest.mark.parametrize("attribute", ["gender", "race"])
@pytest.mark.parametrize(("first", "surname", "text"), PROMPTS)
def test_a_control_gives_one_person_one_new_first_name(names, attribute: str, first: str, surname: str,
                                                       text: str) -> None:
    """"Emily Walsh ... Emily" became "Patricia Walsh ... Linda": two people where the variant has one."""
    control, kind = control_text(text, "p", load_lexicon(attribute), names)
    assert kind == NAME, control
    full = re.findall(rf"\b([A-Z][a-z]+) {surname}\b", control)
    assert len(full) == 1, control
    (new,) = full
    alone = re.sub(rf"\b{new} {surname}\b", "", control)
    assert re.findall(rf"\b{new}\b", alone), f"the first name alone is not {new}: {control!r}"
    assert first not in control, control
    old, picked = names.info[first.lower()], names.info[new.lower()]
    assert new != first and (picked.gender, picked.race) == (old.gender, old.race), control
    if len(split_turns(text)) > 1:  # each turn names the person by the one new name
        assert all(new in turn for turn in split_turns(control)), control
