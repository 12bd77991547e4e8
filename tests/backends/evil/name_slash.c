/* A correct backend named "../../tmp/evil-escape": a path, should the name ever become a file
 * name (a per-backend log, say). '/' is not a name character.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "../../tmp/evil-escape", "1.0", "spec",
                                     EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run, NULL};
  return index == 0 ? &b : NULL;
}
