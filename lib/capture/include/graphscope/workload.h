/* graphscope workload ABI, version 1.
 *
 * A workload is a shared object that graphscope loads (dlopen) and captures
 * into CUDA graphs. It exports one C function, graphscope_workload_v1, that
 * returns a static description: optional set-up and tear-down run outside
 * capture, and one or more named graphs, each an enqueue function that puts
 * its work on the stream graphscope is capturing.
 *
 *   graphscope capture my_workload.so -- --n 4096
 *
 * runs, in a child process: setup(argc, argv) with the arguments after "--";
 * for each graph, begin capture on a fresh non-blocking stream, enqueue,
 * end capture, instantiate, replay; then teardown. Graphs of one workload
 * share everything setup allocated (buffers, a memory pool), as the forward
 * and backward graphs of make_graphed_callables do.
 *
 * Rules for enqueue: only stream-ordered work on `stream` (and on streams
 * that fork from it through events and join back); nothing that is illegal
 * during capture (cudaMalloc, synchronization). Return 0 on success, or
 * non-zero with a one-line message in err. Set-up and tear-down may do
 * anything.
 *
 * ABI stability: this struct only grows at the end; graphscope checks
 * abi_version and refuses versions it does not know. A future version 2
 * would export graphscope_workload_v2 beside (or instead of) this one.
 */
#ifndef GRAPHSCOPE_WORKLOAD_H
#define GRAPHSCOPE_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GRAPHSCOPE_WORKLOAD_ABI 1

#if defined(__GNUC__)
#define GRAPHSCOPE_EXPORT __attribute__((visibility("default")))
#else
#define GRAPHSCOPE_EXPORT
#endif

/* One named graph of a workload. */
typedef struct graphscope_graph {
  /* Name used by --graph and in the output ("forward"); unique. */
  const char* name;
  /* Enqueues the graph's work on `stream` while graphscope captures it. */
  int (*enqueue)(void* state, cudaStream_t stream, char* err, size_t err_size);
} graphscope_graph;

typedef struct graphscope_workload {
  uint32_t abi_version; /* GRAPHSCOPE_WORKLOAD_ABI */
  const char* name;
  const char* description;
  /* Optional (may be NULL). Runs before any capture with the arguments after
   * "--" (argv[0] is the workload's path). Allocates buffers, warms up, and
   * stores what enqueue needs in *state. Returns 0, or non-zero with a
   * message in err. */
  int (*setup)(int argc, char** argv, void** state, char* err, size_t err_size);
  /* Optional. Frees what setup allocated. */
  void (*teardown)(void* state);
  const graphscope_graph* graphs;
  uint32_t num_graphs;
} graphscope_workload;

/* The one symbol graphscope looks up in a workload. */
GRAPHSCOPE_EXPORT const graphscope_workload* graphscope_workload_v1(void);

#ifdef __cplusplus
}
#endif

#endif /* GRAPHSCOPE_WORKLOAD_H */
