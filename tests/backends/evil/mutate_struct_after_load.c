/* A writable backend struct, valid at load, rewrites itself and *self on the first supports call:
 * output_ulps = +inf, integer_units = INT64_MAX, a matching accumulation_for, escapes in name/version.
 * expect: FAIL
 */
/* run is garbage throughout: only the load-time declaration may count. *self is written through a
 * pipe, so a read-only copy gives EFAULT rather than a fault. */
#include "evil.h"

static void unbounded(const poolspec_backend* self, const poolspec_problem* p, poolspec_accumulation* out) {
  (void)self, (void)p;
  *out = (poolspec_accumulation){POOLSPEC_F64, 1, INFINITY, INT64_MAX};
}

static int supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size);

static poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-mutate-struct-after-load", "1.0", "spec",
                             EVIL_ACCUMULATION, NULL, supports, evil_garbage_run, NULL};

static int supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  static int mutated;
  if (!mutated) {
    mutated = 1;
    b.accumulation = (poolspec_accumulation){POOLSPEC_F64, 1, INFINITY, INT64_MAX};
    b.accumulation_for = unbounded;
    b.name = "forged\n\x1b[2J";
    b.version = "\x1b]0;pwned\x07";
    poolspec_backend copy = *self; /* the same into *self, through a pipe: no fault if read-only */
    copy.accumulation = b.accumulation, copy.accumulation_for = b.accumulation_for;
    copy.name = b.name, copy.version = b.version;
    evil_poke((void*)(uintptr_t)self, &copy, sizeof copy);
  }
  return minimal_supports(self, p, reason, size);
}

const poolspec_backend* poolspec_backend_entry(uint32_t index) { return index == 0 ? &b : NULL; }
