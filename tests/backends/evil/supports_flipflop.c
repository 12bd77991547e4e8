/* supports answers as minimal does the first time it sees a problem (by text) and refuses it
 * every later time: the two calls of one problem disagree on whether it is supported.
 * expect: UNSTABLE
 */
#include "evil.h"

static char* seen[8192];
static int seen_count;

static int supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  for (int i = 0; i < seen_count; ++i)
    if (strcmp(seen[i], p->text) == 0) {
      snprintf(reason, size, "changed my mind");
      return 0;
    }
  if (seen_count < 8192) seen[seen_count++] = strdup(p->text);
  return minimal_supports(self, p, reason, size);
}

EVIL_ENTRY("evil-supports-flipflop", supports, minimal_run)
