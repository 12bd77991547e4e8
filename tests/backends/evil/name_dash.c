/* A correct backend named "--timeout-ms": allowed characters, but an option if the name is ever
 * put on a command line (re-exec'ing a worker for it, say). Accepted and run, or refused.
 * expect: PASS|LOAD-ERROR
 */
#include "evil.h"

EVIL_ENTRY("--timeout-ms", minimal_supports, minimal_run)
