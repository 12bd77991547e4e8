/* The entry returns a distinct, correct backend ("evil-many-<index>") for every index, never
 * NULL: the certifier must stop asking after 64 and refuse the library.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend fallback = {POOLSPEC_BACKEND_ABI_VERSION, "evil-many", "1.0", "spec",
                                            EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run, NULL};
  poolspec_backend* b = malloc(sizeof *b + 32);
  if (!b) return &fallback;
  char* name = (char*)(b + 1);
  snprintf(name, 32, "evil-many-%u", (unsigned)index);
  *b = fallback;
  b->name = name;
  return b;
}
