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
# the files run on SHELFWISE_TEST_WORKERS processes (pytest-xdist; 2 by default, 0 for one process): a file's tests
# stay together on one worker, so its module fixtures are built once; each worker builds the session's own
# (the sample ingested once per worker)
workers="${SHELFWISE_TEST_WORKERS:-2}"
exec .venv/bin/python -m pytest -q -n "$workers" --dist loadfile --durations=20 --junit-xml=build/test-times.xml "$@"
