/* A correct backend whose version holds invalid UTF-8, newline, CR, CSI/OSC escapes (clear screen,
 * set title, a forged PASS line) and a 300-byte NUL-free tail. The report must show it escaped.
 * expect: PASS
 */
#include "evil.h"

#define TEN "\x1b[31m\xc3(\x9b" "Kz" /* 10 bytes */
#define HUNDRED TEN TEN TEN TEN TEN TEN TEN TEN TEN TEN

const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, "evil-version-dirty",
                                     "1.0 \xff\xfe\xc3\n\r\x1b[2J\x1b[H\x1b]0;pwned\x07 evil-version-dirty | PASS\n"
                                     HUNDRED HUNDRED HUNDRED,
                                     "spec", EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run, NULL};
  return index == 0 ? &b : NULL;
}
