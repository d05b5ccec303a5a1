# Sourced by the device runs (device_library.sh, device_serving.sh): run in
# the repository root on the device machine with built files in .dev/ and
# their libraries in .devlibs/. Sets root and out ($OUT), the library paths,
# writes device.txt, and defines
#   t NAME COMMAND...   run a step into $out/NAME.log and show its tail
#   pack_results        everything under $out in one archive (the device
#                       tool brings back only a few files)
root=$PWD
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$root/.devlibs GVBINDIR=$root/.devlibs/graphviz
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
  date -u +"%Y-%m-%d %H:%M UTC"
} > "$out/device.txt" 2>&1
cat "$out/device.txt"
t_tail=${t_tail:-4}
t() {
  local name=$1; shift
  local s=$SECONDS
  ( "$@" ) > "$out/$name.log" 2>&1
  echo "== $name: exit $? ($((SECONDS - s)) s)"; tail -n "$t_tail" "$out/$name.log"
}
pack_results() {
  (cd "$out" && tar -czf /tmp/results.tgz --exclude=results.tgz . && mv /tmp/results.tgz . &&
    find . -mindepth 1 ! -name results.tgz ! -name device.txt -delete)
  ls "$out"
}
