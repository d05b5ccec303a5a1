"""A PyTorch program that launches part of its captured work with the GIL
let go (GPU machine only), as NCCL through c10d or vLLM's pynccl do: the
chain sample's enqueue (samples/chain.cu, through the workload ABI) called
through ctypes, which releases the GIL, between two PyTorch ops, in each of
three graphs captured with torch.cuda.graph.

    python3 nogil_app.py SAMPLES_DIR/chain.so
"""
import ctypes
import sys

import torch


class Graph(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("enqueue", ctypes.c_void_p)]


class Workload(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p), ("description", ctypes.c_char_p),
                ("setup", ctypes.c_void_p), ("teardown", ctypes.c_void_p), ("graphs", ctypes.POINTER(Graph)),
                ("num_graphs", ctypes.c_uint32)]


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.graphscope_workload_v1.restype = ctypes.POINTER(Workload)
    w = lib.graphscope_workload_v1().contents
    # CFUNCTYPE: ctypes lets the GIL go for the call.
    setup = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                             ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_size_t)(w.setup)
    enqueue = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p,
                               ctypes.c_size_t)(w.graphs[0].enqueue)
    err = ctypes.create_string_buffer(256)
    state = ctypes.c_void_p()
    argv = (ctypes.c_char_p * 3)(sys.argv[1].encode(), b"--length", b"4")
    if setup(3, argv, ctypes.byref(state), err, 256):
        sys.exit("setup: " + err.value.decode())
    x = torch.ones(4096, device="cuda")
    torch.cuda.synchronize()
    graphs = []
    for _ in range(3):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = x * 2  # line 45: PyTorch's own launch (it too lets the GIL go)
            rc = enqueue(state, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), err, 256)  # line 46
            z = y + 1  # line 47
        if rc:
            sys.exit("enqueue: " + err.value.decode())
        g.replay()
        graphs.append(g)
    torch.cuda.synchronize()
    print("nogil ok", float(z[0]))


if __name__ == "__main__":
    main()
