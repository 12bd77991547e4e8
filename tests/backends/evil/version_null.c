/* A correct backend whose version is NULL (free text, but not a string at all). Refused, or
 * shown as empty; never dereferenced.
 * expect: PASS|LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-version-null", NULL, "spec",
                                     EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run, NULL};
  return index == 0 ? &b : NULL;
}
