// GRAPHSCOPE_DEBUG_TIMES=1: the time the application's threads spent in
// graphscope's callbacks, by kind, said on stderr at exit (to find where an
// attached run's overhead goes; off, it costs one branch per callback).
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "capture/clock.h"
#include "capture/origin.h"
#include "capture/walk.h"

namespace graphscope::inject::internal {

struct CallbackTimes {
  enum Kind {
    exec_created,
    origins_api,
    origins_created,
    origins_copies,
    origins_resource,
    origins_nvtx,
    other,
    kinds
  };
  std::atomic<uint64_t> ns[kinds] = {}, calls[kinds] = {};
  // The same at the end of the first exec graph's callback: a process's
  // first capture warms every cache (and PyTorch's own), so the later
  // graphs are what a server's hundredth capture costs.
  uint64_t first_ns[kinds] = {}, first_calls[kinds] = {};
  std::atomic<int> graphs{0};
  // The walks' phases (walks run one at a time, under the attacher's lock).
  capture::WalkPhases walk, first_walk;
  // The models made from them on the writer thread (only it touches these).
  capture::WalkPhases built, first_built;
  int builds = 0;
  void build_done() {
    if (builds++ == 0) first_built = built;
  }
  const bool on = [] {
    const char* e = std::getenv("GRAPHSCOPE_DEBUG_TIMES");
    return e && std::strcmp(e, "1") == 0;
  }();
  static uint64_t now() { return capture::monotonic_ns(); }
  void add(Kind k, uint64_t since) {
    ns[k] += now() - since;
    ++calls[k];
  }
  // The kind of a callback that origins took.
  static Kind origins_kind(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    if (domain == CUPTI_CB_DOMAIN_NVTX) return origins_nvtx;
    if (domain != CUPTI_CB_DOMAIN_RESOURCE) return origins_api;
    if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) return origins_copies;
    if (cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) return origins_resource;
    return capture::OriginRecorder::instance().copying() ? origins_copies : origins_created;
  }
  // After an exec graph's callback (walks are one at a time).
  void graph_done() {
    if (graphs.fetch_add(1) != 0) return;
    for (int k = 0; k < kinds; ++k) {
      first_ns[k] = ns[k].load();
      first_calls[k] = calls[k].load();
    }
    first_walk = walk;
  }
  void say(int pid) const {
    static const char* const names[] = {"exec created (walk)",
                                        "origins: API calls",
                                        "origins: nodes made",
                                        "origins: copies, clones",
                                        "origins: other resources",
                                        "origins: NVTX",
                                        "other"};
    const int later = graphs.load() - 1;
    std::fprintf(stderr, "graphscope: pid %d: %-24s %8s %10s   %s\n", pid, "callbacks", "calls", "all",
                 later > 0 ? "each graph after the first" : "");
    for (int k = 0; k < kinds; ++k) {
      std::fprintf(stderr, "graphscope: pid %d: %-24s %8llu %10.3f ms", pid, names[k],
                   (unsigned long long)calls[k].load(), double(ns[k].load()) / 1e6);
      if (later > 0)
        std::fprintf(stderr, " %10.3f ms (%llu calls)", double(ns[k].load() - first_ns[k]) / 1e6 / later,
                     (unsigned long long)(calls[k].load() - first_calls[k]) / unsigned(later));
      std::fputc('\n', stderr);
    }
    const auto reads = capture::OriginRecorder::instance().read_counts();
    std::fprintf(stderr,
                 "graphscope: pid %d:   Python stack reads: %llu from the caches (%llu the capture before's, "
                 "%llu the stack before, %llu made from known facts), %llu in full, %llu by the proxy, %llu "
                 "given up; %s\n",
                 pid, (unsigned long long)reads.cached, (unsigned long long)reads.prior,
                 (unsigned long long)reads.same, (unsigned long long)reads.made,
                 (unsigned long long)reads.full, (unsigned long long)reads.proxied,
                 (unsigned long long)reads.late,
                 capture::OriginRecorder::instance().reads_at_entry() ? "at the entry of launches"
                                                                      : "where nodes are made");
    const uint64_t answered = reads.prior + reads.same;
    std::fprintf(
        stderr,
        "graphscope: pid %d:   reads through the caches: %.3f ms in all; stacks met before: %.2f compared "
        "a read, %.1f frames a stack that answered; of the time, %.3f ms waiting for the lock, %.3f ms "
        "comparing stacks; %.3f ms recording nodes\n",
        pid, double(reads.ns) / 1e6, reads.cached ? double(reads.tries) / double(reads.cached) : 0.0,
        answered ? double(reads.frames) / double(answered) : 0.0, double(reads.lock_ns) / 1e6,
        double(reads.compare_ns) / 1e6, double(reads.record_ns) / 1e6);
    std::fprintf(
        stderr,
        "graphscope: pid %d:   reads through the caches by how they ended: %.3f ms the capture before's "
        "(%.2f us each), %.3f ms the stack before's (%.2f us), %.3f ms walks (%.2f us), %.3f ms not "
        "answered\n",
        pid, double(reads.path_ns[1]) / 1e6,
        reads.prior ? double(reads.path_ns[1]) / 1e3 / double(reads.prior) : 0.0,
        double(reads.path_ns[2]) / 1e6,
        reads.same ? double(reads.path_ns[2]) / 1e3 / double(reads.same) : 0.0,
        double(reads.path_ns[3]) / 1e6,
        reads.cached > answered ? double(reads.path_ns[3]) / 1e3 / double(reads.cached - answered) : 0.0,
        double(reads.path_ns[0]) / 1e6);
    for (int p = 0; p < capture::WalkPhases::phases; ++p) {
      std::fprintf(stderr, "graphscope: pid %d:   walk: %-16s %10.3f ms", pid, capture::WalkPhases::name(p),
                   double(walk.ns[p]) / 1e6);
      if (later > 0) std::fprintf(stderr, " %10.3f ms", double(walk.ns[p] - first_walk.ns[p]) / 1e6 / later);
      std::fputc('\n', stderr);
    }
    const int fill = capture::WalkPhases::fill;
    std::fprintf(stderr,
                 "graphscope: pid %d:   off the application's thread: the model of %d graphs %10.3f ms", pid,
                 builds, double(built.ns[fill]) / 1e6);
    if (builds > 1)
      std::fprintf(stderr, " %10.3f ms", double(built.ns[fill] - first_built.ns[fill]) / 1e6 / (builds - 1));
    std::fputc('\n', stderr);
  }
};
// The process's (inject.cc; never destroyed).
CallbackTimes& callback_times();

}  // namespace graphscope::inject::internal
