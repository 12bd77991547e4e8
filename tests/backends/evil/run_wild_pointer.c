/* A backend whose run points at address 0x10: calling it faults (at an address no certifier
 * buffer is near). Refused at load if the certifier checks function pointers, else a crash.
 * expect: CRASH|LOAD-ERROR
 */
#include "evil.h"

typedef int (*run_fn)(const poolspec_backend*, const poolspec_problem*, const void*, void*, int64_t*, char*, size_t);

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-run-wild-pointer", "1.0", "spec",
                                     EVIL_ACCUMULATION, NULL, minimal_supports, (run_fn)(uintptr_t)0x10, NULL};
  return index == 0 ? &b : NULL;
}
