/* The native load worker: one small process per caller (its own PID, forked by a pod process into
 * the pod's cgroup and uid) calling the Workload API over gRPC on HTTP/2 written by hand, with the
 * same loop, outcomes and per-second data as the Node workers (src/load/worker/worker-loop.ts).
 * It talks to its pod process over node's IPC channel (JSON lines on NODE_CHANNEL_FD), so the pod
 * process sees the same messages from it as from a Node worker.
 *
 * This header is what the worker's files share, by file: config.c (the command line), clock.c,
 * ipc.c (node's channel), requests.c (what the worker sends, built once), protobuf.c (the token it
 * keeps), connection.c (the socket and its frames out and in), frames.c (what the server's frames
 * mean for the call), call.c (the call in flight and the loop's schedule) and main.c. */
#ifndef ATTESTORM_WORKER_H
#define ATTESTORM_WORKER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "hpack.h"

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
extern const char *const METHOD_NAMES[METHODS];
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

static inline uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* ---------- config.c: the command line (argv: key=value) ---------- */
struct worker_config {
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
};
extern struct worker_config cfg;
/* Fills cfg from argv[first..argc-1]; returns 0, or -1 on an argument it does not know. */
int parse_args(int argc, char **argv, int first);

/* ---------- clock.c ---------- */
double mono_ms(void);
double epoch_ms(void);
double cpu_ms(void);
/* Seeds random01 from the PID and the time, so forked workers do not draw the same numbers. */
void seed_random(void);
double random01(void);

/* ---------- ipc.c: node's JSON-lines channel ---------- */
extern int ipc_fd;
void ipc_send(const char *line, size_t n);
__attribute__((format(printf, 1, 2))) void ipc_printf(const char *fmt, ...);
/* Reads what the pod process sent: 'go' and 'stop'. */
void ipc_readable(void);

/* ---------- requests.c: what the worker sends, built once ---------- */
struct bytes {
  uint8_t *p;
  size_t n, cap;
};
void bput(struct bytes *b, const void *src, size_t n);
void pb_string(struct bytes *b, int field, const char *s, size_t n);
void frame_header(struct bytes *b, size_t len, int type, int flags, uint32_t stream);
/* out = msg in a gRPC length-prefixed frame. */
void grpc_frame(struct bytes *out, const struct bytes *msg);
extern struct bytes header_block[METHODS];
extern struct bytes jwt_body, empty_body, validate_body;
void build_requests(void);

/* ---------- protobuf.c: the first JWT-SVID token of a JWTSVIDResponse ---------- */
extern int have_token;
extern double token_at;
/* Keeps the response's token as the body of the next ValidateJWTSVID. */
void keep_token(const uint8_t *msg, size_t n);

/* ---------- connection.c: the connection ---------- */
struct connection {
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
};
extern struct connection conn;
void conn_close(void);
void queue_frame(int type, int flags, uint32_t stream, const void *payload, size_t n);
/* Writes what is queued; returns -1 when the connection is broken. */
int conn_flush(void);
/* Opens a connection and queues the preface; on failure fills `why` (as node words it). */
int conn_open(char *why, size_t why_len);
/* Reads and handles what the server sent. */
void conn_readable(void);
void cancel_stream(uint32_t stream);

/* ---------- frames.c: the server's frames ---------- */
/* Returns 0, or the HTTP/2 error code of a connection error (RFC 9113 §5.4.1). */
int on_frame(int type, int flags, uint32_t stream, const uint8_t *p, size_t len);
/* A hex digit's value, or -1. */
int hex(char c);

/* ---------- call.c: the call in flight and the loop's schedule ---------- */
struct call {
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
};
extern struct call call;
extern int started;
extern volatile sig_atomic_t got_term;
/* 'go': the load runs from t0 to end_at (epoch ms). */
void start(double t0, double end_at);
/* 'stop' (or the end): finishes once the call in flight is settled. */
void stop(void);
/* The call is over with this status; `response` is its first message when it succeeded. */
void settle(int code, const char *details, const uint8_t *response, size_t response_len);
/* The stream ended (END_STREAM, RST_STREAM or the connection went): the status as grpc-js gives it. */
void on_close(int rst, int rst_code, int dropped);
/* Does what is due now: second flushes, the end, a deadline, the next call. Returns the monotonic
 * time to wake at (INFINITY: nothing scheduled), or -1 when it did something and is to be asked
 * again at once. */
double run_due(void);

#endif
