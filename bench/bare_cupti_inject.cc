// The anchor of the attach overhead benchmark: an injection library that
// does nothing but CUPTI activity tracing (the kinds graphscope enables) with
// empty buffer handling, and a forced flush at exit. What graphscope adds on
// top of it is the overhead it is judged by.
#include <cupti.h>

#include <cstdint>
#include <cstdlib>

namespace {

constexpr size_t kBytes = size_t(4) << 20;

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBytes));
  *size = kBytes;
  *max_records = 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { std::free(buffer); }

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  cuptiActivityRegisterCallbacks(requested, completed);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
  std::atexit([] { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); });
  return 1;
}
