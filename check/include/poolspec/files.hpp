// Output files a reader can trust: written whole or not at all, and never at the cost of a file
// that was there. Each file is written to a temporary of a unique name (mkstemp) in its target's
// folder and renamed into place once written; a failure removes the temporaries and leaves every
// existing file as it was. While temporaries exist, SIGINT, SIGTERM and SIGHUP remove them before
// the signal takes its usual effect (a handler the program installed itself is left alone).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "poolspec/result.hpp"

namespace poolspec {

// A symbolic link is followed (its target is replaced, the link kept); an existing character
// device (/dev/null) is written directly; a FIFO, socket or block device is refused.
// Writes `bytes` to `path` as described above. "-" writes to standard output.
Status write_file_atomically(const std::string& path, std::string_view bytes);

// Writes a set of files: all of them, or (on any failure) none, each existing file left as it
// was. Refused before anything is written: what check_output_paths refuses.
Status write_files_atomically(const std::vector<std::pair<std::string, std::string_view>>& files);

// Whether two paths name one file or folder, however spelt (".", "..", symbolic links, hard
// links). "-" (standard input or output) is no file.
bool same_file(const std::string& a, const std::string& b);

// Whether these paths can be a set of outputs: none empty, a folder, a FIFO, socket or block
// device, no two naming one file (however spelt, through links), "-" (standard output) at most
// once. For a command to ask before its work.
Status check_output_paths(const std::vector<std::string>& paths);

}  // namespace poolspec
