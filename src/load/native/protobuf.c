/* Protobuf reading for the native worker: the first JWT-SVID token of a JWTSVIDResponse, kept for
 * the ValidateJWTSVID calls of a method mix. Nothing else of a response is decoded. */
#include <stdlib.h>
#include <string.h>

#include "worker.h"

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

int have_token;
double token_at;

void keep_token(const uint8_t *msg, size_t n) {
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
