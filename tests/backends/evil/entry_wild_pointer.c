/* The entry returns address 0x10 (unmapped) for index 0: reading the struct faults at load.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  return index == 0 ? (const poolspec_backend*)(uintptr_t)0x10 : NULL;
}
