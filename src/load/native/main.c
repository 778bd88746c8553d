/* The native worker's entry: the command line, signals (SIGTERM ends the load as 'stop' does, or
 * the worker before 'go'), 'ready', and the loop that waits on the pod process's channel, the
 * connection and the next thing due; and the test entry points of its pure parts. */
#define _GNU_SOURCE
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fatal.h"
#include "hpack.h"
#include "record.h"
#include "worker.h"

volatile sig_atomic_t got_term;

static void on_term(int sig) {
  (void)sig;
  got_term = 1;
}

/* Test entry points: the pure parts, checked from JS against hdr-histogram-js and RFC 7541. */
static int self_test(int argc, char **argv) {
  if (!strcmp(argv[1], "--encode-histogram")) {
    uint64_t *v = calloc((size_t)argc, sizeof *v);
    if (!v) native_out_of_memory("histogram values");
    for (int i = 2; i < argc; i++) v[i - 2] = strtoull(argv[i], NULL, 10);
    record_init();
    printf("%s\n", record_encode_values(v, (size_t)(argc - 2)));
    free(v);
    return 0;
  }
  if (!strcmp(argv[1], "--decode-huffman") && argc == 3) {
    size_t n = strlen(argv[2]) / 2;
    uint8_t *in = malloc(n + 1);
    char *out = malloc(n * 2 + 1);
    if (!in || !out) native_out_of_memory("Huffman test buffers");
    for (size_t i = 0; i < n; i++) in[i] = (uint8_t)(hex(argv[2][2 * i]) << 4 | hex(argv[2][2 * i + 1]));
    long m = hpack_huffman_decode(in, n, out, n * 2);
    if (m >= 0) {
      fwrite(out, 1, (size_t)m, stdout);
      printf("\n");
    }
    free(in);
    free(out);
    return m < 0;
  }
  return 2;
}

int main(int argc, char **argv) {
  if (argc >= 2 && argv[1][0] == '-') return self_test(argc, argv);
  const char *chan = getenv("NODE_CHANNEL_FD");
  if (!chan) {
    fprintf(stderr, "attestorm native worker: must be started with an IPC channel (NODE_CHANNEL_FD)\n");
    return 2;
  }
  ipc_fd = atoi(chan);
  if (parse_args(argc, argv, 1) < 0) {
    ipc_printf("{\"type\":\"fatal\",\"message\":\"native worker: bad arguments\"}\n");
    return 2;
  }
  seed_random();
  signal(SIGPIPE, SIG_IGN);
  sigset_t term, empty;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigemptyset(&empty);
  sigprocmask(SIG_BLOCK, &term, NULL);
  struct sigaction sa = {.sa_handler = on_term};
  sigaction(SIGTERM, &sa, NULL);
  build_requests();
  record_init();
  ipc_printf("{\"type\":\"ready\",\"pid\":%d}\n", (int)getpid());

  for (;;) {
    double wake = run_due();
    if (wake == -1) continue;
    struct pollfd fds[2] = {{.fd = ipc_fd, .events = POLLIN}, {.fd = conn.fd, .events = POLLIN | (conn.out.n > conn.out_off ? POLLOUT : 0)}};
    int nfds = conn.fd >= 0 ? 2 : 1;
    double ms = wake == INFINITY ? 1000 : wake - mono_ms();
    if (ms < 0) ms = 0;
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(fmod(ms, 1000) * 1e6)};
    int n = ppoll(fds, (nfds_t)nfds, &ts, &empty);
    if (got_term) {
      got_term = 0;
      if (started) stop();
      else _exit(0);
    }
    if (n <= 0) continue;
    if (fds[0].revents) ipc_readable();
    if (nfds == 2 && conn.fd >= 0 && fds[1].revents) {
      if (fds[1].revents & POLLOUT) conn_flush();
      if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) conn_readable();
    }
  }
}

