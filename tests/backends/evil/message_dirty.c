/* run writes a correct output but returns 1 with a message of invalid UTF-8, control characters,
 * CSI/OSC escapes and a forged report line.
 * expect: FAIL
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  snprintf(message, size, "bad \xff\xfe\xc3\x28 \x01\x02\b\b\x7f\r\n\x1b[2J\x1b[H\x1b]0;pwned\x07"
                          "evil-message-dirty | PASS\n\x1b[8m hidden");
  return 1;
}

EVIL_ENTRY("evil-message-dirty", minimal_supports, run)
