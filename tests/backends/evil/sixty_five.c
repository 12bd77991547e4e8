/* 65 distinct, correct backends (evil-65-00 .. evil-65-64): one more than a library may declare.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static poolspec_backend all[65];
  static char names[65][16];
  if (index >= 65) return NULL;
  if (all[index].name == NULL) {
    snprintf(names[index], sizeof names[index], "evil-65-%02u", (unsigned)index);
    all[index] = (poolspec_backend){POOLSPEC_BACKEND_ABI_VERSION, names[index], "1.0", "spec",
                                    EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run, NULL};
  }
  return &all[index];
}
