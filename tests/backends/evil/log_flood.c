/* A correct backend that writes 100 KB to stdout and 100 KB to stderr on every call.
 * expect: PASS
 */
#include "evil.h"

static void flood(int fd) {
  static char text[100 * 1024];
  if (!text[0])
    for (size_t i = 0; i < sizeof text; ++i) text[i] = i % 80 == 79 ? '\n' : (char)('a' + i % 26);
  for (size_t done = 0; done < sizeof text;) {
    const ssize_t k = write(fd, text + done, sizeof text - done);
    if (k <= 0) return;
    done += (size_t)k;
  }
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  flood(1), flood(2);
  return minimal_run(self, p, in, out, indices, message, size);
}

EVIL_ENTRY("evil-log-flood", minimal_supports, run)
