// The files of an `--exec` run directory (RUN_DIR: index.json, then a
// directory per process with the graphs, profiles and traces its index
// names). The names come from files the application's processes wrote, so
// they are untrusted: this is the one place that turns them into paths, for
// every command that reads a run directory (`report RUN_DIR`, `ranks`, the
// cross-rank line of `--exec`). Each name, followed through symlinks, must
// end inside the run directory (itself possibly reached through a symlink)
// and be a regular file; nothing is opened in a way that can block (a FIFO
// is refused by its type, never opened for a read that waits for a writer).
// No CUDA header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../formats/attach_json.h"
#include "../model/trace.h"

namespace graphscope {

/// Which name of a graph entry of the index: its "file", "profile" or "trace".
enum class RunName { file, profile, trace };

/// A file a run index names, resolved and checked.
struct RunFile {
  std::string path;   // RUN_DIR/DIR/NAME as the user spelled RUN_DIR: for messages and origins
  std::string real;   // its real path, inside the run directory's: one file, one key
  std::string entry;  // the index's key that named it: "processes[0].graphs[1].trace"
  uint64_t device = 0, inode = 0;  // the file checked, checked again when it is opened
};

/// A run directory and the one resolver of the names its index holds.
class RunDirectory {
 public:
  /// dir: the run directory as the user named it (a symlink to one is fine).
  /// Throws Error(bad_input) "DIR (not a directory; ...)" otherwise.
  explicit RunDirectory(std::string dir);

  const std::string& dir() const { return dir_; }
  /// RUN_DIR/index.json, as messages name it.
  const std::string& index_path() const { return index_path_; }

  /// Reads RUN_DIR/index.json (graphscope.attach-run/1): a regular file
  /// inside the run directory, read without blocking. Throws
  /// Error(bad_input) naming it when it is of another type or malformed.
  /// Without one (a job killed before graphscope's launcher wrote it), the
  /// processes' own indexes (rank-R/, rank-R.pid-PID/, pid-PID/index.json,
  /// resolved as any file of the run) make the run, `recovered`, with a note
  /// per index that could not be read and per process that did not finish;
  /// without any, Error(bad_input) "not an --exec output directory".
  AttachRun read_index() const;

  /// The file processes[process].graphs[graph] names under `name`, resolved
  /// through processes[process].dir. A name is a relative path (it may
  /// hold subdirectories); it must not be empty, absolute or hold a NUL,
  /// and after symlinks it must resolve inside the run directory (the
  /// process's dir to a directory, the file to a regular file). Throws
  /// Error(bad_input) with RUN_DIR/index.json as the subject and the entry
  /// as the reason: `processes[0].graphs[0].file: "../../x.json" resolves
  /// outside the run directory`, `... "graph-2.json" is a FIFO, not a
  /// regular file`, `processes[1].dir: ".." resolves outside the run
  /// directory`, `... "graph-2.json" does not exist (RUN_DIR/rank-1/graph-2.json)`.
  RunFile resolve(const AttachRun& run, size_t process, size_t graph, RunName name) const;
  /// The same for a file processes[process]'s index names itself (its
  /// torch_log: key "torch_log").
  RunFile resolve_in_process(const AttachRun& run, size_t process, const std::string& name,
                             const std::string& key) const;

  /// Reads a resolved file whole: opened without blocking, checked to be
  /// still a regular file and the one resolved, then read. Throws
  /// Error(bad_input) naming f.path otherwise, or when it cannot be read or
  /// is larger than kMaxInputBytes.
  std::string read(const RunFile& f) const;

 private:
  AttachRun recover_index() const;
  // name, the value of the index's key `entry`, under the directory `base`
  // (real, inside the run directory); `directory`: what it must resolve to.
  RunFile resolve_name(const std::string& base, const std::string& shown_base, const std::string& name,
                       const std::string& entry, bool directory) const;
  [[noreturn]] void refuse(const std::string& entry, const std::string& name, const std::string& why) const;

  std::string dir_, index_path_;
  std::string real_;  // the run directory's real path
  mutable std::map<std::string, RunFile> dirs_;  // process directories resolved, by the index's name
};

/// The traces one command reads from a run directory, each read and parsed
/// once however many entries name it (keyed by real path, so two names of
/// one file share it too); a file that failed fails again, without being
/// read again. For one thread.
class RunTraces {
 public:
  explicit RunTraces(const RunDirectory& dir) : dir_(dir) {}
  /// The trace f names, parsed (messages name f.path of its first reading).
  /// Throws as RunDirectory::read and read_chrome_trace do.
  std::shared_ptr<const Trace> get(const RunFile& f);
  /// Reads and parses those of files not read yet, each real path once, on
  /// the machine's cores (a run of thousands of ranks names thousands of
  /// traces); get() then hands out each trace, or rethrows its error.
  void prefetch(const std::vector<RunFile>& files);
  /// How many files were read and parsed so far: one per real path.
  size_t files_read() const { return cache_.size(); }

 private:
  struct Entry {
    std::shared_ptr<const Trace> trace;
    std::exception_ptr error;
  };
  // Reads and parses one file (thread-safe: no member changes).
  Entry load(const RunFile& f) const;
  const RunDirectory& dir_;
  std::map<std::string, Entry> cache_;
};

}  // namespace graphscope
