"""The local provider's engines (``llm.engine``): CTranslate2 behind the provider keeps what transformers gave.

Tiny Llama models built on the spot (SmolLM2's architecture) are converted in well under a second.
CTranslate2 at int8 does not reproduce fp32 (the weights are rounded to 8 bits a row), so equality with
the transformers engine is tested at CTranslate2's float32 compute type, and int8 for what it must keep.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from equilens.tasks.config import LLMConfig
from equilens.tasks.errors import ModelLoadError
from equilens.tasks.llm import cache_key, ct2_engine, engines
from equilens.tasks.llm.local import LocalProvider, cache_dir, load_causal_lm
from equilens.tasks.llm.stop import RunInterrupted, clear_stop, request_stop

pytest.importorskip("ctranslate2")

WORDS = "the a cat dog is good bad yes no hello why be kind and nurse he she doctor".split()
PROMPTS = ["is he a good nurse", "hello", "why is the dog bad and the cat good"]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Conversions go to one cache dir for this module; no stop request leaks between tests."""
    monkeypatch.setenv("EQUILENS_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "engine-cache"))
    clear_stop()
    yield
    clear_stop()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> str:
    from tests.fakes.tiny_models import tiny_llama

    return tiny_llama(tmp_path_factory.mktemp("tiny-llama"), WORDS)


@pytest.fixture(scope="module")
def endless(tmp_path_factory: pytest.TempPathFactory) -> str:
    from tests.fakes.tiny_models import tiny_llama

    return tiny_llama(tmp_path_factory.mktemp("endless-llama"), WORDS, endless=True)


def _cfg(model: str, engine: str = "ctranslate2", **kw: object) -> LLMConfig:
    return LLMConfig(**{"provider": "local", "model": model, "engine": engine, "system_prompt": "be kind",
                        "temperature": 0.0, "max_tokens": 12, **kw})


def _answers(cfg: LLMConfig, prompts: list[str] = PROMPTS, **kw: object) -> list:
    return LocalProvider(cfg).complete_batch(prompts, list(range(len(prompts))), **kw)


def test_ctranslate2_answers_a_batch_with_the_same_prompt_tokens_as_transformers(tiny: str) -> None:
    answers = _answers(_cfg(tiny))
    assert len(answers) == 3 and all(isinstance(a.text, str) and a.finish_reason in ("stop", "length") for a in answers)
    assert all(0 < a.completion_tokens <= 12 for a in answers if a.finish_reason == "length")
    # the transformers path's padded batch, pads dropped, is the token ids the CTranslate2 engine sends
    _, tok = load_causal_lm(tiny)
    tok.padding_side = "left"
    chats = LocalProvider(_cfg(tiny)).chats(PROMPTS)
    enc = tok.apply_chat_template(chats, add_generation_prompt=True, return_tensors="pt", padding=True, return_dict=True)
    today = [row[mask.bool()].tolist() for row, mask in zip(enc["input_ids"], enc["attention_mask"], strict=True)]
    assert ct2_engine.chat_token_ids(ct2_engine.load_tokenizer(tiny), chats) == today
    assert [a.prompt_tokens for a in answers] == [len(row) for row in today]
    assert today[0][:3] == tok.convert_tokens_to_ids(["<|im_start|>", "system", "be"])


def test_greedy_at_float32_equals_the_transformers_engine(tiny: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engines, "CT2_COMPUTE_TYPE", "float32")
    monkeypatch.setattr(ct2_engine, "cores", lambda: 3)  # 18 prompts: three chunks of six, sorted by length
    prompts, systems = PROMPTS * 6, [None, "be good", None, "be kind and good", None, None] * 3
    ours = _answers(_cfg(tiny, logprobs=4), prompts, systems=systems)
    theirs = _answers(_cfg(tiny, "transformers", logprobs=4), prompts, systems=systems)
    assert [(a.text, a.finish_reason, a.prompt_tokens, a.completion_tokens) for a in ours] == \
           [(a.text, a.finish_reason, a.prompt_tokens, a.completion_tokens) for a in theirs]
    assert len({a.text for a in ours}) > 3  # the systems changed answers
    for a, b in zip(ours, theirs, strict=True):  # first-token log-probabilities of prompts of many lengths
        assert a.top_logprobs.keys() == b.top_logprobs.keys()
        assert all(abs(a.top_logprobs[k] - b.top_logprobs[k]) < 1e-4 for k in a.top_logprobs)


def test_int8_keeps_the_prompts_and_answers_within_max_tokens(tiny: str) -> None:
    """int8 is the default; its answers differ from fp32's in places, never in shape."""
    cfg = _cfg(tiny, max_tokens=5)
    assert cache_key(cfg, "p", 0) != cache_key(_cfg(tiny, "transformers", max_tokens=5), "p", 0)
    answers = _answers(cfg)
    assert all(a.completion_tokens <= 5 for a in answers)
    assert ct2_engine.converted_dir(tiny, cache_dir(), "int8").is_dir()  # converted once, into the cache dir


def test_systems_reach_the_prompt(tiny: str) -> None:
    plain, own = _answers(_cfg(tiny), ["hello"]), _answers(_cfg(tiny), ["hello"], systems=["be kind and good"])
    assert own[0].prompt_tokens == plain[0].prompt_tokens + 2  # "and good" beyond the configured "be kind"
    assert _answers(_cfg(tiny), ["hello"], systems=[None])[0] == plain[0]


def test_sampling_follows_the_seed_per_batch(tiny: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ct2_engine, "cores", lambda: 2)  # 16 prompts: two chunks, each on its own generator
    cfg, prompts = _cfg(tiny, temperature=1.0, max_tokens=16), PROMPTS[:1] * 16
    first = [a.text for a in _answers(cfg, prompts)]
    _answers(_cfg(tiny, temperature=1.0, seed=9))  # another batch in between draws from its own seed
    assert [a.text for a in _answers(cfg, prompts)] == first
    assert [a.text for a in _answers(_cfg(tiny, temperature=1.0, max_tokens=16, seed=1), prompts)] != first
    assert sum(a != b for a, b in zip(first[:8], first[8:], strict=True)) >= 6  # the two chunks draw apart
    assert len(set(first)) > 8


def test_a_stop_request_ends_a_ctranslate2_batch_between_tokens(endless: str) -> None:
    short = _answers(_cfg(endless, max_tokens=200), PROMPTS[:2])  # converts and loads before the clock
    assert [a.completion_tokens for a in short] == [200, 200] and {a.finish_reason for a in short} == {"length"}
    t0 = time.monotonic()
    assert [a.completion_tokens for a in _answers(_cfg(endless, max_tokens=500), PROMPTS[:2])] == [500, 500]
    per_500 = time.monotonic() - t0
    timer = threading.Timer(0.3, request_stop)
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(RunInterrupted):
        _answers(_cfg(endless, max_tokens=8000), PROMPTS[:2])
    stopped_after = time.monotonic() - t0
    print(f"stopped after {stopped_after:.2f} s; 500 tokens take {per_500:.2f} s")
    # 8,000 tokens take more than 16x the time of 500 (attention grows with length); stopped, about 0.3 s
    assert stopped_after < 0.3 + max(1.0, 2 * per_500), (stopped_after, per_500)


def test_logprobs_come_back_for_decisions(tiny: str) -> None:
    answers = _answers(_cfg(tiny, logprobs=5, max_tokens=1))
    for a in answers:
        assert 1 <= len(a.top_logprobs) <= 5 and all(v <= 0 for v in a.top_logprobs.values())
        assert a.completion_tokens <= 1
    assert engines.resolved_engine(_cfg(tiny, logprobs=5)) == "ctranslate2"  # chosen outright: int8 reads them


def test_engine_transformers_keeps_todays_path_and_keys(tiny: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_ct2(*args: object, **kw: object) -> None:
        raise AssertionError("the CTranslate2 engine was called")

    monkeypatch.setattr(ct2_engine, "complete_batch", no_ct2)
    assert [a.prompt_tokens for a in _answers(_cfg(tiny, "transformers"))] == [15, 11, 19]
    # a key exactly as before the engine existed (computed by the code of that time)
    cfg = LLMConfig(provider="local", engine="transformers")
    assert cache_key(cfg, "Is he a nurse?", 2, "sys") == "aea8c23e177c1e8c8179d8415b7b0789c39119713d9f28852522a10845e260ba"


@pytest.fixture
def _tiny_as_embedded(tiny: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``auto`` treats the tiny model as the embedded one, on a machine without a GPU."""
    monkeypatch.setattr(engines, "SMOLLM2_NAME", tiny)
    monkeypatch.setattr(engines, "transformers_on_accelerator", lambda: False)
    engines.ctranslate2_imports.cache_clear()
    yield tiny
    engines.ctranslate2_imports.cache_clear()


def test_auto_uses_ctranslate2_when_it_imports(_tiny_as_embedded: str, monkeypatch: pytest.MonkeyPatch) -> None:
    called = []
    real = ct2_engine.complete_batch
    monkeypatch.setattr(ct2_engine, "complete_batch", lambda *a, **kw: called.append(1) or real(*a, **kw))
    cfg = _cfg(_tiny_as_embedded, "auto")
    assert engines.resolved_engine(cfg) == "ctranslate2" and len(_answers(cfg)) == 3 and called
    assert engines.engine_key(cfg) == "ctranslate2-int8"


def test_auto_falls_back_to_transformers_when_ctranslate2_cannot_be_imported(
        _tiny_as_embedded: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ctranslate2", None)  # import ctranslate2 raises ImportError
    monkeypatch.setattr(ct2_engine, "complete_batch", lambda *a, **kw: pytest.fail("CTranslate2 engine called"))
    cfg = _cfg(_tiny_as_embedded, "auto")
    assert engines.resolved_engine(cfg) == "transformers" and engines.engine_key(cfg) is None
    assert cache_key(cfg, "p", 0) == cache_key(_cfg(_tiny_as_embedded, "transformers"), "p", 0)
    assert [a.prompt_tokens for a in _answers(cfg)] == [15, 11, 19]


def test_ctranslate2_chosen_outright_without_the_package_is_a_model_load_error(
        tiny: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ctranslate2", None)
    with pytest.raises(ModelLoadError, match="pip install ctranslate2"):
        ct2_engine.complete_batch(_cfg(tiny), [[{"role": "user", "content": "hi"}]], [0], tiny, Path("unused"))


def test_auto_keeps_log_probabilities_other_models_and_gpus_on_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engines, "transformers_on_accelerator", lambda: False)
    embedded = LLMConfig(provider="local")
    assert engines.resolved_engine(embedded) == "ctranslate2"
    assert engines.resolved_engine(LLMConfig(provider="local", logprobs=10)) == "transformers"
    assert engines.resolved_engine(LLMConfig(provider="local", model="/some/folder")) == "transformers"
    assert engines.engine_key(LLMConfig(provider="openai", model="m")) is None
    monkeypatch.setattr(engines, "transformers_on_accelerator", lambda: True)
    assert engines.resolved_engine(embedded) == "transformers"
    with pytest.raises(ValueError, match="engine"):
        LLMConfig(provider="local", engine="llama.cpp")


def test_the_conversion_is_cached_beside_the_copy_and_written_once(tiny: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "smollm2-135m-instruct-fp32"
    assert ct2_engine.converted_dir(copy, tmp_path, "int8") == tmp_path / "smollm2-135m-instruct-ct2-int8"
    first = ct2_engine.convert(tiny, tmp_path, "int8")
    assert first.parent == tmp_path and [p.name for p in tmp_path.iterdir()] == [first.name]  # no .tmp left
    monkeypatch.setattr(ct2_engine, "_run_converter", lambda *a: pytest.fail("converted twice"))
    assert ct2_engine.convert(tiny, tmp_path, "int8") == first


def test_a_cache_dir_that_cannot_be_written_converts_to_a_temporary_copy(tiny: str, tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    copy = ct2_engine.convert(tiny, blocked / "cache", "int8")  # mkdir under a file fails
    assert copy.is_dir() and not str(copy).startswith(str(blocked))
    assert ct2_engine.convert(tiny, blocked / "cache", "int8") == copy  # once a process


@pytest.mark.expensive  # loads the real SmolLM2 and converts it (~15 s once)
def test_smollm2_on_ctranslate2_answers_like_the_transformers_engine_in_shape() -> None:
    cfg = LLMConfig(provider="local", engine="ctranslate2", temperature=0.0, max_tokens=16)
    prompts = ["Is he a good nurse? Answer yes or no.", "Describe a typical day of a woman who is an engineer."]
    ours, theirs = _answers(cfg, prompts), _answers(LLMConfig(**{**cfg.model_dump(), "engine": "transformers"}), prompts)
    assert [a.prompt_tokens for a in ours] == [a.prompt_tokens for a in theirs]
    assert all(a.text and a.completion_tokens for a in ours)
    decisions = _answers(LLMConfig(**{**cfg.model_dump(), "logprobs": 10, "max_tokens": 1}), prompts[:1])
    assert decisions[0].top_logprobs and max(decisions[0].top_logprobs.values()) <= 0
