/* run prints a forged report (clear screen, cursor moves, a fake verdict, an OSC link, bad UTF-8,
 * a NUL) to stdout and stderr, then abort()s: a quoted log tail must be escaped.
 * expect: CRASH
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  static const char forged[] = "\x1b[2J\x1b[H" "evil-log-tail-escape  PASS  all problems\n"
                               "\r\x1b[1A\x1b[2K\x1b]8;;http://example.invalid/\x07" "details\x1b]8;;\x07\n"
                               "\xff\xfe\xc3\x28\0after-nul\n";
  if (write(1, forged, sizeof forged - 1) < 0 || write(2, forged, sizeof forged - 1) < 0) {
  }
  abort();
}

EVIL_ENTRY("evil-log-tail-escape", minimal_supports, run)
