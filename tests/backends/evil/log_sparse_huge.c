/* On its first call, if stdout is a regular file under /tmp/, run extends it with a 1 GiB hole
 * (ftruncate: no disk used) and writes a line after it; then computes correctly.
 * expect: PASS|CRASH
 */
/* A certifier that reads the whole log back must not choke; one that caps the log size may kill
 * the worker (SIGXFSZ). */
#include <sys/stat.h>

#include "evil.h"

static int grown;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  if (!grown) {
    grown = 1;
    char path[512] = {0};
    struct stat st;
    if (readlink("/proc/self/fd/1", path, sizeof path - 1) > 0 && strncmp(path, "/tmp/", 5) == 0 &&
        fstat(1, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(1, st.st_size + ((off_t)1 << 30)) == 0) {
      lseek(1, 0, SEEK_END);
      if (write(1, "after the hole\n", 15) < 0) {
      }
    }
  }
  return minimal_run(self, p, in, out, indices, message, size);
}

EVIL_ENTRY("evil-log-sparse-huge", minimal_supports, run)
