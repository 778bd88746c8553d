/* What the native worker sends, built once before its first call: each method's HEADERS block
 * (HPACK literals without indexing, so it never needs the server's table) and the request bodies
 * in gRPC frames; and the growable buffer everything outgoing is written into. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fatal.h"
#include "worker.h"

void bput(struct bytes *b, const void *src, size_t n) {
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
void pb_string(struct bytes *b, int field, const char *s, size_t n) {
  bbyte(b, (uint8_t)(field << 3 | 2));
  bvarint(b, n);
  bput(b, s, n);
}
void frame_header(struct bytes *b, size_t len, int type, int flags, uint32_t stream) {
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

struct bytes header_block[METHODS];
struct bytes jwt_body, empty_body, validate_body;

void grpc_frame(struct bytes *out, const struct bytes *msg) {
  out->n = 0;
  uint8_t h[5] = {0, (uint8_t)(msg->n >> 24), (uint8_t)(msg->n >> 16), (uint8_t)(msg->n >> 8), (uint8_t)msg->n};
  bput(out, h, 5);
  if (msg->n) bput(out, msg->p, msg->n);
}

void build_requests(void) {
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
