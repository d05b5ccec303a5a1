#include "profile_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "../core/demangle.h"
#include "delay_scale.h"
#include "../model/origin_view.h"
#include "../analysis/simulate.h"
#include "../core/text.h"

namespace graphscope {
namespace {

// A node's name for the text: the kernel's as the report's namer tells it
// from the graph's other kernels, escaped for the terminal.
std::string node_name(const GraphDocument& doc, uint32_t i, const KernelNamer& names) {
  const Node& n = doc.root.nodes[i];
  if (n.type == NodeType::kernel) return printable(names(n.kernel_name));
  return std::string(to_string(n.type));
}

// The verdict, with "?" when it rests on an ambiguous assignment.
std::string verdict_of(const ProfileReport& r, const NodeProfile& p) {
  return std::string(to_string(p.verdict)) + (uncertain_verdict(r, p.index) ? "?" : "");
}

// A node's delay in the account's terms (NodeWait): "dependency latency
// 16.88 us, concurrent work 10.26 us"; empty without a split.
std::string delay_parts(const NodeProfile& p) {
  if (p.latency_us < 0) return "";
  std::string out;
  auto part = [&](const char* what, double us) {
    if (us > 0) out += std::string(out.empty() ? "" : ", ") + what + " " + fmt("%.2f", us) + " us";
  };
  if (p.blocking) part("fake wait", p.fake_wait_us);
  part("dependency latency", p.latency_us);
  part("concurrent work", p.concurrent_us);
  part("host nodes", p.host_us);
  return out;
}

}  // namespace

std::string format_profile(const ProfileReport& r, const GraphDocument& doc, size_t top) {
  KernelNamer names(36);
  for (const Node& n : doc.root.nodes)
    if (n.type == NodeType::kernel) names.add(n.kernel_name);
  std::string out;
  char buf[512];
  // Every value is one line, any name in it escaped and whole.
  auto line = [&](const char* key, const std::string& value) {
    out += padded(key, 14) + " " + printable(value) + "\n";
  };
  const std::string which = r.by_ids ? "exec graph " + std::to_string(r.exec_graph_id)
                                     : std::string("joined by graph launch (the trace has no graph ids)");
  line("profile", which + ", " + std::to_string(r.replays) + " replays; delayed past " + fmt("%.3g", r.threshold_us) +
                      " us, tolerance " + fmt("%.3g", r.tolerance_us) + " us");
  if (!r.by_ids) {
    size_t used = 0, partial = 0, skipped = 0;
    for (const auto& l : r.launches)
      (l.status == LaunchUse::Status::used ? used : l.status == LaunchUse::Status::partial ? partial : skipped)++;
    line("launches", std::to_string(used) + " used, " + std::to_string(partial) + " partial, " +
                         std::to_string(skipped) + " skipped (another graph, or not asked for)");
    size_t shown = 0;
    for (const auto& l : r.launches) {
      if (l.status == LaunchUse::Status::used) continue;
      if (++shown > 5) {
        line("", "... and " + std::to_string(partial + skipped - 5) + " more");
        break;
      }
      line("", std::string(to_string(l.status)) + " launch " + std::to_string(l.correlation) + ": " + l.why);
    }
    const size_t* a = r.assigned;
    line("assigned", std::to_string(a[1]) + " unique, " + std::to_string(a[2]) + " by order, " +
                         std::to_string(a[3]) + " interchangeable, " + std::to_string(a[4]) +
                         " ambiguous (verdicts resting on them marked ?)");
  }
  std::string cp = fmt("%.1f", r.critical_path_us) + " us";
  if (r.makespan_us > 0) cp += " (" + fmt("%.0f", 100.0 * r.critical_path_us / r.makespan_us) + "% of the makespan)";
  line("makespan", fmt("%.1f", r.makespan_us) + " us (median over replays)");
  line("critical path", cp);
  line("dependencies", std::to_string(r.real) + " real, " + std::to_string(r.fake) + " fake (" +
                           std::to_string(r.blocking) + " blocking), " + std::to_string(r.none) + " none");
  const MakespanAccount& acc = r.account;
  if (acc.replays) {
    // The account's largest parts, in one line; the whole of it below.
    std::vector<const AccountPart*> big;
    for (const auto& p : acc.parts)
      if (p.ns > 0) big.push_back(&p);
    std::stable_sort(big.begin(), big.end(), [](const AccountPart* a, const AccountPart* b) { return a->ns > b->ns; });
    std::string parts;
    for (size_t k = 0; k < big.size() && k < 4; ++k)
      parts += std::string(k ? ", " : "") + std::string(to_string(big[k]->category)) + " " +
               fmt("%.1f", double(big[k]->ns) / 1000.0) + " us (" +
               fmt("%.0f", acc.makespan_ns ? 100.0 * double(big[k]->ns) / double(acc.makespan_ns) : 0.0) + "%)";
    line("account", parts.empty() ? std::string("nothing to account for") : parts);
  }
  if (r.lane_busy)
    line("note", plural(r.lane_busy, "fake dependency", "fake dependencies") + " with a blocker started while other work " +
                     "still ran on " + (r.lane_busy == 1 ? "its" : "their") + " own lane: that lane was not serializing " +
                     (r.lane_busy == 1 ? "it" : "them") + ", the blocker only ended first; not blocking: the delay is " +
                     "dispatch (work launched one by one), which the account counts as dependency latency and " +
                     "concurrent work");
  line("records", std::to_string(r.nodes_without_records) + " nodes without a record, " +
                      std::to_string(r.unmatched_records) + " records matching no node, " +
                      std::to_string(r.other_records) + " records of other work");
  // What to try (findings.h), each with the numbers behind it.
  if (acc.replays) {
    if (r.findings.empty()) line("findings", no_findings(acc, r.what_if ? &*r.what_if : nullptr));
    for (size_t k = 0; k < r.findings.size(); ++k) line(k ? "" : "findings", r.findings[k].text);
  }
  // Worst delays first.
  std::vector<uint32_t> idx;
  for (const auto& p : r.nodes)
    if (p.replays) idx.push_back(p.index);
  std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
    return r.nodes[a].delay_us != r.nodes[b].delay_us ? r.nodes[a].delay_us > r.nodes[b].delay_us : a < b;
  });
  if (idx.size() > top) idx.resize(top);
  if (acc.replays) {
    out += "\nwhere the makespan went (replay " + std::to_string(acc.replay) + " of median makespan, " +
           fmt("%.3f", double(acc.makespan_ns) / 1000.0) + " us, each ns once; medians over " +
           std::to_string(acc.replays) + " replays, min-max)\n";
    for (const auto& p : acc.parts) {
      if (p.ns == 0 && p.max_us == 0) continue;
      std::snprintf(buf, sizeof buf, "  %-26s %11.3f us %5.1f%%   median %10.3f  (%.3f-%.3f)\n",
                    std::string(to_string(p.category)).c_str(), double(p.ns) / 1000.0,
                    acc.makespan_ns ? 100.0 * double(p.ns) / double(acc.makespan_ns) : 0.0, p.median_us, p.min_us,
                    p.max_us);
      out += buf;
    }
    std::snprintf(buf, sizeof buf, "  %-26s %11.3f us   the chain walked back from the last node: %u nodes\n", "total",
                  double(acc.makespan_ns) / 1000.0, acc.chain_nodes);
    out += buf;
    if (!acc.modules.empty()) {
      std::string m;
      for (size_t k = 0; k < acc.modules.size() && k < 6; ++k)
        m += std::string(k ? ", " : "") +
             (acc.modules[k].module.empty() ? "(no module)" : printable(acc.modules[k].module)) + " " +
             fmt("%.1f", double(acc.modules[k].ns) / 1000.0) + " us";
      if (acc.modules.size() > 6) m += ", ...";
      out += "  work on the chain by module: " + m + "\n";
    }
  }
  if (acc.replays && r.what_if) out += "\n" + format_what_if(*r.what_if);
  out += "\nworst delays (us, medians; blocking nodes' fake waits summed: " + fmt("%.1f", r.time_lost_us) +
         " us, they may overlap)\n";
  const bool modules = count_origins(doc.root).with_module > 0;
  auto module_of = [&](uint32_t i) {
    const auto& o = i < doc.root.nodes.size() ? doc.root.nodes[i].origin : nullptr;
    return o && !o->modules.empty() ? "  @ " + printable(o->module()) : std::string();
  };
  std::snprintf(buf, sizeof buf, "  %5s  %-36s %9s %9s %9s  %-7s %s%s\n", "node", "name", "delay", "ready", "start",
                "verdict", "observed dependency", modules ? "  @ module" : "");
  out += buf;
  for (uint32_t i : idx) {
    const auto& p = r.nodes[i];
    std::string obs = p.observed_dependency ? std::to_string(*p.observed_dependency) + " " +
                                                  node_name(doc, *p.observed_dependency, names)
                      : !p.observed_other.empty()
                          ? "(outside the graph) " + printable(short_kernel_name(p.observed_other, 30))
                          : "-";
    if (p.blocking) obs += " [blocking, " + printable(p.cause) + ": fake wait " + fmt("%.2f", p.fake_wait_us) + "]";
    else if (p.lane_busy && p.verdict == Verdict::fake) obs += " [lane busy: dispatch]";
    std::snprintf(buf, sizeof buf, "  %5u  ", i);
    std::string row = buf + padded(node_name(doc, i, names), 36);
    std::snprintf(buf, sizeof buf, " %9.2f %9.2f %9.2f  %-7s ", p.delay_us, p.ready_us, p.start_us,
                  verdict_of(r, p).c_str());
    out += row + buf + obs + module_of(i) + "\n";
  }
  bool any_fake = false;
  for (const auto& p : r.nodes) {
    if (p.verdict != Verdict::fake) continue;
    if (!any_fake) out += "\nfake dependencies (no graph path explains the order)\n";
    any_fake = true;
    std::string from = p.observed_dependency ? std::to_string(*p.observed_dependency) + " " +
                                                   node_name(doc, *p.observed_dependency, names)
                                             : "(outside the graph) " + printable(p.observed_other);
    std::snprintf(buf, sizeof buf, "  %5u ", p.index);
    out += buf + padded(node_name(doc, p.index, names), 36) + " after " + padded(from, 40) + " ";
    if (p.blocking)
      out += "blocking: " + printable(p.cause);
    else
      out += std::string("ordering only") + (p.lane_busy && p.blocker ? " (lane busy: dispatch)" : "");
    out += ", delay " + fmt("%.2f", p.delay_us) + " us";
    // What the delay was, in the account's terms (a blocking node's
    // always), in the replay it was split in: with that replay's delay
    // where it is not the median (replays that disagree; a node on the
    // account's chain is split in the account's replay).
    const std::string parts = delay_parts(p);
    if (!parts.empty() && (p.blocking || p.delay_us > r.threshold_us)) {
      const double split = p.fake_wait_us + p.latency_us + p.concurrent_us + p.host_us;
      if (std::fabs(split - p.delay_us) > 0.005 * p.delay_us + 0.01)
        out += " (median; " + fmt("%.2f", split) + " us in replay " + std::to_string(p.wait_replay) + ": " + parts + ")";
      else
        out += ": " + parts;
    }
    out += uncertain_verdict(r, p.index) ? " (assignment ambiguous)\n" : "\n";
  }
  out += "\ncritical path (" + fmt("%.1f", r.critical_path_us) + " us)\n  ";
  for (size_t k = 0; k < r.critical_path.size(); ++k) {
    if (k) out += " -> ";
    if (k == 12 && r.critical_path.size() > 16) {
      out += "... (" + std::to_string(r.critical_path.size() - 15) + " more) -> ";
      k = r.critical_path.size() - 3;
    }
    out += std::to_string(r.critical_path[k]) + " " + node_name(doc, r.critical_path[k], names);
  }
  if (!group_kind(doc.root).empty()) {
    // Where the graph's time went, by the part of the model that made it.
    std::vector<double> busy(doc.root.nodes.size(), -1);
    double total = 0;
    for (const auto& p : r.nodes)
      if (p.replays && p.index < busy.size()) busy[p.index] = std::max(0.0, p.end_us - p.start_us), total += busy[p.index];
    out += "\n\ntime by " + group_kind(doc.root) + " (node durations summed, medians; they may overlap)\n";
    size_t shown = 0;
    const auto shares = by_module(doc.root, &busy);
    for (const auto& m : shares) {
      if (++shown > 12) {
        out += "  ... and " + std::to_string(shares.size() - 12) + " more\n";
        break;
      }
      std::snprintf(buf, sizeof buf, " %10.1f us %5.1f%%  ", m.time_us,
                    total > 0 ? 100.0 * m.time_us / total : 0.0);
      out += "  " + padded(printable(describe_share(m)), 56) + buf + plural(m.nodes, "node", "nodes") + "\n";
    }
    out.pop_back();
  }
  out += "\n\nlanes (per replay, medians)\n";
  for (const auto& u : r.lanes) {
    std::snprintf(buf, sizeof buf, "  %-28s %6u activities  busy %9.2f us\n", describe(u.lane).c_str(), u.activities,
                  u.busy_us);
    out += buf;
  }
  std::string st;
  for (uint32_t s : r.streams) st += (st.empty() ? "" : ", ") + std::to_string(s);
  out += "streams        " + (st.empty() ? std::string("-") : st) + "\n";
  return out;
}

DotOverlay profile_overlay(const ProfileReport& r) {
  DotOverlay o;
  for (const auto& p : r.nodes) {
    if (!p.replays) {
      o.fill.emplace_back(kNoRecordFill);
      o.font.emplace_back(text_on(kNoRecordFill));
      o.rank.push_back(-1);
      o.note.push_back("no record");
      continue;
    }
    // The same colour for the same delay on every graph: by the threshold
    // (delay_scale.h), with a label colour that reads on it.
    const size_t band = delay_band(p.delay_us, r.threshold_us);
    o.fill.emplace_back(kDelayBands[band].fill);
    o.font.emplace_back(text_on(kDelayBands[band].fill));
    o.rank.push_back(int(band));
    std::string note = "delay " + fmt("%.2f", p.delay_us) + " us";
    if (p.verdict != Verdict::none) note += ", " + verdict_of(r, p);
    if (p.blocking) note += " (blocking: " + p.cause + ")";
    o.note.push_back(note);
  }
  o.legend.push_back("fill: median delay against the threshold " + fmt("%.2f", r.threshold_us) +
                     " us: white under half, yellow to it, orange past it, red past 4 x; grey: no record");
  o.legend.push_back(std::to_string(r.fake) + " fake dependencies (" + std::to_string(r.blocking) + " blocking), " +
                     std::to_string(r.replays) + " replays");
  return o;
}

}  // namespace graphscope
