#!/usr/bin/env bash
# Run the test suite (installs first if needed). Extra arguments go to pytest, e.g. -m "not model".
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/setup.sh >/dev/null
# the judge's training pipeline is tested on a tiny slice (tests/test_judge_training.py): development extras only,
# never the app's (CPU PyTorch; pip resolves torch==2.13.0 to the CPU wheel where one is offered)
if ! .venv/bin/python -c "import torch, tokenizers" >/dev/null 2>&1; then
  echo "test: installing the train extra (CPU PyTorch) for the judge's training tests"
  .venv/bin/python -m pip install -q -e '.[train]' >>.venv/setup-pip.log 2>&1 \
    || { echo "test: 'pip install -e .[train]' failed; see .venv/setup-pip.log" >&2; exit 1; }
fi
# llama.cpp's llama-server for tests/test_server.py (packaging/server.sh: built once into ~/.cache/shelfwise-server,
# about 9 minutes on 2 cores the first time, a check of the binary after that; SHELFWISE_SERVER_BUILD=0 skips it,
# and those tests then skip saying so)
if [ "${SHELFWISE_SERVER_BUILD:-1}" != 0 ]; then
  bash packaging/server.sh build
fi
export QT_QPA_PLATFORM=offscreen
# the slowest tests are listed at the end, so a suite that outgrows its budget says where the time went; every
# test's time is in build/test-times.xml (JUnit XML) for a closer look
mkdir -p build
exec .venv/bin/python -m pytest -q --durations=20 --junit-xml=build/test-times.xml "$@"
