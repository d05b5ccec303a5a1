#!/usr/bin/env bash
# NVIDIA's cuda-samples programs with CUDA graphs, built on the CPU machine
# for the GPU machine's runs (tests/gpu/device_why.sh runs what is in
# .cs/bin/): simpleCudaGraphs, jacobiCudaGraphs (2,954 no-op updates),
# conjugateGradientCudaGraphs, graphMemoryNodes, graphMemoryFootprint and
# graphConditionalNodes, from a checkout of github.com/NVIDIA/cuda-samples
# (c94ff366 for the recordings; not in this tree). .cs/ is ignored by git.
#   tests/gpu/build_cuda_samples.sh CUDA_SAMPLES_DIR
set -euo pipefail
src=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p "$root/.cs/bin"
cd "$src"
n() { "$nvcc" -O2 -arch=sm_90 -ICommon "$@"; }
f=Samples/3_CUDA_Features
n $f/simpleCudaGraphs/simpleCudaGraphs.cu -o "$root/.cs/bin/simpleCudaGraphs"
n $f/jacobiCudaGraphs/jacobi.cu $f/jacobiCudaGraphs/main.cpp -o "$root/.cs/bin/jacobiCudaGraphs"
n Samples/4_CUDA_Libraries/conjugateGradientCudaGraphs/conjugateGradientCudaGraphs.cu -lcublas -lcusparse \
  -o "$root/.cs/bin/conjugateGradientCudaGraphs"
n $f/graphMemoryNodes/graphMemoryNodes.cu -o "$root/.cs/bin/graphMemoryNodes"
n $f/graphMemoryFootprint/graphMemoryFootprint.cu -o "$root/.cs/bin/graphMemoryFootprint"
n $f/graphConditionalNodes/graphConditionalNodes.cu -o "$root/.cs/bin/graphConditionalNodes"
ls -la "$root/.cs/bin"
