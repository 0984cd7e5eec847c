"""First names by gender and race (data/lexicons/first_names.csv): detection in text and replacement.

The table is built from public statistics by ``data/lexicons/build_first_names.py`` (US Census
2020 first names: counts, sex and race/ethnicity shares, see ``data/lexicons/SOURCES.md``). A
name's race is a statistical association, not anyone's identity.

Detection looks only at capitalised words, with these guards:

* a word that is also common English ("Bill", "Grace", "Frank"; ``ambiguous`` = 1) counts inside
  a sentence, and at the start of one only when a possessive, a comma or a verb-like word
  (a common verb or any word ending in -ed, after an adverb in -ly or not) follows ("Bill said",
  "Bill's", "Tom began", "Tom expertly repaired", "Martin used", "Mike, the new CEO", not "Bill
  the client"), or a known surname follows ("Peter Henderson");
* months, places and nationalities that are also names ("Sharon", "Madison", "Georgia";
  ``ambiguous`` = 2) count only where the text uses them as a person: joined by "and", "or" or a
  comma to a first name that is not such a word ("Sharon and Edward", "Edward, Madison"), right
  after "named" or "called", before a verb only a person does ("Savannah said"), before a
  possessive and a relation ("Georgia's husband"), or before a surname associated with a group
  other than white ("talking to Jesus Vazquez", not "in Virginia Beach"); otherwise never after a
  preposition of place ("in Sharon", "from Georgia"). Used so once, such a name is a name at every
  mention in the text. Elsewhere they stay places;
* a capitalised word right after a first name or a title (Mr, Mrs, Dr, ...) is a surname, not a
  first name ("Latoya Joseph", "Mr. James"); a capitalised word the table lacks, right before a
  hyphenated surname of Arabic form, is a middle_eastern first name ("Yousouf al-Masri") of the
  gender of the listed names closest in spelling (:meth:`NameTable.gender_by_spelling`: Yousuf,
  Yusuf), else of unknown gender, which race variants cannot keep and gender variants leave as it is;
  :func:`surname_position` applies the same guard to attribute words ("Mrs. White", "Peter King").

Replacement is deterministic and consistent within a prompt: a name a given share of the way
down its (gender, race) pool maps to the name as far down the target pool, moving on while the
candidate already occurs in the prompt or was given to another name. Pools hold the ``typical``
names, clear examples of their gender and race (the optional column defaults to 1); a Middle Eastern person
made neutral gets a name of no race (readers take Sina and Shahin, split by the census, as male).
A person made neutral gets a name of ``unisex_names.txt`` beside the table (names readers take for
either sex, of the person's race where it has one, else of none) unless their name reads Asian; a
table without that file uses all its typical split names.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

from equilens.tasks.errors import InputDataError
from equilens.tasks.inputs import surnames as sn  # surnames: their own table and rules
from equilens.tasks.inputs.names import context
from equilens.tasks.inputs.names.entries import UNISEX_FILE, NameInfo, NameMention, read_entries, read_unisex
from equilens.tasks.inputs.surnames import EAST_ASIAN, MIDDLE_EASTERN, RACES, SurnameInfo, SurnameTable
from equilens.tasks.inputs.word_lists import PERSON_NOUNS, STOPWORDS

NAMES_FILE = "first_names.csv"
GENDERS = ("male", "female")
_CAP_WORD = re.compile(r"\b[A-Z][a-z]*(?:[A-Z][a-z]+)?\b")
_TITLE = re.compile(r"(?:^|[^\w])(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Professor|Officer|Detective|Sgt|Capt)\.?\s$")
_TITLE_WORD = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Professor|Officer|Detective|Sgt|Capt)\b")
# A surname after a first name: one word ("Wu", "McDonald"), hyphenated ("Smith-Jones"), or with an
# Arabic prefix kept whole ("El-Solh", "al-Masri", "Abu Zeid", "bin Laden").
_SURNAME_AFTER = re.compile(r" ((?:(?:[Aa]l|[Ee]l|Abu|Abou|[Bb]in|Ibn|Abd)[- ])?[A-Z][a-z]+(?:[A-Z][a-z]+)?"
                            r"(?:-[A-Z][a-z]+)?)\b")
_ARABIC_SURNAME_AFTER = re.compile(r" (?:[Aa]l|[Ee]l|Abu|Abou)-[A-Z][a-z]+\b")
_PREV_CAP = re.compile(r"(?:^|[^\w'’])([A-Z][a-z]+(?:[A-Z][a-z]+)?) $")
_INDEFINITE_BEFORE = re.compile(r"\b(?:a|an|A|An)\s$")
_LOWER_WORD_AFTER = re.compile(r" ([a-z]+)\b")
_MAY_START_SURNAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZae")  # a capital, or "al-", "el-"
class NameTable:
    """First names with gender and race; see the module docstring for detection and replacement."""

    attribute = "name"
    groups = ("male", "female", "neutral", *RACES)
    target_only = frozenset({"neutral"})

    def __init__(self, infos: dict[str, NameInfo], source: str = "<custom>",
                 surnames: SurnameTable | None = None, unisex: frozenset[str] | None = None) -> None:
        self.info = infos
        self.source = source
        self.surnames = surnames.without_first_names({n: i.freq for n, i in infos.items()}) if surnames else None
        self._last: tuple[str, bool, tuple[NameMention, ...]] = ("", False, ())
        pools: dict[tuple[str, str], list[str]] = {}
        by_gender: dict[str, int] = {}
        self.order: dict[str, int] = {}  # rank by frequency among all names of the same gender
        for name, i in sorted(infos.items(), key=lambda kv: (-kv[1].freq, kv[0])):
            self.order[name] = by_gender[i.gender] = by_gender.get(i.gender, -1) + 1
            if i.ambiguous or not i.gender or not i.typical:
                continue
            pools.setdefault((i.gender, i.race), []).append(name)
            if i.race:
                pools.setdefault((i.gender, "*"), []).append(name)
            for origin in i.origins:  # "asian:south_asian": the race's typical names of one origin
                pools.setdefault((i.gender, f"{i.race}:{origin}"), []).append(name)
        self.pools = pools
        self.neutral: dict[str, list[str]] | None = None  # race -> the listed names a person made neutral may get
        if unisex is not None:
            self.neutral = {}
            for name in sorted(unisex & infos.keys(), key=lambda n: (-infos[n].freq, n)):
                i = infos[name]
                if not i.ambiguous and i.male is not None and i.leaning() == "unisex":  # a listed name that leans
                    # to a sex (Kendall, 32% men) would read as that sex
                    self.neutral.setdefault(i.race, []).append(name)
        self.rank = {(n, key): k for key, names in pools.items() for k, n in enumerate(names)}
        self.gender_count = {g: n + 1 for g, n in by_gender.items()}
        self._by_race_gender: dict[str, dict[str, str]] = {}

    def has_race(self, race: str) -> bool:
        """Does the table have replacement names for ``race``?"""
        return any((g, race) in self.pools for g in ("male", "female", "unisex"))

    def __len__(self) -> int:
        return len(self.info)

    def names(self, gender: str | None = None, race: str | None = None) -> list[str]:
        """Lowercase names with this gender and/or race (None: any)."""
        return [n for n, i in self.info.items()
                if (gender is None or i.gender == gender) and (race is None or i.race == race)]

    # --- detection ------------------------------------------------------------------------------
    def find(self, text: str, *, loose: bool = False) -> list[NameMention]:
        """First names in ``text``, left to right (guards in the module docstring).

        ``loose`` (used to validate variants, where a missed name lets a pronoun change alone):
        a common word counts anywhere but opening a sentence before a pronoun ("Tell him"), and a
        place or month name counts before a verb only a person does ("Austin felt"), so "Martin
        used her ..." or "Hope faded as she ..." with the pronoun swapped and the name kept is
        caught; never after a place preposition ("a nurse in Dallas asked whether she ...").

        The last answer is kept: expansion asks twice about each prompt (its mentions, then its
        people of unknown gender).
        """
        last = self._last
        if last[0] == text and last[1] == loose:
            return list(last[2])
        out = self._find(text, loose)
        self._last = (text, loose, tuple(out))
        return out

    def _find(self, text: str, loose: bool) -> list[NameMention]:
        out: list[NameMention] = []
        prev_end = -2
        people: dict[str, bool] = {}  # place-or-month names used as a person somewhere in the text
        titles = _TITLE_WORD.search(text) is not None  # most texts have none: skip the per-word test
        for m in _CAP_WORD.finditer(text):
            word = m.group()
            if m.start() < prev_end:  # the surname of the previous mention
                continue
            after_title = titles and bool(_TITLE.search(text, max(0, m.start() - 12), m.start()))
            titled = self._titled_surname(m) if after_title else None
            if titled is not None:
                out.append(titled)
                prev_end = m.end()
                continue
            info = self.info.get(word.lower())
            if info is None and not after_title and text[m.end():m.end() + 1] == " " and text[
                    m.end() + 1:m.end() + 2] in _MAY_START_SURNAME and self._arabic_surname_after(text, m.end(), word):
                # "Yousouf al-Masri", "Yousouf Badawi": a first name the table lacks, before a
                # middle_eastern surname; its gender is unknown (gender variants are refused)
                info = NameInfo(word, self.gender_by_spelling(word, MIDDLE_EASTERN), MIDDLE_EASTERN, 0.0, 0, False)
            if info is not None and info.ambiguous == 2 and word not in people:
                people[word] = self._used_as_person_once(text, word)
            never = info is None or (info.ambiguous == 2 and not people[word])
            if never or (word.isupper() and len(word) > 1):
                # a name never counted alone ("Chin", "Jordan") still makes the next word a surname
                prev_end = -2 if info is None else m.end()
                continue
            start = m.start()
            if _INDEFINITE_BEFORE.search(text, max(0, start - 4), start) or self._before_person_noun(text, m.end()) \
                    or context.EMPLOYER_BEFORE.search(text, max(0, start - 24), start) \
                    or context.COLOUR_BEFORE.search(text, max(0, start - 7), start):
                prev_end = -2  # "a Roma cashier", "the Roma woman", "driving for Uber", "the Black Forest": not a name
                continue
            surname = (prev_end == start - 1 and text[start - 1] == " ") or after_title
            # a known surname after it ("Peter Henderson", "Grace Kelly") makes even a common word
            # that opens a sentence read as a first name, and joins the mention
            following = None if surname else self._surname_after(text, m.end(), info)
            if surname or (info.ambiguous == 1 and following is None and not context.reads_as_name(text, start, m.end(), loose)):
                prev_end = m.end() if surname else -2
                continue
            mention = NameMention(start, m.end(), word, word.lower(), info)
            if following is not None:
                mention = self._with_surname(text, mention, *following)
            out.append(mention)
            prev_end = mention.end
        return out

    def gender_by_spelling(self, word: str, race: str) -> str:
        """The gender of the listed names of ``race`` closest in spelling to the unlisted ``word``
        ("Yousouf": Yousuf, Yusuf, male), "" when none is close (0.8) or they disagree: spellings of
        one transliterated name vary by a letter or two, its gender does not."""
        import difflib

        pool = self._by_race_gender.get(race)
        if pool is None:  # built once per race (a default of setdefault would be built on every call)
            pool = self._by_race_gender[race] = {n: i.gender for n, i in self.info.items() if i.race == race
                                                 and i.gender in ("male", "female")}
        close = difflib.get_close_matches(word.lower(), list(pool), n=3, cutoff=0.8)
        genders = {pool[n] for n in close}
        return genders.pop() if len(genders) == 1 else ""

    def _surname_after(self, text: str, end: int,
                       first: NameInfo | None = None) -> tuple[re.Match[str], SurnameInfo] | None:
        """The word right after ``end`` and its surname entry, when the surname table knows it.
        After a ``first`` name, a capitalised word the tables know neither as a surname nor as a
        first name, nor as a function word, is its surname all the same, of no group, or
        middle_eastern after a middle_eastern first name ("Maryam Wardak"): most such surnames
        are too rare in the US and on Wikidata to be listed, and a race variant replaces one with
        the first name rather than keep it behind a new one ("Anitra Wardak")."""
        nxt = _SURNAME_AFTER.match(text, end) if self.surnames is not None else None
        sur = self.surnames.lookup(nxt.group(1)) if nxt else None  # type: ignore[union-attr]
        if sur is None and nxt is not None and first is not None and len(nxt.group(1)) > 2 \
                and (word := nxt.group(1).lower()) not in self.info and word not in STOPWORDS:
            race = MIDDLE_EASTERN if first.race == MIDDLE_EASTERN else ""
            sur = SurnameInfo.unlisted(nxt.group(1), race)
        return (nxt, sur) if sur is not None else None

    def _arabic_surname_after(self, text: str, end: int, word: str) -> bool:
        """Is the word after ``end`` a middle_eastern surname, by its prefix ("al-Masri") or the
        surname table ("Badawi"), so the unknown capitalised ``word`` before it is a first name?"""
        nxt = _SURNAME_AFTER.match(text, end)
        if nxt is None or word.lower() in STOPWORDS:  # "When Haddad arrived"
            return False
        if _ARABIC_SURNAME_AFTER.match(text, end):
            return True
        sur = self.surnames.lookup(nxt.group(1)) if self.surnames is not None else None
        return sur is not None and sur.race == MIDDLE_EASTERN

    @staticmethod
    def _before_person_noun(text: str, end: int) -> bool:
        """Is the word at ``end`` followed by a lowercase noun for a person ("the Roma woman")? A
        first name is never so used; a capitalised next word is a surname ("Minnie Driver")."""
        nxt = _LOWER_WORD_AFTER.match(text, end)
        return nxt is not None and nxt.group(1) in PERSON_NOUNS

    def _titled_surname(self, m: re.Match[str]) -> NameMention | None:
        """The race-associated surname ``m``, found right after a title ("Mr. Chang"), as a
        race-only mention; None for any other word."""
        if self.surnames is None:
            return None
        sur = self.surnames.info.get(m.group().lower())
        if sur is None or not sur.race or (m.group().isupper() and len(m.group()) > 1):
            return None
        return NameMention(m.start(), m.end(), m.group(), "", NameInfo(sur.display, "", sur.race, sur.freq, 0),
                           m.group().lower())

    def _with_surname(self, text: str, mention: NameMention, nxt: re.Match[str], sur: SurnameInfo) -> NameMention:
        """``mention`` extended over the surname ``nxt`` right after it (entry ``sur``). The full
        name's race combines both names' shares (:func:`equilens.tasks.inputs.surnames.full_name_shares`:
        "Dan Li" is Asian); without the first name's shares it is the first name's race, or the
        surname's when the first name has none. A middle_eastern surname makes the full name
        middle_eastern ("Thalia El-Solh"), and so does a middle_eastern first name before a surname
        of no other race ("Amina Mahmoudi"), a Black one ("Fatima Shakir") or one of South Asian
        Muslims ("Khalid Qureshi", which readers take for Arab): no census group is Arab."""
        first = mention.info
        if MIDDLE_EASTERN in (sur.race, first.race) and sur.race in (MIDDLE_EASTERN, ""):
            race = MIDDLE_EASTERN
        elif first.race == MIDDLE_EASTERN:  # "Fatima Shakir": Arabic surnames many Black Muslims bear;
            # "Khalid Qureshi": one many South Asian Muslims bear, which readers take for Arab
            race = MIDDLE_EASTERN if sur.race == "black" or sur.origins == sn.MUSLIM_SOUTH_ASIAN else sur.race
        elif first.shares is not None and self.surnames is not None:
            race = sn.race_of_shares(sn.full_name_shares(first.shares, sur.shares, self.surnames.prior))
        else:
            race = first.race or sur.race
        info = first if race == first.race else dataclasses.replace(first, race=race)
        return NameMention(mention.start, nxt.end(), text[mention.start:nxt.end()], mention.name, info,
                           sn.surname_key(nxt.group(1)))

    def _used_as_person_once(self, text: str, word: str) -> bool:
        """Does ``text`` use the place-or-month name ``word`` (``ambiguous`` = 2) as a person at
        least once? It is then that person at every mention ("named Jesus Jimenez ... Jesus
        Jimenez passed")."""
        start = text.find(word)
        while start != -1:
            end = start + len(word)
            if ((start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum())
                    and self._used_as_person(text, start, end)):
                return True
            start = text.find(word, end)
        return False

    def _used_as_person(self, text: str, start: int, end: int) -> bool:
        """Whether a place-or-month name at ``text[start:end]`` is used as a person (module docstring)."""
        following = self._surname_after(text, end)  # "talking to Jesus Vazquez", not "in Virginia Beach"
        if following is not None and following[1].race not in ("", "white"):
            return True
        if context.AFTER_PLACE_PREPOSITION.search(text, max(0, start - 12), start):
            return False
        if context.NAMED_BEFORE.search(text, max(0, start - 12), start) or context.person_verb(text, end) \
                or context.subject_name(text, start, end):
            return True
        nxt = context.NEXT.match(text, end)
        if nxt and nxt.group(1) and nxt.group(1) != "," and (rel := context.NEXT.match(text, nxt.end())):
            if rel.group(2) in context.RELATIONS:
                return True
        joined = [context.JOINED_AFTER.match(text, end), context.JOINED_BEFORE.search(text, max(0, start - 80), start)]
        return any(j is not None and (other := self.info.get(j.group(1).lower())) is not None
                   and other.ambiguous < 2 and other.gender for j in joined)

    def scan(self, text: str) -> list[str]:
        """Lowercase names found in ``text`` (for the FTU check)."""
        return [m.name or m.surname for m in self.find(text)]

    # --- replacement ----------------------------------------------------------------------------
    def replacement(self, name: str, attribute: str, target: str, taken: set[str],
                    gender_hint: str | None = None, race: str | None = None,
                    origins: frozenset[str] = frozenset(), surnamed: bool = False) -> str | None:
        """The name that replaces ``name`` in the variant for ``target`` of ``attribute``.

        Gender swaps keep the race association, race swaps keep the gender (``gender_hint`` when
        the table does not know it, e.g. from the prompt's pronouns). ``taken`` holds lowercase
        names that may not be used (already in the prompt or given to another name); the result
        is added to it. None when no replacement exists (e.g. unknown gender and no hint). ``race``:
        the race the whole name reads as. A gender swap keeps the first name's race, except that a
        middle_eastern full name keeps that ("Tala al-Masri" -> "Waleed al-Masri", not "Konnor
        al-Masri"), and so does a full name read as Asian whose first name reads Black or Hispanic
        ("Queenie Zhang", read Asian though Queenie alone reads Black, -> "Wei Zhang", never
        "Khalif Zhang"; a white-associated one when the surname's origin is unknown: "Tobias Vang");
        an Asian surname after a white or unassociated first name keeps that ("Winnie Wang" ->
        "Tobias Wang", as many Asian Americans are named). ``origins``: those the new name must
        share (an Asian surname's, or the old first name's): "Mei Chen" -> "Wei Chen", never "Amit
        Chen"; with origins but no such name, the race's whole pool. ``surnamed``: the name has a
        surname, which keeps an Asian person's race where a listed unisex name is given.
        """
        info = self.info.get(name) or dataclasses.replace(  # "Yousouf" before "Badawi": in no table
            _UNLISTED, gender=self.gender_by_spelling(name, MIDDLE_EASTERN))
        if attribute == "gender":
            gender = {"neutral": "unisex"}.get(target, target)
            if race == "asian" and info.race in ("black", "hispanic"):  # "Queenie Zhang" reads Asian:
                race = "asian" if origins else "white"  # a name of Zhang's origin; "Tobias Vang"
            elif race != MIDDLE_EASTERN:
                race = info.race
            if gender == "unisex" and race == MIDDLE_EASTERN and self.neutral is None:
                race = ""  # the census splits few Arab names evenly: readers take Sina and Shahin as men
        else:
            gender, race = info.leaning() or gender_hint or "", target  # "Guadalupe" stays a woman's name
        if gender not in ("male", "female", "unisex"):
            return None
        if attribute == "gender" and gender == "unisex" and (race != "asian" or surnamed) and self.neutral is not None:
            # a name readers take for either sex: of the person's race ("Salam al-Fasi"), else (Hispanic, an
            # Asian surname's bearer, "Jessie Huynh", or the race's listed names taken) of no race
            pools = [self.neutral.get(race, []), self.neutral.get("", [])]
        else:
            pool = self.pools.get((gender, race)) or self.pools.get((gender, "*" if race else "")) \
                or self.pools.get((gender, "")) or []
            pools = [self.of_origins(gender, race, origins) or pool if origins and race else pool]
        # Frequency-matched: a name at a given share of the way down its own pool (or, outside the
        # pools, down all names of its gender) gets the name as far down the target pool, so a
        # common name gets a common replacement.
        own_key = (info.gender, info.race)
        rank, of = ((self.rank[(name, own_key)], len(self.pools[own_key])) if (name, own_key) in self.rank
                    else (self.order.get(name, 0), self.gender_count.get(info.gender, 1)))
        for pool in pools:  # never deeper than a surname is drawn: rare names read as no one's ("Zev Vang")
            if cand := sn.matched_pick(pool, rank, of, taken, sn.DRAW_DEPTH):
                return self.info[cand].display
        return None

    def origins_to_share(self, name: str, surname: str, race: str | None = None,
                         region: frozenset[str] | None = None) -> frozenset[str]:
        """The Asian origins a new first name for ``name`` (before ``surname``) must share, so the
        full name reads as one person. Where the surname stays (``race`` None: gender variants and
        same-group controls), its origins ("Mei Chen" -> "Wei Chen") or else the old first name's.
        In a race variant for ``race``: the surname's when it may stay; else ``region``, the origins
        of the context's own people of ``race`` (a person who takes another's group takes that
        person's region of it: "Mark Schwartz and Joanna Li" -> a Chinese name, not "Syed Khan");
        else, for ``asian``, the East Asian origins (:data:`EAST_ASIAN`), the group most readers
        take "Asian" to name, so a South Asian name never stands for it unasked."""
        sur = self.surnames
        entry = sur.lookup(surname) if sur is not None and surname else None
        if race is None:
            old = self.info.get(name)
            return (entry.origins if entry is not None else frozenset()) or (old.origins if old else frozenset())
        if entry is not None and entry.origins and sur.fits(surname, race):  # type: ignore[union-attr]
            return entry.origins
        if region:
            return region
        return EAST_ASIAN if race == "asian" else frozenset()

    def of_origins(self, gender: str, race: str, origins: frozenset[str]) -> list[str]:
        """Typical names of ``gender`` and ``race`` with one of ``origins``, most frequent first."""
        keys = [(gender, f"{race}:{o}") for o in sorted(origins) if (gender, f"{race}:{o}") in self.pools]
        if len(keys) == 1:
            return self.pools[keys[0]]
        found = {n for k in keys for n in self.pools[k]}
        return [n for n in self.pools.get((gender, race), []) if n in found]


_UNLISTED = NameInfo("", "", "", 0.0, 0, False)


def surname_position(text: str, start: int, names: NameTable | None) -> bool:
    """Is the capitalised word at ``start`` a surname (right after a title or a first name)?"""
    if not text[start:start + 1].isupper():
        return False
    if _TITLE.search(text, max(0, start - 12), start):
        return True
    prev = _PREV_CAP.search(text, max(0, start - 24), start)
    if prev is None or names is None:
        return False
    info = names.info.get(prev.group(1).lower())
    if info is None or info.ambiguous == 2:
        return False
    # A common word that opens a sentence ("Most Muslims", "Her Russian blood") is not a first name.
    return info.ambiguous == 0 or context.reads_as_name(text, prev.start(1), prev.end(1))


# --- loading ------------------------------------------------------------------------------------
def load_names(data_dir: Path | None = None) -> NameTable:
    """The first-name table in ``data_dir`` (default: the repository's data/lexicons)."""
    from equilens.tasks.inputs.word_lists import LEXICON_DIR

    path = Path(data_dir or LEXICON_DIR) / NAMES_FILE
    try:
        mtime = path.stat().st_mtime_ns
    except OSError as exc:
        raise InputDataError(f"Name file {path} cannot be read: {exc.strerror or exc}.") from None
    surnames = sn.load_surnames(path.parent)  # cached by its own file's mtime
    return _load(str(path.resolve()), mtime, surnames)


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime: int, surnames: SurnameTable | None) -> NameTable:
    return NameTable(read_entries(path), path, surnames, read_unisex(Path(path).parent / UNISEX_FILE))
