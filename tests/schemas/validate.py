#!/usr/bin/env python3
"""schemas.validate: every JSON document graphscope writes against its schema.

    validate.py ROOT GRAPHSCOPE_BINARY WORKDIR

ROOT/schemas holds one JSON Schema (draft 2020-12) per document kind, named
after its "schema" value: graphscope.graph/1 is
schemas/graphscope.graph-1.schema.json. This test
  (a) validates every graphscope document recorded under ROOT/tests/data and
      every expected JSON output of ROOT/tests/golden/*.case, by the kind its
      "schema" key names (a Chrome trace's: its "graphscope" object's), and
      counts the JSON that is not graphscope's (PyTorch's dict, Kineto
      traces, ground-truth files) as not ours;
  (b) runs GRAPHSCOPE_BINARY on the fixtures to write fresh documents of every
      kind it can write without a GPU into WORKDIR, and validates them;
  (c) checks that deliberately broken copies (a wrong node type, a missing
      required key, a string where a number belongs, ...) are rejected, at the
      path that was broken, so that this test can fail;
  (d) checks that each schema file is a valid 2020-12 schema with the right
      $schema, $id and "schema" constant and no reference outside itself,
      that a $defs entry shared by several files is the same in all, and that
      every kind the writers in ROOT/lib name has a schema file and the other
      way round.
Prints one line per kind and exits 0 when all is well, 1 on any failure
(file, JSON path and message of each error, the first 20), 77 (skipped) when
the jsonschema module is missing, unless GRAPHSCOPE_REQUIRE_JSONSCHEMA=1.
Needs Debian's python3 and python3-jsonschema (4.10 or later).
"""

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import time

DRAFT = "https://json-schema.org/draft/2020-12/schema"
ID_BASE = "https://graphscope.dev/schemas/"
# A kind as the writers spell it: graphscope.<name>/<major>.
KIND_RE = re.compile(r"graphscope\.[a-z][a-z_-]*/[0-9]+")
MAX_SHOWN = 20
# Draft 2020-12's keywords, and where they hold schemas.
SCHEMA_MAPS = {"$defs", "properties", "patternProperties", "dependentSchemas"}
SCHEMA_LISTS = {"allOf", "anyOf", "oneOf", "prefixItems"}
SCHEMA_VALUES = {"additionalProperties", "unevaluatedProperties", "propertyNames", "items", "contains",
                 "unevaluatedItems", "not", "if", "then", "else", "contentSchema"}
KEYWORDS = SCHEMA_MAPS | SCHEMA_LISTS | SCHEMA_VALUES | {
    "$schema", "$id", "$ref", "$comment", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary",
    "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly",
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "format", "contentEncoding", "contentMediaType",
    "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
    "maxProperties", "minProperties", "required", "dependentRequired"}

# Fixtures that are invalid on purpose (inputs of error-path tests), each
# with a word its rejection must mention: they must stay rejected.
EXPECTED_INVALID = {
    "tests/data/rules/typo.rules.json": "max_node",  # check_error_bad_rules.case: a misspelt key
}


def schema_file(kind):
    return kind.replace("/", "-") + ".schema.json"


def json_path(parts):
    s = "$"
    for p in parts:
        if isinstance(p, int):
            s += "[%d]" % p
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p):
            s += "." + p
        else:
            s += "[" + json.dumps(p) + "]"
    return s


def kind_of(doc):
    """The document's kind, or None when it is not a graphscope document."""
    if not isinstance(doc, dict):
        return None
    s = doc.get("schema")
    if isinstance(s, str) and s.startswith("graphscope."):
        return s
    g = doc.get("graphscope")
    if isinstance(g, dict) and isinstance(g.get("schema"), str) and g["schema"].startswith("graphscope."):
        return g["schema"]
    return None


class Run:
    def __init__(self, root, validator_class, schema_error):
        self.root = root
        self.V = validator_class  # Draft202012Validator
        self.SchemaError = schema_error
        self.validators = {}  # kind -> validator
        self.counts = {}  # kind -> {"recorded": n, "golden": n, "fresh": n, "rejected": n}
        self.not_ours = []
        self.failures = []  # (where, path, message)
        self.notes = []  # what could not be checked here, and why
        self.unusable = set()  # kinds whose schema file is wrong

    def fail(self, where, path, message):
        self.failures.append((where, path, message))

    def count(self, kind, what):
        c = self.counts.setdefault(kind, {"recorded": 0, "golden": 0, "fresh": 0, "rejected": 0})
        c[what] += 1

    # ------------------------------------------------------------ (d) schemas

    def load_schemas(self):
        d = os.path.join(self.root, "schemas")
        names = sorted(n for n in os.listdir(d) if n.endswith(".schema.json")) if os.path.isdir(d) else []
        if not names:
            self.fail(d, "", "no schema files")
        defs = {}  # $defs name -> (file, value)
        for name in names:
            where = "schemas/" + name
            failed = len(self.failures)
            try:
                with open(os.path.join(d, name), encoding="utf-8") as f:
                    schema = json.load(f)
            except (OSError, ValueError) as e:
                self.fail(where, "", "not JSON: %s" % e)
                continue
            try:
                self.V.check_schema(schema)
            except self.SchemaError as e:
                self.fail(where, json_path(e.absolute_path), "not a valid schema: %s" % e.message)
                continue
            if schema.get("$schema") != DRAFT:
                self.fail(where, json_path(["$schema"]), "is %r, expected %r" % (schema.get("$schema"), DRAFT))
            if schema.get("$id") != ID_BASE + name:
                self.fail(where, json_path(["$id"]), "is %r, expected %r" % (schema.get("$id"), ID_BASE + name))
            # The metaschema allows any other key: a misspelt keyword would
            # quietly check nothing.
            for path, key in self.unknown_keywords(schema, []):
                self.fail(where, json_path(path), "%r is not a draft 2020-12 keyword" % key)
            for key in ("title", "description"):
                if not isinstance(schema.get(key), str) or not schema[key]:
                    self.fail(where, "$." + key, "missing")
            kind = self.schema_const(schema)
            if kind is None:
                self.fail(where, "$", "no \"schema\": {\"const\": ...} naming the kind")
                continue
            if schema_file(kind) != name:
                self.fail(where, "$", "names kind %s, whose file would be %s" % (kind, schema_file(kind)))
            for ref in self.refs(schema):
                if not ref.startswith("#/"):
                    self.fail(where, "$", "reference outside the file: %s" % ref)
                elif self.pointer(schema, ref[2:]) is None:
                    self.fail(where, "$", "reference to nothing: %s" % ref)
            for k, v in schema.get("$defs", {}).items():
                if k in defs and defs[k][1] != v:
                    self.fail(where, json_path(["$defs", k]), "differs from the same definition in " + defs[k][0])
                defs.setdefault(k, (where, v))
            if len(self.failures) == failed:
                self.validators[kind] = self.V(schema)
            else:
                self.unusable.add(kind)  # said why; its documents are not validated

    @classmethod
    def unknown_keywords(cls, schema, path):
        """(path, key) of each key of a schema object that is no keyword."""
        if not isinstance(schema, dict):
            return
        for key, value in schema.items():
            here = path + [key]
            if key not in KEYWORDS:
                yield path, key
            elif key in SCHEMA_MAPS and isinstance(value, dict):
                for k, v in value.items():
                    yield from cls.unknown_keywords(v, here + [k])
            elif key in SCHEMA_LISTS and isinstance(value, list):
                for i, v in enumerate(value):
                    yield from cls.unknown_keywords(v, here + [i])
            elif key in SCHEMA_VALUES:
                yield from cls.unknown_keywords(value, here)

    @staticmethod
    def pointer(doc, pointer):
        for part in pointer.split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(doc, dict) or part not in doc:
                return None
            doc = doc[part]
        return doc

    @staticmethod
    def schema_const(schema):
        props = schema.get("properties", {})
        s = props.get("schema", {}).get("const")
        if s is None:  # a Chrome trace: inside its graphscope object
            s = props.get("graphscope", {}).get("properties", {}).get("schema", {}).get("const")
        return s if isinstance(s, str) else None

    @classmethod
    def refs(cls, v):
        if isinstance(v, dict):
            for k, x in v.items():
                if k in ("$ref", "$dynamicRef") and isinstance(x, str):
                    yield x
                else:
                    yield from cls.refs(x)
        elif isinstance(v, list):
            for x in v:
                yield from cls.refs(x)

    def kinds_in_source(self):
        found = {}
        lib = os.path.join(self.root, "lib")
        for dirpath, _, files in os.walk(lib):
            for f in files:
                if not f.endswith((".h", ".cc")):
                    continue
                p = os.path.join(dirpath, f)
                with open(p, encoding="utf-8", errors="replace") as fh:
                    for kind in KIND_RE.findall(fh.read()):
                        found.setdefault(kind, os.path.relpath(p, self.root))
        if not found:
            self.fail(lib, "", "no document kind found in the writers' source")
        for kind, where in sorted(found.items()):
            if kind not in self.validators and kind not in self.unusable:
                self.fail(where, "", "names %s, which has no schemas/%s" % (kind, schema_file(kind)))
        for kind in sorted(set(self.validators) | self.unusable):
            if kind not in found:
                self.fail("schemas/" + schema_file(kind), "", "no writer in lib/ names %s" % kind)
        return found

    # ------------------------------------------------------------ validating

    def errors(self, kind, doc):
        v = self.validators[kind]
        # unevaluatedProperties also reports the keys of a part that failed
        # for another reason: that reason first.
        return sorted(v.iter_errors(doc),
                      key=lambda e: (e.validator == "unevaluatedProperties", list(map(str, e.absolute_path))))

    def check(self, where, doc, what):
        """Validates a document; returns whether it was a graphscope document."""
        kind = kind_of(doc)
        if kind is None:
            self.not_ours.append(where)
            return False
        if kind in self.unusable:
            return True
        if kind not in self.validators:
            self.fail(where, "$.schema", "%s: no schema file for this kind" % kind)
            return True
        self.count(kind, what)
        for e in self.errors(kind, doc)[:5]:
            self.fail(where, json_path(e.absolute_path), e.message)
        return True

    def load(self, path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)

    # ------------------------------------------------------------ (a) recorded

    def recorded(self):
        data = os.path.join(self.root, "tests", "data")
        files = []
        for dirpath, dirs, names in os.walk(data):
            dirs.sort()
            files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".json")]
        if not files:
            self.fail(data, "", "no JSON files")
        for p in files:
            rel = os.path.relpath(p, self.root)
            try:
                doc = self.load(p)
            except ValueError as e:
                self.fail(rel, "", "not JSON: %s" % e)
                continue
            if rel in EXPECTED_INVALID:
                self.expect_rejected(rel, doc, EXPECTED_INVALID[rel])
                continue
            self.check(rel, doc, "recorded")
        for rel in EXPECTED_INVALID:
            if not os.path.exists(os.path.join(self.root, rel)):
                self.fail(rel, "", "missing: an invalid fixture this test expects")

    def expect_rejected(self, where, doc, word):
        kind = kind_of(doc)
        if kind in self.unusable:
            return
        if kind not in self.validators:
            self.fail(where, "", "expected a graphscope document to reject, found %s" % kind)
            return
        errs = self.errors(kind, doc)
        if not errs:
            self.fail(where, "$", "is accepted, but it is invalid on purpose (%s)" % word)
        elif not any(word in e.message or word in map(str, e.absolute_path) for e in errs):
            self.fail(where, "$", "is rejected, but not for %s: %s" % (word, errs[0].message))
        else:
            self.count(kind, "rejected")

    def golden(self):
        gdir = os.path.join(self.root, "tests", "golden")
        cases = sorted(n for n in os.listdir(gdir) if n.endswith(".case")) if os.path.isdir(gdir) else []
        if not cases:
            self.fail(gdir, "", "no golden cases")
        for name in cases:
            with open(os.path.join(gdir, name), encoding="utf-8") as f:
                text = f.read()
            # As run_golden.cmake splits it.
            at = text.find("--- stdout\n")
            if at < 0:
                continue
            out = text[at + len("--- stdout\n"):]
            err_at = out.find("--- stderr\n")
            if err_at >= 0:
                out = out[:err_at]
            if not out.lstrip().startswith(("{", "[")):
                continue
            try:
                doc = json.loads(out)
            except ValueError:
                continue  # text that happens to start with a bracket
            self.check("tests/golden/" + name + " (stdout)", doc, "golden")

    # ------------------------------------------------------------ (b) fresh

    def gs(self, binary, args, out, ok=(0,)):
        """Runs graphscope in ROOT; returns the document written to out, or None."""
        try:
            p = subprocess.run([binary] + args, cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.fail("graphscope " + " ".join(args), "", str(e))
            return None
        if p.returncode not in ok:
            msg = p.stderr.decode(errors="replace").strip().splitlines()
            self.fail("graphscope " + " ".join(args), "", "exit %d: %s" % (p.returncode, msg[-1] if msg else ""))
            return None
        try:
            return self.load(out)
        except (OSError, ValueError) as e:
            self.fail(out, "", "graphscope " + " ".join(args) + " wrote no JSON: %s" % e)
            return None

    def fresh(self, binary, work):
        root = self.root
        fresh = {}  # name -> (path, doc)

        # Fresh documents name the release that wrote them, right after
        # their schema (older recordings may not: the schemas allow both).
        try:
            said = subprocess.run([binary, "--version"], stdout=subprocess.PIPE, timeout=60).stdout.decode().split()
            version = said[-1] if said else None
        except (OSError, subprocess.TimeoutExpired):
            version = None
        if not version:
            self.fail("graphscope --version", "", "says no version")

        def keep(name, out, doc):
            if doc is not None:
                where = "WORKDIR/" + os.path.relpath(out, work)
                if not self.check(where, doc, "fresh"):
                    self.fail(where, "$", "graphscope wrote a document with no schema kind")
                head = doc.get("graphscope", doc) if isinstance(doc, dict) else {}
                if list(head)[:2] != ["schema", "graphscope_version"] or head["graphscope_version"] != version:
                    self.fail(where, "$", "does not begin with \"schema\" and \"graphscope_version\": \"%s\"" % version)
                fresh[name] = (out, doc)

        def listed(sub, suffix):
            d = os.path.join(root, "tests", "data", sub)
            return sorted("tests/data/%s/%s" % (sub, n) for n in os.listdir(d) if n.endswith(suffix))

        os.makedirs(os.path.join(work, "graph"))
        # graphscope.graph/1 from every reader: DOT (default and verbose
        # flags, PyTorch's debug_dump), PyTorch's dict, and graphscope's own
        # JSON read back (captures with nested bodies, origins and repeats,
        # the injection library's graphs).
        inputs = listed("nvidia", ".dot") + listed("captures", ".dot") + listed("torch", ".dot")
        inputs += ["tests/data/derived/torch_two_stream.pytorch.json", "tests/data/derived/child.json"]
        inputs += listed("captures", ".json") + [
            "tests/data/origins/llama8.graph.json", "tests/data/origins/nvtx_layers.json",
            "tests/data/origins/compile8.1.graph.json", "tests/data/origins/jax/jax.9.graph.json",
            "tests/data/attach/profile/pid-787/graph-2.json", "tests/data/torch/live/torch_llama.live.graph.json",
        ]
        for src in inputs:
            name = src[len("tests/data/"):].replace("/", "_")
            out = os.path.join(work, "graph", name.rsplit(".", 1)[0] + ".json")
            keep("graph:" + src, out, self.gs(binary, ["dump", src, "--json", "-o", out], out))

        # graphscope.profile/1 and graphscope.trace/1: graphscope's own traces
        # (joined by ids), PyTorch profiler exports (joined by launch, with
        # cudaGraphLaunch events and assignments) and the makespan account.
        os.makedirs(os.path.join(work, "profile"))
        pairs = []
        for g in listed("profiles", ".graph.json"):
            t = g[: -len(".graph.json")] + ".trace.json"
            if os.path.exists(os.path.join(root, t)):
                pairs.append((g, t))
        for name in ("torch_compile.1", "torch_four_branch", "torch_llama"):
            pairs.append(("tests/data/torch/%s.debug_dump.dot" % name,
                          "tests/data/torch/%s.kineto.json" % name.split(".")[0]))
        pairs.append(("tests/data/origins/llama_profile/graph-2.json", "tests/data/origins/llama_profile/trace-2.json"))
        # A trace per kind of input is enough: validating traces is most of
        # this test's time.
        traced = ("copies.c8", "pdl.c1", "mixed.c8", "memalloc.c1", "torch_four_branch", "torch_compile",
                  "llama_profile")
        for g, t in pairs:
            name = os.path.basename(os.path.dirname(g)) if g.endswith("/graph-2.json") else os.path.basename(g)
            name = name.split(".graph.json")[0].split(".debug_dump")[0].replace(".1", "")
            out, trace = (os.path.join(work, "profile", name + ext) for ext in (".profile.json", ".trace.json"))
            args = ["profile", "--graph", g, "--trace", t, "--json", "-o", out]
            if name in traced:
                args += ["--trace-out", trace]
            doc = self.gs(binary, args, out)
            keep("profile:" + g, out, doc)
            if doc is not None and name in traced:
                try:
                    keep("trace:" + g, trace, self.load(trace))
                except (OSError, ValueError) as e:
                    self.fail(trace, "", "profile --trace-out wrote no JSON: %s" % e)

        # A Chrome trace in the bare array form (source "chrome-trace").
        bare = os.path.join(work, "profile", "bare_array.kineto.json")
        with open(os.path.join(root, "tests/data/torch/torch_four_branch.kineto.json"), encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        with open(bare, "w", encoding="utf-8") as f:
            json.dump(events, f)
        out, trace = (os.path.join(work, "profile", "bare_array" + ext) for ext in (".profile.json", ".trace.json"))
        doc = self.gs(binary, ["profile", "--graph", "tests/data/torch/torch_four_branch.debug_dump.dot", "--trace",
                               bare, "--json", "-o", out, "--trace-out", trace], out)
        keep("profile:bare_array", out, doc)
        if doc is not None:
            try:
                keep("trace:bare_array", trace, self.load(trace))
            except (OSError, ValueError) as e:
                self.fail(trace, "", "profile --trace-out wrote no JSON: %s" % e)

        # graphscope.diff/1 (exit 1: the graphs differ).
        os.makedirs(os.path.join(work, "diff"))
        diffs = [
            ("tests/data/nvidia/conditional.verbose.dot", "tests/data/captures/conditional.json"),
            ("tests/data/captures/forkjoin.json", "tests/data/captures/wide.json"),
            ("tests/data/captures/two_graphs.forward.json", "tests/data/captures/two_graphs.backward.json"),
            ("tests/data/nvidia/memalloc.verbose.dot", "tests/data/captures/memalloc.json"),
            ("tests/data/nvidia/mixed.verbose.dot", "tests/data/captures/mixed.json"),
            ("tests/data/captures/pdl.json", "tests/data/nvidia/pdl.verbose.dot"),
            ("tests/data/captures/child_graph.json", "tests/data/captures/child_graph.nvidia.dot"),
            ("tests/data/nvidia/forkjoin.dot", "tests/data/nvidia/forkjoin.verbose.dot"),
            ("tests/data/derived/torch_two_stream.pytorch.json", "tests/data/torch/torch_two_stream.debug_dump.dot"),
            ("tests/data/origins/llama8.graph.json", "tests/data/origins/llama8.graph.json"),
            ("tests/data/origins/nvtx_layers.json", "tests/data/origins/nvtx_layers.no_origins.json"),
        ]
        # Retyped edges: the pdl capture against a copy with its programmatic
        # edge turned into a launch-completion one.
        pdl = fresh.get("graph:tests/data/captures/pdl.json")
        if pdl is not None:
            doc = copy.deepcopy(pdl[1])
            for n in doc["nodes"]:
                if "dependency_types" in n:
                    n["dependency_types"] = ["launch_completion" if t == "programmatic" else t
                                             for t in n["dependency_types"]]
            retyped = os.path.join(work, "diff", "pdl.retyped.graph.json")
            with open(retyped, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            diffs.append(("tests/data/captures/pdl.json", retyped))
        for i, (a, b) in enumerate(diffs):
            out = os.path.join(work, "diff", "%02d.json" % i)
            keep("diff:%d" % i, out, self.gs(binary, ["diff", a, b, "--json", "-o", out], out, ok=(0, 1)))

        # graphscope.check/1 (exit 1: a rule failed), with every rule: shape,
        # baseline, forbidden types, identical repeats, and the profile rules
        # on a fresh report (with an account) and on an old one (without:
        # measured null).
        os.makedirs(os.path.join(work, "check"))
        wide = os.path.join(work, "profile", "wide.c1.profile.json")
        checks = [
            ["tests/data/captures/forkjoin.json", "--rules", "tests/data/rules/forkjoin.rules.json",
             "--baseline", "tests/data/nvidia/forkjoin.dot", "--node-count-tolerance", "5"],
            ["tests/data/captures/mixed.json", "--forbid", "host", "--forbid", "memcpy", "--max-nodes", "8",
             "--max-depth", "6"],
            ["tests/data/origins/llama8.graph.json", "--identical-repeats", "--max-kernels", "10"],
            ["tests/data/profiles/copies.c8.graph.json", "--profile", "tests/data/profiles/copies.c8.offline.profile.json",
             "--rules", "tests/data/rules/profile.rules.json", "--max-blocking-fake-us", "1"],
            ["tests/data/profiles/wide.c1.graph.json", "--profile", wide, "--min-critical-path-efficiency", "0.5",
             "--max-account-share", "fake=0.01", "--max-account-share", "latency=0.5", "--max-blocking-fake-us", "0"],
            ["tests/data/profiles/wide.c1.graph.json", "--profile", "tests/data/profiles/wide.c1.offline.profile.json",
             "--max-account-share", "concurrent=0.5"],
        ]
        for i, args in enumerate(checks):
            out = os.path.join(work, "check", "%02d.json" % i)
            keep("check:%d" % i, out, self.gs(binary, ["check"] + args + ["--json", "-o", out], out, ok=(0, 1)))

        # graphscope.rules/1: no command writes one; the example `check
        # --help` shows must be a valid rules file.
        try:
            text = subprocess.run([binary, "check", "--help"], stdout=subprocess.PIPE, timeout=60).stdout.decode()
            at = text.find('{"schema": "graphscope.rules/1"')
            if at < 0:
                self.fail("graphscope check --help", "", "shows no rules-file example")
            else:
                doc, _ = json.JSONDecoder().raw_decode(text[at:])
                self.check("graphscope check --help (example)", doc, "fresh")
                fresh["rules:check --help"] = (None, doc)
        except (OSError, ValueError, subprocess.TimeoutExpired) as e:
            self.fail("graphscope check --help", "", "no rules-file example: %s" % e)

        # graphscope.ranks/1: the recorded profiled process copied as ranks
        # 0 and 1 of a run directory (as tests/ranks_cli.sh does).
        rdir = os.path.join(work, "ranks")
        rec = os.path.join(root, "tests", "data", "attach", "profile")
        run = self.load(os.path.join(rec, "index.json"))
        src = run["processes"][0]
        procs = []
        for rank in (0, 1):
            d = "rank-%d" % rank
            shutil.copytree(os.path.join(rec, src["dir"]), os.path.join(rdir, d))
            p = dict(src, dir=d, pid=src["pid"] + rank)
            p["rank"] = {"rank": rank, "local_rank": rank, "world_size": 2, "source": "RANK"}
            procs.append(p)
        run["processes"] = procs
        with open(os.path.join(rdir, "index.json"), "w") as f:
            json.dump(run, f)
        self.check("WORKDIR/ranks/index.json", run, "fresh")
        out = os.path.join(work, "ranks.json")
        keep("ranks", out, self.gs(binary, ["ranks", rdir, "--json", "-o", out], out))
        # The runs recorded on two GPUs: the profiled one, with its waits at
        # each collective, and the one whose rank 1 captured one all-reduce
        # more (exit 1), with where the ranks differ first.
        for name, ok in (("r_prof", (0,)), ("r_extra", (1,))):
            out = os.path.join(work, "ranks_%s.json" % name)
            keep("ranks:" + name, out, self.gs(binary, ["ranks", os.path.join(root, "tests", "data", "ranks", name),
                                                        "--json", "-o", out], out, ok=ok))

        # graphscope.ledger/1 of the two recorded runs of issue 45's
        # programs: capture --exec (no launches) and profile --exec.
        for name in ("serving.capture", "compile_shapes.profile"):
            out = os.path.join(work, "ledger_%s.json" % name)
            keep("ledger:" + name, out, self.gs(binary, ["ledger", os.path.join(root, "tests", "data", "ledger", name),
                                                         "--json", "-o", out], out))

        # graphscope.attach-run/1 without a GPU: `capture --exec` of a
        # command that never initializes CUDA, which copies recorded process
        # indexes into the output directory; graphscope reads them and writes
        # them back into its run index with the same code as the injection
        # library's (graphscope.attach/1 itself is only written on a GPU).
        out_dir = os.path.join(work, "attach")
        pids = []
        adir = os.path.join(root, "tests", "data", "attach")
        for run in sorted(os.listdir(adir)):
            rd = os.path.join(adir, run)
            if os.path.isdir(rd):
                pids += [os.path.join(rd, p) for p in sorted(os.listdir(rd)) if p.startswith("pid-")]
        os.makedirs(out_dir)
        index = os.path.join(out_dir, "index.json")
        args = ["capture", "--exec", "--out-dir", out_dir, "--", "cp", "-R"] + pids + [out_dir]
        try:
            p = subprocess.run([binary] + args, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.fail("graphscope capture --exec", "", str(e))
            return fresh
        said = p.stderr.decode(errors="replace").strip()
        if not os.path.exists(index):
            # A build without the injection library cannot attach at all.
            if p.returncode == 4 and "injection library" in said:
                self.notes.append("attach-run: not written (%s)" % said.splitlines()[-1])
            else:
                self.fail("graphscope capture --exec", "", "exit %d, no index.json: %s" % (p.returncode, said))
            return fresh
        doc = self.load(index)
        keep("attach-run", index, doc)
        if p.returncode == 0 and len(doc.get("processes", [])) != len(pids):
            self.fail("WORKDIR/attach/index.json", "$.processes",
                      "has %d processes, expected the %d copied in" % (len(doc.get("processes", [])), len(pids)))
        elif p.returncode != 0:
            # cp under the injection library failed (a sanitizer build's
            # library preloaded into a program without the sanitizer): the
            # index is still graphscope's, with fewer processes.
            self.notes.append("attach-run: cp exited %d under the injection library; %d processes" % (
                p.returncode, len(doc.get("processes", []))))
        return fresh

    # ------------------------------------------------------------ (c) broken

    def broken(self, fresh):
        """Mutations of fresh documents that must be rejected at the path broken."""

        def first(prefix):
            for name in sorted(fresh):
                if name.startswith(prefix):
                    return fresh[name][1]
            return None

        def event(doc, ph):
            return next(i for i, e in enumerate(doc["traceEvents"]) if e.get("ph") == ph)

        def small(doc):
            """A copy, a trace cut down to an event of each phase."""
            d = copy.deepcopy(doc)
            if "traceEvents" in d:
                seen, events = set(), []
                for e in d["traceEvents"]:
                    if e.get("ph") not in seen:
                        seen.add(e.get("ph"))
                        events.append(e)
                d["traceEvents"] = events
            return d

        cases = []  # (label, document, mutate(doc) -> the path broken)

        def case(label, prefix, mutate):
            doc = first(prefix)
            if doc is None:
                self.fail("broken copy: " + label, "", "no fresh document of %s to break" % prefix)
            else:
                cases.append((label, doc, mutate))

        def setp(doc, path, value):
            x = doc
            for p in path[:-1]:
                x = x[p]
            if value is KeyError:
                del x[path[-1]]
            else:
                x[path[-1]] = value
            return path

        case("graph: a wrong node type", "graph:tests/data/captures/forkjoin",
             lambda d: setp(d, ["nodes", 0, "node_type"], "kernal"))
        case("graph: a node without dependencies", "graph:tests/data/captures/forkjoin",
             lambda d: setp(d, ["nodes", 1, "dependencies"], KeyError))
        case("graph: a string where a number is", "graph:tests/data/captures/forkjoin",
             lambda d: setp(d, ["nodes", 0, "kernel", "shared_mem_bytes"], "0"))
        case("graph: a key nodes do not have", "graph:tests/data/captures/forkjoin",
             lambda d: setp(d, ["nodes", 0, "kernel_nmae"], "x"))
        case("graph: a kernel name on a memcpy node", "graph:tests/data/captures/mixed",
             lambda d: setp(d, ["nodes", next(i for i, n in enumerate(d["nodes"]) if n["node_type"] == "memcpy"),
                                "kernel_name"], "k"))
        case("profile: a string where a number is", "profile:tests/data/profiles/wide.c1",
             lambda d: setp(d, ["summary", "makespan_us"], "12.5"))
        case("profile: an unknown verdict", "profile:tests/data/profiles/wide.c1",
             lambda d: setp(d, ["nodes", 0, "verdict"], "maybe"))
        case("profile: no summary", "profile:tests/data/profiles/wide.c1",
             lambda d: setp(d, ["summary"], KeyError))
        case("profile: a fraction where a count is", "profile:tests/data/profiles/wide.c1",
             lambda d: setp(d, ["summary", "fake"], 1.5))
        case("trace: a string duration", "trace:tests/data/profiles/copies.c8",
             lambda d: setp(d, ["traceEvents", event(d, "X"), "dur"], "1.000"))
        case("trace: a flow without its id", "trace:tests/data/profiles/copies.c8",
             lambda d: setp(d, ["traceEvents", event(d, "s"), "id"], KeyError))
        case("trace: an unknown category", "trace:tests/data/profiles/copies.c8",
             lambda d: setp(d, ["traceEvents", event(d, "X"), "cat"], "kernels"))
        case("diff: no root", "diff:", lambda d: setp(d, ["root"], KeyError))
        case("diff: a string count", "diff:", lambda d: setp(d, ["root", "nodes", "a"], "10"))
        case("check: a string verdict", "check:", lambda d: setp(d, ["results", 0, "passed"], "yes"))
        case("check: an unknown unit", "check:", lambda d: setp(d, ["results", 0, "unit"], "widgets"))
        case("rules: a negative limit", "rules", lambda d: setp(d, ["max_nodes"], -1))
        # graphscope.attach/1 is written on a GPU only: a recorded one.
        recorded = "tests/data/attach/profile/pid-787/index.json"
        try:
            fresh = dict(fresh, **{"attach:" + recorded: (recorded, self.load(os.path.join(self.root, recorded)))})
        except (OSError, ValueError):
            pass  # (a) says what is wrong with it
        case("attach: a string pid", "attach:", lambda d: setp(d, ["pid"], "787"))
        case("attach: a profiled graph without its trace", "attach:", lambda d: setp(d, ["graphs", 0, "trace"], KeyError))
        case("ranks: a string wait", "ranks:r_prof",
             lambda d: setp(d, ["graphs", 0, "collective_waits", 0, "ranks", 0, "wait_us"], "3.1"))
        case("ranks: a collective wait without its last rank", "ranks:r_prof",
             lambda d: setp(d, ["graphs", 0, "collective_waits", 0, "last_rank"], KeyError))
        case("ranks: an unknown side of the first difference", "ranks:r_extra",
             lambda d: setp(d, ["graphs", 0, "ranks", 1, "first_node", "side"], "elsewhere"))
        case("attach-run: a string exit code", "attach-run", lambda d: setp(d, ["exit_code"], "0"))
        case("attach-run: a process without its pid", "attach-run",
             lambda d: setp(d, ["processes", 0, "pid"], KeyError))
        for label, doc, mutate in cases:
            d = small(doc)
            kind = kind_of(d)
            if kind in self.unusable:
                continue
            if kind not in self.validators or self.errors(kind, d):
                self.fail("broken copy: " + label, "$", "the document to break is not valid to begin with")
                continue
            path = mutate(d)
            errs = self.errors(kind, d)
            # The error is at the path broken, or (a missing key) at its parent.
            want = [path, path[:-1]]
            if not errs:
                self.fail("broken copy: " + label, json_path(path), "is accepted")
            elif not any(list(e.absolute_path) in want for e in errs):
                self.fail("broken copy: " + label, json_path(path),
                          "rejected elsewhere: %s %s" % (json_path(errs[0].absolute_path), errs[0].message))
            else:
                self.count(kind, "rejected")


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    root, binary, work = (os.path.abspath(a) for a in argv[1:])
    try:
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError
    except ImportError as e:
        print("schemas.validate: no jsonschema module with draft 2020-12 (%s): apt-get install python3-jsonschema" % e)
        return 1 if os.environ.get("GRAPHSCOPE_REQUIRE_JSONSCHEMA") == "1" else 77

    start = time.monotonic()
    run = Run(root, Draft202012Validator, SchemaError)
    run.load_schemas()
    source_kinds = run.kinds_in_source()
    run.recorded()
    run.golden()
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    if not os.access(binary, os.X_OK):
        run.fail(binary, "", "not an executable graphscope binary")
    else:
        run.broken(run.fresh(binary, work))

    for kind in sorted(set(run.validators) | set(run.counts)):
        c = run.counts.get(kind, {"recorded": 0, "golden": 0, "fresh": 0, "rejected": 0})
        print("%-26s %3d recorded, %2d golden, %3d fresh, %2d broken copies rejected%s" % (
            kind, c["recorded"], c["golden"], c["fresh"], c["rejected"],
            "" if kind in source_kinds else "  (no writer names it)"))
        if c["recorded"] + c["golden"] + c["fresh"] == 0:
            run.fail("schemas/" + schema_file(kind), "", "no document of this kind was validated")
    print("not ours (PyTorch dicts, Kineto traces, ground truth, ...): %d" % len(run.not_ours))
    print("schema files: %d for the %d kinds lib/ names" % (len(run.validators), len(source_kinds)))
    for note in run.notes:
        print("note: " + note)
    elapsed = time.monotonic() - start
    if run.failures:
        print("FAILED: %d errors (the first %d):" % (len(run.failures), min(MAX_SHOWN, len(run.failures))))
        for where, path, message in run.failures[:MAX_SHOWN]:
            print("  %s: %s: %s" % (where, path or "-", message if len(message) < 300 else message[:300] + "..."))
        return 1
    print("ok: every document validates (%.1f s)" % elapsed)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
