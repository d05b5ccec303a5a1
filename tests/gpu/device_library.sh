#!/usr/bin/env bash
# The library issue's GPU run, in one call on the device machine: every gpu
# test with the CLI now loading lib/capture as a module, graph_data() of real
# PyTorch graphs, and the Debian package's tree used unpacked (the live module
# found beside the CLI and the C API, CUDA's libraries found through its
# RUNPATH, not LD_LIBRARY_PATH), plus examples/consumer's walk_own_graph built
# against an installed prefix. Built files travel in .dev/ (graphscope and its
# libraries, samples, record_graphs, debroot/ = dpkg-deb -x of the package,
# walk_own_graph) with their libraries in .devlibs/ (Graphviz's two plugins in
# .devlibs/graphviz). Writes logs and fixtures under $OUT.
#   bash tests/gpu/device_library.sh [quick|torch]
set -uo pipefail
source "$(dirname "$0")/device_common.sh"
part=${1:-quick}
# Graphviz alone, without the CUDA libraries bundled for the build tree's binaries.
mkdir -p /tmp/gv
for f in "$root"/.devlibs/*.so*; do
  case $(basename "$f") in libcupti*|libcudart*) ;; *) ln -sf "$f" /tmp/gv/ ;; esac
done
deb=$root/.dev/debroot/usr
if [ "$part" = quick ]; then
  t capture_samples bash tests/gpu/capture_samples.sh .dev/graphscope .dev/samples /tmp/cap
  t profile_samples bash tests/gpu/profile_run.sh .dev/graphscope .dev/samples
  t record_and_read bash tests/record/gpu_record_test.sh .dev/record_graphs .dev/graphscope /tmp/gpurec
  t python_graph_data env GRAPHSCOPE_LIBRARY="$root/.dev/libgraphscope.so.0" PYTHONPATH="$root/python" \
    python3 tests/gpu/torch/graph_data_check.py "$out/graph_data"
  t deb_capture env LD_LIBRARY_PATH=/tmp/gv "$deb/bin/graphscope" capture .dev/samples/forkjoin.so -o /tmp/deb_fj.json
  t deb_profile env LD_LIBRARY_PATH=/tmp/gv "$deb/bin/graphscope" profile .dev/samples/mixed.so
  t deb_exec env LD_LIBRARY_PATH=/tmp/gv "$deb/bin/graphscope" capture --exec --out-dir /tmp/deb_exec -- \
    python3 tests/gpu/torch/attach_app.py mlp
  t deb_python env LD_LIBRARY_PATH=/tmp/gv PYTHONPATH="$deb/lib/python3/dist-packages" python3 -c '
import torch, cudagraphscope as gs
print("library", gs.library_path() if hasattr(gs, "library_path") else "?")
x = torch.randn(64, 64, device="cuda"); w = torch.randn(64, 64, device="cuda")
g = torch.cuda.CUDAGraph(keep_graph=True)
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    torch.relu(x @ w)
torch.cuda.synchronize()
with torch.cuda.graph(g):
    y = torch.relu(x @ w)
g.instantiate(); g.replay(); torch.cuda.synchronize()
d = gs.graph_data(g)
print("installed package:", len(d["nodes"]), "nodes, exec graph", d["exec_graph_id"], [n.get("kernel_name") for n in d["nodes"]][:3])
'
  t walk_own_graph env LD_LIBRARY_PATH="$deb/lib:/tmp/gv:/usr/local/cuda/lib64" .dev/walk_own_graph
fi
if [ "$part" = torch ]; then
  t attach_torch bash tests/gpu/attach_torch.sh .dev/graphscope /tmp/attach
  t origins bash tests/gpu/origins.sh .dev/graphscope .dev/samples /tmp/origins
  t python_graph_data env GRAPHSCOPE_LIBRARY="$root/.dev/libgraphscope.so.0" PYTHONPATH="$root/python" \
    python3 tests/gpu/torch/graph_data_check.py "$out/graph_data"
fi
pack_results
