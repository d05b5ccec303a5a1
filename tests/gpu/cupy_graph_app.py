"""A correct CuPy program that knows nothing of graphscope (GPU machine
only), for issue 46's runs without false findings: it captures a CUDA graph
of elementwise kernels, a reduction and a cuBLAS matrix product on a stream
(cupy.cuda.Stream.begin_capture), replays it with new input values copied
into its static input, frees temporaries between replays (CuPy's memory
pool takes them back), and checks every replay against the same work done
eagerly.

    python3 cupy_graph_app.py [--replays 20]

Exit codes: 0 every replay right, 1 a wrong result.
"""
import argparse
import sys

import cupy as cp


def step(x, w):
    y = cp.tanh(x * w) * 0.5 + 1.0
    return y, y.sum(axis=1) + w.max()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--replays", type=int, default=20)
    a = ap.parse_args()
    rng = cp.random.default_rng(7)
    x = rng.standard_normal((256, 512), dtype=cp.float32)
    w = rng.standard_normal((256, 512), dtype=cp.float32) / 16
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        step(x, w)  # warm-up: the kernels compiled before the capture
        s.synchronize()
        s.begin_capture()
        y, total = step(x, w)
        g = s.end_capture()
    wrong = 0
    for i in range(a.replays):
        fresh = rng.standard_normal((256, 512), dtype=cp.float32)
        x[...] = fresh
        cp.cuda.Device().synchronize()
        with s:
            g.launch()
        s.synchronize()
        want_y, want_total = step(fresh, w)
        del fresh  # back to CuPy's pool, between replays
        if not (cp.allclose(y, want_y, atol=1e-4) and cp.allclose(total, want_total, atol=1e-2)):
            wrong += 1
            print("replay %d: wrong result" % (i + 1))
    print("replays %d wrong %d" % (a.replays, wrong))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
