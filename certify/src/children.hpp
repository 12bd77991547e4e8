// The processes whose parent is this one, read from /proc (poolspec and the worker's keeper both
// kill what they adopted: a backend's orphans).
#pragma once

#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace poolspec::certify {

inline std::vector<pid_t> children_of_this_process() {
  std::vector<pid_t> out;
  DIR* proc = opendir("/proc");
  if (!proc) return out;
  while (dirent* e = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atol(e->d_name));
    if (pid <= 0) continue;
    char path[64], line[512];
    std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE* f = std::fopen(path, "r");
    if (!f) continue;
    const bool read = std::fgets(line, sizeof line, f) != nullptr;
    std::fclose(f);
    // "pid (command) state ppid ...": the command may hold spaces and parentheses.
    const char* close_paren = read ? std::strrchr(line, ')') : nullptr;
    int parent = 0;
    if (close_paren && std::sscanf(close_paren + 2, "%*c %d", &parent) == 1 && parent == getpid())
      out.push_back(pid);
  }
  closedir(proc);
  return out;
}

}  // namespace poolspec::certify
