// Folding at scale (issue 43): find_repeats, and the summary made with it,
// on generated graphs of four shapes, in one process. Targets (the whole
// command, bench/fold_scale.sh): the summary of 100k nodes, folding
// included, at most 0.5 s on the 2-core development machine, of 1M nodes at
// most 6 s.
//
//   chains   four independent chains of one kernel (main's worst case: the
//            issue's 100k-node graph, where main folded nothing in 3.5 s)
//   layers   a transformer-like stack: an embedding, decoder layers of 17
//            kernels shaped like a Llama layer (norms, q/k/v side by side,
//            rope, attention, residual adds, gate/up side by side, down),
//            the final norm and head
//   fan      a wide fan-out: one root, branches of three kernels side by
//            side, one join
//   blocks   bench_json's shape, the recorded 100k-node benchmark graph's:
//            chained blocks of fork, four branches and join, a memset
//            every 50 blocks
//
//   bench_fold [NODES] [REPEATS] [DIR] [SHAPE...]
// Prints per shape what folded and the best, median and slowest of REPEATS
// calls, and the median CPU time. With DIR, also writes each graph as
// DIR/SHAPE.NODES.json and, up to 100k nodes, in cudaGraphDebugDotPrint's
// verbose format as DIR/SHAPE.NODES.verbose.dot, for the whole command's
// timing (bench/fold_scale.sh).
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_util.h"
#include "inspect/analysis/fold.h"
#include "inspect/analysis/summary.h"
#include "inspect/core/io.h"
#include "inspect/formats/graph_json.h"
#include "inspect/model/validate.h"

using namespace graphscope;

namespace {

// This thread's CPU time: the machine is shared, and a process that waits
// for a core reads slower by wall-clock time than the code is.
double cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// Nodes as bench_json makes them: kernels with launch geometry and ids.
struct Builder {
  GraphDocument doc;
  Builder() {
    doc.exec_graph_id = 38;
    doc.root.graph_id = 37;
    doc.source_format = "graphscope";
  }
  uint32_t kernel(const char* mangled, const char* demangled, uint32_t grid, std::vector<uint32_t> deps) {
    Node& x = add(deps);
    x.type = NodeType::kernel;
    x.kernel_name = mangled;
    KernelInfo k;
    k.demangled = demangled;
    k.grid = {grid, 1, 1};
    k.block = {256, 1, 1};
    k.function_handle = 0x5636D1F32080ull + hash_name(mangled);
    x.kernel = k;
    return x.index;
  }
  uint32_t memset(std::vector<uint32_t> deps) {
    Node& x = add(deps);
    x.type = NodeType::memset;
    x.memset = MemsetInfo{0, 4, 1024, 1, 4096, 0x7EFF07E80000ull};
    return x.index;
  }
  GraphDocument done() {
    link_dependents(doc.root);
    return std::move(doc);
  }

 private:
  static uint64_t hash_name(const char* s) {
    uint64_t h = 0;
    for (; *s; ++s) h = h * 31 + uint8_t(*s);
    return (h & 0xffff) * 0x40;
  }
  Node& add(const std::vector<uint32_t>& deps) {
    const uint32_t i = uint32_t(doc.root.nodes.size());
    Node& x = doc.root.nodes.emplace_back();
    x.index = x.node_id = i;
    x.graph_id = 38;
    x.tools_id = (uint64_t(38) << 32) | i;
    x.template_tools_id = (uint64_t(37) << 32) | i;
    x.handle = 0x5636D1F54988ull + 0x768ull * i;
    for (uint32_t d : deps) x.dependencies.push_back({d});
    return x;
  }
};

GraphDocument chains(uint32_t n) {
  Builder b;
  const uint32_t each = n / 4;
  for (uint32_t c = 0; c < 4; ++c)
    for (uint32_t i = 0; i < each; ++i) {
      const uint32_t prev = uint32_t(b.doc.root.nodes.size()) - 1;
      b.kernel("_Z5scalePfif", "scale(float*, int, float)", 256, i ? std::vector<uint32_t>{prev} : std::vector<uint32_t>{});
    }
  return b.done();
}

GraphDocument layers(uint32_t n) {
  Builder b;
  const char* gemm = "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel";
  uint32_t r = b.kernel("_Z15embedding_kernelPKiPK6__halfPS0_", "embedding_kernel(int const*, __half const*, __half*)",
                        512, {});
  const uint32_t count = n > 4 ? (n - 4) / 17 : 0;
  for (uint32_t l = 0; l < count; ++l) {
    const uint32_t pow = b.kernel("_Z12rms_norm_powPK6__halfPf", "rms_norm_pow(__half const*, float*)", 64, {r});
    const uint32_t norm = b.kernel("_Z12rms_norm_mulPK6__halfPKfPS_", "rms_norm_mul(__half const*, float const*, __half*)",
                                   64, {pow, r});
    const uint32_t q = b.kernel(gemm, gemm, 128, {norm});
    const uint32_t k = b.kernel(gemm, gemm, 32, {norm});
    const uint32_t v = b.kernel(gemm, gemm, 32, {norm});
    const uint32_t rq = b.kernel("_Z11rope_kernelP6__halfPKf", "rope_kernel(__half*, float const*)", 128, {q});
    const uint32_t rk = b.kernel("_Z11rope_kernelP6__halfPKf", "rope_kernel(__half*, float const*)", 32, {k});
    const uint32_t attn = b.kernel("_Z18flash_fwd_kernelv", "flash_fwd_kernel()", 96, {rq, rk, v});
    const uint32_t o = b.kernel(gemm, gemm, 128, {attn});
    const uint32_t add = b.kernel("_Z10add_kernelP6__halfPKS_", "add_kernel(__half*, __half const*)", 64, {o, r});
    const uint32_t pow2 = b.kernel("_Z12rms_norm_powPK6__halfPf", "rms_norm_pow(__half const*, float*)", 64, {add});
    const uint32_t norm2 = b.kernel("_Z12rms_norm_mulPK6__halfPKfPS_",
                                    "rms_norm_mul(__half const*, float const*, __half*)", 64, {pow2, add});
    const uint32_t gate = b.kernel(gemm, gemm, 344, {norm2});
    const uint32_t up = b.kernel(gemm, gemm, 344, {norm2});
    const uint32_t act = b.kernel("_Z15silu_mul_kernelP6__halfPKS_", "silu_mul_kernel(__half*, __half const*)", 344,
                                  {gate, up});
    const uint32_t down = b.kernel(gemm, gemm, 128, {act});
    r = b.kernel("_Z10add_kernelP6__halfPKS_", "add_kernel(__half*, __half const*)", 64, {down, add});
  }
  const uint32_t pow = b.kernel("_Z12rms_norm_powPK6__halfPf", "rms_norm_pow(__half const*, float*)", 64, {r});
  const uint32_t norm = b.kernel("_Z12rms_norm_mulPK6__halfPKfPS_", "rms_norm_mul(__half const*, float const*, __half*)",
                                 64, {pow, r});
  b.kernel(gemm, gemm, 4000, {norm});
  return b.done();
}

GraphDocument fan(uint32_t n) {
  Builder b;
  const uint32_t root = b.kernel("_Z9scatter_kv", "scatter_k()", 64, {});
  std::vector<uint32_t> ends;
  for (uint32_t i = 0; i + 5 <= n; i += 3) {
    const uint32_t g = b.kernel("_Z9gemm_tilev", "gemm_tile()", 128, {root});
    const uint32_t bias = b.kernel("_Z8bias_addv", "bias_add()", 128, {g});
    ends.push_back(b.kernel("_Z4reluv", "relu()", 128, {bias}));
  }
  b.kernel("_Z8gather_kv", "gather_k()", 64, ends);
  return b.done();
}

GraphDocument blocks(uint32_t n) {  // bench_json's make_graph
  Builder b;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t pos = i % 6, block = i / 6;
    std::vector<uint32_t> deps;
    if (i == 0) {
    } else if (pos == 0) {
      deps = {i - 1};
    } else if (pos < 5) {
      deps = {i - pos};
    } else {
      for (uint32_t k = 1; k <= 4; ++k) deps.push_back(i - 5 + k);
    }
    if (pos == 4 && block % 50 == 49) b.memset(deps);
    else if (pos % 2) b.kernel("_Z3addPfPKfi", "add(float*, float const*, int)", 256 / (pos + 1), deps);
    else b.kernel("_Z5scalePfif", "scale(float*, int, float)", 256 / (pos + 1), deps);
  }
  return b.done();
}

// The graph as cudaGraphDebugDotPrint writes it with its verbose flag (the
// records of bench/data/big100000.verbose.dot): for the DOT import's
// benchmark on the same shapes (bench_nvdot).
std::string verbose_dot(const GraphDocument& doc) {
  std::string out = "digraph dot {\nsubgraph cluster_37 {\nlabel=\"graph_37\" graph[style=\"dashed\"];\n";
  char buf[1024];
  for (const Node& x : doc.root.nodes) {
    const unsigned long long handle = *x.handle;
    if (x.type == NodeType::memset) {
      std::snprintf(buf, sizeof buf,
                    "\"graph_37_node_%u\"[style=\"solid\" style=\"solid\" shape=\"record\" label=\"{MEMSET\n"
                    "| {{ID | node handle | dptr | pitch | value | elementSize | width | height} | {%u (topoId: %u) | "
                    "0x%016llX | 0x00007EFF07E80000 | 0 | 0 | 4 | 1024 | 1}}}\"];\n\n",
                    x.index, x.index, x.index, handle);
    } else {
      const KernelInfo& k = *x.kernel;
      std::snprintf(buf, sizeof buf,
                    "\"graph_37_node_%u\"[style=\"bold\" shape=\"record\" label=\"{KERNEL\n"
                    "| {ID | %u (topoId: %u) | %s\\<\\<\\<%u,%u,%u\\>\\>\\>}\n"
                    "| {{node handle | func handle} | {0x%016llX | 0x%016llX}}\n"
                    "| {accessPolicyWindow | {base_ptr | num_bytes | hitRatio | hitProp | missProp} | "
                    "{0x0000000000000000 | 0 | 0.000000 | N | N}}\n| {cooperative | 0}\n| {priority | 0}\n}\"];\n\n",
                    x.index, x.index, x.index, x.kernel_name.c_str(), k.grid.x, k.block.x, k.shared_mem_bytes, handle,
                    (unsigned long long)*k.function_handle);
    }
    out += buf;
  }
  for (const Node& x : doc.root.nodes)
    for (const auto& d : x.dependencies) {
      std::snprintf(buf, sizeof buf, "\"graph_37_node_%u\" -> \"graph_37_node_%u\" [headlabel=0];\n", d.from, x.index);
      out += buf;
    }
  return out + "}\n}\n";
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t n = argc > 1 ? uint32_t(std::atoi(argv[1])) : 100000;
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  const std::string dir = argc > 3 ? argv[3] : "";
  std::vector<std::string> shapes;
  for (int i = 4; i < argc; ++i) shapes.push_back(argv[i]);
  if (shapes.empty()) shapes = {"chains", "layers", "fan", "blocks"};
  std::printf("%-8s %9s %10s %10s %10s %10s %10s  %s\n", "shape", "nodes", "fold best", "median ms", "slowest",
              "cpu ms", "+ summary", "what folded");
  for (const std::string& shape : shapes) {
    GraphDocument doc = shape == "chains"   ? chains(n)
                        : shape == "layers" ? layers(n)
                        : shape == "fan"    ? fan(n)
                        : shape == "blocks" ? blocks(n)
                                            : GraphDocument{};
    if (doc.root.nodes.empty()) {
      std::fprintf(stderr, "bench_fold: unknown shape %s (chains, layers, fan, blocks)\n", shape.c_str());
      return 2;
    }
    validate_graph(doc, shape);
    std::vector<double> fold, cpu, summary;
    std::string what;
    for (int k = 0; k < reps; ++k) {
      Folding f;
      const double c0 = cpu_ms();
      fold.push_back(bench::time_ms([&] { f = find_repeats(doc.root); }));
      cpu.push_back(cpu_ms() - c0);
      summary.push_back(fold.back() + bench::time_ms([&] {
                          const std::string text = format_summary(doc, summarize(doc), shape, &f);
                          if (text.empty()) std::exit(1);
                        }));
      what = describe_folding(f, doc.root.nodes.size());
    }
    const auto fs = bench::stats(fold), cs = bench::stats(cpu), ss = bench::stats(summary);
    const double slowest = *std::max_element(fold.begin(), fold.end());
    if (what.size() > 80) what = what.substr(0, 77) + "...";
    std::printf("%-8s %9zu %10.1f %10.1f %10.1f %10.1f %10.1f  %s\n", shape.c_str(), doc.root.nodes.size(), fs.best,
                fs.median, slowest, cs.median, ss.median, what.empty() ? "(nothing)" : what.c_str());
    if (!dir.empty()) {
      const std::string path = dir + "/" + shape + "." + std::to_string(n);
      write_graph_json_file(path + ".json", doc);
      if (n <= 100000) write_output(path + ".verbose.dot", verbose_dot(doc));  // (the import is timed at 100k)
    }
  }
  return 0;
}
