/* run returns 1 after filling exactly message_size bytes of message with 'M': in bounds, but no
 * NUL anywhere.
 * expect: FAIL
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  minimal_run(self, p, in, out, indices, message, size);
  memset(message, 'M', size);
  return 1;
}

EVIL_ENTRY("evil-message-unterminated", minimal_supports, run)
