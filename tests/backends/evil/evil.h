/* Shared by the evil backends (the .c files in this folder; not a backend itself): the correct
 * minimal backend (minimal_backend.c) under another entry name, plus a few helpers. Each evil
 * backend is minimal_supports/minimal_run with one attack added. */
#ifndef POOLSPEC_EVIL_H
#define POOLSPEC_EVIL_H

#define poolspec_backend_entry minimal_backend_entry
#include "minimal_backend.c"
#undef poolspec_backend_entry

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* Keeps -Wunused-function quiet in the files that use only one of the two. */
static void evil_keep(void) __attribute__((unused));
static void evil_keep(void) { (void)minimal_supports, (void)minimal_run; }

static inline int64_t evil_elements(const poolspec_problem* p) { /* output elements */
  int64_t n = p->batch * p->channels;
  for (int a = 0; a < p->spatial_rank; ++a) n *= p->axes[a].output;
  return n;
}

static inline int64_t evil_input_elements(const poolspec_problem* p) {
  int64_t n = p->batch * p->channels;
  for (int a = 0; a < p->spatial_rank; ++a) n *= p->axes[a].extent;
  return n;
}

static inline int evil_width(const poolspec_problem* p) { return p->dtype == POOLSPEC_F32 ? 4 : 1; }

/* Wrong values in every output element (never NaN, so a NaN-expecting element is wrong too). */
static inline void evil_garbage(const poolspec_problem* p, void* out) {
  for (int64_t i = 0; i < evil_elements(p); ++i)
    store(p, out, i, p->dtype == POOLSPEC_F32 ? 12345.5 + (double)i : (double)(i % 7 * 17 - 50));
}

/* Makes output element i clearly wrong (far outside any tolerance, never NaN). */
static inline void evil_spoil(const poolspec_problem* p, void* out, int64_t i) {
  if (p->dtype == POOLSPEC_F32) {
    const float v = ((float*)out)[i];
    ((float*)out)[i] = !isfinite(v) ? 7.0f : v == 0 ? 1.0f : v * 1.5f;
  } else {
    ((signed char*)out)[i] ^= 0x40;
  }
}

static int evil_garbage_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                            int64_t* indices, char* message, size_t size) __attribute__((unused));
static int evil_garbage_run(const poolspec_backend* self, const poolspec_problem* p, const void* in, void* out,
                            int64_t* indices, char* message, size_t size) {
  (void)self, (void)in, (void)indices, (void)message, (void)size;
  evil_garbage(p, out);
  return 0;
}

/* Copies n bytes to dst through a pipe, so an unmapped or read-only dst gives EFAULT instead of
 * a fault. Returns 0 when every byte landed. */
static inline int evil_poke(void* dst, const void* src, size_t n) {
  int fd[2], ok = 0;
  if (pipe(fd) != 0) return -1;
  for (size_t done = 0; done < n && ok == 0;) {
    const size_t k = n - done < 4096 ? n - done : 4096;
    if (write(fd[1], (const char*)src + done, k) != (ssize_t)k) ok = -1;
    else if (read(fd[0], (char*)dst + done, k) != (ssize_t)k) ok = -1;
    done += k;
  }
  close(fd[0]), close(fd[1]);
  return ok;
}

/* One mapping of /proc/self/maps. */
typedef struct evil_map { uintptr_t start, end; char perms[5]; char path[256]; } evil_map;

/* Up to `most` mappings of this process, read in one go; -1 without /proc. */
static inline int evil_maps(evil_map* maps, int most) {
  FILE* f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  char line[512];
  int n = 0;
  while (n < most && fgets(line, sizeof line, f)) {
    evil_map* m = &maps[n];
    unsigned long s, e;
    int used = 0;
    m->path[0] = 0;
    if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &s, &e, m->perms, &used) < 3) continue;
    if (used > 0) sscanf(line + used, "%255[^\n]", m->path);
    m->start = s, m->end = e, ++n;
  }
  fclose(f);
  return n;
}

/* Whether writing into a shared mapping stays off real files outside /tmp (the tests run as
 * root): anonymous, memfd, SysV or /dev/shm and /tmp mappings only. */
static inline int evil_shared_is_memory(const evil_map* m) {
  static const char* const memory[] = {"/memfd:", "/dev/zero", "/SYSV", "/dev/shm/", "/tmp/", "[anon"};
  if (m->path[0] == 0) return 1;
  for (size_t i = 0; i < sizeof memory / sizeof memory[0]; ++i)
    if (strncmp(m->path, memory[i], strlen(memory[i])) == 0) return 1;
  return 0;
}

/* The default declaration: double sums, one division, one rounding into f32 (as minimal's). */
#define EVIL_ACCUMULATION {POOLSPEC_F64, 1, 1.0, 0}

/* Whether `p` is one of the first `limit` distinct problems run (their texts kept in seen[]). */
static inline int evil_first_problems(const poolspec_problem* p, char** seen, int* count, int limit) {
  for (int i = 0; i < *count; ++i)
    if (strcmp(seen[i], p->text) == 0) return 1;
  return *count < limit && (seen[(*count)++] = strdup(p->text)) != NULL;
}

/* Mallocs and touches 1 GiB in 64 MiB blocks, then frees it: 1 if all of it was had, else 0 with
 * the message "out of memory after N MiB". */
static inline int evil_touch_gib(char* message, size_t size) {
  void* blocks[16];
  int got = 0;
  for (; got < 16 && (blocks[got] = malloc((size_t)64 << 20)) != NULL; ++got)
    memset(blocks[got], got + 1, (size_t)64 << 20);
  for (int i = 0; i < got; ++i) free(blocks[i]);
  if (got == 16) return 1;
  snprintf(message, size, "out of memory after %d MiB", got * 64);
  return 0;
}

/* Correct, except every average of `dtype` is garbage (for a declaration that would excuse it). */
static inline int evil_run_wrong_averages(const poolspec_backend* self, const poolspec_problem* p, const void* in,
                                          void* out, int64_t* indices, char* message, size_t size,
                                          int32_t dtype) {
  minimal_run(self, p, in, out, indices, message, size);
  if (p->op == POOLSPEC_AVG && p->dtype == dtype) evil_garbage(p, out);
  return 0;
}

/* The entry of a library with one backend NAME = {minimal's declaration, ACCUMULATION_FOR,
 * SUPPORTS, RUN}; EVIL_ENTRY without an accumulation_for. */
#define EVIL_ENTRY_WITH(NAME, ACCUMULATION_FOR, SUPPORTS, RUN)                                \
  const poolspec_backend* poolspec_backend_entry(uint32_t index) {                             \
    static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, NAME, "1.0", "spec",     \
                                       EVIL_ACCUMULATION, ACCUMULATION_FOR, SUPPORTS, RUN, NULL, NULL}; \
    return index == 0 ? &b : NULL;                                                             \
  }
#define EVIL_ENTRY(NAME, SUPPORTS, RUN) EVIL_ENTRY_WITH(NAME, NULL, SUPPORTS, RUN)
/* A correct backend (minimal's supports and run) with OUTPUT_SHAPE (backend.h, version 2). */
#define EVIL_SHAPE_ENTRY(NAME, OUTPUT_SHAPE)                                                      \
  const poolspec_backend* poolspec_backend_entry(uint32_t index) {                              \
    static const poolspec_backend b = {POOLSPEC_BACKEND_ABI_VERSION, NAME, "1.0", "spec",        \
                                       EVIL_ACCUMULATION, NULL, minimal_supports, minimal_run,  \
                                       NULL, OUTPUT_SHAPE};                                      \
    return index == 0 ? &b : NULL;                                                              \
  }

#endif
