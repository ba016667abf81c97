// Writing the report at MPI_Finalize: every rank's statistics go to rank 0 on
// the private world communicator, which merges them and writes
// <PAPSHIM_REPORT>.txt, <PAPSHIM_REPORT>.json and the PAPSHIM_TIMELINE trace.
#pragma once

#include <string>

#include "shim/runtime.h"

namespace papshim {

// Collective on rt.world_priv (every rank calls it).
void write_report(Runtime& rt);

// Writes `path` whole or not at all: the text goes to a new file beside it,
// which then replaces `path` (rename), so a reader, or another job writing
// the same path, never sees a mixture.  False (with a warning on stderr)
// on failure.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();  // abandons the file unless commit() succeeded
  bool write(const std::string& text);
  bool commit();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

 private:
  std::string path_, tmp_;
  int fd_ = -1;
  bool ok_ = false;
};

bool write_file_atomically(const std::string& path, const std::string& text);

}  // namespace papshim
