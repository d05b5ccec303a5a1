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
#include <cupti.h>

#include <cstdint>
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

void CUPTIAPI callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
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
  if (m && (std::strcmp(m, "subscribe") == 0 || std::strcmp(m, "ids") == 0)) {
    read_ids = std::strcmp(m, "ids") == 0;
    static CUpti_SubscriberHandle subscriber;
    if (cuptiSubscribe(&subscriber, callback, nullptr) == CUPTI_SUCCESS)
      cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED);
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
