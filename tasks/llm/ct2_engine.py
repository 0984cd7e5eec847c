"""The local provider's CTranslate2 engine: the model converted once to int8, cached, and generated on the CPU.

The conversion (``ctranslate2.converters.TransformersConverter``, about 15 s for SmolLM2) is written
to a temporary folder and renamed into place, beside the de-quantised copy in the equilens cache dir
(``smollm2-135m-instruct-ct2-int8``; another local model gets a folder named by its path and files).
A read-only cache dir gets a copy in the system's temporary folder, for this process.

A batch is sorted by prompt length and split into up to one chunk per core (at least
:data:`MIN_CHUNK` prompts each), each chunk generated on its own single-threaded replica: on two
cores that makes about 1.6x the tokens/s of one replica using both.

What the transformers engine gives, kept:

* **the prompt tokens**: the tokenizer's chat template, the same token ids as the transformers path;
* **temperature and seed**: greedy at 0, otherwise sampling from the whole distribution at that
  temperature. CTranslate2 has no seed per call: each worker thread draws from its own random
  generator, seeded from the process-wide seed when the thread first samples. So a sampled batch
  runs on fresh generators, one per chunk, each made under ``set_random_seed`` with the batch's
  seed (the transformers engine's: config seed and first sample index) and the chunk's number, and
  started with a one-token draw (about 0.15 s a chunk); the same batch gives the same text in any
  process, and equal prompts in two chunks draw apart;
* **stop requests between tokens**: the per-token callback returns True once a stop is requested,
  which ends every row of the batch at its next token; the cut batch is reported as
  :class:`RunInterrupted`, never as answers;
* **first-token log-probabilities** (``llm.logprobs``): the raw scores of the first answer token
  (``return_logits_vocab``), log-softmaxed and merged like the transformers engine's.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ModelLoadError
from equilens.tasks.llm import engines
from equilens.tasks.llm.base import Completion
from equilens.tasks.llm.stop import raise_if_stopped, stop_requested

_LOCK = threading.Lock()  # set_random_seed is process-wide: one seeding at a time
_CONVERTING = threading.Lock()
_TEMPORARY: dict[Path, Path] = {}  # conversions made for this process where the cache dir is read-only


def _ctranslate2() -> Any:
    try:
        import ctranslate2
    except (ImportError, OSError) as err:
        raise ModelLoadError(f"llm.engine: ctranslate2 needs the ctranslate2 package ({err}): pip install "
                             "ctranslate2==4.8.5, or set llm.engine: transformers") from None
    return ctranslate2


def cores() -> int:
    """CPU cores this process may run on: CTranslate2's threads, as torch uses one per core."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # no affinity on this platform
        return os.cpu_count() or 1


def converted_dir(source: str | Path, cache: Path, compute_type: str) -> Path:
    """Where the CTranslate2 copy of ``source`` (a model folder or hub id) is cached: a de-quantised copy
    in the cache dir gets a sibling (``...-fp32`` -> ``...-ct2-int8``); any other model a folder named by
    its path and its files' sizes and times, so a model changed in place is converted again."""
    path = Path(source)
    if path.parent == cache:
        return cache / f"{re.sub(r'-fp32$', '', path.name)}-ct2-{compute_type}"
    ident = str(path.resolve()) if path.is_dir() else str(source)
    if path.is_dir():
        ident += "".join(f"|{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in sorted(path.iterdir())
                         if f.is_file())
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", path.name or str(source))[:40]
    return cache / f"ct2-{slug}-{hashlib.sha256(ident.encode()).hexdigest()[:12]}-{compute_type}"


def convert(source: str | Path, cache: Path, compute_type: str) -> Path:
    """The CTranslate2 copy of ``source``, converted on first use and cached (written atomically)."""
    ct2 = _ctranslate2()
    target = converted_dir(source, cache, compute_type)
    if ct2.contains_model(str(target)):
        return target
    with _CONVERTING:
        if ct2.contains_model(str(target)):
            return target
        if target in _TEMPORARY:
            return _TEMPORARY[target]
        tmp = target.with_name(f"{target.name}.tmp{os.getpid()}")
        try:
            tmp.mkdir(parents=True, exist_ok=True)
        except OSError:  # a read-only cache dir: a copy for this process only
            tmp = Path(tempfile.mkdtemp(prefix="equilens-ct2-")) / target.name
            _run_converter(source, tmp, compute_type)
            _TEMPORARY[target] = tmp
            return tmp
        _run_converter(source, tmp, compute_type)
        if target.exists() and not ct2.contains_model(str(target)):
            shutil.rmtree(target, ignore_errors=True)  # a damaged copy
        try:
            tmp.replace(target)
        except OSError:  # another process renamed its copy first
            shutil.rmtree(tmp, ignore_errors=True)
        return target


def _run_converter(source: str | Path, out: Path, compute_type: str) -> None:
    from ctranslate2.converters import TransformersConverter

    try:
        TransformersConverter(str(source)).convert(str(out), quantization=compute_type, force=True)
    except (NotImplementedError, ValueError, KeyError, RuntimeError, OSError) as err:
        shutil.rmtree(out, ignore_errors=True)
        raise ModelLoadError(f"CTranslate2 cannot convert {str(source)!r} ({type(err).__name__}: {err}); "
                             "set llm.engine: transformers") from None


@lru_cache(maxsize=4)
def load_tokenizer(source: str) -> Any:
    """The model's own tokenizer (its chat template, end tokens), with a pad token."""
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(source)
    except (OSError, ValueError) as err:
        raise ModelLoadError(f"Cannot load the tokenizer of {source!r}: {err}") from None
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


@lru_cache(maxsize=4)
def end_ids(source: str) -> tuple[int, ...]:
    """The tokens that end an answer: the generation config's ``eos_token_id``, as ``generate()`` reads
    it (none: answers run to ``max_tokens``)."""
    from transformers import GenerationConfig

    try:
        eos = GenerationConfig.from_pretrained(source).eos_token_id
    except OSError:  # no generation_config.json: the model config's
        from transformers import AutoConfig

        eos = getattr(AutoConfig.from_pretrained(source), "eos_token_id", None)
    if eos is None:
        return ()
    return tuple(int(i) for i in (eos if isinstance(eos, (list, tuple)) else [eos]))


@contextmanager
def _torch_threads_kept() -> Iterator[None]:
    """Making a generator sets OpenMP's thread count of the calling thread to its own (one per replica),
    which torch shares: without this, torch ran on one core for the rest of the process."""
    import torch

    before = torch.get_num_threads()
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


MIN_CHUNK = 8
"""Fewest prompts a chunk holds (smaller batches use fewer replicas, with more threads each)."""


def chunks(lengths: Sequence[int], threads: int) -> list[list[int]]:
    """The batch's rows sorted by prompt length and cut into contiguous chunks, one per replica: on two
    cores two single-threaded replicas make about 1.6x the tokens/s of one replica on both cores."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    n = max(1, min(threads, -(-len(order) // MIN_CHUNK)))
    size = -(-len(order) // n)
    return [order[i:i + size] for i in range(0, len(order), size)]


@lru_cache(maxsize=4)
def _greedy_generator(folder: str, compute_type: str, replicas: int, threads: int) -> Any:
    with _torch_threads_kept():
        return _ctranslate2().Generator(folder, device="cpu", compute_type=compute_type, inter_threads=replicas,
                                        intra_threads=threads)


def _seeded_generator(folder: str, compute_type: str, seed: int, threads: int, start: str) -> Any:
    """A fresh generator whose worker thread's random generator starts from ``seed`` (it is seeded from the
    process-wide seed when the thread first samples, which the one-token draw here does). Under ``_LOCK``."""
    ct2 = _ctranslate2()
    ct2.set_random_seed(seed)
    generator = ct2.Generator(folder, device="cpu", compute_type=compute_type, intra_threads=threads)
    generator.generate_batch([[start]], max_length=1, sampling_topk=0)
    return generator


def chat_token_ids(tok: Any, chats: Sequence[list[dict[str, str]]]) -> list[list[int]]:
    """Each chat's prompt token ids under the tokenizer's chat template, ready for the answer."""
    enc = tok.apply_chat_template(list(chats), add_generation_prompt=True, tokenize=True, return_dict=True)
    return [list(row) for row in enc["input_ids"]]


def batch_seed(seed: int, sample_idxs: Sequence[int]) -> int:
    """One seed per batch, from the config seed and the batch's first sample index (as the transformers
    engine seeds), so a resumed run regenerates identical text for identical batches."""
    return (seed * 1_000_003 + (sample_idxs[0] if sample_idxs else 0)) % 2**32


def top_first_tokens(scores: np.ndarray, tok: Any, top: int) -> dict[str, float]:
    """The ``top`` most likely first tokens and their log-probabilities from one row of raw scores;
    tokens that decode alike are summed (as the transformers engine does)."""
    scores = scores.astype(np.float64)
    logp = scores - (scores.max() + np.log(np.exp(scores - scores.max()).sum()))
    ids = np.argsort(-logp, kind="stable")[:top]
    merged: dict[str, float] = {}
    for tid in ids.tolist():
        text, lp = tok.decode([tid]), float(logp[tid])
        merged[text] = float(np.logaddexp(merged[text], lp)) if text in merged else lp
    return merged


def _generate(folder: str, compute_type: str, tokens: list[list[str]], options: dict[str, Any],
              seed: int | None) -> list[Any]:
    """Each prompt's generation result, in order: the chunks run at once, each on its own replica; with a
    ``seed`` (sampling) on fresh generators, each seeded apart, a chunk starting while the next one's is made."""
    parts = chunks([len(row) for row in tokens], cores())
    threads = max(1, cores() // len(parts))

    def submit(generator: Any, part: list[int]) -> Any:
        return generator.generate_batch([tokens[i] for i in part], asynchronous=True, **options)

    with _torch_threads_kept():
        if seed is None:
            generators = [_greedy_generator(folder, compute_type, len(parts), threads)]
            pending = [submit(generators[0], part) for part in parts]
        else:
            generators, pending = [], []
            with _LOCK:
                for c, part in enumerate(parts):
                    generators.append(_seeded_generator(folder, compute_type, (seed + c * 0x9E3779B9) % 2**32,
                                                        threads, tokens[0][0]))
                    pending.append(submit(generators[-1], part))
    results: list[Any] = [None] * len(tokens)
    for part, answers in zip(parts, pending, strict=True):
        for i, answer in zip(part, answers, strict=True):
            results[i] = (answer.result(), len(tokens[part[0]]))
    return results


def complete_batch(cfg: LLMConfig, chats: Sequence[list[dict[str, str]]], sample_idxs: Sequence[int],
                   source: str | Path, cache: Path) -> list[Completion]:
    """Answers to ``chats`` (system and user messages) from the CTranslate2 copy of the model in ``source``."""
    if not chats:
        return []
    compute_type = engines.CT2_COMPUTE_TYPE
    folder = str(convert(source, cache, compute_type))
    tok = load_tokenizer(str(source))
    ids = chat_token_ids(tok, chats)
    ends = end_ids(str(source))
    sampling = cfg.temperature > 0
    options: dict[str, Any] = {
        "max_length": cfg.max_tokens, "include_prompt_in_result": False, "end_token": list(ends),
        "return_end_token": True, "sampling_topk": 0 if sampling else 1,
        "sampling_temperature": cfg.temperature if sampling else 1.0,
        "return_logits_vocab": bool(cfg.logprobs), "callback": lambda step: stop_requested(),
    }
    results = _generate(folder, compute_type, [tok.convert_ids_to_tokens(row) for row in ids], options,
                        batch_seed(cfg.seed, sample_idxs) if sampling else None)
    raise_if_stopped(f"in a batch of {len(chats)} local generations")  # a cut batch is no answer
    out = []
    for row, (res, shortest) in zip(ids, results, strict=True):
        gen = list(res.sequences_ids[0])
        finished = bool(gen) and gen[-1] in ends
        if finished:
            gen = gen[:-1]
        firsts = None
        if cfg.logprobs:  # the scores of the prompt's tail beyond its chunk's shortest prompt come first
            firsts = top_first_tokens(np.asarray(res.logits[0][len(row) - shortest]), tok, cfg.logprobs)
        out.append(Completion(text=tok.decode(gen, skip_special_tokens=True).strip(),
                              finish_reason="stop" if finished else "length", prompt_tokens=len(row),
                              completion_tokens=len(gen), top_logprobs=firsts))
    return out
