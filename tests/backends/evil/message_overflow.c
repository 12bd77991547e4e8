/* run returns 1 after writing 8192 bytes of 'M' into message (or message_size + 1, if more),
 * whatever message_size says.
 * expect: OUT-OF-BOUNDS
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  const size_t n = size < 8192 ? 8192 : size + 1;
  volatile char* m = message;
  for (size_t i = 0; i + 1 < n; ++i) m[i] = 'M';
  m[n - 1] = 0;
  return 1;
}

EVIL_ENTRY("evil-message-overflow", minimal_supports, run)
