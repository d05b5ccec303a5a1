"""watch(): every CUDA graph a PyTorch program captures, dumped as it is
captured, without keep_graph and without changing the program.

Three ways, the first this PyTorch has:
 1. torch.cuda.graphs.register_graph_capture_end_hook(fn): one hook for
    every graph; it runs when a capture ends, while the captured template is
    live for both keep_graph modes;
 2. CUDAGraph.register_capture_end_hook(fn): the same per graph, registered
    on each graph as its capture begins (CUDAGraph.capture_begin wrapped
    while watching);
 3. PyTorch 2.8 to 2.11 have neither: CUDAGraph.capture_end is wrapped and
    the template walked after it, which PyTorch keeps for graphs made with
    keep_graph=True only. A graph made without it cannot be seen: watch()
    says so, naming the PyTorch needed, when the with block ends.
Before 2.8 (no raw_cuda_graph()) watch() refuses at once.

Each graph is walked with graph_data() (the walk of `graphscope capture`)
and written to OUT_DIR/graph-N.json (N counts from 1 in capture order), so
that `graphscope report OUT_DIR` or report(path) shows it. The ids are the
template's: at the end of a capture no exec graph exists yet.
"""
from __future__ import annotations

import contextlib
import importlib
import json
import os
import threading
import weakref
from typing import Any, Callable, Iterator, List, Optional

from ._errors import UsageError

# The first PyTorch with CUDAGraph(keep_graph=True) and raw_cuda_graph().
MIN_TORCH = "2.8"
# What sees graphs made without keep_graph: a capture-end hook, which 2.11
# (the newest tried) does not have.
HOOK_TORCH = "a PyTorch with a capture-end hook (CUDAGraph.register_capture_end_hook; 2.11 has none)"


class WatchResult:
    """What watch() yields: out_dir, and paths, the files written so far
    (one per graph captured inside the with block), in capture order."""

    def __init__(self, out_dir: str, how: str) -> None:
        self.out_dir = out_dir
        self.paths: List[str] = []
        # "global hook", "graph hook" or "keep_graph": how graphs are seen.
        self.how = how

    def __repr__(self) -> str:
        return "WatchResult(out_dir=%r, %d graphs, how=%r)" % (self.out_dir, len(self.paths), self.how)


class _Watcher:
    def __init__(self, out_dir: str, result: WatchResult) -> None:
        self.out_dir = out_dir
        self.result = result
        self.lock = threading.Lock()
        self.count = 0
        self.failures: List[BaseException] = []
        self.unseen = 0  # graphs made without keep_graph, where only keep_graph works

    def dump(self, graph: Any) -> None:
        """Walks graph and writes it; never raises into PyTorch's capture
        (an exception there would leave its capture unfinished): failures
        are raised when the with block ends."""
        from . import graph_data

        with self.lock:
            self.count += 1
            n = self.count
        try:
            doc = graph_data(graph, name="graph-%d" % n)
            path = os.path.join(self.out_dir, "graph-%d.json" % n)
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            os.replace(tmp, path)
            with self.lock:
                self.result.paths.append(path)
        except BaseException as e:  # noqa: B902 (re-raised at the end of the with block)
            with self.lock:
                self.failures.append(e)


def _torch_version(torch: Any) -> str:
    return str(getattr(torch, "__version__", "unknown"))


@contextlib.contextmanager
def watch(out_dir: "str | os.PathLike[str]", torch: Any = None) -> Iterator[WatchResult]:
    """Dumps every CUDA graph PyTorch captures inside the with block to
    out_dir (created if needed) as graph-N.json, the walk of graph_data(),
    whether or not the graphs were made with keep_graph=True:

        with cudagraphscope.watch("graphs") as w:
            with torch.cuda.graph(g):
                y = model(x)
        print(w.paths)                  # ['graphs/graph-1.json']
        cudagraphscope.report("graphs/graph-1.json", output="g.html")

    Where PyTorch has a capture-end hook (2.11 has none) every graph is
    seen; with PyTorch 2.8 to 2.11 only graphs made with
    torch.cuda.CUDAGraph(keep_graph=True), and a graph made without it is a
    UsageError (code 2) naming the PyTorch needed, raised when the block
    ends. Before 2.8, UsageError at once. A walk that fails (DeviceError:
    CUDA or CUPTI) is raised when the block ends, after PyTorch finished the
    capture. torch: the torch module to watch (default: import torch).
    """
    if torch is None:
        torch = importlib.import_module("torch")
    graphs: Any = getattr(getattr(torch, "cuda", None), "graphs", None)
    cls: Any = getattr(getattr(torch, "cuda", None), "CUDAGraph", None)
    if cls is None or not hasattr(cls, "raw_cuda_graph"):
        raise UsageError(2, "graphscope: watch() needs PyTorch %s or newer (CUDAGraph.raw_cuda_graph); this is "
                            "PyTorch %s" % (MIN_TORCH, _torch_version(torch)))
    directory = os.fspath(out_dir)
    os.makedirs(directory, exist_ok=True)
    global_hook: Optional[Callable[..., Any]] = getattr(graphs, "register_graph_capture_end_hook", None)
    undo: List[Callable[[], None]] = []
    if callable(global_hook):
        result = WatchResult(directory, "global hook")
        w = _Watcher(directory, result)
        handle = global_hook(w.dump)
        undo.append(handle.remove)
    elif hasattr(cls, "register_capture_end_hook"):
        result = WatchResult(directory, "graph hook")
        w = _Watcher(directory, result)
        begin = cls.__dict__.get("capture_begin", None)
        original_begin = getattr(cls, "capture_begin")
        # One hook per graph, however often it captures; a graph that takes
        # no weak reference gets one per capture_begin instead.
        handles: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
        others: List[Any] = []

        def capture_begin(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                if self not in handles:
                    handles[self] = self.register_capture_end_hook(w.dump)
            except TypeError:
                others.append(self.register_capture_end_hook(w.dump))
            return original_begin(self, *args, **kwargs)

        cls.capture_begin = capture_begin

        def restore_begin() -> None:
            if begin is None:
                del cls.capture_begin
            else:
                cls.capture_begin = begin
            for h in list(handles.values()) + others:
                h.remove()

        undo.append(restore_begin)
    else:
        result = WatchResult(directory, "keep_graph")
        w = _Watcher(directory, result)
        end = cls.__dict__.get("capture_end", None)
        original_end = getattr(cls, "capture_end")

        def capture_end(self: Any, *args: Any, **kwargs: Any) -> Any:
            value = original_end(self, *args, **kwargs)
            try:
                self.raw_cuda_graph()
            except Exception:  # PyTorch destroyed the template: keep_graph=False
                with w.lock:
                    w.unseen += 1
                return value
            w.dump(self)
            return value

        cls.capture_end = capture_end

        def restore_end() -> None:
            if end is None:
                del cls.capture_end
            else:
                cls.capture_end = end

        undo.append(restore_end)
    try:
        yield result
    finally:
        for u in reversed(undo):
            u()
    if w.failures:
        # The first failure; the others are alike (the same CUDA, CUPTI or driver).
        raise w.failures[0]
    if w.unseen:
        raise UsageError(2, "graphscope: watch() saw %d graph%s captured without keep_graph=True, whose template "
                            "PyTorch %s destroys at the end of capture (%d dumped); watching those needs %s, or "
                            "capture into torch.cuda.CUDAGraph(keep_graph=True)"
                         % (w.unseen, "" if w.unseen == 1 else "s", _torch_version(torch), len(result.paths),
                            HOOK_TORCH))
