/* run calls a function that no library defines: with RTLD_NOW dlopen fails, with lazy binding the
 * dynamic linker kills the worker (exit 127) at the first call.
 * expect: LOAD-ERROR|CRASH
 */
#include "evil.h"

extern int poolspec_evil_defined_nowhere(void);

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  return minimal_run(self, p, in, out, indices, message, size) + poolspec_evil_defined_nowhere();
}

EVIL_ENTRY("evil-undefined-symbol", minimal_supports, run)
