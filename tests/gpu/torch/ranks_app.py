"""A tensor-parallel-like forward pass with an NCCL all-reduce inside a CUDA
graph, one process per GPU (run under torchrun). Used by tests/gpu/ranks.sh
to prove `graphscope capture/profile --exec` and `graphscope ranks`.

  torchrun --nproc-per-node 2 ranks_app.py [--extra-on R] [--relu-on R] [--replays N]

--extra-on R: rank R captures one more all-reduce than the others (the bug
graphscope must catch); the graphs are then not replayed, because replaying
mismatched collectives hangs (which is the point of catching it first).
--relu-on R: rank R uses ReLU where the others use GELU (same node count and
kernel family: only the kernel's functor tells the two apart).
"""
import argparse
import os

import torch
import torch.distributed as dist

p = argparse.ArgumentParser()
p.add_argument("--extra-on", type=int, default=-1)
p.add_argument("--relu-on", type=int, default=-1)
p.add_argument("--replays", type=int, default=20)
p.add_argument("--hidden", type=int, default=4096)
args = p.parse_args()

local = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
dist.init_process_group("nccl", device_id=torch.device("cuda", local))
rank = dist.get_rank()
torch.manual_seed(0)

h = args.hidden
up = torch.nn.Linear(h, 2 * h, bias=False, device="cuda")
down = torch.nn.Linear(2 * h, h, bias=False, device="cuda")
x = torch.randn(8, h, device="cuda")


def forward(extra):
    act = torch.nn.functional.relu if rank == args.relu_on else torch.nn.functional.gelu
    y = act(up(x))
    z = down(y)
    dist.all_reduce(z)  # the row-parallel all-reduce
    if extra:
        dist.all_reduce(z)  # the bug: one collective too many on this rank
    return z + x


# Warm up outside capture (NCCL's communicator, cuBLAS handles), then capture.
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        forward(False)
torch.cuda.current_stream().wait_stream(s)
torch.cuda.synchronize()

g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    out = forward(rank == args.extra_on)
torch.cuda.synchronize()

if args.extra_on < 0:
    for _ in range(args.replays):
        g.replay()
    torch.cuda.synchronize()
    ref = forward(False)
    torch.cuda.synchronize()
    ok = torch.allclose(out, ref, rtol=1e-3, atol=1e-3)  # each rank against its own eager step
    print(f"rank {rank}: {args.replays} replays, result {'matches' if ok else 'DIFFERS from'} eager", flush=True)
else:
    print(f"rank {rank}: captured{' with the extra all-reduce' if rank == args.extra_on else ''}, not replayed", flush=True)
# Tear down: the graph first, then the process group (destroying a process
# group whose communicator a live graph still holds hangs in ncclCommDestroy,
# pytorch/pytorch#115388). Should it hang anyway, leave after 60 s.
import gc
import threading

del g
gc.collect()
torch.cuda.synchronize()
watchdog = threading.Timer(60, lambda: (print(f"rank {rank}: teardown hung; exiting", flush=True), os._exit(0)))
watchdog.daemon = True
watchdog.start()
dist.destroy_process_group()
watchdog.cancel()
