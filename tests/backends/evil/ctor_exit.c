/* A library constructor calls exit(0): dlopen never returns, the worker exits "successfully".
 * expect: LOAD-ERROR
 */
#include "evil.h"

__attribute__((constructor)) static void leave(void) { exit(0); }

EVIL_ENTRY("evil-ctor-exit", minimal_supports, minimal_run)
