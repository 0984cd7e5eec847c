"""Surnames by race/ethnicity (data/lexicons/surnames.csv): coherent full names in race variants.

A race variant that swaps "Chen" for "Michael" but keeps "Wu" sends two signals at once, so the
model is measured on a mixed name, not on the group asked for. The table (US Census 2020 surnames
borne by 1,000 or more people, built by ``data/lexicons/build_first_names.py``) gives each
surname its share of each group. In a race variant a surname stays when the target group bears
it often enough (:data:`FITS`: "Smith" is 23% Black, so it stays in a Black variant) and the new
full name reads as the target (:meth:`SurnameTable.fits`); otherwise it is replaced by a typical
surname of the target group, frequency-matched as first names are.

A surname counts as a mention of its race on its own only after a title ("Mr. Chang"), and only
when its association passes the first-name rule; after a first name it joins the first name in
one mention ("Chen Wu"), whose race combines both names (:func:`full_name_shares`), or is the
first name's when the table has no shares for it. See :mod:`equilens.tasks.inputs.names`.

Middle Eastern and North African surnames carry the label ``middle_eastern`` (the census has no
such category, so their shares say nothing about it): such a surname stays only in a
middle_eastern variant, and a middle_eastern variant keeps only such a surname (or one the table
does not know). A surname with an Arabic prefix that the table does not list ("El-Solh",
"al-Masri", "Abu Zeid") reads as middle_eastern by its form (:meth:`SurnameTable.lookup`); it is
always kept whole, never cut at its hyphen.

The census has one Asian group, so an Asian surname also carries its origins (:data:`ORIGINS`;
data/lexicons/build_origins.py), and a replacement for a first
name of known origin shares it: "Priya" gets "Sharma", "Hiroshi" gets "Tanaka", never "Nguyen".
"""

from __future__ import annotations

import copy
import csv
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from equilens.tasks.errors import InputDataError
from equilens.tasks.inputs.word_lists import STOPWORDS

SURNAMES_FILE = "surnames.csv"
GROUPS = ("white", "black", "asian", "hispanic")  # the census groups that have shares
MIDDLE_EASTERN = "middle_eastern"  # a label without census shares (data/lexicons/build_mena.py)
RACES = (*GROUPS, MIDDLE_EASTERN)
ORIGINS = frozenset({"chinese", "japanese", "korean", "vietnamese", "south_asian", "south_asian_muslim"})
EAST_ASIAN = frozenset({"chinese", "japanese", "korean", "vietnamese"})
MUSLIM_SOUTH_ASIAN = frozenset({"south_asian_muslim"})
"""The origin of surnames many South Asian Muslims bear (Qureshi, Khan): after an Arabic first name
readers take them for Arab ("Khalid Qureshi"), as BBQ's own contexts do."""
FITS = 0.1  # a surname stays in a variant for a group that bears it at least this often
MISSPELT = 200  # a listed surname one letter from one of its group this many times as frequent reads as a typo
Shares = tuple[float, float, float, float]  # share of each of GROUPS


def race_of_shares(shares: Shares) -> str:
    """The race a name is associated with, from its shares of GROUPS; "" for none.

    Black when P(black) >= 0.35 (3.3 times its population share); asian or hispanic when >= 0.6;
    white when P(white) >= 0.65 and no other group reaches twice its population share
    (P(black) < 0.21, P(hispanic) < 0.36, P(asian) < 0.1). One rule for first names, surnames
    (data/lexicons/build_first_names.py) and full names (:func:`full_name_shares`)."""
    white, black, asian, hispanic = shares
    if black >= 0.35:
        return "black"
    if asian >= 0.6:
        return "asian"
    if hispanic >= 0.6:
        return "hispanic"
    return "white" if white >= 0.65 and black < 0.21 and hispanic < 0.36 and asian < 0.1 else ""


def full_name_shares(first: Shares, surname: Shares, prior: Shares) -> Shares:
    """Shares of GROUPS among the bearers of a first name and a surname together, as the
    Bayesian name-based estimators combine them (Imai and Khanna 2016; first names: Voicu 2018,
    BIFSG): P(r | first, surname) is proportional to P(r | first) * P(r | surname) / P(r), taking
    the two names as independent given the group. "Dan" (white) with "Li" (96% Asian) is an Asian
    name: the surname's evidence for Asian (19 times its population share) outweighs the first
    name's for white."""
    raw = [f * s / p if p > 0 else 0.0 for f, s, p in zip(first, surname, prior, strict=True)]
    total = sum(raw)
    return tuple(r / total for r in raw) if total > 0 else first  # type: ignore[return-value]


DRAW_DEPTH = 150
"""How far down its group's pool (most frequent first) a replacement surname or first name is drawn:
deeper, the census's names of a group are rare ones readers do not place (Voltaire for Black, Bun
for Asian, Zev for a white man). A name gets a replacement as far down the target's pool as it is
down its own, and a rarer one one of the less frequent half of these. English function words among the surnames ("Her",
"So", "Do") are never drawn."""
FIRST_NAME_READ = 0.02
"""The first-name table's frequency from which a surname drawn further down its pool than its
six most frequent reads as a first name ("Larry", "Joshua", "Jean")."""
WHITE_READ = 0.8
"""The white share from which a surname is drawn to stand for White: below it, the census's white
shares of Portuguese surnames (Souza 77%, Costa 79%) are how their bearers answer its race question,
while readers take the names for Latino."""
BLACK_READ = 0.9
"""The black share below which a surname is drawn to stand for Black: from it up, the census's
surnames are those of recent immigrants from Africa and Haiti (Abdi, Abukar, Kebede, Okafor,
Jeanbaptiste: 90% to 98% Black), which readers take for their origin, Somali or Nigerian, rather
than for Black (Washington 84%, Jefferson 72%)."""


@dataclass(frozen=True, slots=True)
class SurnameInfo:
    display: str
    race: str  # white | black | asian | hispanic | "" (no association)
    shares: Shares  # share of each of GROUPS among its bearers
    freq: float
    typical: bool  # a clear example of its race: may replace another surname
    origins: frozenset[str] = frozenset()  # Asian origins (data/lexicons/build_origins.py)

    @classmethod
    def unlisted(cls, surface: str, race: str) -> SurnameInfo:
        """A surname read from its context, not from the table: no shares, never a replacement."""
        return cls(surface, race, (0.0, 0.0, 0.0, 0.0), 0.0, False)

    def share(self, race: str) -> float:
        return self.shares[GROUPS.index(race)] if race in GROUPS else 0.0


class SurnameTable:
    """Surnames with race shares; :meth:`fits` and :meth:`replacement` serve race expansion."""

    def __init__(self, infos: dict[str, SurnameInfo], source: str = "<custom>") -> None:
        self.info = infos
        self.source = source
        pools: dict[str, list[str]] = {}
        self.origin_pools: dict[str, list[str]] = {}  # a group's surnames of one origin, typical or not
        self.order: dict[str, int] = {}  # rank by frequency among all surnames
        for k, (name, i) in enumerate(sorted(infos.items(), key=lambda kv: (-kv[1].freq, kv[0]))):
            self.order[name] = k
            if i.typical and i.race and (i.race != "white" or i.share("white") >= WHITE_READ) \
                    and (i.race != "black" or i.share("black") < BLACK_READ):
                pools.setdefault(i.race, []).append(name)
            for origin in i.origins if i.race else ():
                self.origin_pools.setdefault(origin, []).append(name)
        misspelt = misspellings(infos)  # "Henandez": listed (census spellings), never drawn as a replacement
        self.pools = {race: [n for n in names if n not in misspelt and n not in STOPWORDS] for race, names in pools.items()}
        self.origin_pools = {o: [n for n in names if n not in misspelt] for o, names in self.origin_pools.items()}
        # a surname's rank down its race's whole pool, misspellings included, and that pool's length:
        # how far down the target pool its replacement is drawn
        self.rank = {n: k for names in pools.values() for k, n in enumerate(names)}
        self.pool_sizes = {race: len(names) for race, names in pools.items()}
        weight = sum(i.freq for i in infos.values()) or 1.0
        # P(group) among the bearers of the listed surnames: the prior of full_name_shares
        self.prior: Shares = tuple(sum(i.freq * i.shares[g] for i in infos.values()) / weight  # type: ignore[assignment]
                                   for g in range(len(GROUPS)))

    def without_first_names(self, first: Mapping[str, float]) -> SurnameTable:
        """This table drawing no surname that is a common first name (``first``: name -> frequency in
        the first-name table, at least :data:`FIRST_NAME_READ`), outside each group's six most
        frequent surnames: readers took "Alfreda Larry" for two first names, while Kim, among the
        six most frequent of its group, reads as a surname."""
        common = {n for n, f in first.items() if f >= FIRST_NAME_READ}
        table = copy.copy(self)
        table.pools = {race: [n for k, n in enumerate(names) if k < 6 or n not in common]
                       for race, names in self.pools.items()}
        return table

    def lookup(self, surface: str) -> SurnameInfo | None:
        """The entry of a surname as written ("El-Solh", "al Masri"), by its key (:func:`surname_key`);
        an unlisted surname with an Arabic prefix is read as middle_eastern."""
        k = surname_key(surface)
        info = self.info.get(k) or self.info.get(k.replace("-", ""))
        if info is None and _ARABIC_PREFIX.match(k):
            info = SurnameInfo.unlisted(surface, MIDDLE_EASTERN)
        return info

    def fits(self, surname: str, race: str, first: Shares | None = None) -> bool:
        """May ``surname`` (lowercase) stay in a variant for ``race``? Unknown surnames stay. A surname
        associated with another group never does ("Mosley", 51% Black, leaves a white variant). The
        group must bear it at least :data:`FITS` ("Aditya Walsh": 1% of Walshes are Asian), and
        with the race shares of the ``first`` name it would follow, the full name must also read
        as ``race`` (:func:`full_name_shares`: "Brian Jackson" reads Black, so Jackson does not
        stay in a white variant)."""
        info = self.lookup(surname)
        if info is None or race not in RACES:  # a gender, or a group the table has no names for
            return True
        if MIDDLE_EASTERN in (race, info.race):
            return info.race == race
        if info.race and info.race != race:  # "Tanisha Mosley" -> "Kathleen Mosley" would keep the old group
            return False
        if info.share(race) < FITS:
            return False
        return first is None or race_of_shares(full_name_shares(first, info.shares, self.prior)) == race

    def replacement(self, surname: str, race: str, taken: set[str],
                    origins: frozenset[str] = frozenset()) -> str | None:
        """A typical surname of ``race`` for ``surname``, not in ``taken`` (which it joins). With
        ``origins`` (those of the first name it will follow), a surname of ``race`` sharing one of
        them: "Priya" gets "Sharma", not "Nguyen"."""
        pool = self.pools.get(race) or []
        if origins:
            pool = [n for n in self.order_of(*(self.origin_pools.get(o, []) for o in sorted(origins)))
                    if self.info[n].race == race] or pool
        surname = surname_key(surname)
        if surname in self.rank:  # in the pool of its own race
            cand = matched_pick(pool, self.rank[surname], self.pool_sizes[self.info[surname].race], taken, DRAW_DEPTH)
        else:
            cand = matched_pick(pool, self.order.get(surname, 0), len(self.order), taken, DRAW_DEPTH)
        return self.info[cand].display if cand else None


    def order_of(self, *pools: list[str]) -> list[str]:
        """The surnames of ``pools`` together, most frequent first."""
        return sorted({n for pool in pools for n in pool}, key=self.order.__getitem__)


def misspellings(infos: dict[str, SurnameInfo]) -> frozenset[str]:
    """Listed surnames that read as a typo of a much more common one of the same group: one letter
    left out, added or changed ("Henandez" next to "Hernandez", 1,000 times as frequent). The census
    lists such spellings, so they stay readable in a prompt; a variant never writes one."""
    census = {n: i for n, i in infos.items() if i.race in GROUPS and i.freq > 0}
    lowest = min((i.freq for i in census.values()), default=0.0)
    common = {n: i for n, i in census.items() if i.freq >= MISSPELT * lowest}
    by_deletion: dict[str, list[str]] = {}
    for name in common:
        for k in range(len(name)):
            by_deletion.setdefault(name[:k] + name[k + 1:], []).append(name)
    found = set()
    for name, info in census.items():
        near = {m for k in range(len(name)) for m in by_deletion.get(name[:k] + name[k + 1:], ())}  # changed, left out
        near |= set(by_deletion.get(name, ()))  # a letter added to the common one
        near |= {name[:k] + name[k + 1:] for k in range(len(name))} & common.keys()
        if any(m != name and common[m].race == info.race and common[m].freq >= MISSPELT * info.freq for m in near):
            found.add(name)
    return frozenset(found)


_ARABIC_PREFIX = re.compile(r"(?:al|el|abu|abou|bin|ibn|abd)-[a-z]")  # on a key


def surname_key(surface: str) -> str:
    """A surname's key in the table: lowercase, its words joined by hyphens ("Abu Zeid" -> "abu-zeid")."""
    return "-".join(surface.lower().split())


def matched_pick(pool: list[str], rank: int, of: int, taken: set[str], depth: int | None = None) -> str | None:
    """Frequency-matched replacement: the entry of ``pool`` (most frequent first) as far down it as
    ``rank`` is down a list of ``of`` entries, within its first ``depth`` (:data:`DRAW_DEPTH`),
    moving on past ``taken`` entries; the pick joins ``taken``. Shared by first names and surnames,
    so a common name gets a common replacement and a rare one a name readers still place."""
    k = rank * len(pool) // max(of, 1)
    pool = pool[:depth] if depth else pool
    if k >= len(pool):  # a rare name: one of the less frequent half of those drawn, spread by its rank
        k = len(pool) // 2 + k % max(len(pool) - len(pool) // 2, 1)
    spelt = {skeleton(t) for t in taken}
    for step in range(len(pool)):
        cand = pool[(k + step) % len(pool)]
        if cand not in taken and skeleton(cand) not in spelt:  # never "Mohammed and Mohamed"
            taken.add(cand)
            return cand
    return None


def skeleton(name: str) -> str:
    """A name's consonants, doubled ones once: two spellings of one name share it ("Mohamed",
    "Mohammed"), which a replacement never takes beside the other."""
    return re.sub(r"(.)(?=\1)", "", re.sub(r"[aeiouy]", "", name.lower()))


def load_surnames(data_dir: Path) -> SurnameTable | None:
    """The surname table in ``data_dir``, or None when the folder has none (custom lexicons)."""
    path = Path(data_dir) / SURNAMES_FILE
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return None
    return _load(str(path.resolve()), mtime)


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime: int) -> SurnameTable:
    infos: dict[str, SurnameInfo] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = {"name", "race", *GROUPS, "freq", "typical"} - set(reader.fieldnames or ())
        if missing:
            raise InputDataError(f"Surname file {path} lacks the columns {', '.join(sorted(missing))}.")
        for k, row in enumerate(reader, 2):
            try:
                shares = tuple(float(row[g] or 0) for g in GROUPS)  # empty: not in the census
                info = SurnameInfo(row["name"], row["race"], shares, float(row["freq"] or 0),  # type: ignore[arg-type]
                                   int(row["typical"] or 0) == 1, frozenset((row.get("origin") or "").split()))
            except ValueError:
                raise InputDataError(f"Surname file {path}, line {k}: shares, freq and typical must be "
                                     "numbers.") from None
            if info.race not in (*RACES, ""):
                raise InputDataError(f"Surname file {path}, line {k}: race {info.race!r} is not one of "
                                     f"{'/'.join(RACES)}.")
            infos[surname_key(row["name"])] = info
    return SurnameTable(infos, path)
