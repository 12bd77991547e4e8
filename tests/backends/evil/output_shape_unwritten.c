/* output_shape says yes and writes no extent.
 * expect: UNWRITTEN
 */
#include "evil.h"

static int output_shape(const poolspec_backend* self, const poolspec_problem* p, int64_t* extents,
                        char* reason, size_t size) {
  (void)self, (void)p, (void)extents, (void)reason, (void)size;
  return 1;
}

EVIL_SHAPE_ENTRY("evil-output-shape-unwritten", output_shape)
