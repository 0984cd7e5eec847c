"""Test-sentence generation (BiasTestGPT steps 1-2): prompts, cleaning, and a reviewable CSV.

1. :func:`build_generation_requests` makes one prompt per (group term, attribute term, sample).
2. The pipeline's provider layer answers them through ``generate(prompts) -> list[str | None]``
   (``None`` marks a failed call); :func:`generate_sentences` does the call and the cleaning.
3. :func:`export_csv` writes every sentence, kept or not, with ``discarded`` and ``reason``
   columns; a person may flip ``discarded``, edit ``sentence`` or fill ``reason``, and
   :func:`import_csv` reads the file back for templating.

A generated sentence is kept only when it contains the group term as a whole word and the
attribute term as a whole word (a plural ``-s``/``-es`` allowed), and no term of the other group.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
from equilens.tasks.assessments.bias_test.bias_specs import BiasSpec
from equilens.tasks.errors import InputDataError

Generate = Callable[[list[str]], list[str | None]]

PROMPT_TEMPLATE = (
    'Write one short, natural English sentence that contains the word "{group_term}" and the word '
    '"{attribute_term}". Reply with the sentence only.'
)
MAX_WORDS = 50


@dataclass(frozen=True)
class GenerationRequest:
    bias: str
    group: str
    group_term: str
    attribute: str
    attribute_term: str
    sample: int
    prompt: str


@dataclass
class GeneratedSentence:
    bias: str
    group: str
    group_term: str
    attribute: str
    attribute_term: str
    sample: int
    prompt: str
    raw: str
    sentence: str
    discarded: bool
    reason: str


COLUMNS = [f.name for f in fields(GeneratedSentence)]
REQUIRED_COLUMNS = ("bias", "group_term", "attribute", "attribute_term", "sentence", "discarded")


def build_generation_requests(
    specs: Sequence[BiasSpec],
    sentences_per_pair: int = 1,
    prompt_template: str = PROMPT_TEMPLATE,
    max_pairs_per_bias: int | None = None,
    seed: int = 0,
) -> list[GenerationRequest]:
    """One request per (bias, group term, attribute term, sample); ``prompt`` is the text to send.

    ``max_pairs_per_bias`` keeps a seeded random subset of each bias's term pairs (all by default).
    """
    if sentences_per_pair < 1:
        raise InputDataError(f"sentences_per_pair must be >= 1, got {sentences_per_pair}.")
    if "{group_term}" not in prompt_template or "{attribute_term}" not in prompt_template:
        raise InputDataError("prompt_template needs {group_term} and {attribute_term} placeholders.")
    rng = np.random.default_rng(seed)
    out: list[GenerationRequest] = []
    for spec in specs:
        pairs = [
            (gname, gterm, aname, aterm)
            for gname, gterms in zip(spec.group_names, spec.groups, strict=True)
            for gterm in gterms
            for aname, aterms in zip(spec.attribute_names, spec.attributes, strict=True)
            for aterm in aterms
        ]
        if max_pairs_per_bias is not None and max_pairs_per_bias < len(pairs):
            keep = np.sort(rng.choice(len(pairs), size=max_pairs_per_bias, replace=False))
            pairs = [pairs[i] for i in keep]
        for gname, gterm, aname, aterm in pairs:
            prompt = prompt_template.format(group_term=gterm, attribute_term=aterm)
            out.extend(
                GenerationRequest(spec.name, gname, gterm, aname, aterm, k, prompt)
                for k in range(sentences_per_pair)
            )
    return out


def generation_prompts(requests: Sequence[GenerationRequest]) -> list[str]:
    return [r.prompt for r in requests]


def term_pattern(term: str, plural: bool = False) -> re.Pattern[str]:
    """Whole-word, case-insensitive match of ``term`` (optionally with a plural ``-s``/``-es``)."""
    body = r"\s+".join(re.escape(p) for p in term.split())
    return re.compile(rf"(?<![\w]){body}{'(?:e?s)?' if plural else ''}(?!\w)", re.IGNORECASE)


def contains_term(sentence: str, term: str, plural: bool = False) -> bool:
    return term_pattern(term, plural).search(sentence) is not None


_PREFIX = re.compile(
    r"^\s*(?:(?:sure|okay|ok)\b[^:\n]*:\s*|sentence\s*\d*\s*[:.)-]\s*|\d+\s*[.)]\s*|[-*\u2022]\s+)+", re.I
)
_QUOTES = "\"'\u201c\u201d\u2018\u2019`"
_LEAD_IN_QUOTE = re.compile(
    r"^[^\"\u201c:]{0,60}\b(?:sentence|example|here)\b[^\"\u201c:]{0,40}:\s*"  # 'The sentence is:'
    r"[\"\u201c]([^\"\u201d]+)[\"\u201d]",  # the quoted sentence
    re.I,
)
_META = re.compile(r"\b(?:the\s+)?(?:word|words|term|terms)\s+[\"\u201c']", re.I)


def clean_generation(text: str | None) -> str:
    """The first sentence of a reply, without list markers, lead-ins, quotes or extra spaces."""
    if not text:
        return ""
    lines = [ln.strip() for ln in text.replace("```", "\n").splitlines()]
    lines = [ln for ln in lines if ln and not ln.endswith(":")]
    if not lines:
        return ""
    line = _PREFIX.sub("", lines[0]).strip()
    quoted = _LEAD_IN_QUOTE.match(line)  # 'The sentence is: "..."'
    line = (quoted.group(1) if quoted else line).strip().strip(_QUOTES).strip()
    line = re.split(r"(?<=[.!?])[\"'\u201d\u2019]?\s+(?=[A-Z\"'\u201c])", line)[0]
    return re.sub(r"\s+", " ", line).strip().strip(_QUOTES).strip()


def check_sentence(sentence: str, req: GenerationRequest, spec: BiasSpec | None) -> str:
    """Why ``sentence`` cannot be used for ``req`` ('' when it can)."""
    if not sentence:
        return "empty output"
    if len(sentence.split()) > MAX_WORDS:
        return f"longer than {MAX_WORDS} words"
    if _META.search(sentence):
        return "talks about the words instead of using them"
    if not contains_term(sentence, req.group_term):
        return f"missing group term {req.group_term!r}"
    if not contains_term(sentence, req.attribute_term, plural=True):
        return f"missing attribute term {req.attribute_term!r}"
    if spec is not None:
        found = spec.counterpart(req.group_term)
        if found is not None:
            other = [t for t in spec.groups[1 - found[0]] if contains_term(sentence, t)]
            if other:
                return f"also mentions the other group ({other[0]!r})"
    return ""


def process_generations(
    requests: Sequence[GenerationRequest],
    outputs: Sequence[str | None],
    specs: Sequence[BiasSpec] = (),
) -> list[GeneratedSentence]:
    """Clean and check each output; every request yields one row, discarded rows say why."""
    if len(outputs) != len(requests):
        raise InputDataError(f"generate() returned {len(outputs)} outputs for {len(requests)} prompts.")
    by_name = {s.name: s for s in specs}
    seen: set[tuple[str, str]] = set()
    rows = []
    for req, raw in zip(requests, outputs, strict=True):
        sentence = clean_generation(raw)
        reason = "generation failed" if raw is None else check_sentence(sentence, req, by_name.get(req.bias))
        key = (req.bias, sentence.lower())
        if not reason and key in seen:
            reason = "duplicate"
        seen.add(key)
        rows.append(
            GeneratedSentence(
                req.bias,
                req.group,
                req.group_term,
                req.attribute,
                req.attribute_term,
                req.sample,
                req.prompt,
                raw or "",
                sentence,
                bool(reason),
                reason,
            )
        )
    return rows


def generate_sentences(
    requests: Sequence[GenerationRequest], generate: Generate, specs: Sequence[BiasSpec] = ()
) -> list[GeneratedSentence]:
    """Send every prompt through ``generate`` (one call) and clean the replies."""
    outputs = list(generate(generation_prompts(requests))) if requests else []
    return process_generations(requests, outputs, specs)


def export_csv(rows: Sequence[GeneratedSentence], path: str | os.PathLike[str]) -> Path:
    """Write rows to an inspectable CSV (``discarded`` as true/false) and return its path; a cell
    that a spreadsheet would run as a formula is quoted (:func:`equilens.tasks.plain.csv_cell`)."""
    from equilens.tasks.plain import csv_cell

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for r in rows:
            d = asdict(r)
            d["discarded"] = "true" if r.discarded else "false"
            writer.writerow({k: csv_cell(v) for k, v in d.items()})  # a model's sentence is never a formula
    return p


_TRUE = {"true", "1", "yes", "y", "x"}
_FALSE = {"false", "0", "no", "n", ""}


def import_csv(path: str | os.PathLike[str]) -> list[GeneratedSentence]:
    """Read a (possibly hand-reviewed) sentences CSV back; optional columns may be missing."""
    from equilens.tasks.files import require_file
    from equilens.tasks.plain import from_csv_cell

    p = require_file(path, "Sentences CSV")
    try:
        with p.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise InputDataError(f"Sentences CSV {str(p)!r} lacks column(s) {missing}.")
            records = [{k: from_csv_cell(v) if isinstance(v, str) else v for k, v in rec.items()} for rec in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise InputDataError(f"Cannot read sentences CSV {str(p)!r}: {err}") from None
    rows = []
    for line, rec in enumerate(records, start=2):
        flag = (rec.get("discarded") or "").strip().lower()
        if flag not in _TRUE | _FALSE:
            raise InputDataError(f"{str(p)!r} line {line}: discarded must be true/false, got {flag!r}.")
        try:
            sample = int(rec.get("sample") or 0)
        except ValueError:
            raise InputDataError(f"{str(p)!r} line {line}: sample must be an integer.") from None
        rows.append(
            GeneratedSentence(
                bias=rec["bias"].strip(),
                group=(rec.get("group") or "").strip(),
                group_term=rec["group_term"].strip(),
                attribute=rec["attribute"].strip(),
                attribute_term=rec["attribute_term"].strip(),
                sample=sample,
                prompt=rec.get("prompt") or "",
                raw=rec.get("raw") or "",
                sentence=(rec["sentence"] or "").strip(),
                discarded=flag in _TRUE,
                reason=(rec.get("reason") or "").strip(),
            )
        )
    return rows
