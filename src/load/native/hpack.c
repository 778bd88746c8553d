/* HPACK decoding (RFC 7541) for the native load worker: what a real HTTP/2 server (nghttp2 in node,
 * Go's x/net/http2) sends back is indexed fields, literals that enter the dynamic table, and
 * Huffman-coded strings, so grpc-status and grpc-message can only be read after all of it. */
#include "hpack.h"

#include <stdlib.h>
#include <string.h>

static const char *const STATIC_NAMES[62] = {
    "", ":authority", ":method", ":method", ":path", ":path", ":scheme", ":scheme", ":status", ":status",
    ":status", ":status", ":status", ":status", ":status", "accept-charset", "accept-encoding", "accept-language",
    "accept-ranges", "accept", "access-control-allow-origin", "age", "allow", "authorization", "cache-control",
    "content-disposition", "content-encoding", "content-language", "content-length", "content-location",
    "content-range", "content-type", "cookie", "date", "etag", "expect", "expires", "from", "host", "if-match",
    "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "last-modified", "link", "location",
    "max-forwards", "proxy-authenticate", "proxy-authorization", "range", "referer", "refresh", "retry-after",
    "server", "set-cookie", "strict-transport-security", "transfer-encoding", "user-agent", "vary", "via",
    "www-authenticate",
};
static const char *const STATIC_VALUES[62] = {
    "", "", "GET", "POST", "/", "/index.html", "http", "https", "200", "204", "206", "304", "400", "404", "500",
    "", "gzip, deflate",
};

/* Code lengths of symbols 0..255 and EOS (256), RFC 7541 Appendix B. The code is canonical (codes
 * run in order of length, then symbol), so the lengths alone define it. */
static const uint8_t HUFFMAN_LENGTHS[257] = {
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
    28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
    6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
    5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
    13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
    15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
    6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
    20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
    22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
    21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
    19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
    30,
};

#define HUFFMAN_MAX_LEN 30
static uint32_t huff_first[HUFFMAN_MAX_LEN + 2];
static uint16_t huff_count[HUFFMAN_MAX_LEN + 2];
static uint16_t huff_offset[HUFFMAN_MAX_LEN + 2];
static uint16_t huff_sorted[257];
static int huff_ready;

static void huffman_build(void) {
  for (int s = 0; s < 257; s++) huff_count[HUFFMAN_LENGTHS[s]]++;
  uint32_t code = 0;
  uint16_t off = 0;
  for (int len = 1; len <= HUFFMAN_MAX_LEN; len++) {
    huff_first[len] = code;
    huff_offset[len] = off;
    off += huff_count[len];
    code = (code + huff_count[len]) << 1;
  }
  uint16_t fill[HUFFMAN_MAX_LEN + 2] = {0};
  for (int len = 1; len <= HUFFMAN_MAX_LEN; len++)
    for (int s = 0; s < 257; s++)
      if (HUFFMAN_LENGTHS[s] == len) huff_sorted[huff_offset[len] + fill[len]++] = (uint16_t)s;
  huff_ready = 1;
}

long hpack_huffman_decode(const uint8_t *p, size_t n, char *out, size_t cap) {
  if (!huff_ready) huffman_build();
  size_t o = 0;
  uint32_t code = 0;
  int len = 0;
  for (size_t i = 0; i < n; i++) {
    for (int b = 7; b >= 0; b--) {
      code = (code << 1) | ((p[i] >> b) & 1);
      len++;
      if (len > HUFFMAN_MAX_LEN) return -1;
      if (huff_count[len] && code >= huff_first[len] && code - huff_first[len] < huff_count[len]) {
        uint16_t sym = huff_sorted[huff_offset[len] + (code - huff_first[len])];
        if (sym == 256) return -1; /* EOS inside a string is an error */
        if (o >= cap) return -1;
        out[o++] = (char)sym;
        code = 0;
        len = 0;
      }
    }
  }
  /* Padding: fewer than 8 bits, all ones (the start of EOS). */
  if (len > 7 || code != (1u << len) - 1) return -1;
  return (long)o;
}

void hpack_init(struct hpack_decoder *d) {
  memset(d, 0, sizeof *d);
  d->max_size = HPACK_TABLE_BYTES;
}

static void evict_oldest(struct hpack_decoder *d) {
  struct hpack_entry *e = &d->entries[(d->head + d->count - 1) % HPACK_MAX_ENTRIES];
  d->size -= 32 + e->name_len + e->value_len;
  free(e->name);
  e->name = e->value = NULL;
  d->count--;
}

void hpack_free(struct hpack_decoder *d) {
  while (d->count) evict_oldest(d);
  d->size = 0;
}

/* Returns -1 when the entry cannot be stored: dropping it would shift every later index by one, so
 * the caller must give the connection up rather than read other fields' names and values. */
static int table_add(struct hpack_decoder *d, const char *name, size_t nl, const char *value, size_t vl) {
  size_t need = 32 + nl + vl;
  while (d->count && d->size + need > d->max_size) evict_oldest(d);
  if (need > d->max_size) return 0; /* larger than the table: it empties it and is not kept */
  char *buf = malloc(nl + vl + 1);
  if (!buf) return -1;
  memcpy(buf, name, nl);
  memcpy(buf + nl, value, vl);
  d->head = (d->head + HPACK_MAX_ENTRIES - 1) % HPACK_MAX_ENTRIES;
  struct hpack_entry *e = &d->entries[d->head];
  e->name = buf;
  e->value = buf + nl;
  e->name_len = nl;
  e->value_len = vl;
  d->count++;
  d->size += need;
  return 0;
}

/* Index 1..61: static table; 62..: dynamic, newest first. */
static int lookup(struct hpack_decoder *d, uint64_t index, const char **name, size_t *nl, const char **value, size_t *vl) {
  if (index == 0) return -1;
  if (index < 62) {
    *name = STATIC_NAMES[index];
    *nl = strlen(*name);
    *value = index < 17 ? STATIC_VALUES[index] : "";
    *vl = strlen(*value);
    return 0;
  }
  uint64_t i = index - 62;
  if (i >= (uint64_t)d->count) return -1;
  struct hpack_entry *e = &d->entries[(d->head + i) % HPACK_MAX_ENTRIES];
  *name = e->name;
  *nl = e->name_len;
  *value = e->value;
  *vl = e->value_len;
  return 0;
}

static int read_int(const uint8_t **pp, const uint8_t *end, int prefix, uint64_t *out) {
  const uint8_t *p = *pp;
  if (p >= end) return -1;
  uint64_t max = (1u << prefix) - 1;
  uint64_t v = *p++ & max;
  if (v == max) {
    int shift = 0;
    for (;;) {
      if (p >= end || shift > 56) return -1;
      uint8_t b = *p++;
      v += (uint64_t)(b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80)) break;
    }
  }
  *pp = p;
  *out = v;
  return 0;
}

/* A string literal into scratch (raw bytes are pointed at, Huffman ones decoded). */
static int read_string(const uint8_t **pp, const uint8_t *end, char *scratch, size_t cap, const char **s, size_t *len) {
  if (*pp >= end) return -1;
  int huffman = (**pp & 0x80) != 0;
  uint64_t n;
  if (read_int(pp, end, 7, &n) < 0 || n > (uint64_t)(end - *pp)) return -1;
  if (huffman) {
    long m = hpack_huffman_decode(*pp, n, scratch, cap);
    if (m < 0) return -1;
    *s = scratch;
    *len = (size_t)m;
  } else {
    *s = (const char *)*pp;
    *len = n;
  }
  *pp += n;
  return 0;
}

/* Huffman output is at most 8/5 of its input; blocks are bounded by the worker's frame buffer. */
#define SCRATCH_BYTES (160 * 1024)
static char name_scratch[SCRATCH_BYTES], value_scratch[SCRATCH_BYTES];

int hpack_decode(struct hpack_decoder *d, const uint8_t *p, size_t n, hpack_field_fn fn, void *ctx) {
  const uint8_t *end = p + n;
  int fields = 0;
  while (p < end) {
    uint8_t b = *p;
    const char *name, *value;
    size_t nl, vl;
    uint64_t index;
    if (b & 0x80) { /* indexed field */
      if (read_int(&p, end, 7, &index) < 0 || lookup(d, index, &name, &nl, &value, &vl) < 0) return HPACK_COMPRESSION_ERROR;
      fn(ctx, name, nl, value, vl);
    } else if ((b & 0xe0) == 0x20) { /* dynamic table size update: only before the first field */
      if (fields || read_int(&p, end, 5, &index) < 0 || index > HPACK_TABLE_BYTES) return HPACK_COMPRESSION_ERROR;
      d->max_size = (size_t)index;
      while (d->count && d->size > d->max_size) evict_oldest(d);
      continue;
    } else { /* literal: with incremental indexing (01), without (0000) or never indexed (0001) */
      int incremental = (b & 0xc0) == 0x40;
      if (read_int(&p, end, incremental ? 6 : 4, &index) < 0) return HPACK_COMPRESSION_ERROR;
      if (index) {
        const char *v0;
        size_t v0l;
        if (lookup(d, index, &name, &nl, &v0, &v0l) < 0) return HPACK_COMPRESSION_ERROR;
        /* The dynamic entry may be evicted by the add below: keep the name in scratch. */
        if (nl > SCRATCH_BYTES) return HPACK_COMPRESSION_ERROR;
        memcpy(name_scratch, name, nl);
        name = name_scratch;
      } else if (read_string(&p, end, name_scratch, SCRATCH_BYTES, &name, &nl) < 0) {
        return HPACK_COMPRESSION_ERROR;
      }
      if (read_string(&p, end, value_scratch, SCRATCH_BYTES, &value, &vl) < 0) return HPACK_COMPRESSION_ERROR;
      fn(ctx, name, nl, value, vl);
      if (incremental && table_add(d, name, nl, value, vl) < 0) return HPACK_OUT_OF_MEMORY;
    }
    fields++;
  }
  return 0;
}
