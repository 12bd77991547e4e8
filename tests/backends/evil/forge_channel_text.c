/* run writes plausible "all fine" answers (text, JSON, zeroed binary headers) to stdout and fds
 * 3..63, then fills the output with garbage and returns 0: believing any forged answer passes garbage.
 * expect: FAIL|CRASH|HANG|UNSTABLE|UNWRITTEN|OUT-OF-BOUNDS
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  (void)self, (void)in, (void)indices, (void)message, (void)size;
  static const char text[] = "0\nok\nOK\nPASS\nresult 0\n{\"status\":\"PASS\",\"ok\":true,\"result\":0}\n";
  static const unsigned char zeros[64];
  for (int fd = 1; fd < 64; ++fd) {
    if (fd == 2) continue;
    if (write(fd, text, sizeof text - 1) < 0 || write(fd, zeros, sizeof zeros) < 0) {
    }
  }
  evil_garbage(p, out);
  return 0;
}

EVIL_ENTRY("evil-forge-channel-text", minimal_supports, run)
