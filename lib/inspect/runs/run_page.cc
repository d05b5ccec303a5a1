#include "run_page.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "../core/demangle.h"
#include "../core/error.h"
#include "../core/text.h"
#include "../formats/load.h"
#include "../render/html_report.h"
#include "ledger.h"
#include "ranks.h"
#include "run_dir.h"

namespace graphscope {
namespace {

/// One graph of the page, kept alive while it is written.
struct PageGraph {
  const GraphDocument* doc = nullptr;
  GraphDocument own;  // when compare_ranks did not read it already
  std::shared_ptr<const Trace> trace;
  TraceJoin join;
  ProfileReport report;
  bool has_profile = false;
  std::string note;
};

using Entry = std::pair<size_t, size_t>;  // (process, index entry)

// Of a profiled run with more profiled graphs than the page keeps: the
// reference rank's graphs, and per row the ranks that arrived last at a
// collective, waited longest, took longest, and the first that differs.
std::set<Entry> telling(const RanksResult& r) {
  std::set<Entry> keep;
  auto add = [&](const RankMatch& m) {
    if (m.graph) keep.insert({r.ranks[m.rank].process, r.ranks[m.rank].graphs[*m.graph].entry});
  };
  for (const RankRow& row : r.rows) {
    add(row.ranks[0]);
    for (const CollectiveWait& w : row.waits) add(row.ranks[w.last]);
    const RankMatch* longest = nullptr;
    const RankMatch* waited = nullptr;
    double most = -1, most_wait = -1;
    for (const RankMatch& m : row.ranks) {
      if (!m.graph) continue;
      const auto& q = r.ranks[m.rank].graphs[*m.graph].profile;
      if (!q) continue;
      if (q->makespan_us > most) most = q->makespan_us, longest = &m;
      if (q->collective_wait_us && *q->collective_wait_us > most_wait) most_wait = *q->collective_wait_us, waited = &m;
    }
    if (longest) add(*longest);
    if (waited) add(*waited);
  }
  if (r.first_difference) add(r.rows[r.first_difference->row].ranks[r.first_difference->rank]);
  return keep;
}

// The page's ledger: its document, and the names its kernels are shown
// by, told apart across the page as the text tells them apart in a table.
// A run directory the ledger cannot read (make_ledger throws) still has
// its page, which says why there is no ledger. Of a run with more than
// max_processes processes (thousands of ranks), the page keeps the ledger
// of those that tell something (a fallback, a bucket never replayed), then
// of the first in index order, and says so: the page stays within its size.
void add_ledger(const std::string& dir, size_t max_processes, HtmlReportInput& in) {
  Ledger ledger;
  try {
    ledger = make_ledger(dir);
  } catch (const Error& e) {
    in.ledger_note = std::string("no ledger: ") + e.what();
    return;
  }
  const size_t all = ledger.processes.size();
  if (all > max_processes) {
    auto telling = [](const LedgerProcess& p) {
      for (const LedgerFamily& f : p.families)
        if (f.fallback || !f.never_replayed.empty()) return true;
      for (const LedgerGraph& g : p.graphs)
        if (g.replayed == false) return true;
      return false;
    };
    std::vector<bool> keep(all);
    size_t kept = 0;
    for (size_t k = 0; k < all && kept < max_processes; ++k)
      if (telling(ledger.processes[k])) keep[k] = true, ++kept;
    for (size_t k = 0; k < all && kept < max_processes; ++k)
      if (!keep[k]) keep[k] = true, ++kept;
    std::vector<LedgerProcess> shown;
    for (size_t k = 0; k < all; ++k)
      if (keep[k]) shown.push_back(std::move(ledger.processes[k]));
    ledger.processes = std::move(shown);
    in.ledger_note = "the ledger of " + std::to_string(kept) + " of the run's " + std::to_string(all) +
                     " processes (those with a fallback or a bucket never replayed, then the first in index "
                     "order); every process's: graphscope ledger " + dir;
  }
  in.ledger_json = write_ledger_json(ledger);
  KernelNamer names;
  std::set<std::string> kernels;
  for (const LedgerProcess& p : ledger.processes) {
    if (p.work) {
      for (const LedgerEager& e : p.work->top)
        if (e.kind == "kernel") kernels.insert(e.name);
      for (const LedgerSite& x : p.work->sites)  // a copy's name ("Memcpy DtoD") is its own
        if (!x.top.empty() && x.top.rfind("Memcpy", 0) != 0 && x.top.rfind("Memset", 0) != 0) kernels.insert(x.top);
    }
    for (const LedgerFamily& f : p.families) {
      if (!f.bucket_kernel.empty()) kernels.insert(f.bucket_kernel);
      if (f.fallback)
        for (const LedgerFallbackKernel& k : f.fallback->kernels) kernels.insert(k.name);
    }
  }
  for (const std::string& k : kernels) names.add(k);
  for (const std::string& k : kernels) in.ledger_names.emplace_back(k, names(k));
}

}  // namespace

std::string write_run_page(const std::string& dir, const RunPageOptions& o) {
  RunDirectory files(dir);
  AttachRun run = files.read_index();
  RunTraces traces(files);

  // The ranks' analysis, which reads the ranks' current graphs (the page
  // takes them from it) and their traces (through the same cache). A file
  // it cannot read is the page's own reading's to refuse, below.
  std::optional<RanksResult> ranks;
  std::string ranks_note;
  size_t ranked = 0;
  for (const auto& p : run.processes) ranked += p.index.rank.has_value();
  if (ranked >= 2) {
    try {
      ranks = compare_ranks(run, files, traces);
    } catch (const Error& e) {
      ranks_note = std::string("the ranks were not compared: ") + e.what();
    }
  }
  std::map<Entry, const RankGraph*> read;
  if (ranks)
    for (const RankProcess& rp : ranks->ranks)
      for (const RankGraph& g : rp.graphs) read[{rp.process, g.entry}] = &g;

  size_t profiled = 0;
  for (const auto& p : run.processes)
    for (const auto& g : p.index.graphs) profiled += g.profiled && !g.trace_file.empty();
  const bool keep_all = profiled <= o.max_profiles;
  std::set<Entry> keep;
  if (!keep_all) {
    if (ranks) keep = telling(*ranks);
    for (size_t p = 0; p < run.processes.size() && keep.size() < o.max_profiles; ++p)
      for (size_t i = 0; i < run.processes[p].index.graphs.size() && keep.size() < o.max_profiles; ++i)
        if (run.processes[p].index.graphs[i].profiled) keep.insert({p, i});
  }

  HtmlReportInput in;
  in.title = "graphscope report: " + display_name(dir);
  in.sources = {dir};
  in.run = &run;
  in.fold = o.fold;
  in.svg_max_nodes = o.svg_max_nodes;
  in.share_identical = true;
  add_ledger(dir, o.max_ledger_processes, in);
  std::vector<std::unique_ptr<PageGraph>> graphs;
  std::map<Entry, int64_t> page_index;
  for (size_t p = 0; p < run.processes.size(); ++p) {
    const auto& proc = run.processes[p];
    const std::string who = proc.index.rank ? "rank " + std::to_string(proc.index.rank->rank) + " (pid " +
                                                  std::to_string(proc.index.pid) + ")"
                                            : "pid " + std::to_string(proc.index.pid);
    for (size_t i = 0; i < proc.index.graphs.size(); ++i) {
      const AttachedGraph& ag = proc.index.graphs[i];
      auto g = std::make_unique<PageGraph>();
      if (auto it = read.find({p, i}); it != read.end()) {
        g->doc = &it->second->doc;
      } else {
        const RunFile file = files.resolve(run, p, i, RunName::file);
        g->own = parse_graph(files.read(file), file.path);
        g->doc = &g->own;
      }
      if (ag.profiled && !ag.trace_file.empty()) {
        // Every trace name is checked, each kept one read (once) and joined.
        const RunFile trace = files.resolve(run, p, i, RunName::trace);
        if (keep_all || keep.count({p, i})) {
          g->trace = traces.get(trace);
          ProfileOptions po = o.profile;
          po.exec_graph_id = ag.exec_graph_id;
          g->report = profile_trace(*g->doc, *g->trace, trace.path, po, g->join);
          g->has_profile = true;
        } else {
          g->note = "not on this page, which keeps " + std::to_string(keep.size()) + " of the run's " +
                    std::to_string(profiled) + " profiled graphs" +
                    (ranks ? " (the reference rank's, and the ranks that arrived last, waited or took longest; the "
                             "ranks section has every rank's figures)"
                           : std::string()) +
                    "; this graph's own page: graphscope report " +
                    (std::filesystem::path(files.dir()) / proc.dir / ag.file).string() +
                    " --trace " + trace.path;
        }
      } else if (run.profile) {
        g->note = ag.profile_error.empty() ? "not profiled" : ag.profile_error;
      }
      ReportGraph rg;
      rg.label = who + " graph " + std::to_string(ag.exec_graph_id);
      rg.doc = g->doc;
      rg.process = int(p);
      if (g->has_profile) rg.profile = &g->report, rg.trace = g->trace.get(), rg.join = &g->join;
      rg.profile_note = g->note;
      page_index[{p, i}] = int64_t(in.graphs.size());
      in.graphs.push_back(rg);
      graphs.push_back(std::move(g));
    }
  }
  if (ranks)
    in.ranks_json = write_ranks_page_json(*ranks, [&](size_t rank, size_t graph) {
      const RankProcess& rp = ranks->ranks[rank];
      auto it = page_index.find({rp.process, rp.graphs[graph].entry});
      return it == page_index.end() ? int64_t(-1) : it->second;
    });
  if (!ranks_note.empty()) in.notes.push_back(ranks_note);
  return write_html_report(in);
}

}  // namespace graphscope
