/* graph_summary_c FILE: dump's summary of a graph document through
 * graphscope's C API. */
#include <graphscope/graphscope.h>

#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: graph_summary_c FILE\n");
    return 2;
  }
  if (gs_api_version() < GS_API_VERSION) {
    fprintf(stderr, "graph_summary_c: libgraphscope %s is older than this program\n", gs_version());
    return 2;
  }
  char* out = NULL;
  char* error = NULL;
  int code = gs_dump(argv[1], "summary", NULL, &out, &error);
  if (out) fputs(out, stdout);
  if (error) fprintf(stderr, "%s\n", error);
  gs_free(out);
  gs_free(error);
  return code;
}
