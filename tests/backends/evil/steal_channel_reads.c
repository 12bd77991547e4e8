/* run drains whatever is already readable on stdin and fds 3..63 (a pipelined command is lost),
 * then computes correctly. The certifier must survive and not hang without a verdict.
 * expect: PASS|CRASH|FAIL|HANG
 */
#include <poll.h>

#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  for (int fd = 0; fd < 64; ++fd) {
    if (fd == 1 || fd == 2) continue;
    struct pollfd q = {fd, POLLIN, 0};
    char sink[65536];
    if (poll(&q, 1, 0) == 1 && (q.revents & POLLIN) && read(fd, sink, sizeof sink) < 0) {
    }
  }
  return minimal_run(self, p, in, out, indices, message, size);
}

EVIL_ENTRY("evil-steal-channel-reads", minimal_supports, run)
