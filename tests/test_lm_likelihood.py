"""Sentence/token log-likelihoods on tiny random models built offline in tmp_path (``tiny_gpt2`` and
``tiny_bert``, fixtures of conftest.py, over the words of ``tests.fakes.tiny_models.LM_WORDS``)."""

from __future__ import annotations

import numpy as np
import pytest
from equilens.tasks.errors import ConfigError, InputDataError
from equilens.tasks.scoring.likelihood import (
    LanguageModelScorer,
    aul_token_logprobs,
    causal_token_logprobs,
    detect_kind,
    load_language_model,
    pll_token_logprobs,
)

SENTENCES = [
    "the man is here",
    "a woman was a good doctor and she works at home",
    "he is kind",
    "the nurse was smart and kind and good",
]


def test_kind_detection(tiny_gpt2, tiny_bert):
    assert detect_kind(tiny_gpt2) == "causal"
    assert detect_kind(tiny_bert) == "masked"
    assert LanguageModelScorer(tiny_bert).kind == "masked"


def test_causal_batched_equals_unbatched(tiny_gpt2):
    batched = LanguageModelScorer(tiny_gpt2, "causal", batch_size=4)
    single = LanguageModelScorer(tiny_gpt2, "causal", batch_size=1)
    np.testing.assert_allclose(
        batched.sentence_logprobs(SENTENCES), single.sentence_logprobs(SENTENCES), atol=1e-5
    )
    for a, b in zip(batched.token_logprobs(SENTENCES), single.token_logprobs(SENTENCES), strict=True):
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-5)


def test_causal_tokens_sum_and_manual(tiny_gpt2):
    import torch

    scorer = LanguageModelScorer(tiny_gpt2, "causal", batch_size=3)
    toks = scorer.token_logprobs(SENTENCES)
    sums = scorer.sentence_logprobs(SENTENCES)
    for t, s, sent in zip(toks, sums, SENTENCES, strict=True):
        assert t.tokens == sent.split()  # every token scored, the context token is not
        assert np.all(t.logprobs < 0)
        assert t.total == pytest.approx(s)
    # manual: prepend <|endoftext|> (id 0), run the unpadded sentence, read next-token log-probs
    model, tok = scorer._load()
    ids = torch.tensor([[0] + tok(SENTENCES[1], add_special_tokens=False).input_ids])
    with torch.inference_mode():
        lp = torch.log_softmax(model(ids).logits[0, :-1], -1)
    manual = lp[torch.arange(ids.shape[1] - 1), ids[0, 1:]].numpy()
    np.testing.assert_allclose(toks[1].logprobs, manual, atol=1e-5)


def test_pll_equals_manual_masking_loop(tiny_bert):
    import torch

    scorer = LanguageModelScorer(tiny_bert, "masked", batch_size=5)
    model, tok = scorer._load()
    sent = SENTENCES[1]
    ids = tok(sent, return_tensors="pt").input_ids[0]
    manual = []
    with torch.inference_mode():
        for pos in range(1, len(ids) - 1):  # skip [CLS] and [SEP]
            masked = ids.clone()
            masked[pos] = tok.mask_token_id
            logits = model(masked.unsqueeze(0)).logits[0, pos]
            manual.append(torch.log_softmax(logits, -1)[ids[pos]].item())
    toks = scorer.token_logprobs(SENTENCES)
    np.testing.assert_allclose(toks[1].logprobs, manual, atol=1e-5)
    assert scorer.sentence_logprobs(SENTENCES)[1] == pytest.approx(sum(manual), abs=1e-4)


def test_masked_batched_equals_unbatched(tiny_bert):
    model_dir = tiny_bert
    a = LanguageModelScorer(model_dir, "masked", batch_size=64).sentence_logprobs(SENTENCES)
    b = LanguageModelScorer(model_dir, "masked", batch_size=1).sentence_logprobs(SENTENCES)
    np.testing.assert_allclose(a, b, atol=1e-5)
    c = LanguageModelScorer(model_dir, "masked", batch_size=64).aul(SENTENCES)
    d = LanguageModelScorer(model_dir, "masked", batch_size=1).aul(SENTENCES)
    np.testing.assert_allclose(c, d, atol=1e-5)


def test_aul_is_mean_of_unmasked_token_logprobs(tiny_bert):
    import torch

    scorer = LanguageModelScorer(tiny_bert, "masked")
    model, tok = scorer._load()
    ids = tok(SENTENCES[0], return_tensors="pt").input_ids
    with torch.inference_mode():
        lp = torch.log_softmax(model(ids).logits[0], -1)
    inner = range(1, ids.shape[1] - 1)
    manual = np.mean([lp[p, ids[0, p]].item() for p in inner])
    assert scorer.aul(SENTENCES)[0] == pytest.approx(manual, abs=1e-5)
    per = aul_token_logprobs(model, tok, SENTENCES[:1])
    assert per[0].tokens == SENTENCES[0].split()


def test_functions_and_errors(tiny_gpt2, tiny_bert):
    scorer = LanguageModelScorer(tiny_gpt2, "causal")
    model, tok = scorer._load()
    assert len(causal_token_logprobs(model, tok, ["he is"])[0].logprobs) == 2
    with pytest.raises(InputDataError):
        scorer.sentence_logprobs(["ok", "  "])
    with pytest.raises(InputDataError):
        scorer.sentence_logprobs("the man")
    with pytest.raises(ConfigError):
        LanguageModelScorer(tiny_gpt2, "bidirectional")  # type: ignore[arg-type]
    bert = LanguageModelScorer(tiny_bert, "masked")
    m, t = bert._load()
    assert len(pll_token_logprobs(m, t, ["he is kind"])[0].logprobs) == 3


@pytest.mark.expensive
def test_smollm2_sentence_logprobs():
    scorer = LanguageModelScorer(None, batch_size=8)
    lp = scorer.sentence_logprobs(["The cat sat on the mat.", "Mat the on sat cat the."])
    assert scorer.kind == "causal"
    assert lp[0] > lp[1]


def test_mean_pooled_embedder_batches_agree(tiny_bert):
    from equilens.tasks.scoring.embedders import mean_pooled_embedder

    model, tok, _ = load_language_model(tiny_bert, "masked")
    big = mean_pooled_embedder(model.bert, tok, batch_size=8)(SENTENCES)
    small = mean_pooled_embedder(model.bert, tok, batch_size=1)(SENTENCES)
    assert big.shape == (4, 16)
    np.testing.assert_allclose(big, small, atol=1e-5)


def test_crows_pairs_scores_masked_uses_shared_tokens(tiny_bert):
    from equilens.tasks.assessments.bias_test.crows_pairs import CrowsPair, crows_pairs_scores

    scorer = LanguageModelScorer(tiny_bert, "masked")
    pair = CrowsPair("the man is a doctor", "the woman is a doctor", "stereo", "gender")
    more, less = crows_pairs_scores(scorer, [pair])
    tm, tl = scorer.token_logprobs([pair.sent_more, pair.sent_less])
    # shared tokens: the, is, a, doctor (positions 0, 2, 3, 4)
    assert more[0] == pytest.approx(tm.logprobs[[0, 2, 3, 4]].sum())
    assert less[0] == pytest.approx(tl.logprobs[[0, 2, 3, 4]].sum())


def _manual_mask_logprob(path: str, text: str, target: str, which: int) -> float:
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok, model = AutoTokenizer.from_pretrained(path), AutoModelForMaskedLM.from_pretrained(path).eval()
    ids = tok(text, return_tensors="pt").input_ids
    pos = (ids[0] == tok.mask_token_id).nonzero()[which].item()
    with torch.no_grad():
        logp = model(input_ids=ids).logits[0, pos].log_softmax(-1)
    return float(logp[tok.convert_tokens_to_ids(target)])


def test_kurita_target_and_prior_probabilities_by_hand(tiny_bert):
    from equilens.tasks.scoring.masked_targets import kurita_logprobs

    model, tok, _ = load_language_model(tiny_bert, "masked")
    items = [("[T] is [A]", "he", "nurse"), ("[A] is [T]", "she", "doctor"), ("[T] is [A]", "doctors", "nurse")]
    lp, prior = kurita_logprobs(model, tok, items, batch_size=2)
    # "[MASK] is nurse": he at the only mask; prior "[MASK] is [MASK]": he at the first mask
    assert lp[0] == pytest.approx(_manual_mask_logprob(tiny_bert, "[MASK] is nurse", "he", 0), abs=1e-5)
    assert prior[0] == pytest.approx(_manual_mask_logprob(tiny_bert, "[MASK] is [MASK]", "he", 0), abs=1e-5)
    # the attribute comes first: in the prior the target is the second mask
    assert lp[1] == pytest.approx(_manual_mask_logprob(tiny_bert, "doctor is [MASK]", "she", 0), abs=1e-5)
    assert prior[1] == pytest.approx(_manual_mask_logprob(tiny_bert, "[MASK] is [MASK]", "she", 1), abs=1e-5)
    assert np.isnan(lp[2]) and np.isnan(prior[2])  # "doctors" is not one token of this vocabulary
    assert lp[0] != prior[0]


def test_target_logprobs_refuse_a_causal_lm(tiny_gpt2):
    with pytest.raises(ConfigError):
        LanguageModelScorer(tiny_gpt2).target_logprobs([("[T] is [A]", "he", "nurse")])
