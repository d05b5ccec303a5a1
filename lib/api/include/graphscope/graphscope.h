/* graphscope's C API: a stable, extern "C" interface over libgraphscope.so.0,
 * for other languages (the Python package cudagraphscope is built on it with
 * ctypes) and for programs that want no C++ ABI.
 *
 * Every document comes back as text, the same bytes the CLI writes: JSON
 * documents (graphscope.graph/1, graphscope.diff/1, graphscope.check/1,
 * graphscope.profile/1), or dump's text summary, DOT or SVG. Options are a
 * JSON object (NULL or "" for the defaults), so new options do not change the
 * ABI; an unknown option is an error (code 2) naming the options there are.
 *
 * Every call returns graphscope's exit code (man graphscope(1)):
 *   0  success: the check passed, the graphs are the same
 *   1  the check failed, the graphs differ (*out is still written)
 *   2  bad arguments or options
 *   3  a bad input file (unreadable, malformed, hostile)
 *   4  CUDA, CUPTI or device error (gs_walk_cuda_graph only)
 * On 0 and 1, *out receives a NUL-terminated UTF-8 text and *error NULL; on
 * any other code *out is NULL and *error receives one line,
 * "graphscope: <what> (<why>)". Free both with gs_free. Either pointer may be
 * NULL when the caller does not want that text. A path "-" is the process's
 * standard input, as in the CLI.
 *
 * The library is thread-safe, installs no signal handler, never exits the
 * process and never writes to standard output or error. It needs no CUDA
 * library except for gs_walk_cuda_graph, which loads graphscope's live module
 * (and with it CUDA's runtime and CUPTI) on first use.
 */
#ifndef GRAPHSCOPE_GRAPHSCOPE_H
#define GRAPHSCOPE_GRAPHSCOPE_H

#include <stdint.h>

#if defined(__GNUC__)
#define GS_API __attribute__((visibility("default")))
#else
#define GS_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this API; gs_api_version() says which one the loaded
 * library implements. A new version only adds functions or options. */
#define GS_API_VERSION 1

/* graphscope's release, e.g. "0.1.0". */
GS_API const char* gs_version(void);
GS_API int gs_api_version(void);

/* Frees a text returned by any call; NULL is fine. */
GS_API void gs_free(char* text);

/* A graph document in any format dump reads (graphscope JSON, PyTorch's
 * get_graph_data() JSON, cudaGraphDebugDotPrint DOT), written as format:
 *   "json"     graphscope.graph/1 (the default when format is NULL)
 *   "summary"  dump's text summary
 *   "dot"      Graphviz DOT            options: {"fold": true}
 *   "svg"      the picture laid out    options: {"fold": true, "svg_max_nodes": 5000}
 */
GS_API int gs_dump(const char* path, const char* format, const char* options_json, char** out, char** error);

/* graphscope.diff/1 of two graph documents; returns 1 when they differ.
 * options: {"ignore_geometry": false, "ignore_sizes": false} */
GS_API int gs_diff(const char* a, const char* b, const char* options_json, char** out, char** error);

/* graphscope.check/1 of a graph against rules; returns 1 when a rule fails.
 * rules_json: the text of a graphscope.rules/1 document.
 * options: {"rules_file": "ci/rules.json", "profile": "p.json"}: rules_file
 * names where the rules were read from (errors name it; a relative
 * "baseline" is relative to its directory, else to the working directory);
 * profile is a graphscope.profile/1 file of this graph (for the timing rules). */
GS_API int gs_check(const char* graph, const char* rules_json, const char* options_json, char** out, char** error);

/* graphscope.profile/1 of a graph and a trace of its replays (a Chrome or
 * PyTorch profiler trace, or graphscope's own), as `profile --graph --trace`.
 * options: {"threshold_us": 5, "tolerance_us": 2, "exec_graph_id": N,
 *           "launches": [N, ...]} */
GS_API int gs_profile(const char* graph, const char* trace, const char* options_json, char** out, char** error);

/* Walks a CUDA graph of the calling process (a cudaGraph_t / CUgraph, such
 * as torch.cuda.CUDAGraph.raw_cuda_graph() of a graph captured with
 * keep_graph=True) and returns its graphscope.graph/1 JSON, the same walk as
 * `graphscope capture`. The handle must be a live graph of this process (the
 * driver is given it as it is: a stale or made-up handle is undefined
 * behaviour, as for any CUDA call). Returns 4 when CUDA or CUPTI cannot be
 * loaded, or the driver refuses the walk. With "exec", the handle of its
 * instantiation (a cudaGraphExec_t, torch's raw_cuda_graph_exec()), the ids
 * are the exec graph's, as PyTorch's get_graph_data() and CUPTI's records
 * give them; without it, the template's.
 * options: {"name": "forward", "exec": 140234...} */
GS_API int gs_walk_cuda_graph(uintptr_t graph, const char* options_json, char** out, char** error);

#ifdef __cplusplus
}
#endif

#endif /* GRAPHSCOPE_GRAPHSCOPE_H */
