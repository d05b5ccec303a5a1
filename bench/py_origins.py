#!/usr/bin/env python3
"""Origins' Python stack read, without a GPU or PyTorch.

Builds, in a temporary directory, a stand-in for the stacks PyTorch and
transformers make: a package named torch (under site-packages, so its files
count as the framework) whose Module calls forward through _wrapped_call_impl
and _call_impl as PyTorch 2.x does, and a transformers-like Llama (decorated
forwards, decoder layers, attention, MLP) whose kernels "launch" by calling
bench/py_origins.cc's gs_launch(), which plays the CUPTI callbacks of a
captured launch into graphscope's OriginRecorder.

  py_origins.py LIB [--layers 8] [--forwards 5] [--threads 1] [--check] [--new-model] [--cold KIB]

Prints the time of a launch's callbacks, the stack read among them
(median and spread over the forwards), and how the reads were made.
Launches through ctypes.PyDLL keep the GIL, so the recorder reads in full
where the node is made; with --threads they let it go (as PyTorch's ops
do), and what the caches cannot answer the recorder's proxy thread reads.
With --check, every launch is made twice from the same place (the second
read finds the stack of the one before, as an op's second kernel does; with
more than 6 forwards, the captures after the edits below find their reads'
stacks in the capture before, at the same place) and
each read as the recorder reads (with its caches) is compared with a read
the long way (nothing learnt before is used): any difference in modules or
frames fails (exit 1), as does no read finding the stack before. The test
origins.python_walk runs this. Between the forwards (each its own capture,
as a server captures one graph per batch size) the check edits the model
the ways that would make a cache kept across captures lie: two layers
swapped in their ModuleList, a module replaced by a new one (which may take
the freed one's address), a layer's class changed, the ModuleList replaced,
that class renamed in place.
With --cold KIB, KIB KiB are written between launches (not timed): with
4096 the reads on this machine's 2 cores cost what they cost on the GPU
machine under PyTorch (1.7-1.9 against 1.85 us a read, 2026-11-27), where the
work between two launches pushes the stacks and caches out of the CPU's.
With --new-model every forward captures a model built for it (the same
classes, new modules), as a server capturing a second or deeper model:
without --check, more than one read in full for each such model fails
(its first read learns the rest of it), as does no origin made from known
facts.
With --threads N, N threads do that at once, each with its own model, and
launch with the GIL let go, so that reads without the GIL run while other
threads run Python. With --no-proxy besides, the recorder's proxy counts as
unavailable (as in a Python without what it needs): the reads at the entry
of launches that take over are checked the same way.
"""
import argparse
import ctypes
import os
import statistics
import sys
import shutil
import tempfile
import textwrap
import threading

TORCH_MODULE = '''
import ctypes, os
_lib = ctypes.PyDLL(os.environ["GS_PY_ORIGINS_LIB"])
_lib.gs_launch.restype = ctypes.c_int64

class Module:
    def __init__(self):
        object.__setattr__(self, "_modules", {})
    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)
    def __getattr__(self, name):
        mods = self.__dict__.get("_modules", {})
        if name in mods:
            return mods[name]
        raise AttributeError(name)
    def _call_impl(self, *args, **kwargs):
        forward_call = self.forward
        return forward_call(*args, **kwargs)
    def _wrapped_call_impl(self, *args, **kwargs):
        return self._call_impl(*args, **kwargs)
    __call__ = _wrapped_call_impl

class ModuleList(Module):
    def __init__(self, mods):
        super().__init__()
        for i, m in enumerate(mods):
            self._modules[str(i)] = m
    def __iter__(self):
        return iter(self._modules.values())
'''

TORCH_FUNCTIONAL = '''
import ctypes
from .modules.module import _lib

_lib.gs_last_origin.restype = ctypes.c_char_p
check = False
cold = 0  # KiB written between launches (--cold)
times = []  # ns per read
pairs = []  # (cached, the long way)

launch = _lib.gs_launch  # --threads: through ctypes.CDLL, which lets the GIL go

def _launch():
    if check:
        _lib.gs_uncached(0)
        fast = []
        # Twice from the same place: the second read finds the stack of the
        # one before, frame for frame (as an op's second kernel does).
        for _ in range(2):
            launch()
            fast.append(_lib.gs_last_origin())
        _lib.gs_uncached(1)
        launch()
        full = _lib.gs_last_origin()
        _lib.gs_uncached(0)
        pairs.extend((f, full) for f in fast)
    else:
        if cold:
            _lib.gs_evict(cold)
        times.append(launch())

def linear(x, w):
    _launch()
    return x

def silu(x):
    _launch()
    return x

def softmax(x):
    _launch()
    return x

def scaled_dot_product_attention(q, k, v):
    _launch(); _launch()
    return q

def rms(x):
    _launch(); _launch(); _launch()
    return x

def add(a, b):
    _launch()
    return a
'''

TORCH_LINEAR = '''
from .module import Module
from .. import functional as F

class Linear(Module):
    def __init__(self):
        super().__init__()
        self.weight = 1.0
    def forward(self, x):
        return F.linear(x, self.weight)
'''

MODELING = '''
import functools
from torch.nn.modules.module import Module, ModuleList
from torch.nn.modules.linear import Linear
import torch.nn.functional as F

def can_return_tuple(fn):
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    return wrapper

def deprecate_kwarg(fn):
    @functools.wraps(fn)
    def wrapped_func(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapped_func

class GradientCheckpointingLayer(Module):
    def __call__(self, *args, **kwargs):
        return super().__call__(*args, **kwargs)

class LlamaRMSNorm(Module):
    def forward(self, x):
        return F.rms(x)

class LlamaMLP(Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = Linear()
        self.up_proj = Linear()
        self.down_proj = Linear()
    def forward(self, x):
        # A closure reads self, so the frame keeps it in a cell (as forwards
        # with nested functions do): the reads compare the cell.
        up = lambda y: self.up_proj(y)  # noqa: E731
        down_proj = self.down_proj(F.add(F.silu(self.gate_proj(x)), up(x)))
        return down_proj

def apply_rotary_pos_emb(q, k):
    return F.add(q, k), F.add(k, q)

def eager_attention_forward(module, q, k, v):
    w = F.softmax(F.linear(q, k))
    return F.scaled_dot_product_attention(w, k, v)

class LlamaAttention(Module):
    def __init__(self):
        super().__init__()
        self.q_proj = Linear()
        self.k_proj = Linear()
        self.v_proj = Linear()
        self.o_proj = Linear()
    @deprecate_kwarg
    def forward(self, x):
        q = self.q_proj(x)
        k = self.k_proj(x)
        v = self.v_proj(x)
        q, k = apply_rotary_pos_emb(q, k)
        out = eager_attention_forward(self, q, k, v)
        return self.o_proj(out)

class LlamaDecoderLayer(GradientCheckpointingLayer):
    def __init__(self):
        super().__init__()
        self.self_attn = LlamaAttention()
        self.mlp = LlamaMLP()
        self.input_layernorm = LlamaRMSNorm()
        self.post_attention_layernorm = LlamaRMSNorm()
    @deprecate_kwarg
    def forward(self, x):
        residual = x
        x = self.input_layernorm(x)
        x = self.self_attn(x)
        x = F.add(residual, x)
        x = F.add(x, residual)
        residual = x
        x = self.post_attention_layernorm(x)
        x = self.mlp(x)
        return F.add(residual, x)

class LlamaModel(Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = ModuleList([LlamaDecoderLayer() for _ in range(layers)])
        self.norm = LlamaRMSNorm()
    @can_return_tuple
    def forward(self, x):
        for decoder_layer in self.layers:
            x = decoder_layer(x)
        return self.norm(x)

class LlamaForCausalLM(Module):
    def __init__(self, layers):
        super().__init__()
        self.model = LlamaModel(layers)
        self.lm_head = Linear()
    @can_return_tuple
    def forward(self, x):
        return self.lm_head(self.model(x))
'''


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))


def edit(model, f, m):
    """Between captures, change what a name cached across captures was made of."""
    layers = model.model.layers
    mods = layers._modules
    if f == 1 and len(mods) > 1:  # the same objects under each other's names
        mods["0"], mods["1"] = mods["1"], mods["0"]
    elif f == 2:  # a new module, perhaps at the freed one's address
        last = list(mods.values())[-1]
        del last._modules["mlp"]
        last.mlp = m.LlamaMLP()
    elif f == 3:  # the same object, another class
        first = mods["0"]
        first.__class__ = type("CustomDecoderLayer", (m.LlamaDecoderLayer,), {})
    elif f == 4:  # a new ModuleList of the same layers, reversed
        model.model.layers = type(layers)(list(mods.values())[::-1])
    elif f == 5:  # the same object and class, the class renamed (each model's own class, made at f == 3)
        for layer in mods.values():
            if type(layer).__name__ == "CustomDecoderLayer":
                type(layer).__name__ = "RenamedDecoderLayer"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--forwards", type=int, default=5)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-proxy", action="store_true",
                    help="with --threads: the proxy counts as unavailable (reads at the entry of launches)")
    ap.add_argument("--cold", type=int, default=0, metavar="KIB",
                    help="write KIB KiB between launches (not timed), as a real program's work between launches "
                         "pushes the stacks and caches out of the CPU's caches")
    ap.add_argument("--framework-model", action="store_true",
                    help="the model's file under site-packages, as transformers' is")
    ap.add_argument("--new-model", action="store_true",
                    help="every forward captures a model built for it (same classes, new modules)")
    a = ap.parse_args()
    os.environ["GS_PY_ORIGINS_LIB"] = os.path.abspath(a.lib)
    tmp = tempfile.mkdtemp(prefix="gs_py_origins.")
    try:
        return run(a, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(a, tmp):
    site = os.path.join(tmp, "lib", "site-packages")
    write(site, "torch/__init__.py", "")
    write(site, "torch/nn/__init__.py", "")
    write(site, "torch/nn/modules/__init__.py", "")
    write(site, "torch/nn/modules/module.py", TORCH_MODULE)
    write(site, "torch/nn/modules/linear.py", TORCH_LINEAR)
    write(site, "torch/nn/functional.py", TORCH_FUNCTIONAL)
    # --framework-model: the model's file where transformers' is, under
    # site-packages (its forwards are the framework's, as in a real program)
    write(site if a.framework_model else tmp, ("" if a.framework_model else "app/") + "modeling_llama.py", MODELING)
    sys.path[:0] = [site, os.path.join(tmp, "app")]
    import torch.nn.modules.module as tm  # noqa: E402
    import modeling_llama  # noqa: E402

    import torch.nn.functional as F  # noqa: E402

    lib = tm._lib
    F.check = a.check
    F.cold = a.cold
    times = []
    if a.threads > 1:
        # Each thread its own model and captures, its launches made with
        # the GIL let go (as PyTorch's ops do): the other threads run Python
        # while a launch reads its own thread's stack, with or without the
        # GIL.
        nogil = ctypes.CDLL(os.environ["GS_PY_ORIGINS_LIB"])
        nogil.gs_launch.restype = ctypes.c_int64
        F.launch = nogil.gs_launch
        models = [modeling_llama.LlamaForCausalLM(a.layers) for _ in range(a.threads)]
        # A loaded test machine may keep the proxy from the GIL longer than
        # a launch waits for it outside the tests.
        lib.gs_proxy_wait(5000)
        if a.no_proxy:
            # As in a Python without what the proxy needs: the first launch
            # without the GIL goes without its stack and turns on reads at
            # the entry of launches, which the checked captures then use.
            lib.gs_proxy_off()
            lib.gs_begin_capture()
            nogil.gs_launch()
            lib.gs_end_capture()

        def work(k):
            for f in range(a.forwards):
                if a.new_model and f:
                    models[k] = modeling_llama.LlamaForCausalLM(a.layers)
                if a.check:
                    edit(models[k], f, modeling_llama)
                lib.gs_begin_capture()
                models[k](0.0)
                lib.gs_end_capture()

        pool = [threading.Thread(target=work, args=(k,)) for k in range(a.threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        times = list(F.times)
    later = []  # each capture's reads, in all, after the first
    lib.gs_reads.restype = ctypes.c_uint64
    slow_later = 0  # reads in full or by the proxy after the first capture
    for f in range(a.forwards if a.threads <= 1 else 0):
        model = model if f and not a.new_model else modeling_llama.LlamaForCausalLM(a.layers)
        slow = lib.gs_reads(1) + lib.gs_reads(2)
        if a.check:
            edit(model, f, modeling_llama)
        lib.gs_begin_capture()
        del F.times[:]
        model(0.0)
        times.extend(F.times[1:] if f == 0 else F.times)
        if f:
            later.append(sum(F.times))
            slow_later += lib.gs_reads(1) + lib.gs_reads(2) - slow
        lib.gs_end_capture()
    lib.gs_reads_at_entry.restype = ctypes.c_int
    reads = [lib.gs_reads(k) for k in range(7)]
    print("reads: %d from the caches (%d the capture before's, %d the stack before, %d made from known facts), "
          "%d in full, %d by the proxy, %d given up" % (reads[0], reads[6], reads[4], reads[5], reads[1], reads[2],
                                                        reads[3]))
    at_entry = lib.gs_reads_at_entry()
    print("reads at the entry of launches: %s" % ("on" if at_entry else "off"))
    if times and not a.check:
        print("all reads: %.1f us a capture on average" % (sum(times) / 1000.0 / (a.forwards * max(1, a.threads))))
    if a.no_proxy:
        wrong = ("no-proxy needs --threads" if a.threads <= 1 else
                 "the proxy read" if reads[2] else
                 "stacks are not read at the entry of launches" if not at_entry else
                 "no read in full at the entry" if not reads[1] else "")
    else:
        wrong = ("stacks are read at the entry of launches" if at_entry else
                 "reads given up" if reads[3] else
                 "no read by the proxy, with the GIL let go" if a.threads > 1 and not reads[2] else "")
    if wrong:
        print("wrong: " + wrong)
        return 1
    # A model built for a capture, of classes read before, is learnt at its
    # first read (learn_tree): one read in full for each, at most.
    if a.new_model and a.threads <= 1 and not a.check and slow_later > a.forwards - 1:
        print("wrong: %d reads in full after the first capture, for %d new models" % (slow_later, a.forwards - 1))
        return 1
    if a.new_model and a.forwards > 1 and not reads[5]:
        print("wrong: no origin made from known facts, with new models")
        return 1
    if a.check and not reads[4]:
        print("wrong: no read found the stack of the read before")
        return 1
    # The captures after the edits are the same as the one before, read for
    # read: the thread's capture before answers them.
    if a.check and not a.new_model and a.forwards > 6 and not reads[6]:
        print("wrong: no read found the stack of the capture before's at its place")
        return 1
    if a.check:
        failures = [p for p in F.pairs if p[0] != p[1] or not p[1]]
        for fast, full in failures[:3]:
            print("origins differ:\n  cached:\n    %s\n  the long way:\n    %s" % (
                fast.decode().replace("\n", "\n    "), full.decode().replace("\n", "\n    ")))
        print("%d launches read twice, %d differ" % (len(F.pairs), len(failures)))
        return 1 if failures or not F.pairs else 0
    times.sort()
    q = lambda p: times[min(len(times) - 1, int(p * len(times)))] / 1000.0
    print("python %s, %d layers, %d thread(s), %d launches per forward, %d forwards: read per launch median %.2f us "
          "(p10 %.2f, p90 %.2f)" % (sys.version.split()[0], a.layers, a.threads,
                                     len(times) // (a.forwards * max(1, a.threads)), a.forwards,
                                     statistics.median(times) / 1000.0, q(0.1), q(0.9)))
    if later:
        print("all reads of a capture after the first: median %.1f us (%.1f-%.1f)" % (
            statistics.median(later) / 1000.0, min(later) / 1000.0, max(later) / 1000.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
