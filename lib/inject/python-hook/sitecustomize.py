"""graphscope's hook in the Python processes of `graphscope capture --exec`
and `profile --exec` (the run ledger, issue 45). The CLI puts this folder
first on PYTHONPATH, so Python imports this module at start-up, before the
program. It changes nothing the program sees or prints:

- it takes its folder off sys.path again and runs the sitecustomize it
  hides, if the environment has one (Debian's and Ubuntu's Pythons do),
  which then stands as `sitecustomize` in sys.modules;
- it adds one logging handler to the "torch" logger (and to PyTorch's
  cudagraph artifact loggers, which do not propagate there) that writes, to a file
  of graphscope's, the records PyTorch emits anyway about its CUDA graphs
  (torch.compile's cudagraph trees: skips and their reasons, re-recording
  limits, distinct sizes), with the monotonic clock's time, so that the
  ledger ties each to the graph or eager stretch it caused; it prints
  nothing and changes no logger's level or other handlers;
- PyTorch says why it records a function again (a new recording, a
  warm-up, a check that failed) only at the debug level, which no handler
  shows by default: on the cudagraph trees' own loggers, `debug` is
  wrapped so that such a record, when the logger would drop it, is written
  to graphscope's file alone; the logger then does what it always did;
- at exit, where the program used torch.compile, it writes PyTorch's own
  cudagraph counters (torch._dynamo.utils.counters["inductor"]) there too;
- unless --liveness=off, once `import torch` has finished, PyTorch's
  caching allocator's trace hooks report each block it hands out and takes
  back to the injection library (_watch_torch_memory), which checks each
  replay's inputs against them.

The file is GRAPHSCOPE_OUT/torch-log.pid-PID.jsonl, a JSON object a line;
the injection library moves it into the process's directory when the
process ends. Any error here is swallowed: the program must run as without
graphscope.
"""


def _watch_torch_memory():
    """Input liveness (--liveness): PyTorch's caching allocator keeps its
    blocks at the driver, so a tensor freed is invisible there. Once
    `import torch` has finished, the allocator's own trace hooks (the ones
    torch.cuda._sanitizer uses) get graphscope's C functions as callbacks:
    each block handed out and taken back reaches the injection library
    directly (ctypes calls, no Python frame of graphscope's). Nothing else
    is registered; the program sees no difference."""
    import os
    import sys
    library = os.environ.get("CUDA_INJECTION64_PATH")
    if not library:
        return
    import importlib.abc

    def watch():
        import ctypes
        lib = ctypes.CDLL(library)
        tell = lib.graphscope_torch_watch
        tell.argtypes = [ctypes.c_char_p]
        tell.restype = None
        try:
            import torch
            try:
                from torch.cuda import _gpu_trace as trace
                activate = torch._C._activate_gpu_trace
            except (ImportError, AttributeError):
                from torch.utils import _cuda_trace as trace
                activate = torch._C._activate_cuda_trace
            alloc, free = lib.graphscope_torch_alloc, lib.graphscope_torch_free
            for f in (alloc, free):
                f.argtypes = [ctypes.c_ulonglong]
                f.restype = None
            trace.register_callback_for_memory_allocation(alloc)
            trace.register_callback_for_memory_deallocation(free)
            activate()
            tell(None)
        except Exception as e:
            tell(("%s: %s" % (type(e).__name__, e)).encode("utf-8", "replace")[:300])

    class AfterTorch(importlib.abc.MetaPathFinder):
        # Finds nothing itself: the first time "torch" is imported, the
        # finder after it finds the spec, whose loader runs watch() after
        # the module's own code.
        def find_spec(self, name, path=None, target=None):
            if name != "torch":
                return None
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                spec = find(name, path, target) if find else None
                if spec is not None:
                    break
            else:
                return None
            loader = spec.loader
            run = getattr(loader, "exec_module", None)
            if run is None:
                return spec

            def exec_module(module):
                run(module)
                try:
                    watch()
                except Exception:
                    pass

            try:
                loader.exec_module = exec_module
            except Exception:
                pass
            return spec

    if "torch" in sys.modules:
        watch()
    else:
        sys.meta_path.insert(0, AfterTorch())


def _graphscope_hook():
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    # The sitecustomize this one hides, run as Python would have run it.
    try:
        import importlib.machinery
        import importlib.util

        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
        if spec is not None and spec.loader is not None and spec.origin != os.path.abspath(__file__):
            module = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = module
            spec.loader.exec_module(module)
    except Exception:
        pass
    out = os.environ.get("GRAPHSCOPE_OUT")
    if out and os.environ.get("GRAPHSCOPE_LIVENESS", "report") != "off":
        try:
            _watch_torch_memory()
        except Exception:
            pass
    if not out or os.environ.get("GRAPHSCOPE_PYTHON_LOG") == "0":
        return
    import atexit
    import json
    import logging
    import time

    pid = os.getpid()

    def path():
        # A child made by fork() without exec writes a file of its own.
        return os.path.join(out, "torch-log.pid-%d.jsonl" % os.getpid())

    def write(obj):
        try:
            with open(path(), "a", encoding="utf-8") as f:
                f.write(json.dumps(obj, sort_keys=True) + "\n")
        except Exception:
            pass

    seen = []  # the last records written: one reaching two of the loggers below is written once

    class CudagraphRecords(logging.Handler):
        def emit(self, record):
            try:
                if any(r is record for r in seen):
                    return
                seen.append(record)
                del seen[:-8]
                message = record.getMessage()
                if "cudagraph" not in record.name.lower() and "cudagraph" not in message.lower():
                    return
                write({"t": time.monotonic(), "pid": os.getpid(), "logger": record.name,
                       "level": record.levelname, "file": record.pathname, "line": record.lineno,
                       "message": message[:8000]})
            except Exception:
                pass

    # PyTorch's artifact loggers (torch._logging.getArtifactLogger: NAME.__ARTIFACT)
    # have handlers of their own and do not propagate to "torch": the ones
    # that carry cudagraph records get the handler too, made now under the
    # names PyTorch gives them (logging hands it the same objects later).
    names = ["torch"] + ["torch._inductor.%s.__%s" % (m, a) for m in ("cudagraph_utils", "cudagraph_trees")
                         for a in ("cudagraphs", "perf_hints")]
    try:
        handler = CudagraphRecords(logging.DEBUG)
        for name in names:
            logging.getLogger(name).addHandler(handler)
    except Exception:
        return

    def keep_debug(logger):
        # The logger's own debug, called as before after a record it would
        # drop is written here (one it keeps reaches the handler above).
        original = logger.debug

        def debug(msg, *args, **kwargs):
            try:
                if not logger.isEnabledFor(logging.DEBUG):
                    caller = sys._getframe(1)
                    message = str(msg) % args if args else str(msg)
                    write({"t": time.monotonic(), "pid": os.getpid(), "logger": logger.name, "level": "DEBUG",
                           "file": caller.f_code.co_filename, "line": caller.f_lineno, "message": message[:8000]})
            except Exception:
                pass
            return original(msg, *args, **kwargs)

        logger.debug = debug

    try:
        for name in ["torch._inductor.cudagraph_trees", "torch._inductor.cudagraph_trees.__cudagraphs",
                     "torch._inductor.cudagraph_trees.__perf_hints"]:
            keep_debug(logging.getLogger(name))
    except Exception:
        pass

    def counters():
        try:
            utils = sys.modules.get("torch._dynamo.utils")
            if utils is None or os.getpid() != pid:
                return
            inductor = {k: int(v) for k, v in utils.counters["inductor"].items() if "cudagraph" in k}
            if inductor:
                write({"t": time.monotonic(), "pid": os.getpid(), "counters": inductor})
        except Exception:
            pass

    atexit.register(counters)


try:
    _graphscope_hook()
except Exception:
    pass
del _graphscope_hook
