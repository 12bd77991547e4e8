/* A library constructor busy-loops forever: dlopen never returns.
 * expect: LOAD-ERROR
 * args: --load-timeout-ms 2000
 */
#include "evil.h"

__attribute__((constructor)) static void forever(void) {
  for (volatile unsigned long spin = 0;; ++spin) {
  }
}

EVIL_ENTRY("evil-ctor-loop", minimal_supports, minimal_run)
