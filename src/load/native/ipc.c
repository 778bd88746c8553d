/* The native worker's side of node's IPC channel (NODE_CHANNEL_FD): JSON lines out ('ready',
 * 'interval', 'flushed', 'done', 'fatal'), and the pod process's 'go' and 'stop' in, read without a
 * JSON parser: the lines are node's own serialization of two fixed shapes. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fatal.h"
#include "worker.h"

int ipc_fd = -1;

/* An allocation the worker cannot go on without failed: say so to the pod process (and stderr, where
 * there is no channel) and exit non-zero, which the pod process counts as a crash. */
void native_out_of_memory(const char *what) {
  char line[160];
  int n = snprintf(line, sizeof line, "{\"type\":\"fatal\",\"message\":\"native worker: out of memory (%s)\"}\n", what);
  if (n > 0 && ipc_fd >= 0) (void)!write(ipc_fd, line, (size_t)n);
  fprintf(stderr, "attestorm native worker: out of memory (%s)\n", what);
  _exit(3);
}

void ipc_send(const char *line, size_t n) {
  while (n > 0) {
    ssize_t w = write(ipc_fd, line, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) _exit(0); /* the pod process is gone: so are we */
    line += w;
    n -= (size_t)w;
  }
}
void ipc_printf(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) ipc_send(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* ---------- IPC input: 'go' and 'stop' ---------- */
static char ipc_in[8192];
static size_t ipc_len;

static double json_number(const char *line, const char *key) {
  const char *k = strstr(line, key);
  return k ? strtod(k + strlen(key), NULL) : NAN;
}

void ipc_readable(void) {
  ssize_t r = read(ipc_fd, ipc_in + ipc_len, sizeof ipc_in - 1 - ipc_len);
  if (r < 0 && errno == EINTR) return;
  if (r <= 0) _exit(0); /* the pod process is gone: so are we */
  ipc_len += (size_t)r;
  ipc_in[ipc_len] = 0;
  char *line = ipc_in, *nl;
  while ((nl = strchr(line, '\n'))) {
    *nl = 0;
    if (strstr(line, "\"type\":\"go\"") && !started) {
      start(json_number(line, "\"t0\":"), json_number(line, "\"endAt\":"));
    } else if (strstr(line, "\"type\":\"stop\"")) {
      stop();
    }
    line = nl + 1;
  }
  ipc_len = strlen(line);
  memmove(ipc_in, line, ipc_len);
  if (ipc_len >= sizeof ipc_in - 1) ipc_len = 0; /* a line we do not read: dropped */
}
