// libFuzzer target: the documents graphscope writes and reads back on the
// same struct, beyond the ones the CLI reads from users: diffs
// (graphscope.diff/1), check results (graphscope.check/1), the --exec
// indexes (graphscope.attach/1 and attach-run/1; the one of a process is read
// back from the application's directory) and rules files as
// write_rules_json writes them. Each reader accepts or refuses with
// Error(bad_input); what it accepts must write, read back and write the same
// bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "inspect/formats/attach_json.h"
#include "inspect/formats/check_json.h"
#include "inspect/formats/diff_json.h"
#include "inspect/formats/rules_json.h"

using namespace graphscope;
using namespace graphscope::fuzz;

namespace {

template <typename Read, typename Write>
void round_trip(const std::string& text, Read read, Write write, const char* what) {
  std::string once;
  if (!accepts([&] { once = write(read(text, "doc.json")); })) return;
  std::string twice;
  try {
    twice = write(read(once, "again.json"));
  } catch (const Error& e) {
    finding(std::string(what) + ": refused what it wrote: " + e.what());
  }
  check(twice == once, std::string(what) + ": write(read(x)) changes when read and written again");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = text_of(data, size);
  round_trip(
      text, [](const std::string& t, const char* o) { return read_diff_json(t, o); },
      [](const DiffDocument& d) { return write_diff_json(d.diff, d.a_origin, d.b_origin); }, "diff");
  round_trip(
      text, [](const std::string& t, const char* o) { return read_check_json(t, o); },
      [](const CheckResult& c) { return write_check_json(c); }, "check result");
  round_trip(
      text, [](const std::string& t, const char* o) { return read_attach_index(t, o); },
      [](const AttachIndex& x) { return write_attach_index(x); }, "attach index");
  round_trip(
      text, [](const std::string& t, const char* o) { return read_attach_run(t, o); },
      [](const AttachRun& x) { return write_attach_run(x); }, "attach run");
  round_trip(
      text, [](const std::string& t, const char* o) { return parse_check_rules(t, o); },
      [](const CheckRules& r) { return write_rules_json(r); }, "rules");
  return 0;
}
