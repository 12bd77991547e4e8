/* A correct backend that declares abi_version 4 (a future version).
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {4u, "evil-abi-version-4", "1.0", "spec", EVIL_ACCUMULATION,
                                     NULL, minimal_supports, minimal_run, NULL, NULL};
  return index == 0 ? &b : NULL;
}
