/* A correct backend that declares the ABI version after this poolspec's (a future version).
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION + 1, "evil-abi-version-future", "1.0", "spec",
                                     EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run, NULL, NULL};
  return index == 0 ? &b : NULL;
}
