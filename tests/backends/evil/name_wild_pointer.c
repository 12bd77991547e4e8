/* A correct backend whose name points at address 0x10 (unmapped): reading it faults at load.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, (const char*)(uintptr_t)0x10, "1.0", "spec",
                                     EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run, NULL};
  return index == 0 ? &b : NULL;
}
