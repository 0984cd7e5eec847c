"""The command line: teaching --help, one-paragraph errors with non-zero exits, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.cli import ROOT, equilens


def test_help_teaches_the_commands() -> None:
    out = equilens("--help")
    assert out.returncode == 0
    for word in ("equilens run configs/demo.yaml", "runs", "show", "compare", "report", "options", "metrics"):
        assert word in out.stdout



def test_a_flow_module_runs_as_a_script_like_equilens_run(tmp_path: Path) -> None:
    """``python flows/<flow>.py CONFIG`` is ``equilens run CONFIG`` for that flow's configs (flows/running/launch.py)."""
    bad = tmp_path / "c.yaml"
    bad.write_text("prompts: {items: [hi]}\nllm: {count: lots}\n")
    script = [sys.executable, str(ROOT / "flows" / "counterfactual.py")]
    out = subprocess.run([*script, str(bad)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "llm.count: Input should be a valid integer" in out.stderr
    assert "Traceback" not in out.stderr + out.stdout
    other = subprocess.run([sys.executable, str(ROOT / "flows" / "stereotype.py"), str(ROOT / "configs" / "demo.yaml")],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert other.returncode == 2, other.stderr
    assert "is a counterfactual config; this script runs stereotype configs" in other.stderr
    helped = subprocess.run([*script, "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0 and "--set" in helped.stdout and "Exit codes" in helped.stdout

def test_options_lists_every_section() -> None:
    out = equilens("options")
    for section in ("[prompts]", "[llm]", "[scoring]", "[metrics]", "[storage]", "[execution]", "[stereotype]",
                    "[bias_test]"):
        assert section in out.stdout
    assert "llm.rate_limit" in out.stdout and "Requests per second" in out.stdout
    heading = ""
    for line in out.stdout.splitlines():  # every key sits under its own section's heading
        if line.startswith("["):
            heading = line[1:line.index("]")]
        elif line.strip() and heading:
            assert line.strip().split(" = ")[0].rpartition(".")[0] == heading, (heading, line)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("prompts: {items: [hi]}\nllm: {count: lots}\n", "llm.count: Input should be a valid integer"),
        ("prompts: {items: [hi]}\nllmm: {}\n", "llmm: unknown key"),
        ("prompts: {path: missing.csv}\n", "prompts.path: missing.csv does not exist (paths are relative to"),
        ("prompts: {items: [hi]}\nllm: {provider: python, target: 'a:b', session: {id_path: id, send_as: sid}}\n",
         "llm: llm.session is read by provider http only"),
        ("prompts: {items: [hi]}\nllm: {provider: python, target: 'a:b', stream: true}\n",
         "llm: llm.stream is read by providers http, openai and azure only; provider python would ignore it"),
        ("assessment: identity\nprompts: {items: [hi]}\nidentity: {signals: [{name: a, template: 'I am {name}.'}, "
         "{name: b, placement: system, at: 2, template: 'I am {name}.'}]}\n",
         "identity.signals #2: signal 'b': at (2) says which turn of a conversation the line is; placement 'system'"),
        ("prompts: {items: [hi, [a, 3]]}\n", "prompts.items: item 2, turn 2 is a number"),
    ],
)
def test_bad_input_is_one_paragraph_and_exit_2(tmp_path: Path, config: str, message: str) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(config + f"storage: {{duckdb_path: {tmp_path / 'e.duckdb'}}}\n")
    out = equilens("run", str(cfg), cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert message in out.stderr
    assert "Traceback" not in out.stderr + out.stdout


def test_not_a_duckdb_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "e.duckdb"
    bad.write_text("not a database")
    out = equilens("runs", "--db", str(bad))
    assert out.returncode == 2
    assert "not a valid DuckDB database" in out.stderr and "Traceback" not in out.stderr


def test_set_override_needs_key_value(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("prompts: {items: [hi]}\n")
    out = equilens("run", str(cfg), "--set", "llm.count")
    assert out.returncode == 2 and "--set expects KEY=VALUE" in out.stderr


_ARRAY_AFTER_A_LARGER_ONE = """
import ctypes, numpy as np
from equilens.tasks.environment import apply_offline_defaults
apply_offline_defaults()
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype, libc.malloc.restype = Info, ctypes.c_void_p
big = np.ones(2 << 20); del big          # 16 MiB, freed: glibc's own rule raises its threshold to it
array = np.ones(1 << 20)                 # 8 MiB
own_pages = libc.mallinfo2().hblkhd
pin = libc.malloc(192 << 10)             # a long-lived neighbour after it
del array
print(own_pages, libc.mallinfo2().fordblks)
"""


@pytest.mark.parametrize(("chosen", "own_pages"), [(None, True), ("33554432", False)])
def test_a_freed_array_is_not_held_in_the_heap_unless_the_environment_chose_a_threshold(chosen, own_pages) -> None:
    """glibc raises its mmap threshold to the size of each large block freed, so the next arrays of a
    few MiB come from the heap, where a neighbour allocated after them pins their pages once they are
    freed. The run's defaults fix the threshold: an 8 MiB array after a freed 16 MiB one gets pages of
    its own, handed back when it goes; a threshold the environment chose (``MALLOC_MMAP_THRESHOLD_``)
    is kept."""
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_MMAP_THRESHOLD_"}
    if chosen:
        env["MALLOC_MMAP_THRESHOLD_"] = chosen
    out = subprocess.run([sys.executable, "-c", _ARRAY_AFTER_A_LARGER_ONE], env=env, capture_output=True,
                         text=True, check=True, cwd=ROOT)
    mapped, free_in_heap = map(int, out.stdout.split())
    assert (mapped >= 8 << 20) is own_pages
    if own_pages:
        assert free_in_heap < 1 << 20, f"{free_in_heap / 2**20:.1f} MiB free but held in the heap"


@pytest.mark.parametrize(("chosen", "pool"), [(None, "system"), ("mimalloc", "mimalloc")])
def test_arrow_buffers_come_from_the_c_allocator_unless_the_environment_chose_a_pool(chosen, pool) -> None:
    """Arrow's own pool kept the memory a stage freed (pandas' strings are Arrow buffers); the run's
    defaults hand Arrow the C allocator, whose freed pages go back at the end of each stage, even
    when pyarrow was imported and used before the defaults were applied."""
    code = ("import pyarrow; pyarrow.array(['x']); from equilens.tasks.environment import apply_offline_defaults; "
            "apply_offline_defaults(); print(pyarrow.default_memory_pool().backend_name)")
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if chosen:
        env["ARROW_DEFAULT_MEMORY_POOL"] = chosen
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         cwd=ROOT)
    assert out.stdout.strip() == pool
