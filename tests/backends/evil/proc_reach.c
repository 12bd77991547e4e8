/* run looks through /proc for a process it could harm as its owner may: poolspec, whose
 * oom_score_adj it opens for writing (and does not write). In its PID namespace (its parent, the
 * keeper, is pid 1 there) the worker has a /proc of that namespace alone, where poolspec is not
 * listed, so every run passes; with the host's /proc a worker of poolspec's user opens it and the
 * run fails naming it. Without a PID namespace the host's /proc is documented to stay: not probed.
 * expect: PASS
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "evil.h"

/* The first process named poolspec whose oom_score_adj opens for writing, or 0. */
static long reachable_poolspec(void) {
  DIR* proc = opendir("/proc");
  if (!proc) return 0;
  long found = 0;
  for (struct dirent* e; !found && (e = readdir(proc)) != NULL;) {
    char* end = NULL;
    const long pid = strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == (long)getpid()) continue;
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    FILE* f = fopen(path, "r");
    if (!f) continue;
    const int got = fgets(comm, sizeof comm, f) != NULL;
    fclose(f);
    if (!got || strcmp(comm, "poolspec\n") != 0) continue;
    snprintf(path, sizeof path, "/proc/%ld/oom_score_adj", pid);
    const int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      close(fd);
      found = pid;
    }
  }
  closedir(proc);
  return found;
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const long pid = getppid() == 1 ? reachable_poolspec() : 0;
  if (pid) {
    snprintf(message, size, "/proc/%ld/oom_score_adj opened for writing: a backend could harm process %ld", pid, pid);
    return 1;
  }
  return minimal_run(self, p, in, out, indices, message, size);
}

EVIL_ENTRY("evil-proc-reach", minimal_supports, run)
