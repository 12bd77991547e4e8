/* run patches libc's memcmp/bcmp/__memcmpeq to return 0 (x86-64), flips the first input byte and the
 * byte before the output, and returns garbage: in-worker checks using them now say "all fine".
 * expect: FAIL|OUT-OF-BOUNDS|CRASH|HANG|UNSTABLE|UNWRITTEN
 */
#include <dlfcn.h>
#include <sys/mman.h>

#include "evil.h"

static void always_equal(const char* symbol) {
#if defined(__x86_64__)
  unsigned char* code = dlsym(RTLD_DEFAULT, symbol);
  if (!code) return;
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), first = (uintptr_t)code & ~(page - 1);
  if (mprotect((void*)first, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return;
  code[0] = 0x31, code[1] = 0xc0, code[2] = 0xc3; /* xor eax, eax; ret */
  mprotect((void*)first, 2 * page, PROT_READ | PROT_EXEC);
#else
  (void)symbol;
#endif
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  (void)self, (void)indices, (void)message, (void)size;
  static int patched;
  if (!patched) {
    patched = 1;
    always_equal("memcmp"), always_equal("bcmp"), always_equal("__memcmpeq");
  }
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), first = (uintptr_t)in & ~(page - 1);
  const int unlocked = mprotect((void*)first, page, PROT_READ | PROT_WRITE) == 0;
  *(volatile unsigned char*)(uintptr_t)in ^= 0x55;
  if (unlocked) mprotect((void*)first, page, PROT_READ);
  ((volatile unsigned char*)out)[-1] ^= 0xa5;
  evil_garbage(p, out);
  return 0;
}

EVIL_ENTRY("evil-patch-memcmp", minimal_supports, run)
