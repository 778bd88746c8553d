/* Per-second recording and HdrHistogram V2 encoding for the native worker. The histogram has the
 * parameters of every other hop (lowest value 1 µs, 3 significant digits, growing as needed); the
 * V2 payload goes into a zlib stream of stored (uncompressed) deflate blocks, which any inflater
 * reads, so the worker needs no compression library and the pod process merges its histograms
 * exactly as it merges a Node worker's. */
#include "record.h"

#include "fatal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUB_BUCKET_HALF_COUNT_MAGNITUDE 10
#define SUB_BUCKET_HALF_COUNT (1 << SUB_BUCKET_HALF_COUNT_MAGNITUDE)
#define V2_ENCODING_COOKIE (0x1c849303 | 0x10)
#define V2_COMPRESSED_ENCODING_COOKIE (0x1c849304 | 0x10)
#define HEADER_BYTES 40

struct histogram {
  uint32_t *counts;
  size_t len;
  long max_index;
  uint64_t max_value, total;
};

static const char *const OUTCOME_NAMES[OUTCOMES] = {"ok", "rateLimited", "deadlineExceeded", "error"};
static const char *const STATUS_NAMES[17] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
    "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
};
#define CODES 256
#define CODE_UNKNOWN_SLOT 2 /* a status beyond the table: counted as UNKNOWN */

static long second_ = -1;
static uint64_t counts[OUTCOMES], by_code[CODES], calls_;
static struct histogram hist[OUTCOMES];
static struct line out, scratch;

static void put(struct line *l, const void *p, size_t n) {
  if (l->n + n + 1 > l->cap) {
    size_t cap = (l->n + n + 1) * 2;
    char *p = realloc(l->p, cap);
    if (!p) native_out_of_memory("interval line");
    l->p = p;
    l->cap = cap;
  }
  memcpy(l->p + l->n, p, n);
  l->n += n;
  l->p[l->n] = 0;
}
static void puts_(struct line *l, const char *s) { put(l, s, strlen(s)); }
static void putu(struct line *l, uint64_t v) {
  char b[24];
  put(l, b, (size_t)snprintf(b, sizeof b, "%llu", (unsigned long long)v));
}

static int floor_log2(uint64_t v) { return 63 - __builtin_clzll(v); }

/* The counts-array index HdrHistogram uses for `value` with these parameters. */
static size_t counts_index(uint64_t v) {
  int bucket = floor_log2(v) - SUB_BUCKET_HALF_COUNT_MAGNITUDE;
  if (bucket < 0) bucket = 0;
  uint64_t sub = v >> bucket;
  return (size_t)((bucket + 1) * SUB_BUCKET_HALF_COUNT + sub - SUB_BUCKET_HALF_COUNT);
}

static void hist_record(struct histogram *h, uint64_t v) {
  if (v < 1) v = 1;
  size_t i = counts_index(v);
  if (i >= h->len) {
    size_t n = h->len ? h->len : 4096;
    while (n <= i) n *= 2;
    uint32_t *counts = realloc(h->counts, n * sizeof *h->counts);
    if (!counts) native_out_of_memory("latency histogram");
    h->counts = counts;
    memset(h->counts + h->len, 0, (n - h->len) * sizeof *h->counts);
    h->len = n;
  }
  h->counts[i]++;
  h->total++;
  if ((long)i > h->max_index) h->max_index = (long)i;
  if (v > h->max_value) h->max_value = v;
}

static void hist_reset(struct histogram *h) {
  if (h->max_index >= 0) memset(h->counts, 0, (size_t)(h->max_index + 1) * sizeof *h->counts);
  h->max_index = -1;
  h->max_value = h->total = 0;
}

static void be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}
static void be64(uint8_t *p, uint64_t v) {
  be32(p, (uint32_t)(v >> 32));
  be32(p + 4, (uint32_t)v);
}

static void put_zigzag(struct line *l, int64_t value) {
  uint64_t v = value >= 0 ? (uint64_t)value << 1 : ((uint64_t)(-value) << 1) - 1;
  uint8_t b[10];
  size_t n = 0;
  while (v >= 0x80) {
    b[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  b[n++] = (uint8_t)v;
  put(l, b, n);
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Appends the histogram's compressed base64 encoding to `dst`. */
static void hist_encode(const struct histogram *h, struct line *dst) {
  struct line *v2 = &scratch;
  v2->n = 0;
  uint8_t header[HEADER_BYTES] = {0};
  put(v2, header, HEADER_BYTES);
  long limit = h->max_index + 1;
  for (long i = 0; i < limit;) {
    uint32_t c = h->counts[i++];
    if (c == 0) {
      int64_t zeros = 1;
      while (i < limit && h->counts[i] == 0) {
        zeros++;
        i++;
      }
      put_zigzag(v2, zeros > 1 ? -zeros : 0);
    } else {
      put_zigzag(v2, c);
    }
  }
  uint8_t *hd = (uint8_t *)v2->p;
  be32(hd, V2_ENCODING_COOKIE);
  be32(hd + 4, (uint32_t)(v2->n - HEADER_BYTES));
  be32(hd + 8, 0);                                       /* normalizing index offset */
  be32(hd + 12, 3);                                      /* significant digits */
  be64(hd + 16, 1);                                      /* lowest discernible value */
  be64(hd + 24, h->max_value > 2 ? h->max_value : 2);    /* highest trackable value */
  be64(hd + 32, 0x3ff0000000000000ULL);                  /* conversion ratio 1.0 */

  /* zlib: header, stored blocks of at most 65535 bytes, Adler-32 of the data. */
  static struct line z;
  z.n = 0;
  uint8_t zh[8 + 2] = {0};
  put(&z, zh, sizeof zh); /* cookie + length filled below, then 0x78 0x01 */
  z.p[8] = 0x78;
  z.p[9] = 0x01;
  const uint8_t *data = (const uint8_t *)v2->p;
  size_t left = v2->n, off = 0;
  uint32_t a = 1, b = 0;
  for (size_t i = 0; i < v2->n; i++) {
    a = (a + data[i]) % 65521;
    b = (b + a) % 65521;
  }
  do {
    size_t n = left > 65535 ? 65535 : left;
    uint8_t bh[5] = {(uint8_t)(n == left), (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)~n, (uint8_t)(~n >> 8)};
    put(&z, bh, 5);
    put(&z, data + off, n);
    off += n;
    left -= n;
  } while (left > 0);
  uint8_t ad[4];
  be32(ad, b << 16 | a);
  put(&z, ad, 4);
  be32((uint8_t *)z.p, V2_COMPRESSED_ENCODING_COOKIE);
  be32((uint8_t *)z.p + 4, (uint32_t)(z.n - 8));

  const uint8_t *s = (const uint8_t *)z.p;
  char q[4];
  size_t i = 0;
  for (; i + 3 <= z.n; i += 3) {
    q[0] = B64[s[i] >> 2];
    q[1] = B64[(s[i] & 3) << 4 | s[i + 1] >> 4];
    q[2] = B64[(s[i + 1] & 15) << 2 | s[i + 2] >> 6];
    q[3] = B64[s[i + 2] & 63];
    put(dst, q, 4);
  }
  if (z.n - i == 1) {
    q[0] = B64[s[i] >> 2];
    q[1] = B64[(s[i] & 3) << 4];
    q[2] = q[3] = '=';
    put(dst, q, 4);
  } else if (z.n - i == 2) {
    q[0] = B64[s[i] >> 2];
    q[1] = B64[(s[i] & 3) << 4 | s[i + 1] >> 4];
    q[2] = B64[(s[i + 1] & 15) << 2];
    q[3] = '=';
    put(dst, q, 4);
  }
}

void record_init(void) {
  for (int o = 0; o < OUTCOMES; o++) hist[o].max_index = -1;
}

long record_second(void) { return second_; }

const struct line *record_take(void) {
  if (calls_ == 0) return NULL;
  out.n = 0;
  puts_(&out, "{\"type\":\"interval\",\"data\":{\"second\":");
  putu(&out, (uint64_t)second_);
  puts_(&out, ",\"counts\":{");
  for (int o = 0; o < OUTCOMES; o++) {
    if (o) puts_(&out, ",");
    puts_(&out, "\"");
    puts_(&out, OUTCOME_NAMES[o]);
    puts_(&out, "\":");
    putu(&out, counts[o]);
    counts[o] = 0;
  }
  puts_(&out, "},\"byCode\":{");
  int first = 1;
  for (int c = 0; c < CODES; c++) {
    if (!by_code[c]) continue;
    char name[24];
    if (c < 17) snprintf(name, sizeof name, "%s", STATUS_NAMES[c]);
    else snprintf(name, sizeof name, "CODE_%d", c);
    if (!first) puts_(&out, ",");
    first = 0;
    puts_(&out, "\"");
    puts_(&out, name);
    puts_(&out, "\":");
    putu(&out, by_code[c]);
    by_code[c] = 0;
  }
  puts_(&out, "},\"histograms\":{");
  first = 1;
  for (int o = 0; o < OUTCOMES; o++) {
    if (!hist[o].total) continue;
    if (!first) puts_(&out, ",");
    first = 0;
    puts_(&out, "\"");
    puts_(&out, OUTCOME_NAMES[o]);
    puts_(&out, "\":\"");
    hist_encode(&hist[o], &out);
    puts_(&out, "\"");
    hist_reset(&hist[o]);
  }
  puts_(&out, "}}}\n");
  calls_ = 0;
  return &out;
}

const struct line *record_call(long second, int outcome, int code, uint64_t us) {
  const struct line *finished = second != second_ ? record_take() : NULL;
  second_ = second;
  counts[outcome]++;
  by_code[code >= 0 && code < CODES ? code : CODE_UNKNOWN_SLOT]++;
  calls_++;
  hist_record(&hist[outcome], us);
  return finished;
}

const char *record_encode_values(const uint64_t *values, size_t n) {
  static struct histogram h = {.max_index = -1};
  static struct line enc;
  hist_reset(&h);
  for (size_t i = 0; i < n; i++) hist_record(&h, values[i]);
  enc.n = 0;
  puts_(&enc, "");
  hist_encode(&h, &enc);
  return enc.p;
}
