/* run writes to stdout in an endless loop and never returns. (To spare the disk when nothing
 * stops it, only the first 16 MiB per process go at full speed; then a line every millisecond.)
 * expect: HANG|CRASH
 * args: --timeout-ms 1000 --filter shapes/1d:regular:max
 */
#include <time.h>

#include "evil.h"

static size_t written;

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  (void)self, (void)p, (void)in, (void)out, (void)indices, (void)message, (void)size;
  static char block[64 * 1024];
  memset(block, 'y', sizeof block);
  block[sizeof block - 1] = '\n';
  for (;;) {
    if (written < (size_t)16 << 20) {
      const ssize_t k = write(1, block, sizeof block);
      written += k > 0 ? (size_t)k : sizeof block;
    } else {
      if (write(1, "y\n", 2) < 0) {
      }
      nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
  }
  return 0; /* not reached */
}

EVIL_ENTRY("evil-stdout-forever", minimal_supports, run)
