#!/usr/bin/env bash
# The wheel of `pip install .` on the GPU machine, as a user with PyTorch
# would use it (issue 44): installed offline into the venv PyTorch lives in
# there (python3's), then the CLI, `python -m cudagraphscope`, `graphscope
# capture --exec` on a PyTorch program, and `watch()` around its captures,
# all through what the wheel installed (nothing from .dev/ or .devlibs/).
#   bash tests/gpu/device_wheel.sh WHEEL WORK_DIR
set -uo pipefail
whl=$1 work=$2
rm -rf "$work"; mkdir -p "$work"
unset LD_LIBRARY_PATH GVBINDIR GRAPHSCOPE_INJECTION_LIBRARY GRAPHSCOPE_LIVE_LIBRARY GRAPHSCOPE_LIBRARY GRAPHSCOPE_BINARY
echo "glibc: $(ldd --version | head -1)"
echo "libstdc++: $(strings "$(ldconfig -p | awk '/libstdc\+\+.so.6 /{print $NF; exit}')" | grep -c '^GLIBCXX_3.4.30$') GLIBCXX_3.4.30"
python3 -c 'import torch; c = torch.cuda.CUDAGraph; g = torch.cuda.graphs
print("torch", torch.__version__, "CUDAGraph.register_capture_end_hook:", hasattr(c, "register_capture_end_hook"),
      "graphs.register_graph_capture_end_hook:", hasattr(g, "register_graph_capture_end_hook"),
      "graphs.export_graph_data:", hasattr(g, "export_graph_data"), "CUDAGraph.get_graph_data:", hasattr(c, "get_graph_data"))'
# The venv of the machine's PyTorch may come without pip (uv makes such
# venvs): then a fresh venv with pip, which sees that venv's packages
# through a .pth file, as `uv pip install` into it would.
torch_py=$(python3 -c 'import sys; print(sys.executable)')
torch_site=$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))')
if "$torch_py" -m pip --version > /dev/null 2>&1; then
  v=$(dirname "$torch_py")
else
  python3 -m venv "$work/v" || exit 1
  v=$work/v/bin
  echo "$torch_site" > "$("$v/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/torch_venv.pth"
fi
echo "venv: $(dirname "$v") (PyTorch from $torch_site)"
"$v/python3" -m pip install --no-index --no-deps "$whl" || exit 1
"$v/graphscope" --version || exit 1
"$v/python3" -m cudagraphscope --version || exit 1
rc=0
"$v/graphscope" capture --exec --out-dir "$work/cap" -- "$v/python3" tests/gpu/torch/attach_app.py mlp || rc=1
ls "$work/cap"/pid-*/ 2>/dev/null | head
"$v/graphscope" dump "$work"/cap/pid-*/graph-*.json > "$work/dump.txt" 2>&1 || rc=1
head -12 "$work/dump.txt"
"$v/graphscope" report "$work/cap" -o "$work/cap.html" && echo "report: $(du -k "$work/cap.html" | cut -f1) KB" || rc=1
GRAPHSCOPE_TEST_INSTALLED=1 "$v/python3" tests/gpu/torch/watch_app.py "$work/watch" || rc=1
exit $rc
