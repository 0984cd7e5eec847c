"""Which sense a word spelled alike has where the text uses it, for the FTU guards of
:mod:`equilens.tasks.inputs.ftu`:

* "her" after a verb: an object ("made her sick", "lent her money", "give her a raise") or a
  determiner ("made her bed", "lent her car to ..."); :func:`object_after_verb`, and the things
  one gives (:data:`GIVEN`) by which :mod:`equilens.tasks.inputs.ambiguity` tells where
  neither reading is safe ("showed her work");
* a colour word before "one" ("the white one"): a thing where the nearest noun before it in its
  sentence is one ("the black Honda or the white one"), people where that noun is a person ("the
  black candidate or the white one"); :func:`one_is_a_thing`.
"""

from __future__ import annotations

import re

from equilens.tasks.inputs.word_lists import OBJECT_NOUNS, PERSON_NOUNS

# Verbs after which "her" is an object when a bare verb or an adjective follows:
# "made her sick", "let her go", "help her study", "heard her sing", "drives her crazy".
CAUSATIVE = frozenset("""
    make makes made making let lets letting help helps helped helping have has had having
    hear hears heard hearing see sees saw seen seeing watch watches watched watching
    feel feels felt feeling notice notices noticed noticing bring brings brought bringing
    keep keeps kept keeping leave leaves left leaving drive drives drove driven driving
    get gets got gotten getting find finds found finding consider considers considered
    call calls called calling want wants wanted wanting need needs needed needing
    bid bids force forces forced ask asks asked tell tells told allow allows allowed
""".split())
# Bare verbs and adjectives that are rarely nouns, so "her" + one of them after a causative
# verb is an object ("made her cry"), not a determiner ("made her bed").
PREDICATE_WORDS = frozenset("""
    go come cry laugh smile sing dance leave stay sleep eat sit stand speak talk think feel know
    understand win lose die fall fly swim jump buy pay wait learn forget remember believe decide
    choose finish quit stop start become grow write read take give get make do be see hear tell say
    move change feel try wear marry agree apologize apologise explain shut sit lie rest relax
    study work breathe scream shout yell wake blush panic worry wonder suffer fail succeed pass cheat steal
    sick ill happy sad angry mad upset crazy nervous anxious afraid scared tired sleepy hungry
    jealous uncomfortable comfortable safe sure alive dead late early free busy alone quiet calm
    nauseous dizzy proud ashamed guilty beautiful pretty ugly fat thin stupid smart weak strong
    backstage home upstairs downstairs inside outside away back
    advance improve recover prepare practice practise train grow heal adjust cope
""".split())
# Verbs that take a person and a thing ("lend her money", "give her flowers"): "her" right after
# one of them may be the person (an object) or the owner of the thing (a determiner).
GIVING = frozenset("""
    lend lends lent lending loan loans loaned loaning give gives gave given giving send sends sent
    sending pay pays paid paying offer offers offered offering owe owes owed owing show shows showed
    shown showing tell tells told telling buy buys bought buying hand hands handed handing
    promise promises promised promising grant grants granted granting wire wires wired wiring
    sell sells sold selling charge charges charged charging cost costs costing bring brings brought
""".split())
# Things one gives a person, seldom something a person owns when they follow a giving verb:
# "her" before one of them is the person given to ("lent her money", "offer her advice").
GIVEN = frozenset("""
    money cash funds loan loans credit gifts presents flowers chocolates candy advice information
    directions instructions permission access tips feedback support attention time rides ride
    lessons compliments thanks notice warning warnings references discount discounts refund
    refunds compensation damages interest something anything nothing everything more less enough
""".split())
# After "her" and a noun, these show the noun's recipient is someone else: "lent her car to Tom".
_WORD_BEFORE = re.compile(r"([A-Za-z]+)[ \t]+$")


def verb_before(text: str, start: int) -> str:
    before = _WORD_BEFORE.search(text, max(0, start - 20), start)
    return before.group(1).lower() if before else ""


def object_after_verb(text: str, start: int, word: str) -> bool:
    """Is "her" at ``start``, followed by ``word`` (lowercase) that could start a noun phrase, an
    object all the same? After a causative or perception verb before a bare verb or an adjective
    ("made her sick", "let her go"), and after a giving verb before a thing one gives ("lent her
    money", "give her advice")."""
    verb = verb_before(text, start)
    return (word in PREDICATE_WORDS and verb in CAUSATIVE) or (word in GIVEN and verb in GIVING)


_SENTENCE_START = re.compile(r"[.!?\n]")
_WORD = re.compile(r"[A-Za-z][\w'’-]*")
_ASKS_FOR_PERSON = frozenset("who whom whose someone somebody anyone anybody".split())


def one_is_a_thing(text: str, start: int) -> bool:
    """Does "one" after the colour word at ``start`` stand for a thing ("the black Honda or the
    white one")? Yes unless the nearest noun of ``object_nouns.txt`` or ``person_nouns.txt``
    before it in its sentence is a person noun ("the black candidate or the white one"), or "who"
    asks for a person ("Who should I hire, the black one or the white one?"): with no
    noun to tell, "the white one" is left alone, since a swap that may be wrong is worse than none."""
    stops = list(_SENTENCE_START.finditer(text, 0, start))
    begin = stops[-1].end() if stops else 0
    for w in reversed(_WORD.findall(text, begin, start)):
        low = w.lower().replace("’", "'").removesuffix("'s")
        if low in PERSON_NOUNS or low in _ASKS_FOR_PERSON:
            return False
        if low in OBJECT_NOUNS:
            break
    return True
