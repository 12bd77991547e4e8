/* A name with a newline and terminal escapes that would forge a report line:
 * "ok\n\x1b[2Jforged@spec | 100%". Names are 1-64 chars of [A-Za-z0-9._+-].
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "ok\n\x1b[2Jforged@spec | 100%", "1.0", "spec",
                                     EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run, NULL};
  return index == 0 ? &b : NULL;
}
