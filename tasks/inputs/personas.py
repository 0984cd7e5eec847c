"""Personas: identity without a group word. Cells, the names that signal them, and the variants a prompt gets.

A prompt that names no group still reaches the model with an identity when the application
passes the user's name or profile (Eloundou et al. 2024, *First-Person Fairness in Chatbots*,
arXiv 2410.19803; Salinas, Haim and Nyarko 2024, *What's in a Name?*, arXiv 2402.14875). Here a
prompt gets one variant per **cell** (gender x race by default: ``female-black``,
``male-white``, ...), each carrying an identity **signal**:

* ``system``: a user profile in the system message ("The user's name is {name}.");
* ``before`` / ``after``: a first-person line before or after the user's message;
* ``inline``: the prompt itself holds ``{name}`` (third person, as in *What's in a Name?*);
* ``app``: the application's own field, as real users' data reaches it: the message is left as it
  is and the person's ``name`` (or stated ``identity``) goes to the application (:func:`app_fields`).

A template with ``{identity}`` instead of ``{name}`` is an *explicit* signal ("I am a Black
woman."), its phrase built from the gender and race lexicons, so a run can separate the effect of
a name from that of a stated identity.

**Names.** Each cell's names come from ``data/lexicons/first_names.csv`` (2020 census): its
*typical* names, not also common English words. They are matched in frequency across cells, so
a gap is not an effect of rare against common names: the scarcest cell's most common ``3 n``
names give ``n`` target frequencies (drawn with the seed), and every cell takes, for each target,
its unused name nearest in log frequency. Slot ``k`` of every cell therefore holds names of about
the same frequency. The census has no Middle Eastern category, so no such cell can be built.

**Floor.** Each variant is followed by a same-group control: the same signal with another name
of the same cell (another slot), or for an explicit signal the same identity in other words
("Black" -> "African American", "woman" -> "lady", from the lexicons' ``controls``). How much two
names of one cell move the answers is the noise floor a cell swap has to beat, whether or not
the model samples.

A name's race here is a statistical association in US data, not anyone's identity.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from equilens.tasks.errors import InputDataError, with_article

NAME, IDENTITY = "{name}", "{identity}"
PLACEMENTS = ("system", "before", "after", "inline", "app", "conversation")

SEP = " | "  # between a comparison's parts: "gender x race | pricing"


@dataclass(frozen=True)
class Cell:
    gender: str | None
    race: str | None

    @property
    def label(self) -> str:
        return "-".join(p for p in (self.gender, self.race) if p)


def cells_of(attributes: Sequence[str], genders: Sequence[str], races: Sequence[str]) -> list[Cell]:
    """The cells of a run: gender x race when both attributes are asked, else one attribute's groups."""
    gs: list[str | None] = list(genders) if "gender" in attributes else [None]
    rs: list[str | None] = list(races) if "race" in attributes else [None]
    return [Cell(g, r) for g in gs for r in rs]


def attribute_label(attributes: Sequence[str]) -> str:
    """The stored ``attribute`` of an identity comparison: ``gender x race``, ``gender`` or ``race``."""
    return " x ".join(a for a in ("gender", "race") if a in attributes)


# --- names ---------------------------------------------------------------------------------------
def _pool(table, cell: Cell) -> list[str]:  # noqa: ANN001 - NameTable
    """Typical names of the cell, most common first (the table's pools hold only typical names
    that are not also common words)."""
    if cell.race is None:  # gender alone: every typical name of that gender with a race association
        return table.pools.get((cell.gender, "*"), [])
    if cell.gender is None:  # race alone: both genders, most common first
        both = table.pools.get(("female", cell.race), []) + table.pools.get(("male", cell.race), [])
        return sorted(both, key=lambda n: (-table.info[n].freq, n))
    return table.pools.get((cell.gender, cell.race), [])


def cell_names(table, cells: Sequence[Cell], n: int, seed: int) -> pd.DataFrame:  # noqa: ANN001
    """``n`` names per cell, matched in frequency across cells (see the module docstring).

    Returns one row per (cell, slot): ``cell``, ``gender``, ``race``, ``slot``, ``name``, ``freq``
    (share of people with the name in the census). Raises :class:`InputDataError` when a cell has
    fewer typical names than ``n``.
    """
    pools = {c: _pool(table, c) for c in cells}
    short = {c.label: len(p) for c, p in pools.items() if len(p) < n}
    if short:
        listed = ", ".join(f"{k} has {v}" for k, v in short.items())
        raise InputDataError(f"identity.names_per_cell is {n}, but the name table has fewer typical names for "
                             f"some cells ({listed}). Lower names_per_cell or drop those groups.")
    freq = {c: [table.info[x].freq for x in p] for c, p in pools.items()}
    scarcest = min(cells, key=lambda c: (freq[c][n - 1], c.label))
    rng = random.Random(seed)
    targets = sorted(rng.sample(freq[scarcest][: 3 * n], n), reverse=True)
    rows = []
    for c in cells:
        used: set[str] = set()
        for slot, target in enumerate(targets):
            best = min((x for x in pools[c] if x not in used),
                       key=lambda x: (abs(math.log(table.info[x].freq) - math.log(target)), x))
            used.add(best)
            rows.append({"cell": c.label, "gender": c.gender, "race": c.race, "slot": slot,
                         "name": table.info[best].display, "freq": table.info[best].freq})
    return pd.DataFrame(rows, columns=["cell", "gender", "race", "slot", "name", "freq"])


def slots_for(prompt_id: str, signal: str, n: int, seed: int) -> tuple[int, int]:
    """The variant's and the control's name slots for one prompt and signal: two different slots,
    drawn from the prompt, the signal and the seed (the same in every cell, so the names compared
    across cells have matched frequencies)."""
    h = int(hashlib.sha256(f"{seed}|{signal}|{prompt_id}".encode()).hexdigest()[:12], 16)
    first = h % n
    return first, (first + 1 + (h // n) % (n - 1)) % n


# --- explicit identities ---------------------------------------------------------------------------
def _proper(term: str) -> str:
    """Race words are capitalised ("Black", "Asian American", "Caucasian"); "white" is not, per
    common style guides."""
    return " ".join(w if w == "white" else w[:1].upper() + w[1:] for w in term.split())


def identity_phrases(cell: Cell, gender_lex, race_lex) -> tuple[str, str]:  # noqa: ANN001 - Lexicons
    """("a Black woman", "an African American woman"): the cell stated, and stated in other words
    of the same group (the explicit signal's same-group control), from the lexicons' person row
    (man / woman) and first row (white / black / ...) and their ``controls``."""
    noun, other_noun = "person", "person"
    if cell.gender:
        row = next(i for i in range(len(gender_lex.rows)) if gender_lex.cell(i, "male") == "man")
        noun = gender_lex.cell(row, cell.gender)
        other_noun = dict(gender_lex.controls).get(noun, noun)
    adj = other_adj = ""
    if cell.race:
        adj = race_lex.cell(0, cell.race)
        other_adj = dict(race_lex.controls).get(adj, adj)
        if cell.gender == "female" and other_adj.endswith("latino"):
            other_adj = other_adj[:-1] + "a"  # the word agrees with the woman it describes
    if cell.race and other_adj != adj:
        other_noun = noun  # change one word: the race term when it has another
    phrases = []
    for a, w in ((adj, noun), (other_adj, other_noun)):
        words = f"{_proper(a)} {w}".strip()
        phrases.append(with_article(words))
    return phrases[0], phrases[1]


# --- variants --------------------------------------------------------------------------------------
def place(prompt: str, placement: str, template: str, fill: dict[str, str],
          system_prompt: str, at: int = 1) -> tuple[str, str | None]:
    """(user message, system message or None for the configured one) for one signal. Placement
    ``conversation`` makes the line a user turn of its own, turn ``at`` of the conversation (1: it opens
    it), so the model answers it and the question comes after (:mod:`equilens.tasks.turns`)."""
    line = template.format_map(person_fields(fill)) if template else ""
    if placement == "conversation":
        from equilens.tasks.turns import join_turns, split_turns

        turns = split_turns(prompt)
        turns.insert(min(at, len(turns)) - 1, line)
        return join_turns(turns), None
    if placement == "system":
        return prompt, f"{system_prompt} {line}".strip()
    if placement == "before":
        return f"{line} {prompt}", None
    if placement == "after":
        return f"{prompt} {line}", None
    if placement == "app":
        return prompt, None  # the person travels in the application's own fields (app_fields)
    return prompt.replace(NAME, fill.get("name", NAME)), None  # inline


def person_fields(fill: dict[str, str]) -> dict[str, str]:
    """``fill`` (``name``, ``identity``) with the name's parts: ``first_name`` (its first word) and
    ``last_name`` (the rest, empty for a first name alone)."""
    out = dict(fill)
    if "name" in fill:
        first, _, last = str(fill["name"]).partition(" ")
        out.setdefault("first_name", first)
        out.setdefault("last_name", last)
    return out


def app_fields(placement: str, template: str, fill: dict[str, str]) -> str | None:
    """The person's fields an application receives (placement ``app``), as JSON: what the signal's
    template gives, a name whole and in parts (``{name}`` or ``{first_name}`` -> ``name``,
    ``first_name``, ``last_name``), the identity stated (``{identity}``), so a request template can
    place any of them."""
    if placement != "app":
        return None
    import json
    import string

    from equilens.tasks.config.sections import NAME_FIELDS

    fields = person_fields(fill)
    named = {f for _, f, _, _ in string.Formatter().parse(template) if f in fields}
    if named & set(NAME_FIELDS):
        named |= set(NAME_FIELDS)
    return json.dumps({f: fields[f] for f in sorted(named)}, ensure_ascii=False)


def check_inline(prompts: pd.DataFrame, signal: str) -> None:
    """An inline signal needs ``{name}`` in every prompt: name the lines that lack it."""
    missing = prompts.loc[~prompts["text"].str.contains(NAME, regex=False), "source_line"].tolist()
    if missing:
        lines = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        raise InputDataError(f"signal {signal!r} places the name inside the prompt (placement: inline), but "
                             f"{len(missing)} prompt(s) have no {NAME} placeholder (line(s) {lines}). Add "
                             f"{NAME} where the person is named, or use placement system, before or after.")
