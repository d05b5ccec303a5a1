"""python.offline: the cudagraphscope package over libgraphscope.so.0, on the
recorded inputs of tests/data, on any machine (no GPU, no PyTorch).

Debian's python3 and its standard library only. From the source tree, the
package comes from ROOT/python, the library from GRAPHSCOPE_LIBRARY and the
CLI, whose output the results are compared with, from GRAPHSCOPE_BINARY:

    GRAPHSCOPE_LIBRARY=build/lib/api/libgraphscope.so.0 \\
    GRAPHSCOPE_BINARY=build/apps/graphscope \\
    python3 -m unittest discover -s tests/python -v

Installed (python.wheel, and CI: the wheel of `pip install .` in a fresh
venv), with GRAPHSCOPE_TEST_INSTALLED=1 and neither variable set: the package,
its library and its CLI are the venv's, as a user gets them:

    GRAPHSCOPE_TEST_INSTALLED=1 v/bin/python -m unittest discover -s tests/python -v
"""
import ctypes
import json
import os
import pathlib
import pickle
import shutil
import subprocess
import sys
import tempfile
import threading
import types
import unittest
from unittest import mock

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSTALLED = os.environ.get("GRAPHSCOPE_TEST_INSTALLED") == "1"
if not INSTALLED:
    sys.path.insert(0, os.path.join(ROOT, "python"))

import cudagraphscope as gs  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data")
LIBRARY = os.environ.get("GRAPHSCOPE_LIBRARY")
# Installed: the console script of the venv this python3 belongs to.
BINARY = (os.environ.get("GRAPHSCOPE_BINARY") if not INSTALLED else
          os.path.join(os.path.dirname(sys.executable), "graphscope"))
PACKAGE = os.path.dirname(os.path.abspath(gs.__file__))


def data(*parts):
    return os.path.join(DATA, *parts)


FORKJOIN = data("captures", "forkjoin.json")
WIDE = data("captures", "wide.json")
MIXED = data("captures", "mixed.json")
TORCH_MLP_DOT = data("torch", "torch_mlp.debug_dump.dot")


def setUpModule():
    if INSTALLED:
        for var in ("GRAPHSCOPE_LIBRARY", "GRAPHSCOPE_BINARY"):
            if os.environ.get(var):
                raise RuntimeError("GRAPHSCOPE_TEST_INSTALLED=1 tests the installed package alone: unset %s" % var)
        if os.path.join(ROOT, "python") == os.path.dirname(PACKAGE):
            raise RuntimeError("GRAPHSCOPE_TEST_INSTALLED=1 but cudagraphscope comes from the source tree")
        return
    if not LIBRARY:
        raise RuntimeError("set GRAPHSCOPE_LIBRARY to the library under test (build/lib/api/libgraphscope.so.0)")
    if not BINARY:
        raise RuntimeError("set GRAPHSCOPE_BINARY to the CLI the results are compared with (build/apps/graphscope)")


def cli(*args):
    """Runs the CLI; returns (exit code, stdout, stderr)."""
    p = subprocess.run([BINARY] + [os.fspath(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.returncode, p.stdout, p.stderr


def python(code, *args):
    """Runs code (or, given as ["-m", module], a module) in a fresh python3 with
    the package on its path; returns (exit code, stdout + stderr)."""
    env = dict(os.environ) if INSTALLED else dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    argv = [sys.executable] + (list(code) if isinstance(code, list) else ["-c", code]) + list(args)
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, env=env)
    return p.returncode, p.stdout


class LibraryTest(unittest.TestCase):
    def test_library_comes_from_graphscope_library(self):
        if INSTALLED:
            # The wheel's own copy, inside the package.
            self.assertTrue(gs.library_path().startswith(os.path.join(PACKAGE, "_native", "lib")), gs.library_path())
        else:
            self.assertEqual(gs.library_path(), LIBRARY)

    def test_version_is_the_cli_release(self):
        rc, out, _ = cli("--version")
        self.assertEqual(rc, 0)
        self.assertEqual(out.strip(), "graphscope " + gs.version())

    def test_api_version_is_at_least_1(self):
        self.assertGreaterEqual(gs.api_version(), 1)

    def test_package_imports_and_reports_its_version_without_torch(self):
        # torch is made unimportable: neither importing the package nor
        # calling it may try.
        rc, out = python(
            "import sys\n"
            "class NoTorch:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'torch' or name.startswith('torch.'):\n"
            "            raise ImportError('torch is not installed (this test)')\n"
            "sys.meta_path.insert(0, NoTorch())\n"
            "import cudagraphscope\n"
            "print(cudagraphscope.version())\n"
            "cudagraphscope.load(%r)\n"
            "assert 'torch' not in sys.modules\n" % FORKJOIN)
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.strip(), gs.version())

    def test_a_missing_library_is_an_oserror_naming_the_path(self):
        rc, out = python(
            "import os\n"
            "os.environ['GRAPHSCOPE_LIBRARY'] = '/nonexistent/libgraphscope.so.0'\n"
            "import cudagraphscope\n"
            "try:\n"
            "    cudagraphscope.version()\n"
            "except OSError as e:\n"
            "    print(e)\n")
        self.assertEqual(rc, 0, out)
        self.assertTrue(out.startswith("graphscope: cannot load libgraphscope.so.0 (/nonexistent/"), out)

    def test_calls_from_several_threads_agree_with_one_thread(self):
        files = [FORKJOIN, WIDE, MIXED, TORCH_MLP_DOT]
        expected = [gs.dump(f) for f in files]
        results, errors = {}, []

        def work(k):
            try:
                for _ in range(5):
                    results[k] = [gs.dump(f) for f in files]
            except Exception as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        for k in range(8):
            self.assertEqual(results[k], expected)


class LoadTest(unittest.TestCase):
    def test_load_returns_the_document_the_cli_writes(self):
        rc, out, _ = cli("dump", FORKJOIN, "--json")
        self.assertEqual(rc, 0)
        self.assertEqual(gs.load(FORKJOIN), json.loads(out))

    def test_load_of_a_capture_has_its_nodes_and_ids(self):
        doc = gs.load(FORKJOIN)
        self.assertEqual(doc["schema"], "graphscope.graph/1")
        self.assertEqual(doc["name"], "forkjoin")
        self.assertEqual(doc["exec_graph_id"], 2)
        self.assertEqual(len(doc["nodes"]), 10)
        self.assertEqual(doc["nodes"][0]["dependents"], [1, 3, 5, 7, 9])

    def test_load_reads_pytorch_debug_dump_dot(self):
        doc = gs.load(TORCH_MLP_DOT)
        self.assertEqual(doc["source_format"], "nvidia-dot")
        self.assertIsNone(doc["exec_graph_id"])
        self.assertTrue(all(n["node_type"] == "kernel" for n in doc["nodes"]))

    def test_load_takes_a_pathlike(self):
        self.assertEqual(gs.load(pathlib.Path(FORKJOIN)), gs.load(FORKJOIN))

    def test_load_takes_a_pytorch_get_graph_data_dict(self):
        path = data("derived", "torch_two_stream.pytorch.json")
        with open(path) as f:
            pytorch = json.load(f)
        doc = gs.load(pytorch)
        self.assertEqual(doc["schema"], "graphscope.graph/1")
        self.assertEqual(doc["source_format"], "pytorch")
        self.assertEqual(len(doc["nodes"]), len(pytorch["nodes"]))
        self.assertEqual(doc, gs.load(path))


class DumpTest(unittest.TestCase):
    def test_summary_is_the_cli_default_output(self):
        for f in (FORKJOIN, MIXED, TORCH_MLP_DOT):
            rc, out, _ = cli("dump", f)
            self.assertEqual(rc, 0)
            self.assertEqual(gs.dump(f), out)
            self.assertEqual(gs.dump(f, "summary"), out)

    def test_json_is_the_text_of_load(self):
        text = gs.dump(FORKJOIN, format="json")
        self.assertIsInstance(text, str)
        self.assertEqual(json.loads(text), gs.load(FORKJOIN))

    def test_dot_is_the_cli_picture_folded_or_not(self):
        rc, folded, _ = cli("dump", WIDE, "--dot")
        self.assertEqual(rc, 0)
        rc, every, _ = cli("dump", WIDE, "--dot", "--no-fold")
        self.assertEqual(rc, 0)
        self.assertEqual(gs.dump(WIDE, "dot"), folded)
        self.assertEqual(gs.dump(WIDE, "dot", fold=False), every)
        self.assertNotEqual(folded, every)

    def test_svg_is_a_laid_out_picture(self):
        svg = gs.dump(FORKJOIN, "svg")
        self.assertIn("<svg", svg)
        self.assertIn("</svg>", svg)
        rc, out, _ = cli("dump", FORKJOIN, "--svg")
        self.assertEqual(rc, 0)
        self.assertEqual(svg, out)

    def test_svg_larger_than_svg_max_nodes_is_code_2(self):
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.dump(data("nvidia", "forkjoin.dot"), "svg", svg_max_nodes=3)
        self.assertEqual(e.exception.code, 2)
        self.assertTrue(e.exception.message.startswith("graphscope: graph too large to lay out"), e.exception.message)

    def test_unknown_format_is_code_2(self):
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.dump(FORKJOIN, "xml")
        self.assertEqual(e.exception.code, 2)
        self.assertTrue(e.exception.message.startswith("graphscope: "))


class DiffTest(unittest.TestCase):
    def test_a_file_against_itself_is_the_same(self):
        d = gs.diff(FORKJOIN, FORKJOIN)
        self.assertEqual(d["schema"], "graphscope.diff/1")
        self.assertIs(d["same"], True)

    def test_graphs_that_differ_are_a_result_not_an_exception(self):
        d = gs.diff(FORKJOIN, WIDE)
        self.assertIs(d["same"], False)
        self.assertEqual(d["a"]["nodes"], 10)
        self.assertEqual(d["b"]["nodes"], 66)
        rc, out, _ = cli("diff", FORKJOIN, WIDE, "--json")
        self.assertEqual(rc, 1)
        self.assertEqual(d, json.loads(out))

    def test_options_reach_the_comparison(self):
        d = gs.diff(FORKJOIN, FORKJOIN, ignore_geometry=True, ignore_sizes=True)
        self.assertEqual(d["options"], {"ignore_geometry": True, "ignore_sizes": True})
        self.assertIs(d["same"], True)

    def test_a_loaded_document_compares_with_its_file(self):
        self.assertIs(gs.diff(gs.load(TORCH_MLP_DOT), TORCH_MLP_DOT)["same"], True)


class CheckTest(unittest.TestCase):
    def test_rules_file_with_a_relative_baseline_passes_as_in_the_cli(self):
        # forkjoin.rules.json's baseline is relative to its own directory.
        rules = data("rules", "forkjoin.rules.json")
        r = gs.check(FORKJOIN, rules)
        self.assertEqual(r["schema"], "graphscope.check/1")
        self.assertIs(r["passed"], True, r)
        self.assertEqual(r["rules"], 5)
        rc, _, _ = cli("check", FORKJOIN, "--rules", rules)
        self.assertEqual(rc, 0)

    def test_rules_as_a_pathlike(self):
        self.assertIs(gs.check(FORKJOIN, pathlib.Path(data("rules", "forkjoin.rules.json")))["passed"], True)

    def test_failing_rules_as_a_dict_are_a_result_not_an_exception(self):
        r = gs.check(MIXED, {"forbid_types": ["host", "memcpy"], "max_nodes": 8, "max_depth": 6})
        self.assertIs(r["passed"], False)
        self.assertEqual(r["failed"], 2)
        by_rule = {x["rule"]: x for x in r["results"]}
        self.assertIs(by_rule["max_nodes"]["passed"], True)
        self.assertIs(by_rule["forbid_types"]["passed"], False)
        self.assertEqual(by_rule["forbid_types"]["offender_count"], 4)
        self.assertIs(by_rule["max_depth"]["passed"], False)

    def test_rules_as_json_text(self):
        text = json.dumps({"schema": "graphscope.rules/1", "max_nodes": 9})
        r = gs.check(FORKJOIN, text)
        self.assertIs(r["passed"], False)
        self.assertEqual(r["results"][0]["measured"], 10)

    def test_timing_rules_with_a_profile_report_file(self):
        r = gs.check(data("profiles", "wide.c1.graph.json"), data("rules", "profile.rules.json"),
                     profile=data("profiles", "wide.c1.offline.profile.json"))
        self.assertIs(r["passed"], False)
        failed = sorted(x["rule"] for x in r["results"] if not x["passed"])
        # The fan-out's branches waited for dispatch, not behind a fake
        # dependency (lane busy): only the efficiency fails.
        self.assertEqual(failed, ["min_critical_path_efficiency"])

    def test_timing_rules_with_the_report_of_profile(self):
        graph = data("profiles", "chain.c8.graph.json")
        report = gs.profile(graph, data("profiles", "chain.c8.trace.json"))
        r = gs.check(graph, {"max_blocking_fake_us": 10, "min_critical_path_efficiency": 0.9, "max_kernels": 32},
                     profile=report)
        self.assertIs(r["passed"], True, r)
        self.assertEqual(r["rules"], 3)

    def test_no_rules_is_code_2(self):
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.check(FORKJOIN)
        self.assertEqual(e.exception.code, 2)

    def test_a_missing_rules_file_is_code_3_naming_it(self):
        missing = data("rules", "no-such.rules.json")
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.check(FORKJOIN, missing)
        self.assertEqual(e.exception.code, 3)
        self.assertEqual(e.exception.message, "graphscope: %s (No such file or directory)" % missing)

    def test_a_rules_file_with_an_unknown_key_is_code_3_with_the_cli_message(self):
        rules = data("rules", "typo.rules.json")
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.check(FORKJOIN, rules)
        rc, _, stderr = cli("check", FORKJOIN, "--rules", rules)
        self.assertEqual((e.exception.code, e.exception.message), (rc, stderr.strip()))
        self.assertEqual(rc, 3)


class ProfileTest(unittest.TestCase):
    GRAPH = data("profiles", "wide.c1.graph.json")
    TRACE = data("profiles", "wide.c1.trace.json")

    def cli_report(self, *args):
        rc, out, err = cli("profile", "--graph", self.GRAPH, "--trace", self.TRACE, "--json", *args)
        self.assertEqual(rc, 0, err)
        return json.loads(out)

    def test_report_agrees_with_profile_json_of_the_cli(self):
        p, c = gs.profile(self.GRAPH, self.TRACE), self.cli_report()
        self.assertEqual(p["schema"], "graphscope.profile/1")
        for k in ("exec_graph_id", "replays", "threshold_us", "tolerance_us", "critical_path"):
            self.assertEqual(p[k], c[k], k)
        for k in ("real", "fake", "blocking", "none", "makespan_us", "critical_path_us", "time_lost_us"):
            self.assertEqual(p["summary"][k], c["summary"][k], k)
        self.assertEqual(p["summary"]["blocking"], 0)
        self.assertEqual(p["summary"]["lane_busy"], 56)
        self.assertEqual(p, c)

    def test_threshold_reaches_the_analysis(self):
        p, c = gs.profile(self.GRAPH, self.TRACE, threshold_us=30), self.cli_report("--threshold-us", "30")
        self.assertEqual(p["threshold_us"], 30)
        self.assertEqual(p["summary"]["lane_busy"], c["summary"]["lane_busy"])
        self.assertEqual(p["summary"]["lane_busy"], 0)  # no branch delayed past 30 us (56 past the default 5)

    def test_exec_graph_id_that_the_trace_lacks_is_code_3(self):
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.profile(self.GRAPH, self.TRACE, exec_graph_id=9)
        self.assertEqual(e.exception.code, 3)

    def test_launches_choose_the_replays_of_a_trace_without_graph_ids(self):
        graph, trace = data("torch", "torch_four_branch.debug_dump.dot"), data("torch", "torch_four_branch.kineto.json")
        p = gs.profile(graph, trace, launches=[16])
        rc, out, err = cli("profile", "--graph", graph, "--trace", trace, "--json", "--launch", "16")
        self.assertEqual(rc, 0, err)
        c = json.loads(out)
        self.assertEqual(p["replays"], 1)
        self.assertEqual(p["join"]["by"], "launches")
        self.assertEqual(p["summary"], c["summary"])

    def test_negative_threshold_is_code_2(self):
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.profile(self.GRAPH, self.TRACE, threshold_us=-1)
        self.assertEqual(e.exception.code, 2)


class ErrorTest(unittest.TestCase):
    def test_missing_file_is_code_3_with_the_cli_message(self):
        missing = data("no-such-file.json")
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.load(missing)
        err = e.exception
        self.assertEqual(err.code, 3)
        self.assertTrue(err.message.startswith("graphscope: "), err.message)
        self.assertEqual(str(err), err.message)
        rc, _, stderr = cli("dump", missing)
        self.assertEqual(rc, 3)
        self.assertEqual(err.message, stderr.strip())

    def test_every_call_reports_a_missing_file_as_code_3(self):
        missing = data("no-such-file.json")
        calls = [lambda: gs.dump(missing), lambda: gs.diff(missing, FORKJOIN), lambda: gs.diff(FORKJOIN, missing),
                 lambda: gs.check(missing, {"max_nodes": 1}), lambda: gs.profile(missing, ProfileTest.TRACE),
                 lambda: gs.profile(ProfileTest.GRAPH, missing)]
        for call in calls:
            with self.assertRaises(gs.GraphscopeError) as e:
                call()
            self.assertEqual(e.exception.code, 3)
            self.assertIn("no-such-file.json", e.exception.message)

    def test_hostile_input_is_code_3_with_the_cli_message(self):
        bad = os.path.join(ROOT, "tests", "hostile", "dangling.json")
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.load(bad)
        rc, _, stderr = cli("dump", bad)
        self.assertEqual((e.exception.code, e.exception.message), (rc, stderr.strip()))

    def test_bad_option_value_is_code_2(self):
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.dump(FORKJOIN, "dot", fold="yes")
        self.assertEqual(e.exception.code, 2)
        self.assertTrue(e.exception.message.startswith("graphscope: "))

    def test_error_is_one_line(self):
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.load(os.path.join(ROOT, "tests", "hostile", "dangling.json"))
        self.assertNotIn("\n", e.exception.message)

    def test_a_path_of_the_wrong_type_is_a_typeerror(self):
        with self.assertRaises(TypeError):
            gs.load(42)


class NulPathTest(unittest.TestCase):
    """A C string ends at its first NUL: "forkjoin.json\\0.evil" would read
    forkjoin.json. Every path argument (str, bytes or os.PathLike) holding
    one is a ValueError naming it, raised before the library is called."""

    EVIL = FORKJOIN + "\0.evil"

    def calls(self, p):
        trace = ProfileTest.TRACE
        return {
            "load": lambda: gs.load(p),
            "dump": lambda: gs.dump(p),
            "diff a": lambda: gs.diff(p, FORKJOIN),
            "diff b": lambda: gs.diff(FORKJOIN, p),
            "check graph": lambda: gs.check(p, {"max_nodes": 1}),
            "check rules": lambda: gs.check(FORKJOIN, p),
            "check profile": lambda: gs.check(FORKJOIN, {"max_nodes": 1}, profile=p),
            "profile graph": lambda: gs.profile(p, trace),
            "profile trace": lambda: gs.profile(ProfileTest.GRAPH, p),
        }

    def test_a_path_with_a_nul_byte_is_a_valueerror_naming_it_before_the_library_is_called(self):
        for kind, p in (("str", self.EVIL), ("bytes", os.fsencode(self.EVIL)), ("PathLike", pathlib.Path(self.EVIL))):
            for name, call in self.calls(p).items():
                with self.subTest(kind=kind, call=name), \
                        mock.patch.object(gs, "_call", side_effect=AssertionError("the library was called")):
                    with self.assertRaises(ValueError) as e:
                        call()
                    self.assertIn(repr(os.fspath(p)), str(e.exception))

    def test_the_path_before_the_nul_byte_is_a_real_file(self):
        # The test above means something: cut at the NUL, the path reads.
        self.assertEqual(gs.load(self.EVIL.split("\0")[0])["schema"], "graphscope.graph/1")

    def test_text_arguments_with_a_nul_byte_are_a_valueerror_too(self):
        with mock.patch.object(gs, "_call", side_effect=AssertionError("the library was called")):
            with self.assertRaises(ValueError):
                gs.dump(FORKJOIN, "json\0svg")
            with self.assertRaises(ValueError):
                gs.check(FORKJOIN, '{"max_nodes": 1}\0{"max_nodes": 0}')


class FakeGraph:
    """Stands in for torch.cuda.CUDAGraph (no PyTorch here)."""

    def __init__(self, result):
        self.result = result

    def raw_cuda_graph(self):
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def have_gpu():
    """Whether a CUDA driver with a device is here."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


class GraphDataTest(unittest.TestCase):
    # graph_data's errors, documented: an object that is no CUDAGraph is a
    # TypeError; a CUDAGraph without a live template is GraphscopeError 2.
    def test_an_object_without_raw_cuda_graph_is_a_typeerror(self):
        with self.assertRaises(TypeError) as e:
            gs.graph_data(object())
        self.assertIn("raw_cuda_graph", str(e.exception))

    def test_a_graph_not_kept_is_code_2_with_pytorchs_reason(self):
        # What PyTorch 2.11's CUDAGraph::raw_cuda_graph raises (TORCH_CHECK).
        torch_error = RuntimeError("You cannot access the raw cudaGraph_t instance unless CUDAGraph was initialized "
                                   "with keep_graph=true\nException raised from raw_cuda_graph at CUDAGraph.cpp:297")
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.graph_data(FakeGraph(torch_error))
        self.assertEqual(e.exception.code, 2)
        self.assertTrue(e.exception.message.startswith("graphscope: no CUDA graph to walk"))
        self.assertIn("initialized with keep_graph=true", e.exception.message)
        self.assertNotIn("\n", e.exception.message)
        self.assertIs(e.exception.__cause__, torch_error)

    def test_a_null_handle_is_code_2(self):
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.graph_data(FakeGraph(0))
        self.assertEqual(e.exception.code, 2)

    def test_a_handle_that_is_no_integer_is_a_typeerror(self):
        with self.assertRaises(TypeError):
            gs.graph_data(FakeGraph("0x1234"))

    @unittest.skipIf(have_gpu(), "a GPU is here: a made-up handle could reach its driver")
    def test_without_a_cuda_driver_the_walk_is_code_4(self):
        # In a child process: a library that got this wrong could crash.
        rc, out = python(
            "import cudagraphscope\n"
            "class G:\n"
            "    def raw_cuda_graph(self):\n"
            "        return 0x1000\n"
            "try:\n"
            "    cudagraphscope.graph_data(G())\n"
            "except cudagraphscope.GraphscopeError as e:\n"
            "    print(e.code, e.message)\n")
        self.assertEqual(rc, 0, out)
        self.assertTrue(out.startswith("4 graphscope: "), out)
        self.assertEqual(len(out.strip().splitlines()), 1, out)

    @unittest.skipIf(have_gpu(), "a GPU is here: a made-up handle could reach its driver")
    def test_an_instantiated_graph_passes_its_exec_to_the_walk(self):
        # The library takes the exec handle (code 4 here: no driver), and a
        # graph not yet instantiated (PyTorch raises) is walked without one.
        rc, out = python(
            "import cudagraphscope\n"
            "class G:\n"
            "    def __init__(self, exec_handle):\n"
            "        self.exec_handle = exec_handle\n"
            "    def raw_cuda_graph(self):\n"
            "        return 0x1000\n"
            "    def raw_cuda_graph_exec(self):\n"
            "        if self.exec_handle is None:\n"
            "            raise RuntimeError('You cannot access the raw cudaGraphExec_t instance until instantiate()')\n"
            "        return self.exec_handle\n"
            "for h in (0x2000, None):\n"
            "    try:\n"
            "        cudagraphscope.graph_data(G(h))\n"
            "    except cudagraphscope.GraphscopeError as e:\n"
            "        print(e.code)\n")
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.split(), ["4", "4"])


class RecordedGraphDataTest(unittest.TestCase):
    """graph_data() as it ran on the H100 (tests/data/python, see its README):
    each walk agrees with PyTorch's debug_dump of the same graph, read here."""

    CASES = ("mlp", "two_stream", "copy", "llama")
    PYTORCH_NODE_KEYS = {"index", "node_type", "tools_id", "graph_id", "node_id", "kernel_name", "event_ptr",
                         "dependencies", "dependents"}

    def test_each_recorded_walk_agrees_with_debug_dump(self):
        for name in self.CASES:
            with self.subTest(name=name):
                walk = gs.load(data("python", name + ".graph_data.json"))
                dot = gs.load(data("python", name + ".debug_dump.dot"))
                self.assertGreater(len(walk["nodes"]), 0)
                self.assertIsNotNone(walk["exec_graph_id"])
                by_id = {n["node_id"]: n for n in dot["nodes"]}
                self.assertEqual(sorted(by_id), sorted(n["node_id"] for n in walk["nodes"]))
                ids = lambda d, idx: sorted(d["nodes"][i]["node_id"] for i in idx)  # noqa: E731
                for n in walk["nodes"]:
                    m = by_id[n["node_id"]]
                    self.assertEqual(n["node_type"], m["node_type"])
                    self.assertEqual(n["kernel_name"], m["kernel_name"])
                    self.assertEqual(ids(walk, n["dependencies"]), ids(dot, m["dependencies"]))
                    self.assertTrue(self.PYTORCH_NODE_KEYS <= set(n))
                    self.assertEqual(n["tools_id"], (walk["exec_graph_id"] << 32) | n["node_id"])


class DictDocumentTest(unittest.TestCase):
    def test_documents_as_dicts_give_the_results_of_their_files(self):
        doc = gs.load(FORKJOIN)
        self.assertEqual(gs.dump(doc, "dot"), gs.dump(FORKJOIN, "dot"))
        self.assertIs(gs.check(doc, data("rules", "forkjoin.rules.json"))["passed"], True)
        self.assertIs(gs.diff(doc, FORKJOIN)["same"], True)

    def test_temporary_files_are_removed(self):
        before = set(os.listdir(tempfile.gettempdir()))
        gs.dump(gs.load(FORKJOIN))
        with self.assertRaises(gs.GraphscopeError):
            gs.load({"schema": "graphscope.graph/1", "nodes": [{"index": 3}]})
        after = set(os.listdir(tempfile.gettempdir()))
        self.assertEqual([f for f in after - before if f.startswith("cudagraphscope-")], [])


class PackageTest(unittest.TestCase):
    """What a Python user expects of a package: a version, type hints, the
    CLI as a module, exceptions of the standard kinds."""

    def test_version_is_the_release_of_the_library_and_the_cli(self):
        self.assertEqual(gs.__version__, gs.version())
        rc, out, _ = cli("--version")
        self.assertEqual(out.strip(), "graphscope " + gs.__version__)

    def test_the_package_says_it_is_typed(self):
        self.assertTrue(os.path.isfile(os.path.join(PACKAGE, "py.typed")))
        hints = gs.load.__annotations__
        self.assertIn("return", hints)

    def test_python_m_cudagraphscope_is_the_cli(self):
        rc, out = python(["-m", "cudagraphscope", "--version"])
        self.assertEqual((rc, out.strip()), (0, "graphscope " + gs.__version__))
        rc, out = python(["-m", "cudagraphscope", "dump", FORKJOIN])
        self.assertEqual(rc, 0, out)
        self.assertEqual(out, cli("dump", FORKJOIN)[1])
        # Its exit code is the CLI's.
        rc, out = python(["-m", "cudagraphscope", "dump", data("no-such-file.json")])
        self.assertEqual(rc, 3, out)
        self.assertTrue(out.startswith("graphscope: "), out)

    def test_a_missing_file_is_a_file_not_found_error_with_the_exit_code(self):
        missing = data("no-such-file.json")
        for call in (lambda: gs.load(missing), lambda: gs.diff(FORKJOIN, missing),
                     lambda: gs.check(FORKJOIN, data("rules", "no-such.rules.json")),
                     lambda: gs.report(missing)):
            with self.assertRaises(FileNotFoundError) as e:
                call()
            self.assertIsInstance(e.exception, gs.InputNotFoundError)
            self.assertIsInstance(e.exception, gs.GraphscopeError)
            self.assertEqual(e.exception.code, 3)
            self.assertTrue(e.exception.filename.endswith(".json"), e.exception.filename)
            self.assertEqual(str(e.exception), e.exception.message)

    def test_a_bad_document_is_a_value_error_with_the_exit_code(self):
        bad = os.path.join(ROOT, "tests", "hostile", "dangling.json")
        with self.assertRaises(ValueError) as e:
            gs.load(bad)
        self.assertIsInstance(e.exception, gs.DocumentError)
        self.assertNotIsInstance(e.exception, FileNotFoundError)
        self.assertEqual(e.exception.code, 3)
        self.assertEqual(e.exception.message, cli("dump", bad)[2].strip())

    def test_a_bad_option_is_a_value_error_with_code_2(self):
        with self.assertRaises(ValueError) as e:
            gs.dump(FORKJOIN, "xml")
        self.assertIsInstance(e.exception, gs.UsageError)
        self.assertEqual(e.exception.code, 2)

    def test_errors_survive_pickling(self):
        with self.assertRaises(gs.InputNotFoundError) as e:
            gs.load(data("no-such-file.json"))
        again = pickle.loads(pickle.dumps(e.exception))
        self.assertIs(type(again), gs.InputNotFoundError)
        self.assertEqual((again.code, again.message, again.filename),
                         (e.exception.code, e.exception.message, e.exception.filename))


class ReportTest(unittest.TestCase):
    """report() and ranks() run the package's CLI: their results are its."""

    def page(self, *args):
        rc, out, err = cli("report", *args, "-o", "-")
        self.assertEqual(rc, 0, err)
        return out

    def test_report_of_a_graph_is_the_cli_page(self):
        page = gs.report(FORKJOIN)
        self.assertTrue(page.lstrip().lower().startswith("<!doctype html"), page[:80])
        self.assertEqual(page, self.page(FORKJOIN))

    def test_report_of_two_graphs_and_of_a_trace(self):
        self.assertEqual(gs.report(FORKJOIN, WIDE), self.page(FORKJOIN, WIDE))
        self.assertEqual(gs.report(ProfileTest.GRAPH, trace=ProfileTest.TRACE, threshold_us=30),
                         self.page(ProfileTest.GRAPH, "--trace", ProfileTest.TRACE, "--threshold-us", "30"))

    def test_report_writes_output(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "page.html")
            page = gs.report(FORKJOIN, output=pathlib.Path(out))
            with open(out, encoding="utf-8") as f:
                self.assertEqual(f.read(), page)

    def test_report_of_a_run_directory(self):
        run = data("ranks", "r_extra")
        self.assertEqual(gs.report(run), self.page(run))

    def test_ranks_is_the_cli_json_and_a_difference_is_a_result(self):
        run = data("ranks", "r_extra")
        r = gs.ranks(run)
        rc, out, _ = cli("ranks", run, "--json")
        self.assertEqual(rc, 1)
        self.assertEqual(r, json.loads(out))
        self.assertEqual(r["schema"], "graphscope.ranks/1")

    def test_ranks_of_no_run_is_an_error_with_the_cli_code(self):
        with self.assertRaises(gs.GraphscopeError) as e:
            gs.ranks(data("no-such-run"))
        rc, _, err = cli("ranks", data("no-such-run"))
        self.assertEqual((e.exception.code, e.exception.message), (rc, err.strip()))


class NotebookTest(unittest.TestCase):
    """In Jupyter, a loaded graph, a profile and a diff display as the
    report's page, in a frame of its own (what IPython calls _repr_html_ for)."""

    def framed(self, html_text):
        self.assertTrue(html_text.startswith("<iframe srcdoc=\""), html_text[:80])
        import html as html_module
        inner = html_text[len("<iframe srcdoc=\""):html_text.index("\" style=")]
        return html_module.unescape(inner)

    def test_a_loaded_graph_shows_its_report(self):
        self.assertEqual(self.framed(gs.load(FORKJOIN)._repr_html_()), gs.report(FORKJOIN))

    def test_a_graph_given_as_a_dict_shows_its_report(self):
        doc = gs.load(gs.load(FORKJOIN))  # loaded from a dict: drawn from the dict
        page = self.framed(doc._repr_html_())
        self.assertIn('"svg": "\\u003csvg', page)  # the picture, in the page's data
        self.assertIn("graphscope report: ", page)
        self.assertIn("forkjoin.json", page)  # the temporary file is named after the graph

    def test_a_profile_shows_the_page_of_the_graph_and_its_trace(self):
        p = gs.profile(ProfileTest.GRAPH, ProfileTest.TRACE, threshold_us=30)
        self.assertEqual(self.framed(p._repr_html_()),
                         gs.report(ProfileTest.GRAPH, trace=ProfileTest.TRACE, threshold_us=30, tolerance_us=2))

    def test_a_diff_shows_the_page_comparing_both(self):
        self.assertEqual(self.framed(gs.diff(FORKJOIN, WIDE)._repr_html_()), gs.report(FORKJOIN, WIDE))

    def test_results_are_still_plain_dicts(self):
        doc, d = gs.load(FORKJOIN), gs.diff(FORKJOIN, WIDE)
        self.assertIsInstance(doc, dict)
        self.assertEqual(json.loads(json.dumps(doc)), doc)
        self.assertEqual(json.loads(json.dumps(d)), d)


def pytorch_spelling(doc):
    """A recorded graphscope.graph/1 document as PyTorch's get_graph_data()
    writes it (torch/cuda/graphs.py, main after 2.11): the root graph's
    nodes with its keys; node types it names ("kernel", ...) as ours, any
    other as str() of cuda-python's enum member; the newer launch geometry
    keys grid_dim and block_dim. Derived, not recorded: no PyTorch on the
    GPU machine has get_graph_data."""
    runtime = {"conditional": "Conditional", "batch_mem_op": "BatchMemOp", "ext_semas_signal": "ExtSemaphoreSignal",
               "ext_semas_wait": "ExtSemaphoreWait"}
    nodes = []
    for n in doc["nodes"]:
        t = n["node_type"]
        m = {k: n.get(k) for k in ("index", "tools_id", "graph_id", "node_id", "kernel_name", "dependencies",
                                   "dependents")}
        m["node_type"] = "cudaGraphNodeType.cudaGraphNodeType" + runtime[t] if t in runtime else t
        if n.get("kernel"):
            m["grid_dim"], m["block_dim"] = n["kernel"]["grid"], n["kernel"]["block"]
        nodes.append(m)
    return {"exec_graph_id": doc["exec_graph_id"], "nodes": nodes}


class PyTorchFormatTest(unittest.TestCase):
    """PyTorch's own spellings: str(enum) node types, grid_dim/block_dim,
    and the pickle of torch.cuda.graphs.export_graph_data()."""

    RECORDED = data("captures", "conditional.json")

    def setUp(self):
        self.recorded = gs.load(self.RECORDED)
        self.pytorch = pytorch_spelling(self.recorded)
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_the_recording_has_what_this_test_is_about(self):
        types_ = {n["node_type"] for n in self.pytorch["nodes"]}
        self.assertIn("cudaGraphNodeType.cudaGraphNodeTypeConditional", types_)
        self.assertTrue(any("grid_dim" in n for n in self.pytorch["nodes"]))

    def test_str_enum_node_types_are_graphscopes_kinds(self):
        doc = gs.load(self.pytorch)
        self.assertEqual([n["node_type"] for n in doc["nodes"]], [n["node_type"] for n in self.recorded["nodes"]])
        self.assertNotIn("unknown", {n["node_type"] for n in doc["nodes"]})

    def test_other_spellings_of_the_enum_are_read_too(self):
        for spelling in ("cudaGraphNodeTypeConditional", "<cudaGraphNodeType.cudaGraphNodeTypeConditional: 13>",
                         "CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL", "13"):
            doc = json.loads(json.dumps(self.pytorch))
            for n in doc["nodes"]:
                if n["node_type"].endswith("Conditional"):
                    n["node_type"] = spelling
            with self.subTest(spelling=spelling):
                self.assertIn("conditional", [n["node_type"] for n in gs.load(doc)["nodes"]])

    def test_grid_dim_and_block_dim_are_the_launch_geometry(self):
        doc = gs.load(self.pytorch)
        kernels = [(n["index"], n["kernel"]["grid"], n["kernel"]["block"]) for n in doc["nodes"] if n.get("kernel")]
        expected = [(n["index"], n["kernel"]["grid"], n["kernel"]["block"])
                    for n in self.recorded["nodes"] if n.get("kernel")]
        self.assertEqual(kernels, expected)
        self.assertGreater(len(kernels), 0)
        # Without them, no geometry: the difference is theirs.
        bare = json.loads(json.dumps(self.pytorch))
        for n in bare["nodes"]:
            n.pop("grid_dim", None), n.pop("block_dim", None)
        self.assertFalse(any(n.get("kernel", {}).get("grid") for n in gs.load(bare)["nodes"]))

    def write_pickle(self, obj, name="graph.pkl"):
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            pickle.dump(obj, f)  # what export_graph_data()'s hook does
        return path

    def test_the_pickle_of_export_graph_data_reads_as_its_dict(self):
        path = self.write_pickle(self.pytorch)
        json_path = os.path.join(self.tmp, "graph.json")
        with open(json_path, "w") as f:
            json.dump(self.pytorch, f)
        self.assertEqual(gs.load(path)["nodes"], gs.load(json_path)["nodes"])
        # The same summary but its first line, which names the file read (a
        # temporary JSON file for the pickle).
        self.assertEqual(gs.dump(path).split("\n")[1:], gs.dump(json_path).split("\n")[1:])
        self.assertIs(gs.diff(path, json_path)["same"], True)

    def test_the_cli_says_to_read_the_pickle_with_this_package(self):
        rc, _, err = cli("dump", self.write_pickle(self.pytorch))
        self.assertEqual(rc, 3)
        self.assertIn("cudagraphscope.load", err)
        self.assertEqual(len(err.strip().splitlines()), 1)

    def test_a_pickle_that_would_run_code_is_refused_unrun(self):
        marker = os.path.join(self.tmp, "ran")

        class Evil:
            def __reduce__(self):
                return (open, (marker, "w"))

        path = self.write_pickle({"nodes": [Evil()]})
        with self.assertRaises(ValueError) as e:
            gs.load(path)
        self.assertIsInstance(e.exception, gs.DocumentError)
        self.assertIn("plain data only", e.exception.message)
        self.assertFalse(os.path.exists(marker))


def fake_torch(version, hooks=None, keep=True):
    """A stand-in for the torch module, for watch()'s error paths on a
    machine without PyTorch. hooks: None (PyTorch 2.8 to 2.11), "graph"
    (CUDAGraph.register_capture_end_hook), "global"
    (torch.cuda.graphs.register_graph_capture_end_hook), "none" (no
    raw_cuda_graph: before 2.8). keep: whether raw_cuda_graph() works after
    capture_end (keep_graph=True)."""
    class Handle:
        def __init__(self, registry, key):
            self.registry, self.key = registry, key

        def remove(self):
            self.registry.pop(self.key, None)

    global_hooks = {}

    class CUDAGraph:
        def __init__(self, keep_graph=keep):
            self.keep_graph, self.captured, self.live, self.hooks = keep_graph, False, False, {}

        def capture_begin(self):
            pass

        def capture_end(self):
            # The template is live while the capture-end hooks run, and
            # after them only with keep_graph=True (PyTorch's capture_end).
            self.captured = self.live = True
            for h in list(self.hooks.values()) + list(global_hooks.values()):
                h(self)
            self.live = self.keep_graph

        def raw_cuda_graph(self):
            if not self.live:
                raise RuntimeError("You cannot access the raw cudaGraph_t instance unless CUDAGraph was initialized "
                                   "with keep_graph=true")
            return 0x1000

    if hooks == "none":
        del CUDAGraph.raw_cuda_graph
    if hooks == "graph":
        def register_capture_end_hook(self, hook):
            self.hooks[id(hook)] = hook
            return Handle(self.hooks, id(hook))
        CUDAGraph.register_capture_end_hook = register_capture_end_hook
    graphs = types.SimpleNamespace()
    if hooks == "global":
        def register_graph_capture_end_hook(fn):
            global_hooks[id(fn)] = fn
            return Handle(global_hooks, id(fn))
        graphs.register_graph_capture_end_hook = register_graph_capture_end_hook
    torch = types.SimpleNamespace(__version__=version, cuda=types.SimpleNamespace(CUDAGraph=CUDAGraph, graphs=graphs))
    torch.global_hooks = global_hooks
    return torch


def capture(torch, **kwargs):
    g = torch.cuda.CUDAGraph(**kwargs)
    g.capture_begin()
    g.capture_end()
    return g


class WatchTest(unittest.TestCase):
    """watch()'s errors, with a fake torch module (no PyTorch here); its real
    run is gpu.python_watch (tests/gpu/torch/watch_app.py)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_before_pytorch_2_8_watch_refuses_naming_the_version(self):
        with self.assertRaises(gs.UsageError) as e:
            with gs.watch(self.tmp, torch=fake_torch("2.7.1", hooks="none")):
                pass
        self.assertIn("PyTorch 2.8 or newer", e.exception.message)
        self.assertIn("2.7.1", e.exception.message)

    def test_without_a_hook_a_graph_not_kept_is_an_error_naming_the_pytorch_needed(self):
        torch = fake_torch("2.11.0")
        original = torch.cuda.CUDAGraph.capture_end
        with self.assertRaises(gs.UsageError) as e:
            with gs.watch(self.tmp, torch=torch) as w:
                capture(torch, keep_graph=False)
                self.assertEqual(w.how, "keep_graph")
        self.assertIn("capture-end hook", e.exception.message)
        self.assertIn("keep_graph=True", e.exception.message)
        self.assertIn("1 graph ", e.exception.message)
        self.assertIs(torch.cuda.CUDAGraph.capture_end, original)  # PyTorch as it was

    @unittest.skipIf(have_gpu(), "a GPU is here: a made-up handle could reach its driver")
    def test_a_walk_that_fails_is_raised_after_the_capture_ended(self):
        for hooks, how in ((None, "keep_graph"), ("graph", "graph hook"), ("global", "global hook")):
            torch = fake_torch("2.12.0", hooks=hooks)
            methods = dict(vars(torch.cuda.CUDAGraph))
            with self.subTest(hooks=hooks):
                with self.assertRaises(gs.DeviceError) as e:
                    with gs.watch(self.tmp, torch=torch) as w:
                        g = capture(torch, keep_graph=hooks is None)
                        self.assertTrue(g.captured)  # PyTorch's capture finished
                        self.assertEqual(w.how, how)
                self.assertEqual(e.exception.code, 4)
                self.assertEqual(torch.global_hooks, {})  # the hooks removed, PyTorch as it was
                self.assertEqual(g.hooks, {})
                self.assertEqual(dict(vars(torch.cuda.CUDAGraph)), methods)

    def test_an_error_inside_the_block_propagates_and_pytorch_is_restored(self):
        torch = fake_torch("2.11.0")
        original = torch.cuda.CUDAGraph.capture_end
        with self.assertRaises(KeyError):
            with gs.watch(self.tmp, torch=torch):
                raise KeyError("the program's own")
        self.assertIs(torch.cuda.CUDAGraph.capture_end, original)


if __name__ == "__main__":
    unittest.main()
