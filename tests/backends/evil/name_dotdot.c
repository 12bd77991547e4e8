/* A correct backend named "..": allowed characters, but the parent directory as a file name. The
 * certifier may accept it (and cope) or refuse it, but must not crash or misfile a log.
 * expect: PASS|LOAD-ERROR
 */
#include "evil.h"

EVIL_ENTRY("..", minimal_supports, minimal_run)
