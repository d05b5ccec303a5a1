// The writer's bookkeeping: each dumped exec graph's document and its
// versions (dump_walked, on_exec_change, new_version), posted to the writer
// thread (post_document), the journal, the profiles at exit, and the index
// (write_index), rewritten after every graph; errors go into it.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "callback_times.h"
#include "capture/exec_update.h"
#include "capture/walk.h"
#include "injection.h"
#include "inspect/core/io.h"
#include "inspect/formats/chrome_trace.h"
#include "inspect/formats/graph_json.h"
#include "inspect/formats/profile_json.h"
#include "inspect/model/exec_update.h"
#include "inspect/render/profile_report.h"
#include "writer.h"

namespace graphscope::inject::internal {

// A walked graph's index entry and document. Under m_.
void Injection::dump_walked(CUgraphExec exec, uint32_t exec_id, const std::optional<DeviceInfo>& device,
                            capture::QueriedGraph&& q, std::vector<uint64_t>&& handles, uint64_t since) {
  if (session_->skip_after_walk(exec_id, q.nodes())) {
    write_index();
    return;
  }
  // The document, and its addresses watched for liveness (on the writer
  // thread, once made).
  auto finish_doc = [this, exec, exec_id, device, since](GraphDocument&& d) {
    capture::assign_exec_ids(d, exec_id);
    d.name = "exec" + std::to_string(exec_id);
    d.device = device;
    watch_document(exec, exec_id, d, since);
    return std::make_shared<const GraphDocument>(std::move(d));
  };
  std::function<std::shared_ptr<const GraphDocument>()> make;
  std::shared_ptr<const GraphDocument> made;
  size_t g;
  if (q.has_conditional()) {
    made = finish_doc(std::move(q).build(callback_times().on ? &callback_times().walk : nullptr));
    g = session_->dumped(exec_id, AttachSession::summary_of(*made));
  } else {
    g = session_->dumped(exec_id, {q.nodes(), q.nodes_with_bodies(), q.first_kernel_names(3)});
    make = [finish_doc, q = std::make_shared<capture::QueriedGraph>(std::move(q))] {
      CallbackTimes& times = callback_times();
      auto doc = finish_doc(std::move(*q).build(times.on ? &times.built : nullptr));
      if (times.on) times.build_done();
      return doc;
    };
  }
  const AttachedGraph& entry = session_->index().graphs[g];
  std::string said;
  if (!config().quiet) {
    char line[96];
    std::snprintf(line, sizeof line, "graphscope: pid %d: exec graph %u, %zu nodes -> ", int(pid_), exec_id,
                  size_t(entry.nodes));
    said = line + dir_ + "/" + entry.file;
  }
  auto shared = made ? post_document(entry.file, made, std::move(said))
                     : post_document(entry.file, std::move(make), std::move(said));
  docs_.push_back(collector_.running() && config().profile ? shared : nullptr);
  reports_.emplace_back();
  Live& l = live_[exec];
  l = Live{};
  l.g = g;
  l.doc = std::move(shared);
  l.handles = std::move(handles);
  write_index();  // complete after every graph, whatever happens to the process later
  if (++dumped_execs_ == config().max_graphs && !config().profile)
    let_go("GRAPHSCOPE_MAX_GRAPHS (" + std::to_string(config().max_graphs) + ") graphs dumped");
}

// cuGraphExecUpdate or a per-node setter changed a dumped exec graph: the
// change goes into the next version's document, which becomes a version
// when the exec graph is next launched (so a version is what ran, and many
// setter calls between two launches make one version), destroyed, or the
// process exits.
void Injection::on_exec_change(const capture::ExecChange& c) {
  if (finished_) return;
  launching(c.exec);  // its walk first, if still to do
  const bool seen = preload_seen();
  std::lock_guard<std::mutex> lock(m_);
  if (!seen)
    unseen("an exec graph was changed (" + (c.node ? c.node->call : std::string("cuGraphExecUpdate")) +
           ")");
  if (stood_down_ || resting_) return;
  auto it = live_.find(c.exec);
  if (it == live_.end()) return;  // not dumped (skipped, or made before graphscope attached)
  Live& l = it->second;
  if (l.capped) {  // its index entry says later updates are not recorded; they are counted
    session_->update_not_recorded(l.g);
    return;
  }
  // Launches must be seen to know which version ran: from the first
  // update on, also when only dumping.
  if (!enable_launch_callbacks() && l.pending_not_recorded.empty())
    l.pending_not_recorded.push_back("launches are not seen (CUPTI refused): versions may not match what ran");
  auto by = [&](const std::string& call) {
    std::string name = call;
    if (size_t v = name.rfind("_v"); v != std::string::npos && v + 2 < name.size() &&
                                      name.find_first_not_of("0123456789", v + 2) == std::string::npos)
      name.resize(v);
    if (std::find(l.pending_by.begin(), l.pending_by.end(), name) == l.pending_by.end())
      l.pending_by.push_back(name);
  };
  if (!c.whole && !c.node) return;
  // The current version's document, where the change starts from it (made
  // on the writer thread: waited for; m_ is held, and no writer job takes
  // it). A setter call with changes already gathered needs none (XLA
  // makes hundreds a step). None: it could not be made, and the index
  // says so.
  std::shared_ptr<const GraphDocument> current;
  if (c.whole || !l.pending) {
    current = l.doc->get();
    if (!current) return;
  }
  if (c.whole) {
    // The exec graph now runs the parameters of c.whole: walk it now (the
    // application may destroy it right after).
    GraphDocument w = capture::walk_graph(reinterpret_cast<cudaGraph_t>(c.whole), walk_options(false));
    capture::assign_exec_ids(w, *current->exec_graph_id);
    std::string why;
    if (!carry_exec_node_ids(*current, w, &why))
      w.warnings.push_back("node ids are the update's graph's, and records of this exec graph may not join: " + why);
    w.name = current->name;
    w.device = current->device;
    const GraphDocument& before = l.pending ? *l.pending : *current;
    ExecVersion v;
    if (before.exec_version) v.disabled_nodes = before.exec_version->disabled_nodes;
    w.exec_version = std::move(v);
    // XLA updates its command buffers this way at every step: the same
    // graph again is no new version (unless the current one leaves
    // something out that this walk now shows).
    const bool current_complete = !current->exec_version || current->exec_version->not_recorded.empty();
    if (current_complete && same_recorded_content(w, *current)) {
      l.pending.reset();
      l.pending_by.clear();
      session_->unchanged_update(l.g);
      return;
    }
    l.pending = std::make_shared<GraphDocument>(std::move(w));
    by("cuGraphExecUpdate");
    return;
  }
  if (!l.pending) l.pending = std::make_shared<GraphDocument>(*current);
  // XLA sets hundreds of nodes of a graph of thousands per step: a table,
  // not a search per call.
  if (l.index_of.empty())
    for (size_t i = 0; i < l.handles.size(); ++i) l.index_of.emplace(l.handles[i], uint32_t(i));
  auto at = l.index_of.find(c.node->node);
  const uint32_t index = at == l.index_of.end() ? UINT32_MAX : at->second;
  std::string why;
  switch (apply_node_update(*l.pending, index, *c.node, &why)) {
    case UpdateEffect::changed: by(c.node->call); break;
    case UpdateEffect::unchanged: session_->unchanged_update(l.g); break;
    case UpdateEffect::not_recorded: {
      ExecVersion& v = l.pending->exec_version ? *l.pending->exec_version : l.pending->exec_version.emplace();
      if (std::find(v.not_recorded.begin(), v.not_recorded.end(), why) == v.not_recorded.end())
        v.not_recorded.push_back(why);
      by(c.node->call);
      break;
    }
  }
}

// The pending changes of l, if any, become its next version. Under m_.
void Injection::new_version(Live& l) {
  if (!l.pending || l.pending_by.empty()) return;
  last_graph_ = std::chrono::steady_clock::now();
  GraphDocument doc = std::move(*l.pending);
  l.pending.reset();
  ExecVersion& v = doc.exec_version ? *doc.exec_version : doc.exec_version.emplace();
  v.version = l.version + 1;
  v.updated_by = std::move(l.pending_by);
  l.pending_by.clear();
  for (auto& n : l.pending_not_recorded) v.not_recorded.push_back(std::move(n));
  l.pending_not_recorded.clear();
  std::optional<size_t> g = session_->updated(l.g, doc);
  if (!g) {
    l.capped = true;  // no copy of the document per change from now on
    session_->update_not_recorded(l.g);  // the calls of this version (one at least)
    // Its addresses are no longer known: not watched from now on.
    if (liveness_on_)
      for (const auto& [h, x] : live_)
        if (&x == &l) {
          liveness_.forget(reinterpret_cast<uintptr_t>(h));
          liveness_notes_.push_back("exec graph " + std::to_string(session_->index().graphs[l.g].exec_graph_id) +
                                    ": not watched after its last recorded version");
        }
    write_index();
    return;
  }
  const AttachedGraph& entry = session_->index().graphs[*g];
  // The new version's addresses are the ones watched from now on.
  if (liveness_on_) {
    const uint64_t exec = [&] {
      for (const auto& [h, x] : live_)
        if (&x == &l) return uint64_t(reinterpret_cast<uintptr_t>(h));
      return uint64_t(0);
    }();
    if (exec) {
      liveness_.forget(exec);
      liveness_.watch(exec, entry.exec_graph_id, addresses_of(doc), liveness_.allocations());
    }
  }
  auto shared = post_document(entry.file, std::make_shared<const GraphDocument>(std::move(doc)));
  if (!config().quiet) {
    std::string calls;
    for (const auto& x : entry.updated_by) calls += (calls.empty() ? "" : ", ") + x;
    std::fprintf(stderr, "graphscope: pid %d: exec graph %u updated (%s): version %u -> %s/%s\n", int(pid_),
                 entry.exec_graph_id, calls.c_str(), entry.version, dir_.c_str(), entry.file.c_str());
  }
  docs_.push_back(collector_.running() && config().profile ? shared : nullptr);
  reports_.emplace_back();
  l.g = *g;
  l.doc = std::move(shared);
  ++l.version;
  write_index();
}

// A graph document for FILE: in the journal at once; made (make: from a
// walk's answers, or already made), formatted and written on the writer
// thread (writer.h), not the application's. `said`: a line for stderr
// once the file is written. Its slot has the document once made.
std::shared_ptr<DocSlot> Injection::post_document(const std::string& file,
                                                  std::function<std::shared_ptr<const GraphDocument>()> make,
                                                  std::string said, std::shared_ptr<DocSlot> slot) {
  journal(file);
  if (!slot) slot = std::make_shared<DocSlot>();
  writer().post([path = dir_ + "/" + file, slot, make = std::move(make), said = std::move(said)] {
    std::shared_ptr<const GraphDocument> doc;
    try {
      doc = make();
    } catch (const std::exception& e) {
      slot->set(nullptr);
      instance().job_error(std::string("making ") + path + ": " + e.what());
      return;
    } catch (...) {
      slot->set(nullptr);
      instance().job_error("making " + path + ": unknown error");
      return;
    }
    slot->set(doc);
    try {
      write_graph_json_file(path, *doc);
    } catch (const std::exception& e) {
      instance().job_error(std::string("writing ") + path + ": " + e.what());
      return;
    }
    if (!said.empty()) std::fprintf(stderr, "%s\n", said.c_str());
  });
  return slot;
}

// One already made: its slot has it at once.
std::shared_ptr<DocSlot> Injection::post_document(const std::string& file,
                                                  std::shared_ptr<const GraphDocument> doc, std::string said) {
  return post_document(
      file, [doc] { return doc; }, std::move(said), DocSlot::holding(doc));
}

// An error on the writer thread: said at once, and into the index the next
// time it is written (m_ is not taken here: a thread holding it may be
// waiting for a document this thread makes).
void Injection::job_error(const std::string& e) noexcept {
  try {
    {
      std::lock_guard<std::mutex> lock(job_m_);
      job_errors_.push_back(e);
    }
    say(e);
  } catch (...) {
  }
}

void Injection::journal(const std::string& file) const {
  if (journal_ < 0) return;
  const std::string line = "queued " + file + "\n";
  ssize_t ignored = ::write(journal_, line.data(), line.size());
  (void)ignored;
}

void Injection::profile_one(size_t g, const Trace& all) {
  std::string why;
  Trace t = session_->replays_of(g, all, collector_.dropped_records(), &why);
  if (!why.empty()) {
    session_->not_profiled(g, why);
    return;
  }
  const AttachConfig& c = config();
  ProfileOptions po;
  po.threshold_us = c.threshold_us;
  po.tolerance_us = c.tolerance_us;
  po.exec_graph_id = session_->index().graphs[g].exec_graph_id;
  const std::shared_ptr<const GraphDocument> made = docs_[g] ? docs_[g]->get() : nullptr;
  if (!made) {
    session_->not_profiled(g, "its graph document could not be made");
    return;
  }
  const GraphDocument& doc = *made;
  TraceJoin join = join_trace(doc, t, join_options(po));
  reports_[g] = analyze_profile(doc, t, join, po);
  session_->profiled(g, reports_[g]);
  const AttachedGraph& x = session_->index().graphs[g];
  write_output(dir_ + "/" + x.profile_file, write_profile_json(reports_[g], doc));
  write_output(dir_ + "/" + x.trace_file, write_chrome_trace(t, &doc, &reports_[g], &join));
}

void Injection::write_report_text() {
  write_output(dir_ + "/report.txt", session_->report_text([&](size_t g) {
    const auto doc = docs_[g] ? docs_[g]->get() : nullptr;
    return doc ? format_profile(reports_[g], *doc) : std::string();
  }));
}

// graphscope.attach/1: what this process did, rewritten after each graph.
// The ledger's figures of each graph: its costs (version 1 of an exec
// graph holds them), and whether every launch was counted. Under m_.
void Injection::fill_costs(AttachIndex& x) {
  for (AttachedGraph& g : x.graphs)
    if (g.version == 1) costs_.fill(g.exec_graph_id, g);
  x.launches_counted = true;  // by this library, in every run
  // After a let go, only the preload library counts launches: those of a
  // statically linked CUDA runtime it cannot see.
  if ((stood_down_ || let_go_count_) && !config().profile && !runtime_covered())
    x.launches_missed =
        "launches after graphscope let go of CUPTI are not counted: the process's CUDA runtime is not the "
        "shared libcudart.so the preload library forwards (a statically linked runtime)";
  else if (stood_down_ && config().profile)
    x.launches_missed = "launches after graphscope let go of CUPTI are not counted";
  else
    x.launches_missed.clear();
}

// The device's graph memory (memory alloc nodes) as the driver reports it,
// through the driver's own entry points (the process has libcuda loaded).
void Injection::graph_memory_at_exit(AttachIndex& x) {
  if (!device_ordinal_) return;
  using DeviceGet = CUresult (*)(CUdevice*, int);
  using Attr = CUresult (*)(CUdevice, CUgraphMem_attribute, void*);
  // The driver the process loaded (the CUDA runtime dlopens it locally:
  // its functions are not in the global scope).
  static void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!cuda) return;
  static auto get = reinterpret_cast<DeviceGet>(dlsym(cuda, "cuDeviceGet"));
  static auto attr = reinterpret_cast<Attr>(dlsym(cuda, "cuDeviceGetGraphMemAttribute"));
  CUdevice dev = 0;
  if (!get || !attr || get(&dev, int(*device_ordinal_)) != CUDA_SUCCESS) return;
  cuuint64_t v = 0;
  if (attr(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &v) == CUDA_SUCCESS) x.graph_mem_reserved_high = uint64_t(v);
  if (attr(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &v) == CUDA_SUCCESS) x.graph_mem_used_high = uint64_t(v);
}

// The Python hook (lib/inject/python-hook) writes OUT/torch-log.pid-PID.jsonl
// while the program runs; Python's exit handlers, the last to write it, have
// run when this library's do.
void Injection::take_torch_log(AttachIndex& x) {
  const std::string from = config().out + "/torch-log.pid-" + std::to_string(pid_) + ".jsonl";
  const std::string to = dir_ + "/torch_log.jsonl";
  if (::rename(from.c_str(), to.c_str()) == 0) x.torch_log = "torch_log.jsonl";
}

void Injection::write_index() noexcept {
  try {
    {
      std::lock_guard<std::mutex> lock(job_m_);
      for (auto& e : job_errors_) session_->error(std::move(e));
      job_errors_.clear();
    }
    AttachIndex& x = session_->index();
    x.attached = attached_ || (stood_down_ && !x.graphs.empty());
    x.let_go = stood_down_ ? stood_down_why_ : resting_ ? rest_why_ : std::string();
    x.let_go_count = let_go_count_;
    x.stays_attached = stays_why_;
    x.taken_back_count = taken_back_count_;
    x.attach_error = attach_error_;
    x.complete = finished_;
    x.profile = config().profile && profile_error_.empty();
    x.profile_error = profile_error_;
    if (device_) {
      AttachDevice d;
      d.name = device_->name;
      if (device_->cc_major && device_->cc_minor)
        d.compute_capability = std::to_string(*device_->cc_major) + "." + std::to_string(*device_->cc_minor);
      if (device_->driver_version) d.driver_version = *device_->driver_version;
      if (device_->runtime_version) d.runtime_version = *device_->runtime_version;
      d.ordinal = device_ordinal_;
      d.pci_bus_id = device_pci_bus_id_;
      x.device = d;
    }
    x.dropped_records = collector_.dropped_records();
    fill_costs(x);
    x.attached_monotonic_s = std::chrono::duration<double>(t0_.time_since_epoch()).count();
    // A snapshot, written after the files posted before it.
    writer().post([path = dir_ + "/index.json", x = AttachIndex(x)] {
      try {
        write_output(path, write_attach_index(x));
      } catch (...) {
      }
    });
  } catch (...) {
    // Nowhere left to say it: the directory is gone or full.
  }
}

void Injection::error(const std::string& e) {
  std::lock_guard<std::mutex> lock(m_);
  if (session_->error(e)) say(e);  // once; the index has them all
  write_index();
}

// OUT/rank-R, created exclusively (another process of the run may hold
// that rank: a forked worker that inherited RANK), else OUT/rank-R.pid-PID;
// OUT/pid-PID without a rank.
bool Injection::make_process_dir(const std::optional<AttachRank>& rank) {
  if (!make_dirs(config().out)) return false;
  const std::vector<std::string> names = attach_dir_names(rank, int64_t(pid_));
  for (size_t i = 0; i < names.size(); ++i) {
    session_->use_dir(names[i]);
    const bool last = i + 1 == names.size();
    if (mkdir(session_->dir().c_str(), 0777) == 0 || (last && errno == EEXIST)) return true;
    if (errno != EEXIST) return false;
  }
  return false;
}

bool Injection::make_dirs(const std::string& path) {
  for (size_t p = 1; p <= path.size(); ++p) {
    if (p < path.size() && path[p] != '/') continue;
    std::string part = path.substr(0, p);
    if (mkdir(part.c_str(), 0777) != 0 && errno != EEXIST) return false;
  }
  return true;
}

}  // namespace graphscope::inject::internal
