// Shared by the libFuzzer targets: the rule that only graphscope::Error may
// leave a reader, a check that turns a broken invariant into a crash (with
// the reason on stderr), and a comparison of graph documents that says where
// two of them first differ.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "inspect/core/error.h"
#include "inspect/model/graph.h"

namespace graphscope::fuzz {

/// A broken invariant is a finding: print why and abort, so libFuzzer keeps
/// the input as a crash.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "\nFUZZ FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void check(bool ok, const std::string& what) {
  if (!ok) finding(what);
}

inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Runs f; true when it returned, false when it threw graphscope::Error.
/// Any other exception propagates (libFuzzer reports it as a crash).
template <typename F>
bool accepts(F&& f, std::string* message = nullptr) {
  try {
    f();
    return true;
  } catch (const Error& e) {
    if (message) *message = e.what();
    // Readers report malformed input as bad_input; anything else from a
    // reader is a wrong category (and so a wrong exit code).
    check(e.code() == ExitCode::bad_input,
          std::string("Error with a code other than bad_input: ") + e.what());
    return false;
  }
}

/// Where graphs a and b first differ in what a graph JSON document carries,
/// or "" when they agree. Left out: what the writer deliberately does not
/// write (kernel names of non-kernel nodes, demangled names, which travel in
/// kernel_names, the type spelling of known types, a conditional handle on a
/// node that is not conditional). Strings compare as the writer writes them
/// (bytes that are not UTF-8 become U+FFFD) and up to the reader's cut.
std::string graph_difference(const Graph& a, const Graph& b, const std::string& where = "nodes");

/// The same for whole documents (the graph plus the header fields).
std::string document_difference(const GraphDocument& a, const GraphDocument& b);

/// Writes doc as JSON, reads it back, writes and reads again: every step must
/// succeed, the read-back must equal doc (document_difference), and the
/// second and third writings must be the same text (the writer's own output
/// is a fixed point: the first writing may still normalise numbers). When
/// doc is valid, so is what is read back.
void check_json_round_trip(const GraphDocument& doc, bool valid);

/// What `graphscope dump` does with a graph that validated (summary, DOT),
/// then the JSON round trip.
void check_graph(const GraphDocument& doc, bool valid);

/// The graph JSON targets: read_graph_json and validate_graph, parse_graph
/// (format detection) agreeing with them, then check_graph.
void fuzz_graph_json(const std::string& text);

}  // namespace graphscope::fuzz
