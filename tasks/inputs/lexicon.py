"""Protected-attribute lexicons: aligned word lists per group, loaded from YAML or a config dict.

A :class:`Lexicon` holds ``groups`` (e.g. male / female / neutral) and ``rows`` of aligned terms:
the words of one row are counterparts and swap into each other during counterfactual expansion.
The file format is documented at the top of ``data/lexicons/gender.yaml``.

Every term is stored in canonical form: lowercase, words joined by single spaces. A term matches
case-insensitively at word boundaries, and the spaces of a multi-word term also match hyphens or
several blanks ("African-American", "father-in-law"). Each lexicon compiles its terms into one
regular expression (built as a character trie, which is equivalent to an alternation sorted
longest first but much faster for Python's ``re``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from equilens.tasks.errors import ConfigError, EquilensError, InputDataError
from equilens.tasks.inputs.trie_pattern import SEPARATOR, build_pattern
from equilens.tasks.inputs.word_lists import LEXICON_DIR

FILES = {
    "gender": "gender.yaml", "race": "race.yaml", "religion": "religion.yaml", "nationality": "nationality.yaml",
    "age": "age.yaml", "sexual_orientation": "sexual_orientation.yaml", "disability": "disability.yaml",
    "gender_identity": "gender_identity.yaml",
}
ATTRIBUTES = tuple(FILES)  # built-in attributes; first names live in tasks.inputs.names
ROLES = frozenset({"subject", "object", "determiner", "standalone", "reflexive"})
_SPLIT = re.compile(SEPARATOR)


def canonical(surface: str) -> str:
    """Canonical form of a matched surface string: lowercase, single spaces between words."""
    low = surface.lower()
    if " " in low or "-" in low or "\t" in low or "\n" in low:
        return " ".join(w for w in _SPLIT.split(low) if w)
    return low


@dataclass(frozen=True)
class TermInfo:
    """Where a term lives: its group and every row (of that group) listing it, first = default."""

    group: str
    rows: tuple[int, ...]


@dataclass(frozen=True)
class Lexicon:
    """Aligned word lists of one protected attribute.

    ``rows[i][j]`` is the term of row ``i`` for ``groups[j]`` ("" when a row has no word for that
    group). ``roles[i]`` is the grammatical role of row ``i`` (or None) and disambiguates words
    listed in several rows. Groups in ``target_only`` are produced by expansion but never
    detected. ``stop_after`` lists words that, directly after a term, cancel its match.
    ``person_context`` lists terms with many meanings that are not about people ("white",
    "black", "old", "straight"): they count only where they refer to people (see
    :func:`equilens.tasks.inputs.ftu.refers_to_people`). ``object_context`` lists colour words ("white",
    "black") that count as people unless they describe a thing (:func:`equilens.tasks.inputs.ftu.describes_object`:
    an object noun of data/lexicons/object_nouns.txt follows, "a black Amex card"); a term in
    both lists follows ``object_context``. Groups in ``source_only`` are detected and swapped
    from but get no variant of their own (many nationalities, a dozen variants). ``aliases``
    pairs a word with a term of the rows whose group and rows it takes ("koreans" -> "asians"):
    an alias is detected and swapped from like that term, but never written into a variant.
    ``controls`` pairs a term with another term of the same group that says the same ("woman" ->
    "lady"): the same-group control of a variant (:mod:`equilens.tasks.inputs.controls`).
    ``regional`` pairs a group with an alias of its own for its people of a region ("black" ->
    "african"), which takes the target's word where two people of one group are told apart by it.
    ``relations`` ("son", "wife") and ``generic_plurals`` ("rules for men") mark bystanders and
    topics, who keep their words where other people are compared (:mod:`~equilens.tasks.inputs.compared`).
    ``partners`` ("wife", "boyfriend") are the people a person courts or marries: said of a person
    compared ("her wife", "flirted with a lot of men"), they follow that person's change.
    """

    attribute: str
    groups: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    roles: tuple[str | None, ...] = ()
    target_only: frozenset[str] = frozenset()
    stop_after: tuple[tuple[str, tuple[str, ...]], ...] = ()
    person_context: frozenset[str] = frozenset()
    object_context: frozenset[str] = frozenset()
    source_only: frozenset[str] = frozenset()
    aliases: tuple[tuple[str, str], ...] = ()
    controls: tuple[tuple[str, str], ...] = ()
    regional: tuple[tuple[str, str], ...] = ()
    relations: frozenset[str] = frozenset()
    generic_plurals: frozenset[str] = frozenset()
    partners: frozenset[str] = frozenset()
    source: str = field(default="<custom>", compare=False)

    @functools.cached_property
    def index(self) -> dict[str, TermInfo]:
        """Every non-empty term -> its group and rows."""
        rows_of: dict[str, list[int]] = {}
        group_of: dict[str, str] = {}
        for i, row in enumerate(self.rows):
            for group, term in zip(self.groups, row, strict=True):
                if term:
                    group_of[term] = group
                    rows_of.setdefault(term, []).append(i)
        out = {t: TermInfo(group_of[t], tuple(r)) for t, r in rows_of.items()}
        for alias, term in self.aliases:
            out[alias] = out[term]
        return out

    @functools.cached_property
    def region_word(self) -> dict[str, str]:
        """Group -> the word of its region (``regional`` as a mapping)."""
        return dict(self.regional)

    @property
    def target_groups(self) -> tuple[str, ...]:
        """Groups that get a variant of their own (all but ``source_only``)."""
        return tuple(g for g in self.groups if g not in self.source_only)

    @property
    def detect_groups(self) -> tuple[str, ...]:
        """Groups whose terms count as mentions (all but ``target_only``)."""
        return tuple(g for g in self.groups if g not in self.target_only)

    def terms(self, groups: Iterable[str] | None = None) -> list[str]:
        """Unique terms of the given groups (default: all), in row order."""
        wanted = set(self.groups if groups is None else groups)
        return [t for t, info in self.index.items() if info.group in wanted]

    def cell(self, row: int, group: str) -> str:
        """The term of ``row`` for ``group``; "" when the row has none or the group is unknown."""
        try:
            return self.rows[row][self.groups.index(group)]
        except ValueError:
            return ""

    def role(self, row: int) -> str | None:
        return self.roles[row] if self.roles else None

    @functools.cached_property
    def detect_pattern(self) -> re.Pattern[str]:
        """One regex matching every detectable term (longest match wins)."""
        return build_pattern(self.terms(self.detect_groups), dict(self.stop_after))

    @functools.cached_property
    def any_pattern(self) -> re.Pattern[str]:
        """One regex matching the terms of every group, target-only groups included."""
        return build_pattern(self.terms(), dict(self.stop_after))

    @functools.cached_property
    def lowered_pattern(self) -> re.Pattern[str] | None:
        """:attr:`any_pattern` for lower-cased ASCII text (see :func:`build_pattern`), or None when a
        term is not ASCII or does not start with a letter or digit (then only ``any_pattern`` is exact)."""
        terms = self.terms()
        if not terms or not all(t.isascii() and t[:1].isalnum() for t in terms):
            return None
        stops = {t.lower(): [w.lower() for w in ws] for t, ws in self.stop_after}
        return build_pattern([t.lower() for t in terms], stops, lowered=True)

    @functools.cached_property
    def placeholders(self) -> dict[str, str]:
        """Term -> a group-independent placeholder, shared by all rows linked through a term.

        Rows that share a word within a group ("him/her/them" and "his/her/their" share "her")
        form one component, so an ambiguous word never needs context to be masked.
        """
        parent = list(range(len(self.rows)))

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for info in self.index.values():
            for r in info.rows[1:]:
                parent[find(r)] = find(info.rows[0])
        label: dict[int, str] = {}
        out: dict[str, str] = {}
        for term, info in self.index.items():
            root = find(info.rows[0])
            label.setdefault(root, f"{self.attribute}{len(label) + 1}")
            out[term] = label[root]
        return out


# --- loading ------------------------------------------------------------------------------------
def load_lexicon(attribute: str, data_dir: Path | None = None):  # noqa: ANN201 - Lexicon | NameTable
    """Load the built-in lexicon for ``attribute`` (one of :data:`ATTRIBUTES`) from ``data_dir``
    (default: the repository's ``data/lexicons``); "name" gives the first-name table
    (:func:`equilens.tasks.inputs.names.load_names`)."""
    if attribute == "name":
        from equilens.tasks.inputs.names import load_names

        return load_names(data_dir)
    if attribute not in FILES:
        raise ConfigError(f"No lexicon file for attribute {attribute!r}; known: {', '.join(sorted(FILES))}. "
                          "Use counterfactual.custom for other attributes.")
    path = Path(data_dir or LEXICON_DIR) / FILES[attribute]
    try:
        mtime = path.stat().st_mtime_ns
    except OSError as exc:
        raise InputDataError(f"Lexicon file {path} cannot be read: {exc.strerror or exc}.") from None
    return _load_file(str(path.resolve()), mtime, attribute)


@functools.lru_cache(maxsize=32)
def _load_file(path: str, mtime: int, attribute: str) -> Lexicon:
    try:
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputDataError(f"Lexicon file {path} is not valid YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise InputDataError(f"Lexicon file {path} must hold a mapping with groups and rows.")
    declared = doc.get("attribute", attribute)
    if declared != attribute:
        raise InputDataError(f"Lexicon file {path} declares attribute {declared!r}, expected {attribute!r}.")
    return _parse(doc, attribute, path, InputDataError)


def custom_lexicon(attribute: str, groups: Mapping[str, list[str]]) -> Lexicon:
    """Build a lexicon from a config mapping ``{group: [words]}``; words at one position swap.

    Problems raise :class:`ConfigError` (a config, not a file, is at fault).
    """
    where = f"custom lexicon {attribute!r} (config)"
    if not isinstance(groups, Mapping) or len(groups) < 2:
        raise ConfigError(f"{where}: give at least two groups, e.g. {{'young': ['young'], 'old': ['old']}}.")
    for name, words in groups.items():
        if not isinstance(words, list | tuple) or not words or not all(isinstance(w, str) for w in words):
            raise ConfigError(f"{where}: group {name!r} must be a non-empty list of words.")
    lengths = {name: len(words) for name, words in groups.items()}
    if len(set(lengths.values())) > 1:
        sizes = ", ".join(f"{g}: {n}" for g, n in lengths.items())
        raise ConfigError(f"{where}: every group needs the same number of words, aligned by position "
                          f"(word i of one group swaps with word i of the others); got {sizes}.")
    doc = {"groups": list(groups), "rows": [list(r) for r in zip(*groups.values(), strict=True)]}
    return _parse(doc, attribute, where, ConfigError)


def _parse(doc: Mapping[str, Any], attribute: str, source: str, error: type[EquilensError]) -> Lexicon:
    tables = doc.get("sections") or [{"groups": doc.get("groups"), "rows": doc.get("rows")}]
    if not isinstance(tables, list):
        raise error(f"{source}: `sections` must be a list of {{groups, rows}} tables.")
    all_groups: list[str] = []
    for t in tables:
        g = t.get("groups") if isinstance(t, dict) else None
        if not isinstance(g, list) or len(g) < 2 or not all(isinstance(x, str) and x for x in g):
            raise error(f"{source}: `groups` must list at least two group names.")
        if len(set(g)) != len(g):
            raise error(f"{source}: group names must be unique, got {g}.")
        all_groups += [x for x in g if x not in all_groups]

    rows: list[tuple[str, ...]] = []
    roles: list[str | None] = []
    for t in tables:
        if not isinstance(t.get("rows"), list) or not t["rows"]:
            raise error(f"{source}: `rows` must be a non-empty list of aligned terms.")
        for k, raw in enumerate(t["rows"], 1):
            cells, role = _row_cells(raw, t["groups"], source, k, error)
            by_group = dict(zip(t["groups"], cells, strict=True))
            rows.append(tuple(by_group.get(g, "") for g in all_groups))
            roles.append(role)

    seen: dict[str, str] = {}
    for row in rows:
        for group, term in zip(all_groups, row, strict=True):
            if term and seen.setdefault(term, group) != group:
                raise error(f"{source}: the word {term!r} is listed in group {seen[term]!r} and in group "
                            f"{group!r}; a word may belong to one group only.")

    aliases = _aliases(doc.get("aliases") or {}, seen, source, error)
    seen.update((alias, seen[term]) for alias, term in aliases)
    controls = _controls(doc.get("controls") or {}, seen, dict(aliases), source, error)
    regional = doc.get("regional") or {}
    if not isinstance(regional, dict) or any(_clean(w) not in dict(aliases) or seen.get(_clean(w)) != g
                                             for g, w in regional.items()):
        raise error(f"{source}: `regional` must map a group to an alias of its own (black: african).")

    target_only = doc.get("target_only") or []
    if not isinstance(target_only, list) or not set(target_only) <= set(all_groups):
        raise error(f"{source}: `target_only` must list some of the groups {all_groups}.")
    if len(target_only) >= len(all_groups):
        raise error(f"{source}: at least one group must be detectable (not target_only).")

    source_only = doc.get("source_only") or []
    if not isinstance(source_only, list) or not set(source_only) <= set(all_groups):
        raise error(f"{source}: `source_only` must list some of the groups {all_groups}.")
    if set(source_only) & set(target_only) or len(all_groups) - len(source_only) < 2:
        raise error(f"{source}: `source_only` groups cannot be target_only, and two groups must get variants.")

    stop_raw = doc.get("stop_after") or {}
    if not isinstance(stop_raw, dict):
        raise error(f"{source}: `stop_after` must map a term to a list of following words.")
    stop_after = []
    for term, words in stop_raw.items():
        term = _clean(term)
        if term not in seen:
            raise error(f"{source}: `stop_after` names {term!r}, which is not a term of this lexicon.")
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise error(f"{source}: `stop_after` of {term!r} must be a list of words.")
        stop_after.append((term, tuple(sorted({_clean(w) for w in words}))))

    person, objects, relations, generic, partners = (_term_list(doc, key, seen, source, error) for key in (
        "person_context", "object_context", "relations", "generic_plurals", "partners"))

    return Lexicon(
        attribute=attribute,
        groups=tuple(all_groups),
        rows=tuple(rows),
        roles=tuple(roles) if any(roles) else (),
        target_only=frozenset(target_only),
        stop_after=tuple(sorted(stop_after)),
        person_context=person,
        object_context=objects,
        relations=relations,
        generic_plurals=generic,
        partners=partners,
        source_only=frozenset(source_only),
        aliases=aliases,
        controls=controls,
        regional=tuple(sorted((g, _clean(w)) for g, w in regional.items())),
        source=source,
    )


def _term_list(doc: Mapping[str, Any], key: str, seen: Mapping[str, str], source: str,
               error: type[EquilensError]) -> frozenset[str]:
    """Check an optional list of terms of the rows (``person_context``, ``relations``, ...)."""
    raw = doc.get(key) or []
    if not isinstance(raw, list) or not all(isinstance(w, str) for w in raw):
        raise error(f"{source}: `{key}` must be a list of terms.")
    unknown = sorted({_clean(w) for w in raw} - set(seen))
    if unknown:
        raise error(f"{source}: `{key}` names {', '.join(map(repr, unknown))}, not terms of this lexicon.")
    return frozenset(_clean(w) for w in raw)


def _aliases(raw: Any, seen: Mapping[str, str], source: str,
             error: type[EquilensError]) -> tuple[tuple[str, str], ...]:
    """Check the ``aliases`` mapping {word: a term of the rows}; return (alias, term) pairs."""
    if not isinstance(raw, dict):
        raise error(f"{source}: `aliases` must map a word to a term of the rows (koreans: asians).")
    out = []
    for word, target in raw.items():
        alias, term = _clean(word), _clean(target) if isinstance(target, str) else ""
        if not alias or term not in seen:
            raise error(f"{source}: alias {word!r} must map to a term of the rows, got {target!r}.")
        if alias in seen:
            raise error(f"{source}: alias {alias!r} is already a term of the rows (group {seen[alias]!r}).")
        out.append((alias, term))
    return tuple(sorted(out))


def _controls(raw: Any, seen: Mapping[str, str], aliases: Mapping[str, str], source: str,
              error: type[EquilensError]) -> tuple[tuple[str, str], ...]:
    """Check the ``controls`` mapping {term: another term of the same group}; return the pairs."""
    if not isinstance(raw, dict):
        raise error(f"{source}: `controls` must map a term to another term of its group (woman: lady).")
    out = []
    for word, other in raw.items():
        term, alt = _clean(word), _clean(other) if isinstance(other, str) else ""
        if term not in seen or alt not in seen or term in aliases or alt in aliases:
            raise error(f"{source}: control {word!r}: {other!r} must pair two terms of the rows.")
        if term == alt or seen[term] != seen[alt]:
            raise error(f"{source}: control {word!r}: {other!r} must pair two different terms of one group "
                        f"(they are in {seen[term]!r} and {seen[alt]!r}).")
        out.append((term, alt))
    return tuple(sorted(out))


def _row_cells(raw: Any, groups: list[str], source: str, k: int,
               error: type[EquilensError]) -> tuple[list[str], str | None]:
    role = None
    if isinstance(raw, dict):
        role = raw.get("role")
        if role is not None and role not in ROLES:
            raise error(f"{source}: row {k} has role {role!r}; use one of {', '.join(sorted(ROLES))}.")
        raw = raw.get("terms")
    if not isinstance(raw, list) or len(raw) != len(groups):
        raise error(f"{source}: row {k} must have {len(groups)} cells ({', '.join(groups)}), got {raw!r}.")
    cells = []
    for cell in raw:
        if cell is not None and not isinstance(cell, str):
            raise error(f"{source}: row {k} holds {cell!r}; cells must be words (or empty).")
        cells.append(_clean(cell or ""))
    if not any(cells):
        raise error(f"{source}: row {k} is empty.")
    return cells, role


def _clean(term: str) -> str:
    words = [w for w in _SPLIT.split(str(term).strip().lower()) if w]
    return " ".join(words)
