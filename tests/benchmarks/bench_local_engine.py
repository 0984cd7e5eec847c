"""The local provider's engine against plain transformers ``generate()`` on the same prompts, in one process.

The demo prompts (``data/demo_prompts.csv``, repeated up to ``--prompts``) are answered in batches by
the local provider (``llm.engine``, default auto: CTranslate2 int8 for the embedded SmolLM2) and by a
bare fp32 ``generate()`` of the same model with the same chat template and settings (temperature
0.7, 48 new tokens, batches of 32). The two sides alternate batch by batch, so load on the machine
hits both alike; the conversion and both loads happen before the clock starts. Tokens are the
answers' tokens before the end token.

    .venv/bin/python tests/benchmarks/bench_local_engine.py [--prompts 128] [--engine auto]

Prints, last, ``... ratio R``: the provider's tokens/s over plain ``generate()``'s. Target: R >= 3.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def demo_prompts(n: int) -> list[str]:
    import pandas as pd

    prompts = pd.read_csv(ROOT / "data" / "demo_prompts.csv")["prompt"].tolist()
    return [prompts[i % len(prompts)] for i in range(n)]


def plain_generate(lm, tok, chats: list, max_tokens: int, temperature: float, seed: int) -> int:
    """The reference: one batch through ``generate()``, nothing else; returns the answers' tokens."""
    import torch

    tok.padding_side = "left"
    enc = tok.apply_chat_template(chats, add_generation_prompt=True, return_tensors="pt", padding=True,
                                  return_dict=True).to(lm.device)
    torch.manual_seed(seed)
    with torch.inference_mode():
        out = lm.generate(**enc, max_new_tokens=max_tokens, do_sample=True, temperature=temperature, top_p=None,
                          top_k=None, pad_token_id=tok.pad_token_id)
    gen = out[:, enc["input_ids"].shape[1]:]
    return int((gen != tok.pad_token_id).sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--engine", choices=["auto", "ctranslate2", "transformers"], default="auto")
    args = ap.parse_args()

    import torch
    from equilens.tasks.config import LLMConfig
    from equilens.tasks.llm.ct2_engine import cores
    from equilens.tasks.llm.engines import resolved_engine
    from equilens.tasks.llm.local import LocalProvider, load_causal_lm

    cfg = LLMConfig(provider="local", temperature=args.temperature, max_tokens=args.max_tokens,
                    batch_size=args.batch_size, engine=args.engine)
    engine = resolved_engine(cfg)
    provider = LocalProvider(cfg)
    prompts = demo_prompts(args.prompts)
    t0 = time.perf_counter()
    provider.complete_batch(prompts[:2], [0, 1])  # converts on first use, loads
    lm, tok = load_causal_lm()
    plain_generate(lm, tok, provider.chats(prompts[:2]), 4, args.temperature, 0)
    print(f"{len(prompts)} demo prompts, batches of {args.batch_size}, {args.max_tokens} new tokens, temperature "
          f"{args.temperature}; torch threads {torch.get_num_threads()}, CTranslate2 threads {cores()}; "
          f"set-up {time.perf_counter() - t0:.1f} s")

    took = {"provider": 0.0, "plain": 0.0}
    tokens = {"provider": 0, "plain": 0}
    for start in range(0, len(prompts), args.batch_size):
        batch = prompts[start:start + args.batch_size]
        idxs = list(range(start, start + len(batch)))
        t0 = time.perf_counter()
        tokens["provider"] += sum(c.completion_tokens or 0 for c in provider.complete_batch(batch, idxs))
        took["provider"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        tokens["plain"] += plain_generate(lm, tok, provider.chats(batch), args.max_tokens, args.temperature, start)
        took["plain"] += time.perf_counter() - t0
    rate = {side: tokens[side] / took[side] for side in took}
    print(f"{'':<34} {'tokens':>8} {'seconds':>8} {'tokens/s':>9}")
    print(f"{'local provider (' + engine + ')':<34} {tokens['provider']:>8} {took['provider']:>8.1f} "
          f"{rate['provider']:>9.1f}")
    print(f"{'plain generate() fp32':<34} {tokens['plain']:>8} {took['plain']:>8.1f} {rate['plain']:>9.1f}")
    print(f"local provider ({engine}) over plain generate(): ratio {rate['provider'] / rate['plain']:.2f}")


if __name__ == "__main__":
    main()
