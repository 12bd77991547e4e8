/* output_shape returns 2: neither an answer (1) nor a refusal (0).
 * expect: FAIL
 */
#include "evil.h"

static int output_shape(const poolspec_backend* self, const poolspec_problem* p, int64_t* extents,
                        char* reason, size_t size) {
  (void)self, (void)reason, (void)size;
  for (int a = 0; a < p->spatial_rank; ++a) extents[a] = 1;
  return 2;
}

EVIL_SHAPE_ENTRY("evil-output-shape-returns-2", output_shape)
