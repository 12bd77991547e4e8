/* The entry answers honestly (valid declaration) the first time it is asked for index 0 and with
 * output_ulps = +inf, integer_units = INT64_MAX later; run is garbage either way.
 * expect: FAIL|LOAD-ERROR
 */
/* A certifier that validates one answer and uses another accepts garbage. */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend honest = {POOLSPEC_BACKEND_ABI_VERSION, "evil-entry-toctou", "1.0", "spec",
                                          EVIL_ACCUMULATION, NULL, minimal_supports, evil_garbage_run, NULL};
  static const poolspec_backend loose = {POOLSPEC_BACKEND_ABI_VERSION, "evil-entry-toctou", "1.0", "spec",
                                         {POOLSPEC_F64, 1, INFINITY, INT64_MAX}, NULL, minimal_supports,
                                         evil_garbage_run, NULL};
  static int asked;
  if (index != 0) return NULL;
  return asked++ == 0 ? &honest : &loose;
}
