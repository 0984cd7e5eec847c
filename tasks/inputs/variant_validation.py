"""Variant validation: the readable problems of a counterfactual variant against its prompt.

The texts may differ only inside attribute terms (plus the article and agreement words linked to
them), every mention must land in the group the variant asks for, mentions of one group must not
split (a pronoun changed but the name of the same person did not) and two groups must not merge.
A prompt whose set holds an invalid variant leaves the run, counted per attribute with its first
reason (:func:`drop_invalid_sets`, :func:`lost_contexts`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from equilens.tasks.errors import InputDataError
from equilens.tasks.inputs.agreement import ADVERBS, AFTER_SUBJECT, ARTICLE_BEFORE, base_form, plural_contraction
from equilens.tasks.inputs.compared import people_compared
from equilens.tasks.inputs.ftu import find_mentions
from equilens.tasks.inputs.lexicon import Lexicon, canonical
from equilens.tasks.inputs.mentions import KEPT, Source, mentioned_groups, related_kept, sources
from equilens.tasks.inputs.names import NameTable
from equilens.tasks.inputs.partners import partner_group, partners_of

_MARK = "\x00"
_TOKENS = re.compile(r"\w+(?:['’]\w+)?|\s+|[^\w\s]")
_AGREEING_ENDING = re.compile(r"\b(Latin|Chican)[oax](?=s?\b)", re.IGNORECASE)
PERSON_AFTER = re.compile(r"[ \t-]+(?:people|persons?)\b", re.IGNORECASE)


def _skeleton(text: str, lexicon: Lexicon, names: NameTable | None) -> str:
    """``text`` with every attribute region (term of any group, or a first name, with the article
    before it and "people"/"person" after it) replaced by one marker character, and the words
    after a subject pronoun put in their plural form, so "he loves" and "they love" compare equal.
    For gender, a Spanish ethnonym's gendered ending is set aside ("a Latino man", "a Latina woman"):
    it agrees with the person swapped, as expansion writes it."""
    if lexicon.attribute == "gender":
        text = _AGREEING_ENDING.sub(r"\1_", text)  # the same length: every offset below still holds
    spans: list[tuple[int, int, str]] = []
    for m in lexicon.any_pattern.finditer(text):
        start, end = m.start(), m.end()
        art = ARTICLE_BEFORE.search(text, max(0, start - 12), start)
        if art:
            start = art.start(1)
        marker = _MARK
        info = lexicon.index[canonical(m.group())]
        if lexicon.roles and any(lexicon.roles[r] == "subject" for r in info.rows):
            after = AFTER_SUBJECT.match(text, end)
            if after and after.group(4):
                marker, end = _MARK + "'" + plural_contraction(after)[1:], after.end()
            elif after:
                base = base_form(after.group(3))
                if base is not None:
                    marker = _MARK + after.group(1).lower() + after.group(2) + base
                    end = after.end()
        else:  # "Chinese people" (alias + noun) lines up with "White people" (one term)
            noun = PERSON_AFTER.match(text, end)
            end = noun.end() if noun else end
        spans.append((start, end, marker))
    found = names.find(text) if names is not None else []
    if found:
        # a name is an attribute region where mentions.sources reads it as a mention: not where it
        # overlaps a counted term ("The Arab manager": "The" is a first name and "Arab" a surname),
        # and for race not at all once a race word counts (a name's race is the weaker signal), so
        # "The Arab manager" and its variant "The Asian American manager" line up word for word
        terms = [(t.start, t.end) for t in find_mentions(text, lexicon, include_targets=True, names=names)]
        if lexicon.attribute == "race" and terms:
            found = []
        for m in found:
            if any(s < m.end and m.start < e for s, e in terms):
                continue
            art = ARTICLE_BEFORE.search(text, max(0, m.start - 12), m.start)
            spans.append((art.start(1) if art else m.start, m.end, _MARK))
    if not spans:
        return text
    spans.sort()
    pieces, pos = [], 0
    for start, end, marker in spans:
        if start < pos:  # overlapping regions merge
            pos = max(pos, end)
            continue
        pieces += [text[pos:start], marker]
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def _compare(a: str, b: str) -> list[str]:
    if a == b:
        return []
    ta, tb = _TOKENS.findall(a), _TOKENS.findall(b)
    problems = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        old = "".join(ta[i1:i2]).replace(_MARK, "<attribute term>")
        new = "".join(tb[j1:j2]).replace(_MARK, "<attribute term>")
        if op == "replace":
            problems.append(f"changed {old!r} to {new!r} outside attribute terms")
        elif op == "delete":
            problems.append(f"removed {old!r} outside attribute terms")
        else:
            problems.append(f"added {new!r} outside attribute terms")
    return problems


class CheckedPrompt:
    """What validation needs from the original prompt, computed once per prompt."""

    def __init__(self, text: str, lexicon: Lexicon, names: NameTable | None,
                 partners: Mapping[int, str] | None = None) -> None:
        self.text = text
        self.skeleton = _skeleton(text, lexicon, names)
        # an origin word kept beside its group's general term ("an African woman") and a bystander
        # ("their son" where two teachers are compared) stay, checked as such
        self.mentions = _kept(text, sources(text, lexicon, names, include_targets=True, loose_names=True), lexicon)
        self.all_terms = _kept(text, sources(text, lexicon, names, include_targets=True, guards=False,
                                             loose_names=True), lexicon)
        # the people compared's partners, who follow them ("his wife" -> "her husband"), read from the
        # mentions expansion reads: ``partners`` where expansion has read them already
        self.partners = partners if partners is not None else \
            partners_of(text, _kept(text, sources(text, lexicon, names), lexicon), lexicon)


def _kept(text: str, found: list[Source], lexicon: Lexicon) -> list[Source]:
    return people_compared(text, related_kept(found, lexicon), lexicon).found


def _what(s: Source) -> str:
    return f"the name {s.surface!r}" if s.is_name else repr(s.surface)


_THEY_VERB = re.compile(rf"\b(they)((?:\s+(?:{'|'.join(ADVERBS.split())}))*\s+)([a-z]+n['’]t|[a-z]+)\b",
                        re.IGNORECASE)


_SHE_NOUNS = "wife|girlfriend|fiancée|bride|mother|mom|mum|sister|daughter|aunt|niece|grandmother|woman|lady|girl"
_HE_NOUNS = "husband|boyfriend|fiancé|groom|father|dad|brother|son|uncle|nephew|grandfather|man|gentleman|boy|guy"
_SAID_TO_BE = re.compile(  # "my wife is a white man": one person given two genders
    rf"\b(?:my|his|her|their|your|our|the)\s+(?:(?P<she>{_SHE_NOUNS})|(?P<he>{_HE_NOUNS}))\s+(?:is|was)\s+(?:a|an)\s+"
    rf"(?:[\w-]+\s+){{0,2}}?(?:(?P<as_she>{_SHE_NOUNS})|(?P<as_he>{_HE_NOUNS}))\b", re.IGNORECASE)


def _disagreements(variant: str) -> list[str]:
    out = []
    for m in _THEY_VERB.finditer(variant):
        base = base_form(m.group(3))
        if base is not None and base != m.group(3).lower().replace("’", "'"):
            out.append(f"{m.group(0)!r} does not agree: 'they' takes {base!r}")
    for m in _SAID_TO_BE.finditer(variant):
        if (m.group("she") and m.group("as_he")) or (m.group("he") and m.group("as_she")):
            out.append(f"{m.group(0)!r} gives one person two genders")
    return out


def _mixed_names(before: list[Source], after: list[Source], names: NameTable | None) -> list[str]:
    """A name the variant changed whose surname the new group seldom bears ("Chen Wu" -> "Arden Wu"
    for white): the full name sends two signals. Full names are read by both names when the first
    name has census shares (a white variant's "Brian Wu" reads Asian and fails the group check), so
    this mainly catches first names without shares (supplement names), read by themselves."""
    sur = names.surnames if names is not None else None
    if sur is None:
        return []
    out = []
    for b, a in zip(before, after, strict=True):
        if a.surname and a.surface != b.surface and a.group != b.group and not sur.fits(a.surname, a.group):
            share = sur.info[a.surname].share(a.group)
            out.append(f"the name {a.surface!r} is {a.group} by its first name, but only {share:.0%} of "
                       f"the people with the surname {a.surface.split()[-1]!r} are: the name sends two signals")
    return out


def variant_problems(original: CheckedPrompt, variant: str, lexicon: Lexicon, names: NameTable | None,
                     mapping: dict[str, str] | None, label: str | None) -> list[str]:
    problems = _compare(original.skeleton, _skeleton(variant, lexicon, names))
    if lexicon.attribute == "gender":
        problems += _disagreements(variant)
    # Line up every term match of both texts (guards off), then keep a pair when a guard lets
    # either side count: a swapped-in word the guard cannot place ("came out as straight",
    # "her White squinty eyes") is still the counterpart of a mention of the prompt.
    before, after = original.mentions, sources(variant, lexicon, names, include_targets=True, loose_names=True)
    after_all = sources(variant, lexicon, names, include_targets=True, guards=False, loose_names=True)
    if len(after_all) == len(original.all_terms):
        pairs = [(b, a) for b, a in zip(original.all_terms, after_all, strict=True) if b.counted or a.counted]
        before, after = [b for b, _ in pairs], [a for _, a in pairs]
    detect = set(lexicon.detect_groups)
    if len(after) != len(before):
        problems.append(f"the variant has {len(after)} {lexicon.attribute} mentions where the prompt has "
                        f"{len(before)}: {', '.join(_what(s) for s in after) or 'none'}")
        if mapping is not None:
            for s in after:
                if s.group in detect and s.group not in mapping.values():
                    problems.append(f"variant for {label!r} still has {_what(s)} ({s.group})")
        return problems
    problems += _mixed_names(before, after, names)
    became: dict[str, dict[str, Source]] = {}
    regional = lexicon.region_word
    for b, a in zip(before, after, strict=True):
        base = b.group.removesuffix(KEPT)
        if b.start in original.partners:
            want = partner_group(base, original.partners[b.start], mapping, lexicon) if mapping is not None else a.group
            if a.group != want:
                problems.append(f"{_what(a)} ({a.group}) took the place of {_what(b)}, the partner of a person "
                                f"compared, who follows them to {want}")
            continue
        if base != b.group and canonical(b.surface) == regional.get(base) and canonical(a.surface) == regional.get(a.group) \
                and (mapping is None or mapping.get(base) == a.group):
            continue  # "an African man" beside "a Black man" -> "a European man" beside "a White man"
        if b.group.endswith(KEPT) and a.group != base:
            problems.append(f"{_what(a)} ({a.group}) took the place of {_what(b)}, who is not one of the "
                            f"people compared and keeps their word")
        if b.group not in detect:
            continue
        became.setdefault(b.group, {}).setdefault(a.group, a)
        if mapping is not None and a.group != mapping.get(b.group, b.group):
            problems.append(f"variant for {label!r} still has {_what(a)} ({a.group}) where "
                            f"{mapping.get(b.group, b.group)} was asked for")
    for group, targets in became.items():
        if len(targets) > 1:
            (g1, s1), (g2, s2) = list(targets.items())[:2]
            problems.append(f"mentions of one {group} group were split: {_what(s1)} is {g1} but "
                            f"{_what(s2)} is {g2} (a pronoun and a name of one person must change together)")
    targets_of: dict[str, str] = {}
    for group, targets in became.items():
        for t in targets:
            if t in targets_of and targets_of[t] != group:
                problems.append(f"groups collapsed: {targets_of[t]} and {group} mentions both became {t}")
            targets_of.setdefault(t, group)
    return problems


def validate_variant(
    original: str, variant: str, lexicon: Lexicon, names: NameTable | None = None, *, group: str | None = None
) -> list[str]:
    """Human-readable problems of ``variant`` (empty when valid).

    Both texts are split into words, spaces and punctuation; they may differ only where both have
    an attribute term of ``lexicon`` (any group) or a first name, including multi-word terms, the
    "a"/"an" before such a term and the agreement after a subject pronoun ("he is" / "they are",
    "he loves" / "they love"). Mentions are matched up in order: mentions of one group must stay
    together (a pronoun changed but the name did not is a problem) and two groups must not
    become one. With ``group``, every mention must also be of the group the prompt's single group
    maps to (``group``) or, for a prompt mentioning several groups, of one of them.
    """
    checked = CheckedPrompt(original, lexicon, names)
    mapping = None
    if group is not None:
        if group not in lexicon.groups:
            raise InputDataError(f"validate_variant: {group!r} is not a group of {lexicon.attribute}.")
        groups = [g for g in mentioned_groups(checked.mentions, lexicon) if not g.endswith(KEPT)]  # not bystanders
        if len(groups) == 1:
            mapping = {groups[0]: group}
    return list(dict.fromkeys(variant_problems(checked, variant, lexicon, names, mapping, group)))


# --- variant sets kept and lost ---------------------------------------------------------------
def drop_invalid_sets(variants):  # noqa: ANN001, ANN201 - pd.DataFrame -> (pd.DataFrame, int)
    """Drop every (prompt, attribute) variant set that holds an invalid variant; return the rest and
    how many sets went. A broken swap would measure the swap, not the model, so the whole set goes
    (its record stays in the ``variants`` table with its problems)."""
    invalid = variants[~variants["valid"]]
    if invalid.empty:
        return variants, 0
    bad = set(zip(invalid["prompt_id"], invalid["attribute"], strict=True))
    keep = [(p, a) not in bad for p, a in zip(variants["prompt_id"], variants["attribute"], strict=True)]
    return variants[keep].reset_index(drop=True), len(bad)


def lost_contexts(variants) -> dict[str, dict]:  # noqa: ANN001 - pd.DataFrame
    """Per attribute, the contexts that mention it but keep no valid variant set (so they leave the
    run): ``{"race": {"lost": 3, "of": 40, "reason": "the first problem of the first one"}}``, only
    for attributes that lost any. Nothing is dropped silently: the run reports these counts."""
    import json

    out: dict[str, dict] = {}
    for attribute, sub in variants.groupby("attribute", sort=True):
        bad = sub.loc[~sub["valid"]]
        if bad.empty:
            continue
        problems = json.loads(bad["problems"].iloc[0]) if isinstance(bad["problems"].iloc[0], str) else []
        out[str(attribute)] = {"lost": int(bad["prompt_id"].nunique()), "of": int(sub["prompt_id"].nunique()),
                               "reason": str(problems[0]) if problems else ""}
    return out


def lost_lines(lost: dict[str, dict]) -> list[str]:
    """One sentence per attribute for :func:`lost_contexts` ("3 of 40 contexts had no valid race
    variant set and were left out (first reason: ...)")."""
    return [f"{v['lost']} of {v['of']} contexts had no valid {attribute} variant set and were left out"
            + (f" (first reason: {v['reason']})" if v.get("reason") else "") for attribute, v in lost.items()]
