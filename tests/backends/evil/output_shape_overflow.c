/* output_shape writes one extent more than the problem has axes: past the end of its buffer.
 * expect: OUT-OF-BOUNDS
 */
#include "evil.h"

static int output_shape(const poolspec_backend* self, const poolspec_problem* p, int64_t* extents,
                        char* reason, size_t size) {
  (void)self, (void)reason, (void)size;
  for (int a = 0; a <= p->spatial_rank; ++a) extents[a] = 1;
  return 1;
}

EVIL_SHAPE_ENTRY("evil-output-shape-overflow", output_shape)
