/* A correct backend that declares abi_version 2 (a future major version).
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {2u, "evil-abi-version-2", "1.0", "spec",
                                     EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run, NULL};
  return index == 0 ? &b : NULL;
}
