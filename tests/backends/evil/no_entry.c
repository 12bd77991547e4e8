/* A shared library without the poolspec_backend_entry symbol (it exports minimal_backend_entry).
 * expect: LOAD-ERROR
 */
#include "evil.h"
