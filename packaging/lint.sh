#!/usr/bin/env bash
# Lint and type-check: `ruff check` over the tree, then mypy over app/, core/, ingest/ and evaluation/ checked as the
# packages they install as (shelfwise.app, shelfwise.core, shelfwise.ingest, shelfwise.evaluation; see [tool.mypy]
# in pyproject.toml).
# Needs the .venv that packaging/setup.sh makes (ruff and mypy come with the `test` extra).
set -euo pipefail
cd "$(dirname "$0")/.."
links=build/mypy-src/shelfwise
mkdir -p "$links"
for d in core app ingest evaluation resources; do
  ln -sfn "../../../$d" "$links/$d"
done
.venv/bin/ruff check .
.venv/bin/mypy
