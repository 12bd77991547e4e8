/* run tries every way it knows to signal another process -- its parent (the keeper, or poolspec once
 * the keeper dies), kill(-1), init, an fd's owner (F_SETOWN), I/O signals (O_ASYNC, FIOASYNC), a
 * pidfd, tgkill, rt_sigqueueinfo, and another process's limits (prlimit) -- each harmlessly (signal
 * 0, which only asks whether the signal would be allowed; a pipe of its own; a limit read, not
 * written); and what must still work: a real signal to itself, O_NONBLOCK, its own limits and
 * priority. A probe that gets through, or a lost signal to itself, fails the
 * run with the probe's name; so the expected PASS means the worker confines signals both ways.
 * expect: PASS
 * also: --no-pid-namespace
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "evil.h"

static volatile sig_atomic_t arrived;

static void on_usr1(int sig) { (void)sig, arrived = 1; }

/* The first probe that reached another process, or NULL. */
static const char* reached_another(void) {
  const pid_t parent = getppid();
  if (parent > 0 && kill(parent, 0) == 0) return "kill(getppid(), 0)";
  /* The kernel reads a pid_t and a command as 32 bits: upper bits set must not slip past a filter. */
  const long high = 1L << 32;
  if (parent > 0 && syscall(SYS_kill, high | parent, 0) == 0) return "kill(2^32 | getppid(), 0)";
  if (kill(-1, 0) == 0) return "kill(-1, 0)";
  if (getpid() != 1 && kill(1, 0) == 0) return "kill(1, 0)";
  if (parent > 0 && syscall(SYS_tgkill, parent, parent, 0) == 0) return "tgkill(getppid(), getppid(), 0)";
  siginfo_t info;
  memset(&info, 0, sizeof info);
  info.si_code = SI_QUEUE;
  info.si_pid = getpid();
  if (parent > 0 && syscall(SYS_rt_sigqueueinfo, parent, 0, &info) == 0) return "rt_sigqueueinfo(getppid(), 0)";
  int fds[2];
  if (pipe(fds) == 0) {
    const int owned = parent > 0 && fcntl(fds[0], F_SETOWN, parent) == 0;
    const int owned_high = parent > 0 && syscall(SYS_fcntl, fds[0], high | F_SETOWN, parent) == 0;
    /* O_ASYNC on a terminal makes its foreground process group the owner, no F_SETOWN needed. */
    const int async = fcntl(fds[0], F_SETFL, O_ASYNC | O_NONBLOCK) == 0;
    int on = 1;
    const int async_ioctl = ioctl(fds[1], FIOASYNC, &on) == 0;
    close(fds[0]), close(fds[1]);
    if (owned) return "fcntl(F_SETOWN, getppid())";
    if (owned_high) return "fcntl(2^32 | F_SETOWN, getppid())";
    if (async) return "fcntl(F_SETFL, O_ASYNC)";
    if (async_ioctl) return "ioctl(FIOASYNC)";
  }
  /* Reading another process's limit (a write could zero its RLIMIT_FSIZE or RLIMIT_CPU). */
  struct rlimit limit;
  if (parent > 0 && prlimit(parent, RLIMIT_NOFILE, NULL, &limit) == 0) return "prlimit(getppid())";
  const long pidfd = parent > 0 ? syscall(SYS_pidfd_open, parent, 0) : -1;
  if (pidfd >= 0) {
    const long sent = syscall(SYS_pidfd_send_signal, (int)pidfd, 0, NULL, 0);
    close((int)pidfd);
    if (sent == 0) return "pidfd_send_signal(pidfd of getppid(), 0)";
  }
  return NULL;
}

static int run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out, int64_t* indices,
               char* message, size_t size) {
  const char* reached = reached_another();
  if (reached) {
    snprintf(message, size, "%s got through: a backend could signal a process not its own", reached);
    return 1;
  }
  struct sigaction mine, old;
  memset(&mine, 0, sizeof mine);
  mine.sa_handler = on_usr1;
  sigemptyset(&mine.sa_mask);
  sigaction(SIGUSR1, &mine, &old);
  arrived = 0;
  raise(SIGUSR1);
  sigaction(SIGUSR1, &old, NULL);
  if (!arrived) {
    snprintf(message, size, "raise(SIGUSR1) did not arrive: a backend could not signal itself");
    return 1;
  }
  /* What the filter must leave alone: a file's other flags, its own limits and priority. */
  int fds[2];
  struct rlimit limit;
  const int flags = pipe(fds) == 0 && fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0;
  if (flags) close(fds[0]), close(fds[1]);
  if (!flags || getrlimit(RLIMIT_NOFILE, &limit) != 0 || setpriority(PRIO_PROCESS, 0, getpriority(PRIO_PROCESS, 0)) != 0) {
    snprintf(message, size, "F_SETFL O_NONBLOCK, getrlimit or setpriority on itself was refused");
    return 1;
  }
  return minimal_run(self, p, in, out, indices, message, size);
}

EVIL_ENTRY("evil-signal-reach", minimal_supports, run)
