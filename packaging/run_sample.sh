#!/usr/bin/env bash
# Set up (first time only), ingest the bundled sample handbook and ask it a question; then open the window if
# there is a display. Headless, it does the job from the CLI and says how to open the window.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/setup.sh
SW=.venv/bin/shelfwise
DB="${SHELFWISE_DB:-$(.venv/bin/python -c 'from shelfwise.core.paths import data_dir; print(data_dir() / "sample.db")')}"
$SW --db "$DB" ingest resources/sample --collection default || true
$SW --db "$DB" ask "How many days of annual leave do employees get?" --trace
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec $SW --db "$DB" app --sample
else
  echo
  echo "No display here. On a desktop, open the window with:  .venv/bin/shelfwise --db \"$DB\" app --sample"
fi
