/* run reads the element just past the input's end and adds it to the first output element: if
 * that read does not fault, the result is wrong too.
 * expect: OUT-OF-BOUNDS
 */
#include "evil.h"

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const int r = minimal_run(self, p, in, out, indices, message, size);
  const int64_t n = evil_input_elements(p);
  double past;
  if (p->dtype == POOLSPEC_F32) past = ((const volatile float*)in)[n];
  else past = ((const volatile signed char*)in)[n];
  if (evil_elements(p) > 0) store(p, out, 0, load(p, out, 0) + past);
  return r;
}

EVIL_ENTRY("evil-read-past-input", minimal_supports, run)
