// sample_util.h: the little that graphscope's sample workloads share.
//
//   SAMPLE_CHECK(call)     runs a CUDA runtime call; on failure writes
//                          "call: cudaErrorName: description" into err and
//                          returns 1 from the enclosing function, which must
//                          have `char* err` and `size_t err_size` in scope
//                          (setup and enqueue of the workload ABI do).
//   SAMPLE_CHECK_LAUNCH(k) the same for the kernel launch just made (<<<>>>).
//   sample::fail           printf-style error message into err, returns 1.
//   sample::parse_options  "--name V" / "--name=V" integer options from argv.
//   sample::fill_pattern   fills a device float buffer with non-zero values.
//   sample::setup_with     the ABI's setup for a State built by init() and
//                          freed by teardown() (also after init fails).
#ifndef GRAPHSCOPE_SAMPLE_UTIL_H
#define GRAPHSCOPE_SAMPLE_UTIL_H

#include <cuda_runtime_api.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <graphscope/workload.h>

namespace sample {

// Writes a one-line message into err (when there is room) and returns 1.
__attribute__((format(printf, 3, 4))) inline int fail(char* err, size_t err_size,
                                                      const char* fmt, ...) {
  if (err && err_size) {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
  }
  return 1;
}

inline int cuda_fail(char* err, size_t err_size, const char* what, cudaError_t e) {
  return fail(err, err_size, "%s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

// One integer option: --name V or --name=V, V in [min, max].
struct Option {
  const char* name;  // without the leading "--"
  long* value;       // holds the default on entry
  long min;
  long max;
};

// Parses argv[1..argc) (argv[0] is the workload's path). Every argument must
// be one of opts; returns 0, or 1 with a message in err.
inline int parse_options(int argc, char** argv, const Option* opts, size_t num_opts, char* err,
                         size_t err_size) {
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const Option* opt = nullptr;
    const char* text = nullptr;
    if (std::strncmp(arg, "--", 2) == 0) {
      for (size_t k = 0; k < num_opts && !opt; ++k) {
        size_t len = std::strlen(opts[k].name);
        if (std::strncmp(arg + 2, opts[k].name, len) != 0) continue;
        if (arg[2 + len] == '=') {
          opt = &opts[k];
          text = arg + 3 + len;
        } else if (arg[2 + len] == '\0') {
          opt = &opts[k];
          if (i + 1 >= argc) return fail(err, err_size, "option --%s needs a value", opt->name);
          text = argv[++i];
        }
      }
    }
    if (!opt) {
      char known[256] = "";
      size_t used = 0;
      for (size_t k = 0; k < num_opts && used < sizeof known; ++k) {
        int w = std::snprintf(known + used, sizeof known - used, "%s--%s N", k ? ", " : "",
                              opts[k].name);
        if (w < 0) break;
        used += static_cast<size_t>(w);
      }
      return fail(err, err_size, "unknown argument '%s' (options: %s)", arg,
                  num_opts ? known : "none");
    }
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(text, &end, 0);
    if (errno || end == text || *end != '\0' || v < opt->min || v > opt->max)
      return fail(err, err_size, "option --%s: '%s' is not an integer in [%ld, %ld]", opt->name,
                  text, opt->min, opt->max);
    *opt->value = v;
  }
  return 0;
}

template <size_t N>
inline int parse_options(int argc, char** argv, const Option (&opts)[N], char* err,
                         size_t err_size) {
  return parse_options(argc, argv, opts, N, err, err_size);
}

// Fills n floats at dst with 1.0, 1.25, ... 2.75, repeating (never zero), by
// a synchronous copy from the host. Outside capture only.
inline cudaError_t fill_pattern(float* dst, size_t n, float base = 1.0f) {
  float* host = static_cast<float*>(std::malloc(n * sizeof(float)));
  if (!host) return cudaErrorMemoryAllocation;
  for (size_t i = 0; i < n; ++i) host[i] = base + 0.25f * static_cast<float>(i % 8);
  cudaError_t e = cudaMemcpy(dst, host, n * sizeof(float), cudaMemcpyHostToDevice);
  std::free(host);
  return e;
}

// Blocks of `threads` covering n elements.
// The workload ABI's setup: a new State, filled by Init; on failure Teardown
// frees what Init got to and the message Init wrote in err stands.
template <class State, int (*Init)(State*, int, char**, char*, size_t), void (*Teardown)(void*)>
int setup_with(int argc, char** argv, void** state, char* err, size_t err_size) {
  auto* s = new (std::nothrow) State;
  if (!s) return fail(err, err_size, "out of host memory");
  if (Init(s, argc, argv, err, err_size)) {
    Teardown(s);
    return 1;
  }
  *state = s;
  return 0;
}

inline unsigned blocks_for(long n, unsigned threads = 256) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

}  // namespace sample

#define SAMPLE_CHECK_AS(call, what)                                          \
  do {                                                                       \
    cudaError_t sample_e_ = (call);                                          \
    if (sample_e_ != cudaSuccess) return ::sample::cuda_fail(err, err_size, what, sample_e_); \
  } while (0)
#define SAMPLE_CHECK(call) SAMPLE_CHECK_AS(call, #call)
#define SAMPLE_CHECK_LAUNCH(kernel) SAMPLE_CHECK_AS(cudaGetLastError(), "launch of " #kernel)

#endif  // GRAPHSCOPE_SAMPLE_UTIL_H
