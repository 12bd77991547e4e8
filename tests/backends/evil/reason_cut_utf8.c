/* supports refuses every problem with a reason of "\x1b[31m" and then "é" repeated, cut by
 * snprintf at reason_size so that the last byte is a lone UTF-8 lead byte (0xC3).
 * expect: UNSUPPORTED
 */
#include "evil.h"

static char accents[8192];

static int supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  (void)self, (void)p;
  if (!accents[0])
    for (size_t i = 0; i + 2 < sizeof accents; i += 2) accents[i] = (char)0xc3, accents[i + 1] = (char)0xa9;
  /* "\x1b[31m" is 5 bytes; one more makes the room left for the 2-byte "é"s odd */
  const char* pad = size > 6 && (size - 1 - 5) % 2 == 0 ? "x" : "";
  snprintf(reason, size, "\x1b[31m%s%s", pad, accents);
  return 0;
}

EVIL_ENTRY("evil-reason-cut-utf8", supports, minimal_run)
