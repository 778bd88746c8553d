/* Test-only, linked into a build of the native worker with -Wl,--wrap=malloc: the linker sends the
 * worker's own malloc calls here (libc's internal ones are not redirected), and with
 * ATTESTORM_TEST_FAIL_MALLOC set in the environment every one of them fails, so a test can see what
 * the worker does when an allocation fails. */
#include <stddef.h>
#include <stdlib.h>

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);

void *__wrap_malloc(size_t n) {
  static int fail = -1;
  if (fail < 0) fail = getenv("ATTESTORM_TEST_FAIL_MALLOC") != NULL;
  return fail ? NULL : __real_malloc(n);
}
