// NVTX stacks: each thread's pushed and started ranges, from CUPTI's NVTX
// domain, and the names of the domains and strings NVTX registered.
#include <cstring>
#include <mutex>
#include <string>

#include "recorder.h"

namespace graphscope::capture {

std::string OriginRecorder::Impl::message(const nvtxEventAttributes_t* a) {
  if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message)) return "";
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii) return std::string(a->message.ascii, strnlen(a->message.ascii, 4096));
  if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
    std::lock_guard<std::mutex> lock(m);
    auto it = strings.find(a->message.registered);
    return it == strings.end() ? "" : it->second;
  }
  return "";
}

std::string OriginRecorder::Impl::domain_name(const void* d) {
  if (!d) return "";
  std::lock_guard<std::mutex> lock(m);
  auto it = domains.find(d);
  return it == domains.end() ? "?" : it->second;
}

void OriginRecorder::Impl::nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* d) {
  ThreadState& ts = thread_state();
  const void* p = d->functionParams;
  const void* ret = d->functionReturnValue;
  if (!p) return;
  auto push = [&](const void* domain, std::string msg) {
    if (ts.pushed.size() < 64) ts.pushed.push_back({domain, 0, ++ts.seq, {domain_name(domain), std::move(msg), false}});
  };
  auto pop = [&](const void* domain) {
    for (size_t i = ts.pushed.size(); i-- > 0;)
      if (ts.pushed[i].domain == domain) {
        ts.pushed.erase(ts.pushed.begin() + long(i));
        return;
      }
  };
  auto start = [&](const void* domain, std::string msg) {
    if (ret && ts.started.size() < 64)
      ts.started.push_back(
          {domain, *static_cast<const nvtxRangeId_t*>(ret), ++ts.seq, {domain_name(domain), std::move(msg), true}});
  };
  auto end = [&](nvtxRangeId_t id) {
    for (size_t i = 0; i < ts.started.size(); ++i)
      if (ts.started[i].id == id) {
        ts.started.erase(ts.started.begin() + long(i));
        return;
      }
  };
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      push(nullptr, static_cast<const nvtxRangePushA_params*>(p)->message ? static_cast<const nvtxRangePushA_params*>(p)->message : "");
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      push(nullptr, message(static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib));
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushW:
      push(nullptr, "(wide text)");
      break;
    case CUPTI_CBID_NVTX_nvtxRangePop:
      pop(nullptr);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      auto* q = static_cast<const nvtxDomainRangePushEx_params*>(p);
      push(q->domain, message(q->core.eventAttrib));
      break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      pop(static_cast<const nvtxDomainRangePop_params*>(p)->domain);
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA: {
      const char* s = static_cast<const nvtxRangeStartA_params*>(p)->message;
      start(nullptr, s ? std::string(s, strnlen(s, 4096)) : "");
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      start(nullptr, message(static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib));
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      auto* q = static_cast<const nvtxDomainRangeStartEx_params*>(p);
      start(q->domain, message(q->core.eventAttrib));
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      end(static_cast<const nvtxRangeEnd_params*>(p)->id);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      end(static_cast<const nvtxDomainRangeEnd_params*>(p)->core.id);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
      const char* name = static_cast<const nvtxDomainCreateA_params*>(p)->name;
      if (ret && name) {
        std::lock_guard<std::mutex> lock(m);
        domains[*static_cast<const nvtxDomainHandle_t*>(ret)] = std::string(name, strnlen(name, 4096));
      }
      break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
      const char* s = static_cast<const nvtxDomainRegisterStringA_params*>(p)->string;
      if (ret && s) {
        std::lock_guard<std::mutex> lock(m);
        strings[*static_cast<const nvtxStringHandle_t*>(ret)] = std::string(s, strnlen(s, 4096));
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace graphscope::capture
