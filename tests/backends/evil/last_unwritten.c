/* run computes correctly but leaves the last output element as it found it.
 * expect: UNWRITTEN
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int64_t n = evil_elements(p);
  const int w = evil_width(p);
  unsigned char last[4];
  if (n > 0) memcpy(last, (char*)out + (n - 1) * w, (size_t)w);
  const int r = minimal_run(self, p, in, out, indices, message, size);
  if (n > 0) memcpy((char*)out + (n - 1) * w, last, (size_t)w);
  return r;
}

EVIL_ENTRY("evil-last-unwritten", minimal_supports, run)
