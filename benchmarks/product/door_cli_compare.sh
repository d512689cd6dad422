#!/bin/bash
# The CLI commands that read the library, run on a scratch copy of the sample, for a before/after comparison of a
# restructuring (docs/eval/restructure-issue36.md, "the second door slice"; issue 51's facade split:
# docs/eval/restructure-issue51.md). Besides the reads: the README's examples, scoped questions in text mode, --no-answer,
# --json, a structural question, a chat with a follow-up, /alone and /new, and the models and doctor reports.
#   usage: benchmarks/product/door_cli_compare.sh TREE OUT WORK
# TREE: a checkout with a .pyroot (shelfwise/{core,app,ingest,resources} -> TREE); OUT: where each command's stdout
# (with its exit code) and stderr go; WORK: a scratch folder (its lib/ and dlib/ are replaced). Every run ingests
# WORK/sample (copy resources/sample there first, so both trees ingest the same paths), then, when WORK/damaged.db
# exists (a library's file cut to half its size), runs the commands on a copy of it too (OUT/damaged).
# Compare two runs with diff -r; progress lines' ETAs, timings, timestamps and pids differ from run to run, and so
# does how many nodes ingest embeds while it parses (EmbedAlongside races the parser):
# benchmarks/product/door_cli_mask.sh OUT masks those in place before the diff. INGEST_FLAGS=--no-index makes the first
# ingest parse only (no embedding alongside: the vectors' batches, hence the last digits of scores, then match run
# to run); the default collection is indexed by `index` after it.
TREE=$1; OUT=$2; WORK=$3
SWBIN=${SWBIN:-$(cd "$(dirname "$0")/../.." && pwd)/.venv/bin/shelfwise}
export PYTHONPATH=$TREE/.pyroot SHELFWISE_EMBEDDER=minilm QT_QPA_PLATFORM=offscreen
MODELS=${MODELS:-$HOME/.local/share/shelfwise/models}
S=$WORK/sample
cd "$WORK" || exit 1
printf 'How many days of annual leave do employees get?\n/quit\n' > q.txt
printf 'How many days of annual leave do employees get?\nand how do I request it?\n/alone What is the mileage rate?\n/new\nin:handbook.pdf\nin:nope.pdf leave?\n/list\n/quit\n' > q2.txt
run() { name=$1; shift; "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"; echo "rc=$?" >> "$OUT/$name.out"; }

export SHELFWISE_HOME=$WORK/lib
rm -rf "$SHELFWISE_HOME" "$OUT"; mkdir -p "$SHELFWISE_HOME" "$OUT"; ln -s "$MODELS" "$SHELFWISE_HOME/models"
SW="nice -n 5 $SWBIN"
run status_empty $SW status
run tree_empty $SW tree
run export_nocoll $SW export -c nope
run ingest $SW ingest "$S" $INGEST_FLAGS
run index_default $SW index
run ingest_again_json $SW ingest "$S" --json
run ingest_other $SW ingest "$S/facilities.md" -c other --no-index
run status $SW status
run status_json $SW status --json
run status_c $SW status -c other
run status_nope $SW status -c nope
run tree $SW tree
run tree_d2 $SW tree -d 2
run tree_json $SW tree --json -d 3 -c other
run tree_nope $SW tree -c nope
run index $SW index -c other
run index_nope $SW index -c nope
run calibrate $SW calibrate --collection default --probes 20
run calibrate_nope $SW calibrate --collection nope
run export $SW export
run export_c $SW export -c other
run export_nope $SW export -c nope
run search $SW search "annual leave"
run search_nope $SW search "annual leave" -c nope
run ask_nope $SW ask "annual leave" --collection nope
run ask $SW ask "How many days of annual leave do employees get?" --no-generate
run chat_nope $SW chat --collection nope
run chat $SW chat < q.txt
run chat_list $SW chat --list
# the README's examples and the other ways to ask (issue 51)
run ask_readme_trace $SW ask "How many days of annual leave do employees get?" --trace --no-answer
run ask_scoped $SW ask "in:handbook.pdf since:2025-01-01 How do I request leave?" --no-generate
run ask_scoped_none $SW ask "type:xlsx in:handbook.pdf What is the mileage rate?"
run ask_scoped_options $SW ask "How do I request leave?" --in handbook.pdf --type pdf --no-generate
run ask_scoped_trace $SW ask "in:handbook.pdf How do I request leave?" --no-answer --trace
run ask_only_filters $SW ask "in:handbook.pdf" --no-generate
run ask_bad_filter $SW ask "since:someday leave?" --no-generate
run ask_json $SW ask "How many days of annual leave do employees get?" --json --no-generate
run ask_structure $SW ask "What are the chapters of the employee handbook?" --no-generate
run ask_conversation $SW ask "How do I request leave?" --conversation new --no-generate
run search_phrase $SW search '"annual leave" -sick'
run search_scoped $SW search leave --in handbook.pdf
run chat_followup $SW chat < q2.txt
run chat_list_after $SW chat --list
run models $SW models
run doctor $SW doctor

[ -f "$WORK/damaged.db" ] || exit 0
export SHELFWISE_HOME=$WORK/dlib
rm -rf "$SHELFWISE_HOME"; mkdir -p "$SHELFWISE_HOME" "$OUT/damaged"; ln -s "$MODELS" "$SHELFWISE_HOME/models"
cp "$WORK/damaged.db" "$SHELFWISE_HOME/lib.db"
SW="nice -n 5 $SWBIN --db $SHELFWISE_HOME/lib.db"
OUT=$OUT/damaged
run status $SW status
run status_json $SW status --json
run tree $SW tree -d 2
run ingest $SW ingest "$S/facilities.md"
run index $SW index
run calibrate $SW calibrate --probes 5
run export $SW export
run search $SW search "annual leave"
run ask $SW ask "How many days of annual leave do employees get?" --no-generate
run chat $SW chat < q.txt
sha256sum "$SHELFWISE_HOME/lib.db" | cut -d' ' -f1 > "$OUT/sha"
