#!/usr/bin/env bash
# Set up (first time only), ingest the bundled sample handbook and ask it a question; then open the window if
# there is a display. Headless, it does the job from the CLI and says how to open the window.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/setup.sh
SW=.venv/bin/shelfwise
DB="${SHELFWISE_DB:-$(.venv/bin/python -c 'from shelfwise.core.paths import data_dir; print(data_dir() / "sample.db")')}"
# the sample library holds this checkout's sample only: one from another checkout (or an older copy) is removed
# first, or every answer would cite each sentence twice
if [ -f "$DB" ]; then
  mapfile -t others < <($SW --db "$DB" status --json --collection default 2>/dev/null | .venv/bin/python -c '
import json, os, sys
here = os.path.realpath(sys.argv[1]) + os.sep
for d in json.load(sys.stdin)["documents"]:
    if not d["path"].startswith(here):
        print(d["path"])' resources/sample 2>/dev/null || true)
  if [ "${#others[@]}" -gt 0 ]; then
    echo "The sample library has ${#others[@]} documents from another copy of the sample; removing them."
    $SW --db "$DB" remove --collection default --no-index "${others[@]}" >/dev/null  # the ingest below indexes
  fi
fi
$SW --db "$DB" ingest resources/sample --collection default || true
$SW --db "$DB" ask "How many days of annual leave do employees get?" --trace
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec $SW --db "$DB" app --sample
else
  echo
  echo "No display here. On a desktop, open the window with:  .venv/bin/shelfwise --db \"$DB\" app --sample"
fi
