// What ledger.cc (the ledger made and written as JSON), ledger_text.cc (as
// text) and ledger_torch.cc (torch.compile's records) share. Private to
// lib/inspect/runs.
#pragma once

#include <functional>
#include <string>

#include "../core/json_writer.h"
#include "ledger.h"
#include "torch_log.h"

namespace graphscope {

/// PyTorch's records of one process (read from its torch_log), each tied to
/// what it caused among p's graphs (made already), and the family members
/// recorded again.
LedgerTorch ledger_torch(const TorchLog& log, const LedgerProcess& p);

/// The process's torch.compile section of the text ledger ("" without one).
void format_ledger_torch(const LedgerProcess& p, std::string& out);

/// The same as the JSON object "torch".
void write_ledger_torch(JsonWriter& w, const LedgerTorch& t);

struct GraphDocument;

/// Member g of a family against the member before it (ledger_recapture.cc).
LedgerRecapture recapture_of(const GraphDocument& previous, const GraphDocument& g, size_t previous_i, size_t g_i);

/// A family's re-captures as text lines, and as the JSON array "recaptures".
void format_recaptures(const LedgerProcess& p, const LedgerFamily& f, std::string& out);
void write_recaptures(JsonWriter& w, const LedgerFamily& f);
/// A process's exec graph updates as text lines, and as the JSON member "updates".
void format_updates(const LedgerProcess& p, std::string& out);
void write_updates(JsonWriter& w, const LedgerProcess& p);

/// The process's input liveness findings and refused updates
/// (ledger_why.cc): made from its index, each node said from the exec
/// graph's document (docs: the documents by index entry, read on demand);
/// as text lines; as JSON members "liveness" and "update_failures".
void why_of(const AttachIndex& index, const std::function<const GraphDocument&(size_t)>& doc, LedgerProcess& p);
void format_why(const LedgerProcess& p, std::string& out);
void write_why(JsonWriter& w, const LedgerProcess& p);

}  // namespace graphscope
