#!/usr/bin/env bash
# Build the one-folder app with PyInstaller, then smoke-test what was built:
#   1. the bundled CLI ingests the sample and answers one question with the bundled model;
#   2. the bundled window starts offscreen on that library, asks the same question and exits when answered.
# Both run with a fresh SHELFWISE_HOME, so the models must come from the bundle (nothing is downloaded).
#
#   bash packaging/build.sh              # build + smoke test  -> dist/shelfwise/
#   bash packaging/build.sh --no-build   # smoke-test an existing dist/shelfwise/
#
# Needs the project venv (.venv) with PyInstaller: .venv/bin/pip install 'pyinstaller>=6' (the "package" extra).
set -euo pipefail
cd "$(dirname "$0")/.."
VPY=${VPY:-.venv/bin/python}
DIST=dist/shelfwise
QUESTION=${QUESTION:-"How many days of paid annual leave does a full-time employee get per year?"}

if [ "${1:-}" != "--no-build" ]; then
  "$VPY" -c "import PyInstaller" 2>/dev/null || {
    echo "PyInstaller is missing: .venv/bin/pip install 'pyinstaller>=6'" >&2; exit 1; }
  # The spec bundles the models from the user data dir: make sure they are assembled/converted (offline).
  "$VPY" -c "from shelfwise.core.models.llama.bundled import bundled_model_path as m; from shelfwise.core.models.encoders.embedder import \
bundled_embedder_path as e; print('models:', m(), e())"
  "$VPY" -m PyInstaller --noconfirm --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/shelfwise.spec
fi

[ -x "$DIST/shelfwise" ] && [ -x "$DIST/shelfwise-app" ] || { echo "no build in $DIST" >&2; exit 1; }
du -sh "$DIST" | sed 's/^/bundle size: /'

SMOKE=$(mktemp -d)
trap 'rm -rf "$SMOKE"' EXIT
export SHELFWISE_HOME="$SMOKE/home"  # empty: the runtime hook must provide the models from the bundle
export QT_QPA_PLATFORM=offscreen
DB="$SMOKE/library.db"
SAMPLE="$DIST/_internal/shelfwise/resources/sample"

echo "== CLI: ingest the bundled sample"
"$DIST/shelfwise" --db "$DB" ingest "$SAMPLE" --collection default
echo "== CLI: ask"
"$DIST/shelfwise" --db "$DB" ask "$QUESTION" | tee "$SMOKE/cli.txt"
grep -q "[A-Za-z]" "$SMOKE/cli.txt" || { echo "CLI smoke test: empty answer" >&2; exit 1; }

echo "== window: start offscreen, ask, exit when answered"
"$DIST/shelfwise-app" --db "$DB" --ask "$QUESTION" --exit-when-answered --quit-after 900 2>&1 \
  | grep -v -E "propagateSizeHints|^load:|llama_kv_cache" | tee "$SMOKE/gui.txt"
grep -q "^answer: ." "$SMOKE/gui.txt" || { echo "window smoke test: no answer" >&2; exit 1; }
ls "$SHELFWISE_HOME/models" | sed 's/^/models linked from the bundle: /'
echo "smoke tests passed: $DIST"
