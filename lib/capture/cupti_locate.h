// Where CUPTI is, for the objects that need it (the live module, the
// injection library). Neither carries a path to the CUDA toolkit: the
// dynamic loader finds CUPTI through the toolkit's /etc/ld.so.conf.d entry
// or LD_LIBRARY_PATH. Where it does not, CUPTI is loaded by its absolute
// path in the toolkit before them, so that their NEEDED entry is met by the
// library already loaded. Free of CUDA headers.
#pragma once

#include <string>

namespace graphscope::capture {

/// "" when the dynamic loader finds CUPTI by its soname (or this build has no
/// CUDA); else CUPTI's absolute path in the toolkit: CUDA_HOME, CUDA_PATH,
/// /usr/local/cuda (lib64, extras/CUPTI/lib64, targets/<arch>-linux/lib),
/// then where this build found it. Throws Error (ExitCode::device) naming
/// the soname and where it looked when it is nowhere.
std::string locate_cupti();

}  // namespace graphscope::capture
