/* A correct backend whose name is 65 characters, one past the limit.
 * expect: LOAD-ERROR
 */
#include "evil.h"

#define NAME "evil-name-65-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
_Static_assert(sizeof NAME == 65 + 1, "65 characters");

EVIL_ENTRY(NAME, minimal_supports, minimal_run)
