/* The native worker's connection to the agent: a non-blocking Unix socket, the HTTP/2 preface and
 * SETTINGS it opens with, frames queued and written as the socket takes them, and frames read and
 * handed to frames.c one by one. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "worker.h"

struct connection conn = {.fd = -1};

void conn_close(void) {
  if (conn.fd >= 0) close(conn.fd);
  conn.fd = -1;
  conn.in_len = 0;
  conn.out.n = conn.out_off = 0;
  conn.in_block = 0;
  conn.goaway = 0;
  conn.unacked = 0;
  hpack_free(&conn.hpack);
}

void queue_frame(int type, int flags, uint32_t stream, const void *payload, size_t n) {
  frame_header(&conn.out, n, type, flags, stream);
  if (n) bput(&conn.out, payload, n);
}

int conn_flush(void) {
  while (conn.out_off < conn.out.n) {
    ssize_t w = send(conn.fd, conn.out.p + conn.out_off, conn.out.n - conn.out_off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (w < 0) return -1;
    conn.out_off += (size_t)w;
  }
  conn.out.n = conn.out_off = 0;
  return 0;
}

static const char *errno_name(int e) {
  switch (e) {
    case ECONNREFUSED: return "ECONNREFUSED";
    case ENOENT: return "ENOENT";
    case EAGAIN: return "EAGAIN";
    case EACCES: return "EACCES";
    case ECONNRESET: return "ECONNRESET";
    case EPIPE: return "EPIPE";
    case EMFILE: return "EMFILE";
    case ENFILE: return "ENFILE";
    case ENOTSOCK: return "ENOTSOCK";
    case ETIMEDOUT: return "ETIMEDOUT";
    default: return "EIO";
  }
}

int conn_open(char *why, size_t why_len) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    snprintf(why, why_len, "socket %s", errno_name(errno));
    return -1;
  }
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  strncpy(addr.sun_path, cfg.socket, sizeof addr.sun_path - 1);
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0 && errno != EINPROGRESS) {
    snprintf(why, why_len, "connect %s %s", errno_name(errno), cfg.socket);
    close(fd);
    return -1;
  }
  conn.fd = fd;
  conn.next_stream = 1;
  conn.goaway = 0;
  hpack_init(&conn.hpack);
  static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  bput(&conn.out, preface, sizeof preface - 1);
  /* SETTINGS: ENABLE_PUSH 0, INITIAL_WINDOW_SIZE; then widen the connection window the same way. */
  uint8_t settings[12] = {0, 2, 0, 0, 0, 0, 0, 4, (uint8_t)(STREAM_WINDOW >> 24), (uint8_t)(STREAM_WINDOW >> 16), (uint8_t)(STREAM_WINDOW >> 8), (uint8_t)STREAM_WINDOW};
  queue_frame(F_SETTINGS, 0, 0, settings, sizeof settings);
  uint32_t inc = STREAM_WINDOW - 65535;
  uint8_t wu[4] = {(uint8_t)(inc >> 24), (uint8_t)(inc >> 16), (uint8_t)(inc >> 8), (uint8_t)inc};
  queue_frame(F_WINDOW_UPDATE, 0, 0, wu, 4);
  return 0;
}

void cancel_stream(uint32_t stream) {
  uint8_t code[4] = {0, 0, 0, H2_CANCEL};
  queue_frame(F_RST_STREAM, 0, stream, code, 4);
}

/* Ends the connection: with a GOAWAY carrying `h2_error` (0: the connection failed under us, nothing
 * to tell), then the call in flight, if any, is UNAVAILABLE as grpc-js words a dropped connection. */
static void conn_fail(int h2_error) {
  if (h2_error) {
    /* Last stream 0: the worker accepts no streams of the server's. */
    uint8_t goaway[8] = {0, 0, 0, 0, (uint8_t)(h2_error >> 24), (uint8_t)(h2_error >> 16), (uint8_t)(h2_error >> 8), (uint8_t)h2_error};
    queue_frame(F_GOAWAY, 0, 0, goaway, 8);
    conn_flush();
  }
  conn_close();
  if (call.active) on_close(0, 0, 1);
}

void conn_readable(void) {
  for (;;) {
    ssize_t r = read(conn.fd, conn.in + conn.in_len, sizeof conn.in - conn.in_len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (r <= 0) { /* EOF or error: the connection went away under the stream */
      conn_fail(0);
      return;
    }
    conn.in_len += (size_t)r;
    size_t off = 0;
    while (conn.in_len - off >= 9) {
      const uint8_t *h = conn.in + off;
      size_t len = (size_t)h[0] << 16 | (size_t)h[1] << 8 | h[2];
      int err = len > MAX_FRAME_SIZE ? H2_FRAME_SIZE_ERROR : 0;
      if (!err && conn.in_len - off < 9 + len) break;
      int fd_before = conn.fd;
      if (!err) err = on_frame(h[3], h[4], be32(h + 5) & 0x7fffffff, h + 9, len);
      if (err) {
        conn_fail(err);
        return;
      }
      if (conn.fd != fd_before || conn.fd < 0) return; /* the call settled and closed the connection */
      off += 9 + len;
    }
    memmove(conn.in, conn.in + off, conn.in_len - off);
    conn.in_len -= off;
  }
  if (conn.fd >= 0 && conn_flush() < 0) conn_fail(0);
}
