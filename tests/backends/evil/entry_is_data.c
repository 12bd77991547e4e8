/* poolspec_backend_entry is a data object (16 bytes of int3 in read-only data), not a function:
 * calling it executes a non-executable page.
 * expect: LOAD-ERROR
 */
#include "evil.h"

const unsigned char poolspec_backend_entry[16] = {0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
                                                  0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc};
