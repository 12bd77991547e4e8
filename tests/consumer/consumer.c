/* The same cross-check from C (check.h): every element of a max pooling, then one wrong. */
#include <stdio.h>
#include <string.h>

#include "poolspec/reference/check.h"

int main(void) {
  float in[16], out[4];
  for (int i = 0; i < 16; ++i) in[i] = (float)((i * 5) % 7);
  for (int y = 0; y < 2; ++y) /* 2x2 max, stride 2, over a 4x4 image */
    for (int x = 0; x < 2; ++x) {
      float m = in[(2 * y) * 4 + 2 * x];
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx)
          if (in[(2 * y + dy) * 4 + 2 * x + dx] > m) m = in[(2 * y + dy) * 4 + 2 * x + dx];
      out[y * 2 + x] = m;
    }
  poolspec_problem p;
  memset(&p, 0, sizeof p);
  p.op = POOLSPEC_MAX;
  p.dtype = POOLSPEC_F32;
  p.batch = p.channels = 1;
  p.spatial_rank = 2;
  for (int a = 0; a < 2; ++a) {
    poolspec_axis axis = {4, 2, 2, 1, 0, 0, 2};
    p.axes[a] = axis;
  }
  p.layout = POOLSPEC_NCHW;
  poolspec_check_options options = poolspec_check_default_options();
  options.samples = 0; /* every element */
  options.rate = 1;
  poolspec_checker* checker = poolspec_checker_create(&options);
  poolspec_mismatch m;
  if (poolspec_check(checker, &p, in, out, NULL, &m) != 0) {
    printf("consumer_c: the correct output was judged wrong: %s\n", m.message);
    return 1;
  }
  out[3] = 0;
  const int status = poolspec_check(checker, &p, in, out, NULL, &m);
  poolspec_checker_destroy(checker);
  if (status != 1) {
    printf("consumer_c: the wrong element was not caught (status %d)\n", status);
    return 1;
  }
  printf("consumer_c: caught %s\n", m.message);
  return 0;
}
