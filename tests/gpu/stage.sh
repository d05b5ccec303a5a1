#!/usr/bin/env bash
# Stage what the GPU machine needs from a build tree, on this machine: the
# CLI, its libraries, the samples and the test helpers, stripped, in .dev/,
# and the shared libraries the GPU machine lacks in .devlibs/ (Graphviz's
# plugins in .devlibs/graphviz). Both are ignored by git; name them in the
# device tool's carry. Then, on the device: bash tests/gpu/device_suite.sh
#   bash tests/gpu/stage.sh [BUILD_DIR]
set -euo pipefail
b=${1:-build}
rm -rf .dev .devlibs
mkdir -p .dev/samples/apps .devlibs
cp "$b"/apps/graphscope "$b"/lib/api/libgraphscope.so.0 "$b"/lib/capture/libgraphscope_live.so \
   "$b"/lib/inject/libgraphscope_inject.so "$b"/lib/inject/libgraphscope_preload.so \
   "$b"/tests/record/record_graphs .dev/
cp "$b"/samples/*.so .dev/samples/
cp -r "$b"/lib/inject/python-hook .dev/
find "$b"/samples/apps -maxdepth 2 -type f -perm -u+x -exec cp {} .dev/samples/apps/ \;
for f in .dev/* .dev/samples/*.so .dev/samples/apps/*; do
  [ -f "$f" ] && strip --strip-debug "$f" 2>/dev/null || true
done
bundle=${BUNDLE_LIBS:-../shared/device/bundle-libs}
"$bundle" .devlibs .dev/graphscope .dev/*.so* .dev/record_graphs .dev/samples/*.so .dev/samples/apps/*
rm -f .devlibs/libcublas*  # the GPU machine has its own
strip --strip-debug .devlibs/libgraphscope* 2>/dev/null || true  # ours, with the build's debug info
plugins=$(dirname "$(ldconfig -p | awk '/libgvc.so /{print $NF; exit}')")/graphviz
if [ -d "$plugins" ]; then
  mkdir -p .devlibs/graphviz
  cp -L "$plugins"/libgvplugin_core.so.* "$plugins"/libgvplugin_dot_layout.so.* .devlibs/graphviz/ 2>/dev/null || true
  cp "$plugins"/config* .devlibs/graphviz/ 2>/dev/null || true
fi
du -sh .dev .devlibs
