/* poolspec_backend_entry never returns (sleeps in pause(), using no CPU).
 * expect: LOAD-ERROR
 * args: --load-timeout-ms 2000
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  (void)index;
  for (;;) pause();
  return NULL; /* not reached */
}
