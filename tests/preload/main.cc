// The preload test's program (run.sh): stands in for the injection
// library's graphscope_take_back, loads the calling library (caller.cc)
// locally or globally, and turns the preload library's rest switch on.
//   gs_preload_main CALLER.so local|global norest|rest|each|defer
// rest: the stand-in turns the switch off at its first call, as the
// injection library does once it has CUPTI back; each: it leaves it on.
// defer: walks at destroy on; the stand-ins of graphscope_graph_destroy
// (which takes graph 0x1000 over) and graphscope_graph_launch say they ran.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

namespace {
bool each = false;
void (*rest)(int) = nullptr;
}  // namespace

int (*seen)() = nullptr;

extern "C" __attribute__((visibility("default"))) void graphscope_take_back(const char* call) {
  // Inside the forwarded call: the preload library says so.
  std::printf("take_back %s%s\n", call, seen && seen() ? "" : " (not seen as inside)");
  if (!each && rest) rest(0);
}

extern "C" __attribute__((visibility("default"))) int graphscope_graph_destroy(void* graph) {
  std::printf("destroy_hook %p\n", graph);
  return graph == reinterpret_cast<void*>(0x1000) ? 1 : 0;
}

// Mode "refuse": the hook asks for the launch to be refused, as
// --liveness=error does for a graph that reads freed memory.
bool refuse = false;

extern "C" __attribute__((visibility("default"))) int graphscope_graph_launch(void* exec) {
  std::printf("launch_hook %p\n", exec);
  return refuse ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: gs_preload_main CALLER.so local|global norest|rest|each|defer|refuse\n");
    return 2;
  }
  const bool global = std::strcmp(argv[2], "global") == 0;
  void* h = dlopen(argv[1], RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
  if (!h) {
    std::fprintf(stderr, "gs_preload_main: %s\n", dlerror());
    return 3;
  }
  auto calls = reinterpret_cast<void (*)()>(dlsym(h, "gs_preload_calls"));
  if (!calls) return 3;
  rest = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "graphscope_preload_rest"));
  std::printf("preload library %s\n", rest ? "loaded" : "absent");
  each = std::strcmp(argv[3], "each") == 0;
  refuse = std::strcmp(argv[3], "refuse") == 0;
  const bool defer = std::strcmp(argv[3], "defer") == 0;
  if (rest && !defer && !refuse && std::strcmp(argv[3], "norest") != 0) rest(1);
  if (defer)
    if (auto on = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "graphscope_preload_defer"))) on(1);
  seen = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "graphscope_preload_seen"));
  calls();
  if (seen && seen()) std::printf("graphscope_preload_seen says inside after the calls returned\n");
  return 0;
}
