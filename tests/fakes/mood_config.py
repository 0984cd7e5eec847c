"""A loopback model whose answer's mood does not depend on the group words, and the counterfactual
config (gender only, no names) that runs prompts against it: shared by the command-line tests of
the power plan and of stopping when settled."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

MOODS = ["a wonderful, happy day", "an awful, sad day", "an ordinary day", "a good day", "a bad, tiring day"]


def mood_reply(key: Callable[[str], int]) -> Callable[[dict], str]:
    """The server's reply: one of :data:`MOODS`, picked by ``key`` of the prompt's text."""
    return lambda body: f"It was {MOODS[key(body['messages'][-1]['content']) % len(MOODS)]}."


def mood_config(tmp_path: Path, base_url: str, prompts: list[str], permutations: int) -> Path:
    """A YAML config of ``prompts`` against the server at ``base_url``, stored under ``tmp_path``."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"prompts: {{items: {prompts}}}\ncounterfactual: {{attributes: [gender], detect_names: false}}\n"
                   f"llm: {{provider: openai, model: fake, base_url: '{base_url}', max_retries: 0}}\n"
                   f"metrics: {{bootstrap_resamples: 50, permutations: {permutations}}}\n"
                   f"storage: {{duckdb_path: '{tmp_path / 'e.duckdb'}', reports_dir: null}}\n")
    return cfg
