#include "load.h"

#include "../core/error.h"
#include "../core/io.h"
#include "graph_json.h"
#include "nvdot_reader.h"
#include "../model/validate.h"

namespace graphscope {
namespace {

size_t skip_space(std::string_view t, size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) ++i;
  return i;
}

}  // namespace

GraphFormat detect_graph_format(std::string_view text, const std::string& origin) {
  size_t i = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // UTF-8 byte order mark
  i = skip_space(text, i);
  if (i == text.size()) throw_input(origin, "empty file");
  if (text[i] == '{') {
    // Ours carries "schema" (our writer puts it first); PyTorch's dict does
    // not. The JSON reader decides for certain; this only picks the reader.
    return text.substr(i, 4096).find("\"schema\"") != std::string_view::npos ? GraphFormat::graphscope_json
                                                                              : GraphFormat::pytorch_json;
  }
  std::string_view rest = text.substr(i, 64);
  if (rest.substr(0, 7) == "digraph" || rest.substr(0, 6) == "strict") return GraphFormat::nvidia_dot;
  // pickle protocol 2 and later: PROTO (0x80) and the protocol number.
  if (i == 0 && text.size() >= 2 && text[0] == '\x80' && text[1] >= 2 && text[1] <= 5)
    throw_input(origin,
                "a Python pickle, as torch.cuda.graphs.export_graph_data() writes; graphscope reads JSON: "
                "cudagraphscope.load(path) in Python reads the pickle, and json.dump of it gives a file graphscope reads");
  if (text[i] == '[') throw_input(origin, "a JSON array, not a graph document (is this a trace?)");
  throw_input(origin, "not a graph document: neither JSON nor a cudaGraphDebugDotPrint DOT file");
}

GraphDocument parse_graph(std::string_view file, const std::string& origin) {
  GraphDocument doc;
  GraphFormat format = detect_graph_format(file, origin);
  // A UTF-8 byte order mark is ignored, as RFC 8259 allows (editors on
  // Windows write one); the readers see the text after it.
  std::string_view text = file;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  switch (format) {
    case GraphFormat::graphscope_json:
    case GraphFormat::pytorch_json: doc = read_graph_json(text, origin); break;
    case GraphFormat::nvidia_dot:
      // cgraph reads C strings: a NUL would silently cut the graph short.
      if (text.find('\0') != std::string_view::npos) throw_input(origin, "NUL byte in a DOT file");
      doc = read_nvidia_dot(std::string(text), origin);
      break;
  }
  validate_graph(doc, origin);
  return doc;
}

GraphDocument load_graph(const std::string& path) {
  // A stream that is plainly no graph document (/dev/zero) is refused at
  // its first bytes, not after the 4 GiB limit.
  auto head = [](std::string_view text, const std::string& origin) { detect_graph_format(text, origin); };
  InputText text(path, head);
  return parse_graph(text.view(), path == "-" ? "standard input" : path);
}

}  // namespace graphscope
