"""cudagraphscope: graphscope's analyses of CUDA graphs, from Python.

A thin layer over graphscope's C API (libgraphscope.so.0, loaded with ctypes
on first use): every function returns what the CLI would write, as plain
Python objects. JSON documents come back as dicts, text formats as str.

    import cudagraphscope as gs
    doc = gs.load("forward.dot")              # graphscope.graph/1 dict
    print(gs.dump("forward.dot"))             # the text summary
    report = gs.profile("forward.json", "trace.json")
    result = gs.check("forward.json", {"max_nodes": 500}, profile=report)

Arguments naming a document (a graph, a trace, a profile report) take a
path (str, bytes or os.PathLike) or the document itself as a dict, which is
written to a temporary JSON file for the call: so graph_data(g) or a
PyTorch get_graph_data() dict can go straight into dump, diff, check and
profile (reports then name the temporary file where they name the input).

A path holding a NUL byte raises ValueError before the library is called
(the C API takes C strings: the path would end at the NUL and name another
file); so does any text argument holding one.

Errors raise GraphscopeError, whose code is graphscope's exit code (2 bad
arguments or options, 3 a bad input file, 4 a CUDA, CUPTI or device error)
and whose message is the CLI's one line, "graphscope: <what> (<why>)". A
failed check or two graphs that differ (exit code 1) are results: see the
"passed" and "same" keys. A library that cannot be found or is too old
raises OSError.

The library is found through, in order: the environment variable
GRAPHSCOPE_LIBRARY (a path; nothing else is tried when it is set), the
library beside this package when installed
(<prefix>/lib/python3/dist-packages/cudagraphscope/ next to
<prefix>/lib/libgraphscope.so.0 or <prefix>/lib/<multiarch>/...), and the
dynamic loader's search for libgraphscope.so.0.

PyTorch is never imported: graph_data() takes any object with PyTorch's
CUDAGraph.raw_cuda_graph() method.
"""
import contextlib
import json
import os
import tempfile

from ._library import GraphscopeError, call as _call, encode as _encode, library as _load_library, library_path

__all__ = [
    "GraphscopeError",
    "api_version",
    "check",
    "diff",
    "dump",
    "graph_data",
    "library_path",
    "load",
    "profile",
    "version",
]

DUMP_FORMATS = ("summary", "json", "dot", "svg")
RULES_SCHEMA = "graphscope.rules/1"


def version():
    """Returns graphscope's release, e.g. "0.1.0", as the loaded library says."""
    return _load_library().gs_version().decode("utf-8")


def api_version():
    """Returns the version of the C API the loaded library implements (an int, 1 or later)."""
    return _load_library().gs_api_version()


def _checked_path(path, what):
    """path (str or bytes) as it is; ValueError naming it when it holds a NUL
    byte, which would end the C string early: "forkjoin.json\\0.evil" would
    read forkjoin.json."""
    if (b"\0" if isinstance(path, bytes) else "\0") in path:
        raise ValueError("%s %r contains a NUL byte: no file has that name" % (what, path))
    return path


@contextlib.contextmanager
def _path_of(document, what):
    """Yields the path to give the library for a document argument: a path as
    it is, a dict written to a temporary JSON file removed afterwards."""
    if isinstance(document, dict):
        fd, path = tempfile.mkstemp(prefix="cudagraphscope-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(document, f)
            yield os.fsencode(path)
        finally:
            os.unlink(path)
        return
    try:
        path = os.fspath(document)
    except TypeError:
        raise TypeError("%s must be a path (str, bytes or os.PathLike) or a dict, not %s"
                        % (what, type(document).__name__)) from None
    yield os.fsencode(_checked_path(path, what))


def _options(**options):
    """The options object of a call, without the options left as None."""
    return _encode(json.dumps({k: v for k, v in options.items() if v is not None}))


def load(path):
    """Reads a graph document in any format graphscope reads (graphscope
    JSON, PyTorch's get_graph_data() dict as JSON, cudaGraphDebugDotPrint
    DOT), validates it, and returns it as a graphscope.graph/1 dict (a
    superset of PyTorch's get_graph_data() dict)."""
    with _path_of(path, "path") as p:
        _, text = _call("gs_dump", p, b"json", None)
    return json.loads(text)


def dump(path, format="summary", fold=True, svg_max_nodes=5000):
    """Returns a graph document written as format, as str: "summary" (the
    text summary, `graphscope dump`'s default), "json" (graphscope.graph/1
    text; load() gives the dict), "dot" (a Graphviz picture) or "svg" (the
    picture laid out). fold (dot, svg): one copy of each repeated block;
    False draws every node. svg_max_nodes (svg): refuse larger pictures
    (GraphscopeError, code 2)."""
    if not isinstance(format, str):
        raise TypeError("format must be one of %s, not %s" % (", ".join(DUMP_FORMATS), type(format).__name__))
    with _path_of(path, "path") as p:
        _, text = _call("gs_dump", p, _encode(format, "format"), _options(fold=fold, svg_max_nodes=svg_max_nodes))
    return text


def diff(a, b, ignore_geometry=False, ignore_sizes=False):
    """Compares two graph documents (any format load() reads) and returns
    the graphscope.diff/1 dict: "same" is True when they agree (nodes by
    kind, launch geometry, sizes, edges), and the rest says what differs.
    Graphs that differ are a result, not an exception."""
    with _path_of(a, "a") as pa, _path_of(b, "b") as pb:
        _, text = _call("gs_diff", pa, pb, _options(ignore_geometry=ignore_geometry, ignore_sizes=ignore_sizes))
    return json.loads(text)


def _rules_text(rules):
    """The rules as the JSON text the C API takes, and the rules file's path
    (or None)."""
    if rules is None:
        return None, None
    if isinstance(rules, dict):
        if "schema" not in rules:
            rules = {"schema": RULES_SCHEMA, **rules}
        return json.dumps(rules), None
    if isinstance(rules, str) and rules.lstrip().startswith("{"):
        return rules, None
    try:
        path = os.fsdecode(_checked_path(os.fspath(rules), "rules"))
    except TypeError:
        raise TypeError("rules must be a dict, JSON text or the path of a rules file, not %s"
                        % type(rules).__name__) from None
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
    except OSError as e:
        raise GraphscopeError(3, "graphscope: %s (%s)" % (path, e.strerror or e)) from None
    # The library names the file in errors and takes a relative baseline
    # relative to its directory, as `graphscope check --rules FILE` does.
    return text, path


def check(graph, rules=None, profile=None):
    """Checks a graph document against rules and returns the
    graphscope.check/1 dict: "passed" is True when every rule passed, and
    "results" has one entry per rule. A failed rule is a result, not an
    exception.

    rules: a graphscope.rules/1 document as a dict (its "schema" key may be
    left out), its JSON text, or the path of a rules file. A relative
    "baseline" is relative to the rules file's directory, or to the working
    directory when rules are not a file. No rules at all is GraphscopeError
    code 2, as in the CLI.
    profile: a graphscope.profile/1 report of this graph (a path, or the
    dict profile() returns), needed by the timing rules
    (max_blocking_fake_us, min_critical_path_efficiency, max_account_share).
    """
    text, rules_path = _rules_text(rules)
    with contextlib.ExitStack() as stack:
        g = stack.enter_context(_path_of(graph, "graph"))
        p = None if profile is None else stack.enter_context(_path_of(profile, "profile"))
        options = {"rules_file": rules_path, "profile": None if p is None else os.fsdecode(p)}
        _, out = _call("gs_check", g, _encode(text, "rules"), _options(**options))
    return json.loads(out)


def profile(graph, trace, threshold_us=5, tolerance_us=2, exec_graph_id=None, launches=None):
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
    options = _options(threshold_us=threshold_us, tolerance_us=tolerance_us, exec_graph_id=exec_graph_id,
                       launches=None if launches is None else list(launches))
    with _path_of(graph, "graph") as g, _path_of(trace, "trace") as t:
        _, text = _call("gs_profile", g, t, options)
    return json.loads(text)


def _handle(value, what):
    """A CUDA handle as the unsigned number the C API takes."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(value)  # e.g. a cuda-python CUgraph
        except (TypeError, ValueError):
            raise TypeError("%s returned %s, not a handle as an int" % (what, type(value).__name__)) from None
    return value & 0xFFFFFFFFFFFFFFFF


def graph_data(g, name=None):
    """Walks a torch.cuda.CUDAGraph of this process and returns its
    graphscope.graph/1 dict: PyTorch's get_graph_data() keys (exec_graph_id
    at the top; index, node_type, tools_id, graph_id, node_id, kernel_name,
    event_ptr, dependencies, dependents on every node) plus graphscope's
    extensions (launch geometry, sizes, child graphs and conditional bodies,
    edge types, ...), the same walk as `graphscope capture`.

    g: a CUDAGraph made with keep_graph=True (torch.cuda.CUDAGraph(
    keep_graph=True)), after capture and before reset(); PyTorch frees the
    template of other graphs at the end of capture. Once g is instantiated
    (instantiate() or a first replay()), its raw_cuda_graph_exec() is walked
    too and the ids are the exec graph's, as get_graph_data() and CUPTI's
    records (profiler traces) give them: tools_id = (exec_graph_id << 32) |
    node_id. Before, they are the template's and exec_graph_id is None.
    Any object with PyTorch's raw_cuda_graph() method will do: torch is never
    imported. name: the document's "name".

    Raises TypeError when g has no raw_cuda_graph() method, GraphscopeError
    code 2 when raw_cuda_graph() gives no graph (PyTorch raises for a graph
    not made with keep_graph=True, not yet captured, or reset; its message is
    kept), and code 4 when CUDA or CUPTI cannot be loaded or the driver does
    not know the graph.
    """
    raw = getattr(g, "raw_cuda_graph", None)
    if not callable(raw):
        raise TypeError("graph_data() needs a torch.cuda.CUDAGraph (an object with raw_cuda_graph()), not %s"
                        % type(g).__name__)
    try:
        handle = raw()
    except Exception as e:  # PyTorch's TORCH_CHECK raises RuntimeError
        why = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise GraphscopeError(2, "graphscope: no CUDA graph to walk (raw_cuda_graph(): %s; capture into "
                                 "torch.cuda.CUDAGraph(keep_graph=True) and walk it before reset())" % why) from e
    handle = _handle(handle, "raw_cuda_graph()")
    if handle == 0:
        raise GraphscopeError(2, "graphscope: no CUDA graph to walk (raw_cuda_graph() returned a null cudaGraph_t)")
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
    return json.loads(text)
