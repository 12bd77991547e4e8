/* A correct backend whose name is exactly 64 characters, the longest allowed: not refused.
 * expect: PASS
 */
#include "evil.h"

#define NAME "evil-name-64-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
_Static_assert(sizeof NAME == 64 + 1, "64 characters");

EVIL_ENTRY(NAME, minimal_supports, minimal_run)
