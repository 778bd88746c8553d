/* HPACK (RFC 7541) decoding for the native load worker: the server's header blocks, with the static
 * table, a dynamic table and Huffman-coded strings. Encoding needs none of this: requests are
 * literals without indexing. */
#ifndef ATTESTORM_HPACK_H
#define ATTESTORM_HPACK_H

#include <stddef.h>
#include <stdint.h>

#define HPACK_TABLE_BYTES 4096
#define HPACK_MAX_ENTRIES (HPACK_TABLE_BYTES / 32)

struct hpack_entry {
  char *name;
  char *value;
  size_t name_len, value_len;
};

struct hpack_decoder {
  /* Ring of entries, newest at head; size as RFC 7541 counts it (32 + name + value per entry). */
  struct hpack_entry entries[HPACK_MAX_ENTRIES];
  int head, count;
  size_t size, max_size;
};

/* Called for each decoded field; strings are not NUL-terminated and live until the call returns. */
typedef void (*hpack_field_fn)(void *ctx, const char *name, size_t name_len, const char *value, size_t value_len);

void hpack_init(struct hpack_decoder *d);
void hpack_free(struct hpack_decoder *d);
/* What hpack_decode returns besides 0. Either way the connection is unusable: the dynamic table can
 * no longer match the server's. */
enum { HPACK_COMPRESSION_ERROR = -1, HPACK_OUT_OF_MEMORY = -2 };
/* Decodes one complete header block; returns 0, HPACK_COMPRESSION_ERROR on a malformed block
 * (HTTP/2's COMPRESSION_ERROR) or HPACK_OUT_OF_MEMORY when an entry could not be stored. */
int hpack_decode(struct hpack_decoder *d, const uint8_t *p, size_t n, hpack_field_fn fn, void *ctx);
/* Huffman-decodes n bytes into out (capacity cap); returns the length, or -1. */
long hpack_huffman_decode(const uint8_t *p, size_t n, char *out, size_t cap);

#endif
