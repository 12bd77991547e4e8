/* run writes 64 pseudo-random bytes to every fd from 3 to 63 (noise on the certifier's channel,
 * whichever it is), then computes correctly. The certifier must survive and not take noise as a verdict.
 * expect: CRASH|FAIL|PASS
 */
#include "evil.h"

static uint64_t state = 0x9e3779b97f4a7c15u;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  for (int fd = 3; fd < 64; ++fd) {
    unsigned char noise[64];
    for (int i = 0; i < 64; ++i) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;
      noise[i] = (unsigned char)state;
    }
    if (write(fd, noise, sizeof noise) < 0) {
    }
  }
  return minimal_run(self, p, in, out, indices, message, size);
}

EVIL_ENTRY("evil-fd-spray", minimal_supports, run)
