"""Same-group controls: a second wording of a variant that keeps every group it mentions.

The noise floor of a counterfactual similarity metric asks: how different are two answers when the
prompt changes *without* changing the group? Two samples of one variant answer that only when the
endpoint samples; a deterministic endpoint (temperature 0, or a server that decodes greedily
whatever it is sent) returns the same text twice, the floor reads "identical", and any group swap
looks like a finding. A control changes the prompt about as much as a swap does, but inside the
group, so it has a floor whether or not the model samples:

1. **a name of the same group**: each first name becomes another name of the same gender and race
   cell of the name table, matched in frequency as in expansion ("Jamal" -> "Darnell"), one per
   person in every mention, full or alone ("Jamal Carter ... Jamal" -> "Darnell Carter ... Darnell");
2. **another term of the same group**: a word of the lexicon becomes the rewording its lexicon lists
   under ``controls`` ("woman" -> "lady", "Black" -> "African American"): words that say the
   same, never a subgroup or a word that changes who the prompt is about;
3. **a neutral edit** where no mention has such a counterpart ("he" has no same-group synonym): a
   short framing that names no group is added to the prompt (:data:`NEUTRAL_EDITS`).

Every mention that has a same-group counterpart is changed, so the control is as far from its
variant as a swap is. A control is checked to mention exactly the groups its variant mentions; one
that reads otherwise falls back to the neutral edit. The cost is one more call per variant and
sample (``counterfactual.noise_floor: samples`` turns controls off).
"""

from __future__ import annotations

import hashlib
import re

from equilens.tasks.inputs.expansion import render, vowel_sound
from equilens.tasks.inputs.lexicon import Lexicon, canonical
from equilens.tasks.inputs.mentions import Source, mentioned_groups, sources
from equilens.tasks.inputs.names import NameTable

VARIANT, CONTROL = "variant", "control"
"""Values of a variant's or response's ``role``: a counterfactual variant of one group, or the
same-group control of a variant, whose answers give the similarity noise floor."""

NEUTRAL_EDITS = ("Question: {text}", "{text} Please answer.", "Here is my request: {text}")
"""Framings that change a prompt without naming any group, one picked per prompt by its id."""

SYNONYM = "same-group term"
NAME = "same-group name"
NEUTRAL = "neutral edit"


def neutral_edit(text: str, key: str) -> str:
    """``text`` in one of the :data:`NEUTRAL_EDITS` framings, chosen by ``key`` (stable per prompt)."""
    pick = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % len(NEUTRAL_EDITS)
    return NEUTRAL_EDITS[pick].format(text=text.strip())


def _replacement(s: Source, lexicon: Lexicon, names: NameTable | None, taken: set[str],
                 all_lowercase: bool, firsts: dict[str, str]) -> str:
    """The same-group counterpart of the mention ``s`` ("" for none). ``firsts`` holds the new first
    name of each first name already replaced in the text, so a person keeps one new name in every
    mention, full or alone ("Emily Walsh ... Emily" -> "Patricia Walsh ... Patricia")."""
    if s.is_name:
        if names is None or not s.name:
            return ""
        if s.name not in firsts:
            firsts[s.name] = names.replacement(s.name, lexicon.attribute, s.group, taken, race=s.race or None,
                                               origins=names.origins_to_share(s.name, s.surname)) or ""
        new = firsts[s.name]
        if not new:
            return ""
        surface_first = s.surface[:len(s.name)]
        first = new.upper() if surface_first.isupper() and len(s.name) > 1 else new
        return first + s.surface[len(s.name):]
    alt = dict(lexicon.controls).get(canonical(s.surface), "")
    return render(s.surface, alt, all_lowercase) if alt else ""


def control_text(text: str, key: str, lexicon: Lexicon, names: NameTable | None = None) -> tuple[str, str]:
    """(control text, kind) for the variant ``text``: every mention that has a same-group
    counterpart takes it; with none, or if the result would mention other groups, the neutral
    edit. ``key`` picks the neutral framing (use the prompt id, so every group of a prompt gets
    the same one)."""
    found = [s for s in sources(text, lexicon, names) if s.counted]
    groups = mentioned_groups(found, lexicon)
    taken = {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
    pieces: list[str] = []
    pos, kinds, chosen, firsts = 0, set(), {}, {}
    for s in found:
        if s.start < pos:
            continue
        key_word = s.surface.lower()
        if key_word not in chosen:
            chosen[key_word] = _replacement(s, lexicon, names, taken, text.islower(), firsts)
        new = chosen[key_word]
        if not new or new == s.surface:
            continue
        gap = text[pos:s.start]
        art = re.search(r"\b(an?) $", gap, re.IGNORECASE)
        if art:
            want = "an" if vowel_sound(new) else "a"
            gap = gap[:art.start(1)] + (want.capitalize() if art.group(1)[0].isupper() else want) + " "
        pieces += [gap, new]
        pos = s.end
        kinds.add(NAME if s.is_name else SYNONYM)
    if kinds:
        out = "".join(pieces) + text[pos:]
        if mentioned_groups([s for s in sources(out, lexicon, names) if s.counted], lexicon) == groups:
            return out, NAME if NAME in kinds else SYNONYM
    return neutral_edit(text, key), NEUTRAL


def variant_rows(frame):  # noqa: ANN001, ANN201 - pd.DataFrame -> pd.DataFrame
    """The rows of counterfactual variants, controls left out (a frame without ``role`` is all variants)."""
    if "role" not in frame.columns:
        return frame
    return frame[frame["role"].fillna(VARIANT) == VARIANT]

