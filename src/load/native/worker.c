/* The native load worker: one small process per caller (its own PID, forked by a pod process into
 * the pod's cgroup and uid) calling the Workload API over gRPC on HTTP/2 written by hand, with the
 * same loop, outcomes and per-second data as the Node workers (src/load/worker/worker-loop.ts).
 * It talks to its pod process over node's IPC channel (JSON lines on NODE_CHANNEL_FD), so the pod
 * process sees the same messages from it as from a Node worker. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fatal.h"
#include "hpack.h"
#include "record.h"

/* gRPC status codes used here. */
enum { OK = 0, CANCELLED = 1, UNKNOWN = 2, DEADLINE_EXCEEDED = 4, PERMISSION_DENIED = 7, RESOURCE_EXHAUSTED = 8,
       UNIMPLEMENTED = 12, INTERNAL = 13, UNAVAILABLE = 14, UNAUTHENTICATED = 16 };
/* HTTP/2 frame types, flags and error codes. */
enum { F_DATA = 0, F_HEADERS = 1, F_RST_STREAM = 3, F_SETTINGS = 4, F_PUSH_PROMISE = 5, F_PING = 6, F_GOAWAY = 7,
       F_WINDOW_UPDATE = 8, F_CONTINUATION = 9 };
enum { FL_END_STREAM = 0x1, FL_ACK = 0x1, FL_END_HEADERS = 0x4, FL_PADDED = 0x8, FL_PRIORITY = 0x20 };
enum { H2_NO_ERROR = 0, H2_PROTOCOL_ERROR = 1, H2_INTERNAL_ERROR = 2, H2_FLOW_CONTROL_ERROR = 3, H2_FRAME_SIZE_ERROR = 6,
       H2_REFUSED_STREAM = 7, H2_CANCEL = 8, H2_COMPRESSION_ERROR = 9, H2_ENHANCE_YOUR_CALM = 11, H2_INADEQUATE_SECURITY = 12 };
enum { S_ENABLE_PUSH = 2, S_INITIAL_WINDOW_SIZE = 4, S_MAX_FRAME_SIZE = 5 };

enum method { FETCH_JWT_SVID, FETCH_X509_SVID, FETCH_X509_BUNDLES, FETCH_JWT_BUNDLES, VALIDATE_JWT_SVID, METHODS };
static const char *const METHOD_NAMES[METHODS] = {"FetchJWTSVID", "FetchX509SVID", "FetchX509Bundles", "FetchJWTBundles", "ValidateJWTSVID"};
enum mode { PER_CALL, PER_WORKER, PER_RETRY };

#define TOKEN_MAX_AGE_MS 60000.0
#define BACKOFF_BASE_MS 100.0
#define BACKOFF_CAP_MS 5000.0
/* Advertised per-stream window: a first message of any Workload API response fits without updates. */
#define STREAM_WINDOW (1 << 20)
/* SETTINGS_MAX_FRAME_SIZE: the worker advertises none, so the protocol's default bounds what it reads. */
#define MAX_FRAME_SIZE 16384
#define INBUF_BYTES (64 * 1024)
#define HEADER_BLOCK_MAX (64 * 1024)
#define MAX_STREAM_ID 0x7fffffff

/* ---------- configuration (argv: key=value) ---------- */
static struct {
  const char *socket;
  enum mode mode;
  double rate; /* 0 = closed loop */
  double deadline_ms;
  int backoff;
  const char *audience;
  long long max_calls; /* -1 = unbounded */
  double weights[METHODS];
  double total_weight;
  int need_token;
} cfg = {.deadline_ms = 1000, .max_calls = -1};

static int ipc_fd = -1;

/* An allocation the worker cannot go on without failed: say so to the pod process (and stderr, where
 * there is no channel) and exit non-zero, which the pod process counts as a crash. */
void native_out_of_memory(const char *what) {
  char line[160];
  int n = snprintf(line, sizeof line, "{\"type\":\"fatal\",\"message\":\"native worker: out of memory (%s)\"}\n", what);
  if (n > 0 && ipc_fd >= 0) (void)!write(ipc_fd, line, (size_t)n);
  fprintf(stderr, "attestorm native worker: out of memory (%s)\n", what);
  _exit(3);
}

/* ---------- clocks ---------- */
static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static double epoch_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static double cpu_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static uint64_t rng_state;
static double random01(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* ---------- IPC: node's JSON-lines channel ---------- */
static void ipc_send(const char *line, size_t n) {
  while (n > 0) {
    ssize_t w = write(ipc_fd, line, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) _exit(0); /* the pod process is gone: so are we */
    line += w;
    n -= (size_t)w;
  }
}
static void ipc_printf(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) ipc_send(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* ---------- requests, built once ---------- */
struct bytes {
  uint8_t *p;
  size_t n, cap;
};
static void bput(struct bytes *b, const void *src, size_t n) {
  if (b->n + n > b->cap) {
    size_t cap = (b->n + n) * 2 + 64;
    uint8_t *p = realloc(b->p, cap);
    if (!p) native_out_of_memory("request or response buffer");
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}
static void bbyte(struct bytes *b, uint8_t c) { bput(b, &c, 1); }
static void bvarint(struct bytes *b, uint64_t v) {
  while (v > 0x7f) {
    bbyte(b, (uint8_t)((v & 0x7f) | 0x80));
    v >>= 7;
  }
  bbyte(b, (uint8_t)v);
}
static void pb_string(struct bytes *b, int field, const char *s, size_t n) {
  bbyte(b, (uint8_t)(field << 3 | 2));
  bvarint(b, n);
  bput(b, s, n);
}
static void frame_header(struct bytes *b, size_t len, int type, int flags, uint32_t stream) {
  uint8_t h[9] = {(uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len, (uint8_t)type, (uint8_t)flags,
                  (uint8_t)(stream >> 24 & 0x7f), (uint8_t)(stream >> 16), (uint8_t)(stream >> 8), (uint8_t)stream};
  bput(b, h, 9);
}
/* HPACK string literal, no Huffman; lengths below 127 need one byte, longer ones the integer form. */
static void hp_string(struct bytes *b, const char *s) {
  size_t n = strlen(s);
  if (n < 127) {
    bbyte(b, (uint8_t)n);
  } else {
    bbyte(b, 127);
    bvarint(b, n - 127);
  }
  bput(b, s, n);
}
/* Literal without indexing: an indexed name (4-bit prefix, index < 15) or a new one. */
static void hp_literal(struct bytes *b, int name_index, const char *name, const char *value) {
  bbyte(b, (uint8_t)name_index);
  if (!name_index) hp_string(b, name);
  hp_string(b, value);
}

static struct bytes header_block[METHODS];
static struct bytes jwt_body, empty_body, validate_body;

static void grpc_frame(struct bytes *out, const struct bytes *msg) {
  out->n = 0;
  uint8_t h[5] = {0, (uint8_t)(msg->n >> 24), (uint8_t)(msg->n >> 16), (uint8_t)(msg->n >> 8), (uint8_t)msg->n};
  bput(out, h, 5);
  if (msg->n) bput(out, msg->p, msg->n);
}

static void build_requests(void) {
  char timeout[32];
  if (cfg.deadline_ms < 1e8) snprintf(timeout, sizeof timeout, "%.0fm", fmax(1, ceil(cfg.deadline_ms)));
  else snprintf(timeout, sizeof timeout, "%.0fS", ceil(cfg.deadline_ms / 1000));
  for (int m = 0; m < METHODS; m++) {
    char path[64];
    snprintf(path, sizeof path, "/SpiffeWorkloadAPI/%s", METHOD_NAMES[m]);
    struct bytes *b = &header_block[m];
    bbyte(b, 0x83); /* :method POST (static 3) */
    bbyte(b, 0x86); /* :scheme http (static 6) */
    hp_literal(b, 4, NULL, path); /* :path */
    hp_literal(b, 1, NULL, "localhost"); /* :authority */
    hp_literal(b, 0, "content-type", "application/grpc");
    hp_literal(b, 0, "te", "trailers");
    hp_literal(b, 0, "grpc-timeout", timeout);
    hp_literal(b, 0, "workload.spiffe.io", "true");
  }
  struct bytes msg = {0};
  pb_string(&msg, 1, cfg.audience, strlen(cfg.audience)); /* JWTSVIDRequest{ audience: [audience] } */
  grpc_frame(&jwt_body, &msg);
  msg.n = 0;
  grpc_frame(&empty_body, &msg);
  free(msg.p);
}

/* ---------- protobuf reading: the first JWT-SVID token of a JWTSVIDResponse ---------- */
static int pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*p >= end) return -1;
    uint8_t b = *(*p)++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return 0;
  }
  return -1;
}
/* Finds length-delimited field `want`; returns its bytes or NULL. */
static const uint8_t *pb_field(const uint8_t *p, const uint8_t *end, unsigned want, size_t *len) {
  while (p < end) {
    uint64_t tag, v;
    if (pb_varint(&p, end, &tag) < 0) return NULL;
    switch (tag & 7) {
      case 0: if (pb_varint(&p, end, &v) < 0) return NULL; break;
      case 1: p += 8; break;
      case 5: p += 4; break;
      case 2:
        if (pb_varint(&p, end, &v) < 0 || v > (uint64_t)(end - p)) return NULL;
        if ((tag >> 3) == want) {
          *len = (size_t)v;
          return p;
        }
        p += v;
        break;
      default: return NULL;
    }
  }
  return NULL;
}

static int have_token;
static double token_at;

static void keep_token(const uint8_t *msg, size_t n) {
  size_t svid_len, tok_len;
  const uint8_t *svid = pb_field(msg, msg + n, 1, &svid_len);
  if (!svid) return;
  const uint8_t *tok = pb_field(svid, svid + svid_len, 2, &tok_len);
  if (!tok) return;
  struct bytes req = {0};
  pb_string(&req, 1, cfg.audience, strlen(cfg.audience));
  pb_string(&req, 2, (const char *)tok, tok_len);
  grpc_frame(&validate_body, &req);
  free(req.p);
  have_token = 1;
  token_at = mono_ms();
}

/* ---------- the connection and the call in flight ---------- */
static struct {
  int fd; /* -1: none */
  uint32_t next_stream;
  int goaway;
  uint32_t goaway_last;
  struct hpack_decoder hpack;
  uint8_t in[INBUF_BYTES + 9];
  size_t in_len;
  struct bytes out; /* bytes not yet written */
  size_t out_off;
  uint32_t unacked; /* connection-level bytes received since the last WINDOW_UPDATE */
  /* The header block being assembled (HEADERS + CONTINUATION). */
  uint8_t block[HEADER_BLOCK_MAX];
  size_t block_len;
  uint32_t block_stream;
  int block_end_stream;
  int in_block;
} conn = {.fd = -1};

static struct {
  int active;
  enum method method;
  int streaming, want_token;
  uint32_t stream;
  double intended_at, deadline_at;
  int headers_seen; /* response headers read; the next block is trailers */
  int code; /* from grpc-status, -1 until read */
  char details[512];
  int http_code;
  char http_details[128];
  long messages;
  /* Reassembly of length-prefixed messages: header bytes, then the body. */
  uint8_t mhdr[5];
  int mhdr_len;
  uint32_t mleft;
  struct bytes first; /* the first message, kept when its token is wanted */
  int status_seen;
  char raw_status[16];
} call;

static void conn_close(void) {
  if (conn.fd >= 0) close(conn.fd);
  conn.fd = -1;
  conn.in_len = 0;
  conn.out.n = conn.out_off = 0;
  conn.in_block = 0;
  conn.goaway = 0;
  conn.unacked = 0;
  hpack_free(&conn.hpack);
}

static void queue_frame(int type, int flags, uint32_t stream, const void *payload, size_t n) {
  frame_header(&conn.out, n, type, flags, stream);
  if (n) bput(&conn.out, payload, n);
}

/* Writes what is queued; returns -1 when the connection is broken. */
static int conn_flush(void) {
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

/* Opens a connection and queues the preface; on failure fills `why` (as node words it). */
static int conn_open(char *why, size_t why_len) {
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

/* ---------- the worker's loop state ---------- */
static double t0_epoch, end_epoch; /* from 'go' */
static long last_second;
static int started, stopping, finished;
static long long calls;
static double cpu_at_go;
static int failures;
static double issue_at = -1; /* mono ms of the next send; -1: none scheduled */
static int issue_fires; /* at issue_at: 1 = send the call intended then, 0 = draw the next intended time */
static double pacer_next, pacer_interval; /* open loop: 1000/rate ms */
static double next_flush_epoch;
static double ok_last_at, ok_longest; /* epoch ms */
static volatile sig_atomic_t got_term;

static long current_second(void) {
  long s = (long)floor((epoch_ms() - t0_epoch) / 1000);
  if (s > last_second) s = last_second;
  return s < 0 ? 0 : s;
}

static void ok_gap(double at) {
  double t = at < end_epoch ? at : end_epoch;
  if (t - ok_last_at > ok_longest) ok_longest = t - ok_last_at;
  if (t > ok_last_at) ok_last_at = t;
}

static void ship_if_any(void) {
  const struct line *json = record_take();
  if (json) ipc_send((const char *)json->p, json->n);
}

static void finish(void) {
  if (finished) return;
  finished = 1;
  ship_if_any();
  conn_close();
  ok_gap(epoch_ms());
  ipc_printf("{\"type\":\"done\",\"calls\":%lld,\"cpuMs\":%.3f,\"longestOkGapMs\":%.0f}\n", calls, started ? cpu_ms() - cpu_at_go : 0.0, started ? ok_longest : 0.0);
  _exit(0);
}

static void stop(void) {
  if (stopping) return;
  stopping = 1;
  /* A call in flight is bounded by its deadline; its answer still counts. */
  if (!call.active) finish();
}

static int classify(int code, const char *details) {
  if (code == OK) return OUT_OK;
  if ((code == UNAVAILABLE || code == RESOURCE_EXHAUSTED) && strncmp(details, "rate limit exceeded", 19) == 0) return OUT_RATE_LIMITED;
  if (code == DEADLINE_EXCEEDED) return OUT_DEADLINE;
  return OUT_ERROR;
}

static void schedule_issue(double at) {
  issue_at = at;
  issue_fires = 0;
}

static void settle(int code, const char *details, const uint8_t *response, size_t response_len) {
  if (!call.active) return;
  call.active = 0;
  double now = mono_ms();
  if (code == OK && call.want_token && response) keep_token(response, response_len);
  /* per-call: the connection ends with the call, as when a forked caller exits; per-retry
   * reconnects after any error; per-worker keeps it (a broken one is replaced on the next call). */
  if (cfg.mode == PER_CALL || (cfg.mode == PER_RETRY && code != OK)) {
    conn_flush();
    conn_close();
  }
  calls++;
  int outcome = classify(code, details);
  double us = (now - call.intended_at) * 1000;
  const struct line *json = record_call(current_second(), outcome, code, us < 1 ? 1 : (uint64_t)llround(us));
  if (json) ipc_send((const char *)json->p, json->n);
  double delay = 0;
  if (outcome == OUT_OK) {
    failures = 0;
    ok_gap(epoch_ms());
  } else if (cfg.backoff) {
    failures++;
    int e = failures - 1 > 30 ? 30 : failures - 1;
    double cap = BACKOFF_BASE_MS * pow(2, e);
    delay = random01() * (cap < BACKOFF_CAP_MS ? cap : BACKOFF_CAP_MS);
    if (pacer_interval > 0)
      while (pacer_next < now + delay) pacer_next += pacer_interval;
  }
  if (stopping) finish();
  schedule_issue(now + delay);
}

/* The stream ended (END_STREAM, RST_STREAM or the connection went): the status as grpc-js gives it. */
static void on_close(int rst, int rst_code, int dropped) {
  int code = call.code;
  const char *details = call.details;
  char buf[128];
  if (code == -1) {
    if (call.http_code != -1) {
      code = call.http_code;
      details = call.http_details;
    } else if (dropped || !rst || rst_code == H2_NO_ERROR) {
      code = UNAVAILABLE;
      details = "Connection dropped";
    } else {
      switch (rst_code) {
        case H2_REFUSED_STREAM: code = UNAVAILABLE; break;
        case H2_CANCEL: code = CANCELLED; break;
        case H2_ENHANCE_YOUR_CALM: code = RESOURCE_EXHAUSTED; break;
        case H2_INADEQUATE_SECURITY: code = PERMISSION_DENIED; break;
        default: code = INTERNAL;
      }
      snprintf(buf, sizeof buf, "Received RST_STREAM with code %d", rst_code);
      details = buf;
    }
  }
  if (code == OK) details = "";
  if (code == OK && !call.streaming) {
    if (call.messages == 0) {
      code = UNIMPLEMENTED;
      details = "No message received";
    } else if (call.messages > 1) {
      code = UNIMPLEMENTED;
      details = "Too many responses received";
    }
  }
  settle(code, details, code == OK ? call.first.p : NULL, call.first.n);
}

static void fire(double intended_at) {
  if (stopping) return finish();
  enum method m = FETCH_JWT_SVID;
  double r = random01() * cfg.total_weight, acc = 0;
  for (int i = 0; i < METHODS; i++) {
    if (cfg.weights[i] <= 0) continue;
    m = (enum method)i;
    acc += cfg.weights[i];
    if (r < acc) break;
  }
  /* ValidateJWTSVID needs a token: without a fresh one it becomes the FetchJWTSVID that obtains it. */
  if (m == VALIDATE_JWT_SVID && (!have_token || mono_ms() - token_at > TOKEN_MAX_AGE_MS)) m = FETCH_JWT_SVID;
  memset(&call, 0, offsetof(typeof(call), first));
  call.first.n = 0;
  call.active = 1;
  call.method = m;
  call.streaming = m == FETCH_X509_SVID || m == FETCH_X509_BUNDLES || m == FETCH_JWT_BUNDLES;
  call.want_token = m == FETCH_JWT_SVID && cfg.need_token;
  call.code = call.http_code = -1;
  call.intended_at = intended_at;
  call.deadline_at = mono_ms() + cfg.deadline_ms;
  if (conn.fd >= 0 && (conn.goaway || conn.next_stream > MAX_STREAM_ID - 2)) conn_close();
  if (conn.fd < 0) {
    char why[160];
    if (conn_open(why, sizeof why) < 0) return settle(UNAVAILABLE, why, NULL, 0);
  }
  call.stream = conn.next_stream;
  conn.next_stream += 2;
  const struct bytes *hb = &header_block[m];
  queue_frame(F_HEADERS, FL_END_HEADERS, call.stream, hb->p, hb->n);
  const struct bytes *body = call.streaming ? &empty_body : m == VALIDATE_JWT_SVID ? &validate_body : &jwt_body;
  queue_frame(F_DATA, FL_END_STREAM, call.stream, body->p, body->n);
  if (conn_flush() < 0) on_close(0, 0, 1);
}

static void issue(void) {
  issue_at = -1;
  if (stopping || (cfg.max_calls >= 0 && calls >= cfg.max_calls)) return finish();
  double now = mono_ms();
  double intended = now;
  if (pacer_interval > 0) {
    intended = pacer_next;
    pacer_next += pacer_interval;
  }
  if (intended > now + 0.5) {
    issue_at = intended;
    issue_fires = 1;
  } else {
    fire(intended);
  }
}

/* Runs a send that is due; returns 1 if it did. */
static int issue_due(void) {
  if (issue_at == -1 || mono_ms() < issue_at) return 0;
  double at = issue_at;
  int fires = issue_fires;
  issue_at = -1;
  if (fires) fire(at);
  else issue();
  return 1;
}

/* ---------- reading the server's frames ---------- */
static int status_of_http(int status) {
  switch (status) {
    case 400: return INTERNAL;
    case 401: return UNAUTHENTICATED;
    case 403: return PERMISSION_DENIED;
    case 404: return UNIMPLEMENTED;
    case 429: case 502: case 503: case 504: return UNAVAILABLE;
    default: return UNKNOWN;
  }
}

static int hex(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* grpc-message is percent-encoded; a malformed escape is kept as sent. */
static void percent_decode(const char *s, size_t n, char *out, size_t cap) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 1 < cap; i++) {
    if (s[i] == '%' && i + 2 < n && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out[o++] = (char)(hex(s[i + 1]) << 4 | hex(s[i + 2]));
      i += 2;
    } else {
      out[o++] = s[i];
    }
  }
  out[o] = 0;
}

/* One decoded header field of the block being read. */
struct block_ctx {
  int for_call;
  int status; /* :status, -1 if absent */
  char content_type[64];
  int has_ct;
  int grpc_status; /* -2 absent, -1 invalid */
  char raw_status[16];
  char message[512];
};

static void on_field(void *ctxp, const char *name, size_t nl, const char *value, size_t vl) {
  struct block_ctx *ctx = ctxp;
  if (!ctx->for_call) return;
  if (nl == 7 && !memcmp(name, ":status", 7)) {
    char tmp[8] = {0};
    memcpy(tmp, value, vl < 7 ? vl : 7);
    ctx->status = atoi(tmp);
  } else if (nl == 12 && !memcmp(name, "content-type", 12)) {
    size_t n = vl < sizeof ctx->content_type - 1 ? vl : sizeof ctx->content_type - 1;
    memcpy(ctx->content_type, value, n);
    ctx->content_type[n] = 0;
    ctx->has_ct = 1;
  } else if (nl == 11 && !memcmp(name, "grpc-status", 11)) {
    size_t n = vl < sizeof ctx->raw_status - 1 ? vl : sizeof ctx->raw_status - 1;
    memcpy(ctx->raw_status, value, n);
    ctx->raw_status[n] = 0;
    char *end;
    long v = strtol(ctx->raw_status, &end, 10);
    ctx->grpc_status = (n > 0 && *end == 0 && v >= 0) ? (int)v : -1;
  } else if (nl == 12 && !memcmp(name, "grpc-message", 12)) {
    percent_decode(value, vl, ctx->message, sizeof ctx->message);
  }
}

static void take_status(struct block_ctx *ctx) {
  if (call.code != -1) return;
  if (ctx->grpc_status >= 0) {
    call.code = ctx->grpc_status;
    snprintf(call.details, sizeof call.details, "%s", ctx->message);
  } else if (call.http_code != -1) {
    call.code = call.http_code;
    snprintf(call.details, sizeof call.details, "%s", call.http_details);
  } else {
    call.code = UNKNOWN;
    if (ctx->grpc_status == -2) snprintf(call.details, sizeof call.details, "No status received");
    else snprintf(call.details, sizeof call.details, "Invalid grpc-status %s", ctx->raw_status);
  }
}

/* Returns 0, or the HTTP/2 error code of a connection error. Every block is decoded, whoever's
 * stream it is, so the dynamic table stays the server's. */
static int on_header_block(void) {
  struct block_ctx ctx = {.for_call = call.active && conn.block_stream == call.stream, .status = -1, .grpc_status = -2};
  int err = hpack_decode(&conn.hpack, conn.block, conn.block_len, on_field, &ctx);
  if (err == HPACK_OUT_OF_MEMORY) return H2_INTERNAL_ERROR;
  if (err < 0) return H2_COMPRESSION_ERROR;
  if (!ctx.for_call) return 0;
  if (!call.headers_seen) {
    call.headers_seen = 1;
    if (ctx.grpc_status != -2) {
      take_status(&ctx); /* Trailers-Only */
    } else if (ctx.status != 200) {
      call.http_code = status_of_http(ctx.status);
      snprintf(call.http_details, sizeof call.http_details, "Received HTTP status code %d", ctx.status);
    } else if (!ctx.has_ct || strncmp(ctx.content_type, "application/grpc", 16) != 0) {
      call.http_code = UNKNOWN;
      snprintf(call.http_details, sizeof call.http_details, "Invalid content-type %s", ctx.has_ct ? ctx.content_type : "undefined");
    }
  } else {
    take_status(&ctx);
  }
  if (conn.block_end_stream) on_close(0, 0, 0);
  return 0;
}

static void cancel_stream(uint32_t stream) {
  uint8_t code[4] = {0, 0, 0, H2_CANCEL};
  queue_frame(F_RST_STREAM, 0, stream, code, 4);
}

/* Length-prefixed message reassembly over DATA; a stream's first message settles it. */
static void on_data(const uint8_t *p, size_t n) {
  while (n > 0 && call.active) {
    if (call.mhdr_len < 5) {
      size_t want = 5 - (size_t)call.mhdr_len, take = want < n ? want : n;
      memcpy(call.mhdr + call.mhdr_len, p, take);
      call.mhdr_len += (int)take;
      p += take;
      n -= take;
      if (call.mhdr_len < 5) return;
      if (call.mhdr[0] != 0) {
        call.code = INTERNAL;
        snprintf(call.details, sizeof call.details, "Received compressed message but no grpc-encoding was negotiated");
        cancel_stream(call.stream);
        on_close(0, 0, 0);
        return;
      }
      call.mleft = (uint32_t)call.mhdr[1] << 24 | (uint32_t)call.mhdr[2] << 16 | (uint32_t)call.mhdr[3] << 8 | call.mhdr[4];
      call.messages++;
    }
    size_t take = call.mleft < n ? call.mleft : n;
    if (call.messages == 1 && call.want_token) bput(&call.first, p, take);
    call.mleft -= (uint32_t)take;
    p += take;
    n -= take;
    if (call.mleft == 0) {
      call.mhdr_len = 0;
      if (call.streaming) {
        /* As SDKs do when they have what they wanted: cancel the stream. */
        cancel_stream(call.stream);
        conn_flush();
        settle(OK, "", NULL, 0);
        return;
      }
    }
  }
}

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* The server's SETTINGS, checked as RFC 9113 §6.5.2 asks. None changes what the worker sends: one
 * small request per stream, fields without indexing. Returns 0 or the connection error's code. */
static int check_settings(const uint8_t *p, size_t len) {
  if (len % 6) return H2_FRAME_SIZE_ERROR;
  for (size_t i = 0; i < len; i += 6) {
    int id = p[i] << 8 | p[i + 1];
    uint32_t v = be32(p + i + 2);
    if (id == S_ENABLE_PUSH && v != 0) return H2_PROTOCOL_ERROR; /* a server may only say 0 */
    if (id == S_INITIAL_WINDOW_SIZE && v > 0x7fffffff) return H2_FLOW_CONTROL_ERROR;
    if (id == S_MAX_FRAME_SIZE && (v < 16384 || v > 0xffffff)) return H2_PROTOCOL_ERROR;
  }
  return 0;
}

/* Returns 0, or the HTTP/2 error code of a connection error (RFC 9113 §5.4.1). */
static int on_frame(int type, int flags, uint32_t stream, const uint8_t *p, size_t len) {
  /* A header block is one unit: between its HEADERS and its last CONTINUATION nothing else may come. */
  if (conn.in_block && (type != F_CONTINUATION || stream != conn.block_stream)) return H2_PROTOCOL_ERROR;
  int ours = call.active && stream == call.stream;
  switch (type) {
    case F_DATA: {
      if (stream == 0) return H2_PROTOCOL_ERROR;
      conn.unacked += (uint32_t)len;
      if (conn.unacked >= 32768) {
        uint8_t wu[4] = {(uint8_t)(conn.unacked >> 24), (uint8_t)(conn.unacked >> 16), (uint8_t)(conn.unacked >> 8), (uint8_t)conn.unacked};
        queue_frame(F_WINDOW_UPDATE, 0, 0, wu, 4);
        conn.unacked = 0;
      }
      size_t pad = 0;
      if (flags & FL_PADDED) {
        if (len < 1 || p[0] >= len) return H2_PROTOCOL_ERROR;
        pad = p[0];
        p++;
        len--;
      }
      if (!ours) return 0;
      on_data(p, len - pad);
      if ((flags & FL_END_STREAM) && call.active && stream == call.stream) on_close(0, 0, 0);
      return 0;
    }
    case F_HEADERS: {
      if (stream == 0) return H2_PROTOCOL_ERROR;
      size_t skip = 0, pad = 0;
      if (flags & FL_PADDED) {
        if (len < 1) return H2_PROTOCOL_ERROR;
        pad = p[0];
        skip = 1;
      }
      if (flags & FL_PRIORITY) skip += 5;
      if (skip + pad > len) return H2_PROTOCOL_ERROR;
      conn.block_len = 0;
      conn.block_stream = stream;
      conn.block_end_stream = flags & FL_END_STREAM;
      conn.in_block = 1;
      p += skip;
      len -= skip + pad;
    }
      /* the fragment, as a CONTINUATION carries it */
      __attribute__((fallthrough));
    case F_CONTINUATION:
      if (!conn.in_block) return H2_PROTOCOL_ERROR;
      /* A header block beyond what the worker keeps: a limit of its own, not the server's fault. */
      if (conn.block_len + len > HEADER_BLOCK_MAX) return H2_INTERNAL_ERROR;
      memcpy(conn.block + conn.block_len, p, len);
      conn.block_len += len;
      if (flags & FL_END_HEADERS) {
        conn.in_block = 0;
        return on_header_block();
      }
      return 0;
    case F_RST_STREAM:
      if (stream == 0) return H2_PROTOCOL_ERROR;
      if (len != 4) return H2_FRAME_SIZE_ERROR;
      if (ours) on_close(1, (int)be32(p), 0);
      return 0;
    case F_SETTINGS: {
      if (stream != 0) return H2_PROTOCOL_ERROR;
      if (flags & FL_ACK) return len ? H2_FRAME_SIZE_ERROR : 0;
      int err = check_settings(p, len);
      if (err) return err;
      /* Queued behind everything sent so far and ahead of all that follows, as §6.5.3 asks. */
      queue_frame(F_SETTINGS, FL_ACK, 0, NULL, 0);
      return 0;
    }
    case F_PUSH_PROMISE:
      return H2_PROTOCOL_ERROR; /* push is off in the worker's SETTINGS */
    case F_PING:
      if (stream != 0) return H2_PROTOCOL_ERROR;
      if (len != 8) return H2_FRAME_SIZE_ERROR;
      if (!(flags & FL_ACK)) queue_frame(F_PING, FL_ACK, 0, p, 8);
      return 0;
    case F_GOAWAY:
      if (stream != 0) return H2_PROTOCOL_ERROR;
      if (len < 8) return H2_FRAME_SIZE_ERROR;
      conn.goaway = 1;
      conn.goaway_last = be32(p) & 0x7fffffff;
      /* A stream above the last one the server will process was never seen by it. */
      if (call.active && call.stream > conn.goaway_last) {
        call.code = UNAVAILABLE;
        snprintf(call.details, sizeof call.details, "GOAWAY received");
        on_close(0, 0, 1);
      }
      return 0;
    case F_WINDOW_UPDATE:
      return len != 4 ? H2_FRAME_SIZE_ERROR : 0; /* one small request never waits for a window */
    default:
      return 0; /* PRIORITY, unknown types: ignored, as §4.1 and §5.5 say */
  }
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

static void conn_readable(void) {
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

/* ---------- IPC input: 'go' and 'stop' ---------- */
static char ipc_in[8192];
static size_t ipc_len;

static double json_number(const char *line, const char *key) {
  const char *k = strstr(line, key);
  return k ? strtod(k + strlen(key), NULL) : NAN;
}

static void start(double t0, double end_at) {
  started = 1;
  cpu_at_go = cpu_ms();
  t0_epoch = t0;
  end_epoch = end_at;
  ok_last_at = t0;
  double span = ceil((end_at - t0) / 1000) - 1;
  last_second = span > 0 ? (long)span : 0;
  pacer_interval = cfg.rate > 0 ? 1000 / cfg.rate : 0;
  double wait = t0 - epoch_ms();
  pacer_next = mono_ms() + (wait > 0 ? wait : 0);
  next_flush_epoch = t0 + 1000 + 5;
  schedule_issue(mono_ms() + (wait > 0 ? wait : 0));
}

static void ipc_readable(void) {
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

/* ---------- main ---------- */
static void on_term(int sig) {
  (void)sig;
  got_term = 1;
}

static int parse_args(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    char *a = argv[i], *eq = strchr(a, '=');
    if (!eq) return -1;
    *eq = 0;
    const char *v = eq + 1;
    if (!strcmp(a, "socket")) cfg.socket = v;
    else if (!strcmp(a, "connection")) cfg.mode = !strcmp(v, "per-call") ? PER_CALL : !strcmp(v, "per-worker") ? PER_WORKER : PER_RETRY;
    else if (!strcmp(a, "rate")) cfg.rate = strtod(v, NULL);
    else if (!strcmp(a, "deadlineMs")) cfg.deadline_ms = strtod(v, NULL);
    else if (!strcmp(a, "retry")) cfg.backoff = !strcmp(v, "backoff");
    else if (!strcmp(a, "audience")) cfg.audience = v;
    else if (!strcmp(a, "maxCalls")) cfg.max_calls = strtoll(v, NULL, 10);
    else if (!strcmp(a, "method")) {
      /* Name:weight */
      char *colon = strchr(v, ':');
      if (!colon) return -1;
      *colon = 0;
      for (int m = 0; m < METHODS; m++)
        if (!strcmp(v, METHOD_NAMES[m])) cfg.weights[m] += strtod(colon + 1, NULL);
    } else return -1;
  }
  for (int m = 0; m < METHODS; m++) cfg.total_weight += cfg.weights[m];
  cfg.need_token = cfg.weights[VALIDATE_JWT_SVID] > 0;
  return cfg.socket && cfg.audience && cfg.total_weight > 0 ? 0 : -1;
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
  if (parse_args(argc, argv) < 0) {
    ipc_printf("{\"type\":\"fatal\",\"message\":\"native worker: bad arguments\"}\n");
    return 2;
  }
  rng_state = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(epoch_ms() * 1000);
  if (!rng_state) rng_state = 1;
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
    double now = mono_ms();
    double wake = INFINITY;
    if (started && !finished) {
      double e = epoch_ms();
      if (e >= next_flush_epoch) {
        long cs = current_second();
        if (record_second() >= 0 && record_second() < cs) ship_if_any();
        if (cs > 0) ipc_printf("{\"type\":\"flushed\",\"second\":%ld}\n", cs - 1);
        next_flush_epoch = t0_epoch + (cs + 1) * 1000 + 5;
        if (next_flush_epoch <= e) next_flush_epoch = e + 1000;
      }
      if (e >= end_epoch) stop();
      wake = fmin(wake, now + (next_flush_epoch - e));
      wake = fmin(wake, now + (end_epoch - e));
      if (call.active) {
        if (now >= call.deadline_at) {
          /* The client enforces its deadline itself: the server may never answer. */
          if (conn.fd >= 0) {
            cancel_stream(call.stream);
            conn_flush();
          }
          settle(DEADLINE_EXCEEDED, "Deadline exceeded", NULL, 0);
          continue;
        }
        wake = fmin(wake, call.deadline_at);
      } else if (issue_due()) {
        continue;
      } else if (issue_at != -1) {
        wake = fmin(wake, issue_at);
      }
    }
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
