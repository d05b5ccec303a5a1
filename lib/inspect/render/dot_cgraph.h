// Graphviz plumbing for graphscope's pictures (dot_writer.cc): cgraph's
// disciplines (IDs in creation order, DOT written into a std::string), the
// one gvc context, and failures turned into errors. Private to
// lib/inspect/render.
#pragma once

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <memory>
#include <string>

#include "../core/error.h"
#include "../formats/graphviz.h"

namespace graphscope::dot_detail {

using graphviz::GraphPtr;
using GraphvizSession = graphviz::Session;

/// The discipline every graph is opened with.
extern Agdisc_t g_disc;

class Layout {
 public:
  Layout(GVC_t* gvc, Agraph_t* g) : gvc_(gvc), g_(g) {}
  ~Layout() { gvFreeLayout(gvc_, g_); }
  Layout(const Layout&) = delete;
  Layout& operator=(const Layout&) = delete;

 private:
  GVC_t* gvc_;
  Agraph_t* g_;
};

struct RenderDataFreer {
  void operator()(char* p) const {
    if (p) gvFreeRenderData(p);
  }
};

/// cgraph's API takes char* for strings it only reads (in 2.x).
inline char* cs(const std::string& s) { return const_cast<char*>(s.c_str()); }
inline char* cs(const char* s) { return const_cast<char*>(s); }

[[noreturn]] void graphviz_failed(const char* what);

/// A layout or render call failed. A missing plugin is the installation's
/// fault, not the input's: that is a usage error, with the way to fix it.
[[noreturn]] void gvc_failed(const char* what);

/// The one gvc context of the process. Call with a GraphvizSession held.
GVC_t* shared_context();

/// gvRenderData's length is unsigned int in Graphviz 2.x and size_t later.
template <class Len>
std::string render_data(int (*fn)(GVC_t*, graph_t*, const char*, char**, Len*), GVC_t* gvc,
                        Agraph_t* g, const char* format) {
  char* raw = nullptr;
  Len len = 0;
  const int rc = fn(gvc, g, format, &raw, &len);
  std::unique_ptr<char, RenderDataFreer> data(raw);
  if (rc != 0 || !data) gvc_failed("graph could not be rendered as SVG");
  return std::string(data.get(), static_cast<size_t>(len));
}

}  // namespace graphscope::dot_detail
