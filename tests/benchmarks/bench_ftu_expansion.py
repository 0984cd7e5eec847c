"""Time the FTU check and counterfactual expansion on synthetic prompts (a script, not a test).

Run: .venv/bin/python tests/benchmarks/bench_ftu_expansion.py [--n 100000]
Prompts come from templates; about half mention gender or race, the rest mention neither.
Names are the 38,473-name table (data/lexicons/first_names.csv, with surnames.csv); they take part in gender and race.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from equilens.tasks.inputs.expansion import expand_prompts
from equilens.tasks.inputs.ftu import check_ftu
from equilens.tasks.inputs.lexicon import load_lexicon
from equilens.tasks.inputs.neutralization import neutralize

MENTIONING = [
    "My {rel} wants advice on starting a small bakery. What should {subj} do first?",
    "Write a short reference letter for {name}, who worked with us for three years as an engineer.",
    "{Subj} is a nurse at a busy hospital. Describe {obj_det} typical day.",
    "A {race} family moved into the neighborhood last month. Write a welcome note.",
    "Give career tips to a young {race} woman who wants to study law.",
    "I met {name} at the conference and gave {obj} my card. How do I follow up?",
    "Describe the ideal {rel} in three sentences.",
    "An {race2} student asked about scholarships. Summarize the options for {obj}.",
]
NEUTRAL = [
    "Summarize the main causes of the French Revolution in five bullet points.",
    "What is the difference between a list and a tuple in Python? Give examples.",
    "Write a haiku about autumn leaves and the first cold morning of the year.",
    "Plan a three-day trip to the mountains with a budget of 500 dollars.",
    "Explain how a whiteboard presentation can keep a meeting focused.",
    "Suggest a wine to pair with grilled fish and a light lemon sauce.",
    "Give me a recipe for a vegetarian chili that serves six people.",
    "How do interest rates affect mortgage payments over thirty years?",
]
FILL = {
    "rel": ["brother", "sister", "father", "mother", "uncle", "aunt", "husband", "wife"],
    "subj": ["he", "she"], "Subj": ["He", "She"], "obj": ["him", "her"], "obj_det": ["his", "her"],
    "name": ["James", "Mary", "Jamal", "Priya", "Connor", "Lucia", "Robert", "Emily"],
    "race": ["white", "Black", "Asian", "Hispanic"],
    "race2": ["African American", "Asian American", "Caucasian", "Latino"],
}


def make_prompts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 2:
            out.append(rng.choice(NEUTRAL) + f" (case {i})")
        else:
            tpl = rng.choice(MENTIONING)
            out.append(tpl.format(**{k: rng.choice(v) for k, v in FILL.items()}) + f" (case {i})")
    return out


def timed(label: str, n: int, fn) -> object:
    t0 = time.perf_counter()
    result = fn()
    dt = time.perf_counter() - t0
    print(f"{label:<44} {n:>8} prompts  {dt:7.2f} s  {n / dt:>10,.0f} prompts/s")
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    args = ap.parse_args()
    gender, race, names = (load_lexicon(a) for a in ("gender", "race", "name"))
    for lex in (gender, race):  # compile outside the timings
        lex.detect_pattern, lex.any_pattern
    prompts = make_prompts(args.n)
    pairs = [(f"p{i}", t) for i, t in enumerate(prompts)]

    res = timed("check_ftu (gender + race + name)", args.n, lambda: check_ftu(prompts, [gender, race, names]))
    print("  ", res.summary())
    gv = timed("expand_prompts gender (+names, validated)", args.n,
               lambda: expand_prompts(pairs, gender, names))
    rv = timed("expand_prompts race (+names, validated)", args.n, lambda: expand_prompts(pairs, race, names))
    bad = sum(bool(v.problems) for v in gv + rv)
    print(f"   {len(gv)} gender + {len(rv)} race variants, {bad} with problems")
    texts = [v.text for v in gv]
    timed("neutralize gender variants", len(texts), lambda: neutralize(texts, gender))
    try:
        import langfair  # noqa: F401
    except ImportError:
        print("langfair is not installed; no comparison.")


if __name__ == "__main__":
    main()
