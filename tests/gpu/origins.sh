#!/usr/bin/env bash
# gpu.origins: where each node came from, recorded on this machine's GPU:
#  - the nvtx_layers sample (C++, NVTX ranges in a domain, pushed and
#    started): every kernel node carries its NVTX stack and the native
#    function that launched it; --no-origins records none;
#  - transformers' Llama (8 layers, from a config) under capture --exec,
#    unmodified: at least 95% of kernel nodes carry a module name and the
#    summary folds "8 x LlamaDecoderLayer"; under emit_nvtx, aten:: ops;
#    profile --exec reports time by module;
#  - launches with the GIL let go (ctypes, as NCCL through c10d or pynccl),
#    between PyTorch's own: every one carries its Python line, in each of
#    three graphs;
#  - the same model under torch.compile(mode="reduce-overhead"): its graphs
#    carry Python frames;
#  - JAX with XLA command buffers: its graphs carry origins.
# Keeps what it recorded in WORK_DIR (fixtures are copied from there).
# Exits 77 (ctest: skipped) without a GPU.
#   origins.sh GRAPHSCOPE SAMPLES_DIR WORK_DIR
set -uo pipefail
gs=$1 samples=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
check="python3 $here/check_origins.py"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "no GPU on this machine: skipped"; exit 77
fi
rm -rf "$work"; mkdir -p "$work"
status=0
fail() { echo "FAIL $*"; status=1; }
one_graph() { ls "$1"/pid-*/graph-*.json 2>/dev/null | head -1; }

# C++ with NVTX.
"$gs" capture "$samples/nvtx_layers.so" -o "$work/nvtx_layers.json" -- --layers 4 || fail "capture nvtx_layers"
$check nvtx "$work/nvtx_layers.json" || fail "nvtx_layers origins"
"$gs" dump "$work/nvtx_layers.json" > "$work/nvtx_layers.summary.txt" && cat "$work/nvtx_layers.summary.txt" | head -20
"$gs" capture "$samples/nvtx_layers.so" --no-origins -o "$work/nvtx_layers.no_origins.json" || fail "capture --no-origins"
$check none "$work/nvtx_layers.no_origins.json" || fail "--no-origins recorded origins"

if python3 -c "import torch, transformers; assert torch.cuda.is_available()" 2>/dev/null; then
  app=$here/torch/origins_app.py
  d=$work/llama
  if "$gs" capture --exec --out-dir "$d" -- python3 "$app" llama --layers 8 > "$d.out" 2>&1; then
    g=$(one_graph "$d")
    cp "$g" "$work/llama8.graph.json"
    $check modules "$g" 95 || fail "llama: fewer than 95% of kernel nodes with a module"
    "$gs" dump "$g" > "$work/llama8.summary.txt"; cat "$work/llama8.summary.txt"
    grep -q "8 x LlamaDecoderLayer" "$work/llama8.summary.txt" && echo "ok folding: 8 x LlamaDecoderLayer" ||
      fail "llama: the summary does not fold 8 x LlamaDecoderLayer"
  else
    fail "llama capture --exec: exit $?"; tail -20 "$d.out"
  fi
  d=$work/llama_nvtx
  if "$gs" capture --exec --out-dir "$d" -- python3 "$app" llama --layers 2 --emit-nvtx > "$d.out" 2>&1; then
    g=$(one_graph "$d"); cp "$g" "$work/llama2_emit_nvtx.graph.json"
    $check op "$g" || fail "emit_nvtx: no aten:: op"
  else
    echo "note: emit_nvtx capture did not run (exit $?): $(tail -1 "$d.out")"
  fi
  d=$work/llama_profile
  if "$gs" profile --exec --out-dir "$d" -o "$work/llama8.profile.txt" --html "$work/llama8.report.html" \
       -- python3 "$app" llama --layers 8 > "$d.out" 2>&1; then
    grep -q "time by module" "$work/llama8.profile.txt" && echo "ok profile --exec: time by module" ||
      fail "profile --exec: no time by module"
    python3 "$(dirname "$0")/check_report_html.py" "$work/llama8.report.html" --run || fail "profile --exec --html: the page is wrong"
    sed -n '/time by module/,/^$/p' "$work/llama8.profile.txt"
  else
    fail "llama profile --exec: exit $?"; tail -20 "$d.out"
  fi
  # Launches with the GIL let go (ctypes), between PyTorch's own.
  d=$work/nogil
  if "$gs" capture --exec --out-dir "$d" -- python3 "$here/torch/nogil_app.py" "$samples/chain.so" > "$d.out" 2>&1; then
    graphs=$(ls -v "$d"/pid-*/graph-*.json 2>/dev/null)
    [ "$(echo "$graphs" | wc -w)" -eq 3 ] || fail "nogil: not 3 graphs"
    k=0; for g in $graphs; do cp "$g" "$work/nogil.$k.graph.json"; k=$((k + 1)); done
    $check nogil $graphs && echo "ok nogil: launches without the GIL carry their Python line" ||
      fail "nogil: launches without the GIL lack origins"
  else
    fail "nogil capture --exec: exit $?"; tail -20 "$d.out"
  fi
  d=$work/compile
  if "$gs" capture --exec --out-dir "$d" -- python3 "$app" compile --layers 8 > "$d.out" 2>&1; then
    ls "$d"/pid-*/graph-*.json > /dev/null 2>&1 || fail "compile: no graph"
    k=0; for g in "$d"/pid-*/graph-*.json; do cp "$g" "$work/compile8.$k.graph.json"; k=$((k + 1)); done
    $check python "$d"/pid-*/graph-*.json || fail "compile: no Python frame"
    for g in "$d"/pid-*/graph-*.json; do "$gs" dump "$g" | grep -E "^(nodes|repeats|origins|by module)"; done
  else
    echo "note: torch.compile did not run here (exit $?): $(tail -1 "$d.out")"
  fi
else
  echo "note: no PyTorch with CUDA and transformers here: PyTorch origins not checked"
fi

if python3 -c "import jax; assert jax.devices()[0].platform == 'gpu'" 2>/dev/null; then
  d=$work/jax
  if XLA_FLAGS="--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUBLASLT,WHILE,CONDITIONAL --xla_gpu_graph_min_graph_size=1" \
     "$gs" capture --exec --out-dir "$d" -- python3 "$here/jax_app.py" > "$d.out" 2>&1; then
    n=$(ls "$d"/pid-*/graph-*.json 2>/dev/null | wc -l)
    [ "$n" -ge 1 ] || fail "jax: no graph"
    k=0; for g in "$d"/pid-*/graph-*.json; do cp "$g" "$work/jax.$k.graph.json"; k=$((k + 1)); done
    $check any "$d"/pid-*/graph-*.json || fail "jax: a graph without origins"
    for g in "$d"/pid-*/graph-*.json; do "$gs" dump "$g" | grep -E "^(nodes|repeats|origins|by module)"; done
  else
    fail "jax capture --exec: exit $?"; tail -20 "$d.out"
  fi
else
  echo "note: no JAX with a GPU here: XLA origins not checked"
fi
exit $status
