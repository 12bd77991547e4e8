/* A library constructor writes through a NULL pointer: dlopen itself crashes the worker.
 * expect: LOAD-ERROR
 */
#include "evil.h"

__attribute__((constructor)) static void boom(void) {
  volatile int* volatile nowhere = NULL;
  *nowhere = 1;
}

EVIL_ENTRY("evil-ctor-null-deref", minimal_supports, minimal_run)
