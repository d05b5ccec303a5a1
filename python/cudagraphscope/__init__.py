"""cudagraphscope: graphscope's analyses of CUDA graphs, from Python.

A typed layer over graphscope's C API (libgraphscope.so.0, loaded with
ctypes on first use) and, for report() and ranks(), the graphscope command
the package carries: every function returns what the CLI would write, as
plain Python objects. JSON documents come back as dicts, text formats as str.

    import cudagraphscope as gs
    doc = gs.load("forward.dot")              # graphscope.graph/1 dict
    print(gs.dump("forward.dot"))             # the text summary
    report = gs.profile("forward.json", "trace.json")
    result = gs.check("forward.json", {"max_nodes": 500}, profile=report)
    gs.report("forward.json", trace="trace.json", output="forward.html")

In Jupyter, what load(), profile() and diff() return displays as the
report's page (the HTML of report(), inline).

Arguments naming a document (a graph, a trace, a profile report) take a
path (str, bytes or os.PathLike) or the document itself as a dict, which is
written to a temporary JSON file for the call: so graph_data(g) or a
PyTorch get_graph_data() dict can go straight into dump, diff, check,
profile and report. A path to the pickle that PyTorch's
torch.cuda.graphs.export_graph_data() writes is read too (the CLI reads
JSON only and says to use this package).

A path holding a NUL byte raises ValueError before the library is called
(the C API takes C strings: the path would end at the NUL and name another
file); so does any text argument holding one.

Errors raise GraphscopeError subclasses that are also the standard
exception for the case, each with graphscope's exit code in ``code`` and the
CLI's one line, "graphscope: <what> (<why>)", in ``message``: a missing input
file is InputNotFoundError (a FileNotFoundError), a bad document
DocumentError and a bad argument UsageError (ValueErrors), a CUDA or device
error DeviceError (a RuntimeError). A failed check or two graphs that differ
(exit code 1) are results: see the "passed" and "same" keys. A library that
cannot be found or is too old raises OSError.

The library is found through, in order: the environment variable
GRAPHSCOPE_LIBRARY (a path; nothing else is tried when it is set), the
wheel's copy (cudagraphscope/_native/), an installed tree's (the package
in <prefix>/lib/python3/dist-packages beside <prefix>/lib/<multiarch>/),
and the dynamic loader's search. The CLI likewise: GRAPHSCOPE_BINARY, the
wheel's, the installed tree's, the PATH.

PyTorch is never imported, except by watch(): graph_data() takes any object
with PyTorch's CUDAGraph.raw_cuda_graph() method.
"""
from __future__ import annotations

import contextlib
import html
import json
import os
import shutil
import subprocess
import tempfile
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union, cast

from . import _native
from ._errors import (DeviceError, DocumentError, GraphscopeError, InputNotFoundError, InputPermissionError,
                      UsageError, WorkloadError, error_for)
from ._library import call as _call, encode as _encode, library as _load_library, library_path
from ._pickle import is_pickle as _is_pickle, read_graph_data as _read_graph_data
from ._torch import WatchResult, watch
from ._version import __version__

__all__ = [
    "DeviceError",
    "DiffResult",
    "DocumentError",
    "GraphDocument",
    "GraphscopeError",
    "InputNotFoundError",
    "InputPermissionError",
    "ProfileReport",
    "UsageError",
    "WatchResult",
    "WorkloadError",
    "__version__",
    "api_version",
    "binary_path",
    "check",
    "diff",
    "dump",
    "graph_data",
    "library_path",
    "load",
    "profile",
    "ranks",
    "report",
    "version",
    "watch",
]

DUMP_FORMATS = ("summary", "json", "dot", "svg")
RULES_SCHEMA = "graphscope.rules/1"

# A path as Python's file functions take it.
PathArg = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
# A document argument: a path, or the document itself.
Document = Union[PathArg, Mapping[str, Any]]
# A page taller than this scrolls inside its frame in a notebook.
NOTEBOOK_HEIGHT_PX = 720


def version() -> str:
    """Returns graphscope's release, e.g. "0.1.0", as the loaded library says."""
    return str(_load_library().gs_version().decode("utf-8"))


def api_version() -> int:
    """Returns the version of the C API the loaded library implements (an int, 1 or later)."""
    return int(_load_library().gs_api_version())


def binary_path() -> str:
    """The graphscope command report() and ranks() run (the wheel's own)."""
    return _native.binary()


def _checked_path(path: Union[str, bytes], what: str) -> Union[str, bytes]:
    """path (str or bytes) as it is; ValueError naming it when it holds a NUL
    byte, which would end the C string early: "forkjoin.json\\0.evil" would
    read forkjoin.json."""
    if (b"\0" in path) if isinstance(path, bytes) else ("\0" in path):
        raise ValueError("%s %r contains a NUL byte: no file has that name" % (what, path))
    return path


def _fspath(document: object, what: str) -> Union[str, bytes]:
    if isinstance(document, (str, bytes, os.PathLike)):
        path: Union[str, bytes] = os.fspath(document)
        if isinstance(path, (str, bytes)):
            return path
    raise TypeError("%s must be a path (str, bytes or os.PathLike) or a dict, not %s"
                    % (what, type(document).__name__))


@contextlib.contextmanager
def _temporary_json(document: Mapping[str, Any], stem: str) -> Iterator[bytes]:
    """A document written to a temporary JSON file (removed afterwards),
    named after the document, as reports name their inputs."""
    directory = tempfile.mkdtemp(prefix="cudagraphscope-")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem)[:64] or "document"
    path = os.path.join(directory, safe + ".json")
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(document, f)
        yield os.fsencode(path)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@contextlib.contextmanager
def _path_of(document: object, what: str) -> Iterator[bytes]:
    """Yields the path to give the library for a document argument: a path as
    it is, a dict (or a PyTorch get_graph_data() pickle) written to a
    temporary JSON file removed afterwards."""
    if isinstance(document, Mapping):
        stem = document.get("name") if isinstance(document.get("name"), str) else what
        with _temporary_json(document, str(stem)) as p:
            yield p
        return
    path = _checked_path(_fspath(document, what), what)
    text = os.fsdecode(path)
    if text != "-" and _is_pickle(text):
        stem = os.path.splitext(os.path.basename(text))[0]
        with _temporary_json(_read_graph_data(text), stem) as p:
            yield p
        return
    yield os.fsencode(path)


def _inputs(*documents: object) -> List[str]:
    """The paths among document arguments, to name a missing one."""
    out = []
    for d in documents:
        if d is not None and not isinstance(d, Mapping):
            try:
                out.append(os.fsdecode(_fspath(d, "path")))
            except TypeError:
                pass
    return out


def _options(**options: Any) -> Optional[bytes]:
    """The options object of a call, without the options left as None."""
    return _encode(json.dumps({k: v for k, v in options.items() if v is not None}))


def _frame(page: str) -> str:
    """A report page as a notebook shows it: in a frame of its own (srcdoc),
    so that its styles and script stay apart from the notebook's."""
    return ('<iframe srcdoc="%s" style="width:100%%;height:%dpx;border:1px solid #ccc" '
            'sandbox="allow-scripts allow-downloads allow-popups" title="graphscope report"></iframe>'
            % (html.escape(page, quote=True), NOTEBOOK_HEIGHT_PX))


def _frame_or_error(make_page: Any) -> str:
    try:
        return _frame(make_page())
    except (GraphscopeError, OSError) as e:
        return "<pre>%s</pre>" % html.escape(str(e))


class GraphDocument(Dict[str, Any]):
    """A graphscope.graph/1 document (a dict, as load() and graph_data()
    return it). In Jupyter it displays as report()'s page of the graph."""

    _source: Optional[Document] = None

    def _repr_html_(self) -> str:
        source: Document = self._source if self._source is not None else dict(self)
        return _frame_or_error(lambda: report(source))


class ProfileReport(Dict[str, Any]):
    """A graphscope.profile/1 report (a dict, as profile() returns it). In
    Jupyter it displays as report()'s page of the graph and its trace."""

    _inputs: Optional[Tuple[Document, Document, Dict[str, Any]]] = None

    def _repr_html_(self) -> str:
        if self._inputs is None:
            return "<pre>%s</pre>" % html.escape(json.dumps(dict(self), indent=1)[:20000])
        graph, trace, options = self._inputs
        return _frame_or_error(lambda: report(graph, trace=trace, **options))


class DiffResult(Dict[str, Any]):
    """A graphscope.diff/1 result (a dict, as diff() returns it). In Jupyter
    it displays as report()'s page comparing the two graphs."""

    _inputs: Optional[Tuple[Document, Document]] = None

    def _repr_html_(self) -> str:
        if self._inputs is None:
            return "<pre>%s</pre>" % html.escape(json.dumps(dict(self), indent=1)[:20000])
        a, b = self._inputs
        return _frame_or_error(lambda: report(a, b))


def _kept(document: object) -> Document:
    """What a result keeps of an input to draw its page later: a path as it
    is, a dict as a copy."""
    if isinstance(document, Mapping):
        return dict(document)
    return document  # type: ignore[return-value]


def load(path: Document) -> GraphDocument:
    """Reads a graph document in any format graphscope reads (graphscope
    JSON, PyTorch's get_graph_data() dict as JSON or as the pickle of
    torch.cuda.graphs.export_graph_data(), cudaGraphDebugDotPrint DOT),
    validates it, and returns it as a graphscope.graph/1 dict (a superset of
    PyTorch's get_graph_data() dict)."""
    with _path_of(path, "path") as p:
        _, text = _call("gs_dump", p, b"json", None, inputs=_inputs(path))
    doc = GraphDocument(json.loads(text))
    doc._source = _kept(path)
    return doc


def dump(path: Document, format: str = "summary", fold: bool = True, svg_max_nodes: int = 5000) -> str:
    """Returns a graph document written as format, as str: "summary" (the
    text summary, `graphscope dump`'s default), "json" (graphscope.graph/1
    text; load() gives the dict), "dot" (a Graphviz picture) or "svg" (the
    picture laid out). fold (dot, svg): one copy of each repeated block;
    False draws every node. svg_max_nodes (svg): refuse larger pictures
    (UsageError, code 2)."""
    if not isinstance(format, str):
        raise TypeError("format must be one of %s, not %s" % (", ".join(DUMP_FORMATS), type(format).__name__))
    with _path_of(path, "path") as p:
        _, text = _call("gs_dump", p, _encode(format, "format"), _options(fold=fold, svg_max_nodes=svg_max_nodes),
                        inputs=_inputs(path))
    return text


def diff(a: Document, b: Document, ignore_geometry: bool = False, ignore_sizes: bool = False) -> DiffResult:
    """Compares two graph documents (any format load() reads) and returns
    the graphscope.diff/1 dict: "same" is True when they agree (nodes by
    kind, launch geometry, sizes, edges), and the rest says what differs.
    Graphs that differ are a result, not an exception."""
    with _path_of(a, "a") as pa, _path_of(b, "b") as pb:
        _, text = _call("gs_diff", pa, pb, _options(ignore_geometry=ignore_geometry, ignore_sizes=ignore_sizes),
                        inputs=_inputs(a, b))
    result = DiffResult(json.loads(text))
    result._inputs = (_kept(a), _kept(b))
    return result


def _rules_text(rules: object) -> Tuple[Optional[str], Optional[str]]:
    """The rules as the JSON text the C API takes, and the rules file's path
    (or None)."""
    if rules is None:
        return None, None
    if isinstance(rules, Mapping):
        if "schema" not in rules:
            rules = {"schema": RULES_SCHEMA, **rules}
        return json.dumps(rules), None
    if isinstance(rules, str) and rules.lstrip().startswith("{"):
        return rules, None
    try:
        path = os.fsdecode(_checked_path(_fspath(rules, "rules"), "rules"))
    except TypeError:
        raise TypeError("rules must be a dict, JSON text or the path of a rules file, not %s"
                        % type(rules).__name__) from None
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
    except OSError as e:
        raise error_for(3, "graphscope: %s (%s)" % (path, e.strerror or e), [path]) from None
    # The library names the file in errors and takes a relative baseline
    # relative to its directory, as `graphscope check --rules FILE` does.
    return text, path


def check(graph: Document, rules: Union[Mapping[str, Any], str, PathArg, None] = None,
          profile: Optional[Document] = None) -> Dict[str, Any]:
    """Checks a graph document against rules and returns the
    graphscope.check/1 dict: "passed" is True when every rule passed, and
    "results" has one entry per rule. A failed rule is a result, not an
    exception.

    rules: a graphscope.rules/1 document as a dict (its "schema" key may be
    left out), its JSON text, or the path of a rules file. A relative
    "baseline" is relative to the rules file's directory, or to the working
    directory when rules are not a file. No rules at all is UsageError
    (code 2), as in the CLI.
    profile: a graphscope.profile/1 report of this graph (a path, or the
    dict profile() returns), needed by the timing rules
    (max_blocking_fake_us, min_critical_path_efficiency, max_account_share).
    """
    text, rules_path = _rules_text(rules)
    with contextlib.ExitStack() as stack:
        g = stack.enter_context(_path_of(graph, "graph"))
        p = None if profile is None else stack.enter_context(_path_of(profile, "profile"))
        options = {"rules_file": rules_path, "profile": None if p is None else os.fsdecode(p)}
        _, out = _call("gs_check", g, _encode(text, "rules"), _options(**options), inputs=_inputs(graph, profile))
    return dict(json.loads(out))


def profile(graph: Document, trace: Document, threshold_us: float = 5, tolerance_us: float = 2,
            exec_graph_id: Optional[int] = None, launches: Optional[Iterable[int]] = None) -> ProfileReport:
    """Joins a trace of a graph's replays (a Chrome trace: a PyTorch profiler
    export, or graphscope's own) to the graph (any format load() reads), as
    `graphscope profile --graph GRAPH --trace TRACE --json`, and returns the
    graphscope.profile/1 dict: for every node its median timing, the
    dependency observed and its verdict (real, fake or none), the critical
    path, and where the makespan went.

    threshold_us: the delay past which a node counts as blocked.
    tolerance_us: how close an end must be to a start.
    exec_graph_id: which exec graph's records (a trace with several).
    launches: only these graph launches, by correlation id (a trace
    without graph ids, such as PyTorch 2.11's).
    """
    launch_list = None if launches is None else list(launches)
    options = _options(threshold_us=threshold_us, tolerance_us=tolerance_us, exec_graph_id=exec_graph_id,
                       launches=launch_list)
    with _path_of(graph, "graph") as g, _path_of(trace, "trace") as t:
        _, text = _call("gs_profile", g, t, options, inputs=_inputs(graph, trace))
    result = ProfileReport(json.loads(text))
    result._inputs = (_kept(graph), _kept(trace), {"threshold_us": threshold_us, "tolerance_us": tolerance_us,
                                                   "exec_graph_id": exec_graph_id, "launches": launch_list})
    return result


def _run_cli(args: List[str], inputs: List[str]) -> Tuple[int, bytes]:
    """Runs the graphscope command; returns (exit code, standard output) for
    0 and 1, and raises the error of its one line for any other code."""
    argv = [_native.binary()] + args
    for a in argv:
        if "\0" in a:
            raise ValueError("argument %r contains a NUL byte" % a)
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    if p.returncode in (0, 1):
        return p.returncode, p.stdout
    lines = p.stderr.decode("utf-8", errors="replace").strip().splitlines()
    message = lines[-1] if lines else "graphscope: %s failed with exit code %d" % (args[0], p.returncode)
    if p.returncode < 0:
        message = "graphscope: %s was killed by signal %d" % (args[0], -p.returncode)
    raise error_for(p.returncode if p.returncode > 0 else 4, message, inputs)


def _directory_or_document(x: object, what: str, stack: contextlib.ExitStack) -> str:
    if not isinstance(x, Mapping):
        path = os.fsdecode(_checked_path(_fspath(x, what), what))
        if os.path.isdir(path):
            return path
    return os.fsdecode(stack.enter_context(_path_of(x, what)))


def report(graph: Document, graph2: Optional[Document] = None, *, trace: Optional[Document] = None,
           output: Optional[PathArg] = None, threshold_us: Optional[float] = None,
           tolerance_us: Optional[float] = None, exec_graph_id: Optional[int] = None,
           launches: Optional[Iterable[int]] = None, fold: bool = True,
           svg_max_nodes: Optional[int] = None) -> str:
    """Returns the report's page (one self-contained HTML document), as
    `graphscope report` writes it, and writes it to output when given:

      report(graph)                 one graph, drawn
      report(graph, trace=trace)    with the profile of its replays
      report(a, b)                  two graphs compared
      report(out_dir)               an --exec output directory (or watch()'s)

    The other arguments are the CLI's options (--threshold-us,
    --tolerance-us, --exec-graph-id, --launch, --no-fold, --svg-max-nodes).
    """
    with contextlib.ExitStack() as stack:
        args = ["report", _directory_or_document(graph, "graph", stack)]
        if graph2 is not None:
            args.append(os.fsdecode(stack.enter_context(_path_of(graph2, "graph2"))))
        if trace is not None:
            args += ["--trace", os.fsdecode(stack.enter_context(_path_of(trace, "trace")))]
        for flag, value in (("--threshold-us", threshold_us), ("--tolerance-us", tolerance_us),
                            ("--exec-graph-id", exec_graph_id), ("--svg-max-nodes", svg_max_nodes)):
            if value is not None:
                args += [flag, repr(value) if isinstance(value, float) else str(int(value))]
        if launches is not None:
            args += ["--launch", ",".join(str(int(x)) for x in launches)]
        if not fold:
            args.append("--no-fold")
        out = None if output is None else os.fsdecode(_checked_path(_fspath(output, "output"), "output"))
        args += ["-o", out or "-"]
        _, page = _run_cli(args, _inputs(graph, graph2, trace))
    if out is not None:
        with open(out, "rb") as f:
            page = f.read()
    return page.decode("utf-8")


def ranks(run_dir: PathArg, trace: Optional[PathArg] = None) -> Dict[str, Any]:
    """Compares the graphs of a multi-rank job's ranks (the --out-dir of
    `graphscope capture --exec` or `profile --exec` of torchrun, mpirun or
    srun), as `graphscope ranks RUN_DIR --json`, and returns the
    graphscope.ranks/1 dict: ranks that differ are a result, not an
    exception. trace: also write one Chrome trace of every rank's profiled
    replays there."""
    path = os.fsdecode(_checked_path(_fspath(run_dir, "run_dir"), "run_dir"))
    args = ["ranks", path, "--json"]
    if trace is not None:
        args += ["--trace", os.fsdecode(_checked_path(_fspath(trace, "trace"), "trace"))]
    _, text = _run_cli(args, [path])
    return dict(json.loads(text.decode("utf-8")))


def _handle(value: object, what: str) -> int:
    """A CUDA handle as the unsigned number the C API takes."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(cast(Any, value))  # e.g. a cuda-python CUgraph
        except (TypeError, ValueError):
            raise TypeError("%s returned %s, not a handle as an int" % (what, type(value).__name__)) from None
    return value & 0xFFFFFFFFFFFFFFFF


def graph_data(g: Any, name: Optional[str] = None) -> GraphDocument:
    """Walks a torch.cuda.CUDAGraph of this process and returns its
    graphscope.graph/1 dict: PyTorch's get_graph_data() keys (exec_graph_id
    at the top; index, node_type, tools_id, graph_id, node_id, kernel_name,
    event_ptr, dependencies, dependents on every node) plus graphscope's
    extensions (launch geometry, sizes, child graphs and conditional bodies,
    edge types, ...), the same walk as `graphscope capture`.

    Needs PyTorch 2.8 or newer: the first with CUDAGraph(keep_graph=True)
    and raw_cuda_graph() (tried with 2.11). No get_graph_data() is needed
    (2.11 has none).

    g: a CUDAGraph made with keep_graph=True (torch.cuda.CUDAGraph(
    keep_graph=True)), after capture and before reset(); PyTorch frees the
    template of other graphs at the end of capture (watch() sees those too,
    where PyTorch has a capture-end hook). Once g is instantiated
    (instantiate() or a first replay()), its raw_cuda_graph_exec() is walked
    too and the ids are the exec graph's, as get_graph_data() and CUPTI's
    records (profiler traces) give them: tools_id = (exec_graph_id << 32) |
    node_id. Before, they are the template's and exec_graph_id is None.
    Any object with PyTorch's raw_cuda_graph() method will do: torch is never
    imported. name: the document's "name".

    Raises TypeError when g has no raw_cuda_graph() method, UsageError
    (code 2) when raw_cuda_graph() gives no graph (PyTorch raises for a graph
    not made with keep_graph=True, not yet captured, or reset; its message is
    kept), and DeviceError (code 4) when CUDA or CUPTI cannot be loaded or
    the driver does not know the graph.
    """
    raw = getattr(g, "raw_cuda_graph", None)
    if not callable(raw):
        raise TypeError("graph_data() needs a torch.cuda.CUDAGraph (an object with raw_cuda_graph(), PyTorch 2.8 "
                        "or newer), not %s" % type(g).__name__)
    try:
        handle = raw()
    except Exception as e:  # PyTorch's TORCH_CHECK raises RuntimeError
        why = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise UsageError(2, "graphscope: no CUDA graph to walk (raw_cuda_graph(): %s; capture into "
                            "torch.cuda.CUDAGraph(keep_graph=True) and walk it before reset())" % why) from e
    handle = _handle(handle, "raw_cuda_graph()")
    if handle == 0:
        raise UsageError(2, "graphscope: no CUDA graph to walk (raw_cuda_graph() returned a null cudaGraph_t)")
    exec_handle = None
    raw_exec = getattr(g, "raw_cuda_graph_exec", None)
    if callable(raw_exec):
        try:
            exec_handle = raw_exec()
        except Exception:  # not instantiated yet: PyTorch raises
            exec_handle = None
        if exec_handle is not None:
            exec_handle = _handle(exec_handle, "raw_cuda_graph_exec()") or None
    _, text = _call("gs_walk_cuda_graph", handle, _options(name=name, exec=exec_handle))
    return GraphDocument(json.loads(text))
