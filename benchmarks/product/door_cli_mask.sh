#!/bin/bash
# Mask what differs from run to run in benchmarks/product/door_cli_compare.sh's OUT (in place): seconds, rates, ETAs,
# timestamps, pids, a traceback's frames (the code's files and lines: a traceback itself still shows), and the
# indexing progress lines that carry an ETA (printed or not by how much time has passed).
#   usage: benchmarks/product/door_cli_mask.sh OUT     then: diff -r OUT_BEFORE OUT_AFTER
find "$1" -type f \( -name '*.out' -o -name '*.err' \) -print0 | xargs -0 sed -i -E \
  -e 's/[0-9]+(\.[0-9]+)? ?(s|ms|seconds?)\b/T/g' \
  -e 's/[0-9]+(\.[0-9]+)? (pages|passages|nodes|files)\/s/R/g' \
  -e 's/"([a-z_]*(seconds|elapsed|wall|eta|started|finished|created|updated|time)[a-z_]*)": [0-9.e+-]+/"\1": T/g' \
  -e 's/"pid": [0-9]+/"pid": P/g' -e 's/^  File "[^"]*", line [0-9]+, in .*/  File F/' \
  -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2})?(\.[0-9]+)?/DATE/g' \
  -e 's/pid [0-9]+/pid P/g' -e 's/ETA [^ )]*/ETA E/g' -e 's/[0-9]+m[0-9]+T/T/g' \
  -e '/^Indexing: .*ETA E$/d'  # a progress line with an ETA is printed when enough time has passed
