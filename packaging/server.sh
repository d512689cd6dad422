#!/usr/bin/env bash
# llama.cpp's own `llama-server` for a team: built from the llama.cpp sources that the installed llama-cpp-python
# vendors (the same version, so a server's vectors are the in-process encoder's), and started once per model.
#
#   bash packaging/server.sh build            build llama-server (idempotent: a second run only checks)
#   bash packaging/server.sh path             print the built binary's path (exit 1 when it is not built)
#   bash packaging/server.sh start [--judge]  start the encoder and the answer model (and the judge) servers
#   bash packaging/server.sh status | stop    what runs / stop what `start` started
#   bash packaging/server.sh alias ROLE FILE  the --alias `start` gives FILE in ROLE (encoder, answer, judge)
#
# The build needs cmake and a C++ compiler, no network beyond the registry pip already uses: the llama-cpp-python
# sdist is fetched with `pip download` into $SHELFWISE_SERVER_CACHE (default ~/.cache/shelfwise-server), outside the
# repository, and compiled there (about 9 minutes on 2 cores; docs/server.md has the figures). The web UI is not
# built and nothing is downloaded at build time (LLAMA_USE_PREBUILT_UI=OFF, no curl, no OpenSSL).
# Run it from a checkout where packaging/setup.sh has made .venv (it reads the llama-cpp-python version and finds
# the bundled models through the package).
set -euo pipefail
cd "$(dirname "$0")/.."
VPY=${SHELFWISE_PYTHON:-.venv/bin/python}
cache="${SHELFWISE_SERVER_CACHE:-$HOME/.cache/shelfwise-server}"
mode="${1:-build}"
[ $# -gt 0 ] && shift

llama_version() {
  "$VPY" -c 'import importlib.metadata as m; print(m.version("llama_cpp_python"))'
}

# The same backend choice as packaging/setup.sh (SHELFWISE_GPU=cuda|vulkan|metal|cpu chooses).
detect_gpu() {
  local gpu="${SHELFWISE_GPU:-}"
  if [ -z "$gpu" ]; then
    if [ "$(uname -s)" = Darwin ]; then gpu=metal
    elif { command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; } &&
         { [ -e /proc/driver/nvidia/version ] || nvidia-smi -L >/dev/null 2>&1; }; then gpu=cuda
    elif command -v glslc >/dev/null 2>&1 && command -v vulkaninfo >/dev/null 2>&1 &&
         vulkaninfo --summary 2>/dev/null | grep -q deviceName &&
         { pkg-config --exists vulkan 2>/dev/null || [ -f /usr/include/vulkan/vulkan.h ]; }; then gpu=vulkan
    else gpu=cpu
    fi
  fi
  echo "$gpu"
}

build_dir() {  # one build folder per llama.cpp version and backend
  echo "$cache/build-$(llama_version)-$(detect_gpu)"
}

binary() {
  echo "$(build_dir)/bin/llama-server"
}

do_build() {
  local version gpu gpu_args src bdir log jobs flags
  version="$(llama_version)"
  gpu="$(detect_gpu)"
  case "$gpu" in
    cuda) gpu_args="-DGGML_CUDA=on"
      if ! command -v nvcc >/dev/null 2>&1; then export CUDACXX=/usr/local/cuda/bin/nvcc; fi ;;
    vulkan) gpu_args="-DGGML_VULKAN=on" ;;
    metal) gpu_args="-DGGML_METAL=on" ;;
    cpu) gpu_args="" ;;
    *) echo "server: SHELFWISE_GPU=$gpu: use cuda, vulkan, metal or cpu" >&2; exit 2 ;;
  esac
  bdir="$(build_dir)"
  local stamp="$bdir/.shelfwise-built" want="llama-cpp-python $version $gpu"
  if [ -x "$bdir/bin/llama-server" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
     "$bdir/bin/llama-server" --version >/dev/null 2>&1; then
    echo "server: llama-server from llama-cpp-python $version ($gpu) is built: $bdir/bin/llama-server"
    return 0
  fi
  mkdir -p "$cache"
  log="$cache/build-$version-$gpu.log"
  : > "$log"
  src="$cache/llama_cpp_python-$version"
  if [ ! -f "$src/vendor/llama.cpp/CMakeLists.txt" ]; then
    if [ ! -f "$cache/llama_cpp_python-$version.tar.gz" ]; then
      echo "server: fetching the llama-cpp-python $version sources (pip download, about 75 MB)"
      if ! "$VPY" -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$version" -d "$cache" \
          >>"$log" 2>&1; then
        echo "server: could not fetch llama-cpp-python $version's sdist; the last lines of $log:" >&2
        tail -n 20 "$log" >&2
        exit 1
      fi
    fi
    tar -xzf "$cache/llama_cpp_python-$version.tar.gz" -C "$cache"
  fi
  jobs="${SHELFWISE_SERVER_JOBS:-$(nproc 2>/dev/null || echo 2)}"
  # Native instructions without Intel AMX, as packaging/setup.sh builds llama-cpp-python (its AMX kernels crash
  # where the OS does not grant the tile state). A static binary: nothing to install beside it.
  flags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  if [ "$(uname -s)" = Darwin ]; then flags=""; fi
  echo "server: building llama-server from llama-cpp-python $version's llama.cpp for $gpu, $jobs jobs"
  echo "        (about 9 minutes on 2 cores; the compiler's messages go to $log)"
  local t0=$SECONDS
  # shellcheck disable=SC2086
  if ! { cmake -S "$src/vendor/llama.cpp" -B "$bdir" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
           -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON \
           -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
           -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" $gpu_args &&
         cmake --build "$bdir" --config Release --target llama-server -j "$jobs"; } >>"$log" 2>&1; then
    echo "server: the build failed; the last lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
  "$bdir/bin/llama-server" --version >>"$log" 2>&1 || {
    echo "server: the built llama-server does not run; the last lines of $log:" >&2; tail -n 20 "$log" >&2; exit 1; }
  echo "$want" > "$stamp"
  echo "server: built in $((SECONDS - t0)) s: $bdir/bin/llama-server"
}

# ---------------------------------------------------------------------------------------------------- start/stop
run_dir="$cache/run"
host="${SHELFWISE_SERVER_HOST:-127.0.0.1}"
port_base="${SHELFWISE_SERVER_PORT:-8181}"  # encoder, answer model, judge: port_base, +1, +2
threads="${SHELFWISE_SERVER_THREADS:-$(nproc 2>/dev/null || echo 2)}"
# Slots (--parallel): requests each server works on at once; docs/server.md has what was measured.
enc_slots="${SHELFWISE_SERVER_ENCODER_SLOTS:-4}"
gen_slots="${SHELFWISE_SERVER_ANSWER_SLOTS:-4}"
judge_slots="${SHELFWISE_SERVER_JUDGE_SLOTS:-4}"

model_file() {  # the GGUF of a bundled model, found through the package (the user data dir or resources/)
  case "$1" in
    encoder) "$VPY" -c 'import sys
from shelfwise.core.models.encoders.embedder import resolve_embedder
print(resolve_embedder(sys.argv[1]))' "${SHELFWISE_SERVER_ENCODER:-embeddinggemma}" ;;
    answer) "$VPY" -c 'from shelfwise.core.models.llama.bundled import resolve_model
import os; print(resolve_model(os.environ.get("SHELFWISE_SERVER_ANSWER") or None))' ;;
    judge) "$VPY" -c 'from shelfwise.core.models.encoders.cross_encoder import bundled_judge_path
import os; print(os.environ.get("SHELFWISE_SERVER_JUDGE") or bundled_judge_path())' ;;
  esac
}

alias_of() {  # role file: the file's identity, the model id it has in process (core/models/identity.py), so what
  # was stored with it in process (vectors, calibration, thresholds) is used with the server, and the reverse
  "$VPY" -c 'import sys
from pathlib import Path
from shelfwise.core.models.identity import model_identity
print(model_identity(Path(sys.argv[1])))' "$2"
}

start_one() {  # role port model args...
  local role="$1" port="$2" model="$3"
  shift 3
  local pidf="$run_dir/$role.pid" log="$run_dir/$role.log"
  if [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; then
    echo "server: the $role server already runs (pid $(cat "$pidf")); bash packaging/server.sh stop first"
    return 0
  fi
  nohup "$(binary)" -m "$model" --alias "$(alias_of "$role" "$model")" --host "$host" --port "$port" \
    --threads "$threads" "$@" >"$log" 2>&1 &
  echo $! > "$pidf"
  local url="http://$host:$port"
  for _ in $(seq 1 120); do
    if "$VPY" -c 'import sys, urllib.request
urllib.request.urlopen(sys.argv[1] + "/health", timeout=2)' "$url" 2>/dev/null; then
      echo "server: $role  $url  $(basename "$model")  (log: $log)"
      return 0
    fi
    if ! kill -0 "$(cat "$pidf")" 2>/dev/null; then
      echo "server: the $role server stopped; the last lines of $log:" >&2; tail -n 15 "$log" >&2; exit 1
    fi
    sleep 0.5
  done
  echo "server: the $role server did not answer $url/health within 60 s (log: $log)" >&2
  exit 1
}

do_start() {
  local judge=""
  for a in "$@"; do
    case "$a" in --judge) judge=1 ;; *) echo "server: unknown option $a" >&2; exit 2 ;; esac
  done
  if ! [ -x "$(binary)" ]; then echo "server: llama-server is not built: bash packaging/server.sh build" >&2; exit 1; fi
  mkdir -p "$run_dir"
  # The encoder: mean pooling (both bundled encoders were trained with it), one text per slot; a slot holds
  # 512 tokens (Shelfwise cuts texts to 256) and one physical batch holds every slot's texts.
  start_one encoder "$port_base" "$(model_file encoder)" --embedding --pooling mean \
    --parallel "$enc_slots" --ctx-size $((enc_slots * 512)) --batch-size $((enc_slots * 512)) \
    --ubatch-size $((enc_slots * 512))
  # The answer model: 4096 tokens per slot, the in-process context.
  start_one answer $((port_base + 1)) "$(model_file answer)" --parallel "$gen_slots" \
    --ctx-size $((gen_slots * 4096))
  if [ -n "$judge" ]; then
    start_one judge $((port_base + 2)) "$(model_file judge)" --reranking \
      --parallel "$judge_slots" --ctx-size $((judge_slots * 512)) --batch-size $((judge_slots * 512)) \
      --ubatch-size $((judge_slots * 512))
  fi
  echo "server: use them with"
  echo "  shelfwise --embedder http://$host:$port_base ...        (Settings.embedder_path)"
  echo "  Settings.backend_url = http://$host:$((port_base + 1))"
  [ -n "$judge" ] && echo "  Settings.judge = http://$host:$((port_base + 2))"
  return 0
}

do_status() {
  local any=""
  for role in encoder answer judge; do
    local pidf="$run_dir/$role.pid"
    [ -f "$pidf" ] || continue
    any=1
    if kill -0 "$(cat "$pidf")" 2>/dev/null; then echo "server: $role runs (pid $(cat "$pidf"))"
    else echo "server: $role is not running (stale $pidf)"; fi
  done
  [ -n "$any" ] || echo "server: nothing started (bash packaging/server.sh start)"
}

do_stop() {
  for role in encoder answer judge; do
    local pidf="$run_dir/$role.pid"
    [ -f "$pidf" ] || continue
    local pid
    pid="$(cat "$pidf")"
    if kill -0 "$pid" 2>/dev/null; then kill "$pid" && echo "server: stopped $role (pid $pid)"; fi
    rm -f "$pidf"
  done
}

main() {  # the dispatch runs after the whole file is read (an edit or git pull during a build is harmless)
  case "$mode" in
    build) do_build ;;
    start) do_start "$@" ;;
    status) do_status ;;
    stop) do_stop ;;
    alias) alias_of "$@" ;;
    path)
      b="$(binary)"
      if [ -x "$b" ] && [ -f "$(build_dir)/.shelfwise-built" ]; then echo "$b"; else
        echo "server: llama-server is not built (bash packaging/server.sh build)" >&2; exit 1; fi ;;
    *) echo "usage: bash packaging/server.sh build|path|start [--judge]|status|stop|alias ROLE FILE" >&2; exit 2 ;;
  esac
}
main "$@"; exit $?
