// The anchor of the attach overhead benchmarks: an injection library that
// does nothing but CUPTI activity tracing (the kinds graphscope enables) with
// empty buffer handling, and a forced flush at exit. What graphscope adds on
// top of it is the overhead it is judged by.
//
// GS_BARE_MODE picks something smaller, to find where an attached tool's
// cost comes from:
//   activity   (default) the tracing above
//   none       nothing: the cost of being an injection library at all
//   subscribe  cuptiSubscribe and the exec-graph-created resource callback,
//              which does nothing
//   ids        as subscribe, and the callback reads the exec graph's id and
//              every node's id of its template, as graphscope's walk does
//   created    as subscribe, and the node-created resource callback
//   nodes      as created, and the node-cloned and node-destroy-starting
//              ones (the three that origins enable)
//   launches   as nodes, and the driver's kernel launch callbacks
// With GS_BARE_COUNT set, how many callbacks of each kind came is printed
// at exit.
#include <cupti.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kBytes = size_t(4) << 20;

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBytes));
  *size = kBytes;
  *max_records = 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { std::free(buffer); }

bool read_ids = false;
bool count = false;
constexpr int kMaxId = 1024;
uint64_t counts[2][kMaxId];  // resource, driver (one thread: no lock needed for a rough count)

void CUPTIAPI callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (count && cbid < kMaxId) ++counts[domain == CUPTI_CB_DOMAIN_RESOURCE ? 0 : 1][cbid];
  if (!read_ids || domain != CUPTI_CB_DOMAIN_RESOURCE || cbid != CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED) return;
  const auto* gd = static_cast<const CUpti_GraphData*>(static_cast<const CUpti_ResourceData*>(data)->resourceDescriptor);
  if (!gd || !gd->graph || !gd->graphExec) return;
  uint32_t id = 0;
  cuptiGetGraphExecId(gd->graphExec, &id);
  size_t n = 0;
  if (cuGraphGetNodes(gd->graph, nullptr, &n) != CUDA_SUCCESS) return;
  std::vector<CUgraphNode> nodes(n);
  if (n && cuGraphGetNodes(gd->graph, nodes.data(), &n) != CUDA_SUCCESS) return;
  uint64_t sum = 0;
  for (CUgraphNode x : nodes) {
    uint64_t nid = 0;
    cuptiGetGraphNodeId(x, &nid);
    sum += nid;
  }
  (void)sum;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  const char* m = std::getenv("GS_BARE_MODE");
  if (m && std::strcmp(m, "none") == 0) return 1;
  const bool created = m && std::strcmp(m, "created") == 0, nodes = m && std::strcmp(m, "nodes") == 0,
             launches = m && std::strcmp(m, "launches") == 0;
  if (m && (std::strcmp(m, "subscribe") == 0 || std::strcmp(m, "ids") == 0 || created || nodes || launches)) {
    read_ids = std::strcmp(m, "ids") == 0;
    count = std::getenv("GS_BARE_COUNT") != nullptr;
    static CUpti_SubscriberHandle subscriber;
    if (cuptiSubscribe(&subscriber, callback, nullptr) != CUPTI_SUCCESS) return 1;
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED);
    if (created || nodes || launches)
      cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
    if (nodes || launches) {
      cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
      cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING);
    }
    if (launches)
      for (CUpti_CallbackId id : {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                                  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz})
        cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
    if (count)
      std::atexit([] {
        for (int d = 0; d < 2; ++d)
          for (int i = 0; i < kMaxId; ++i)
            if (counts[d][i]) {
              const char* name = nullptr;
              cuptiGetCallbackName(d ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RESOURCE, CUpti_CallbackId(i),
                                   &name);
              std::fprintf(stderr, "bare: %s %d %s: %llu\n", d ? "driver" : "resource", i, name ? name : "?",
                           (unsigned long long)counts[d][i]);
            }
      });
    return 1;
  }
  cuptiActivityRegisterCallbacks(requested, completed);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
  std::atexit([] { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); });
  return 1;
}
