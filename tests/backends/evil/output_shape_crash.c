/* output_shape dereferences NULL: a crash in the shape question, which the worker survives.
 * expect: CRASH
 */
#include "evil.h"

static int output_shape(const poolspec_backend* self, const poolspec_problem* p, int64_t* extents,
                        char* reason, size_t size) {
  (void)self, (void)p, (void)reason, (void)size;
  volatile int64_t* nowhere = NULL;
  extents[0] = *nowhere;
  return 1;
}

EVIL_SHAPE_ENTRY("evil-output-shape-crash", output_shape)
