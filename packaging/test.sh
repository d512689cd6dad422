#!/usr/bin/env bash
# Run the test suite (installs first if needed). Extra arguments go to pytest, e.g. -m "not model".
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/setup.sh >/dev/null
export QT_QPA_PLATFORM=offscreen
exec .venv/bin/python -m pytest -q "$@"
