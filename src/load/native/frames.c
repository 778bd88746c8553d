/* What the server's frames mean for the native worker's call: HEADERS and CONTINUATION assembled
 * into header blocks and decoded (hpack.c), the status as grpc-js derives it from :status,
 * content-type, grpc-status and grpc-message; DATA reassembled into length-prefixed messages; and
 * the connection-level frames (SETTINGS, PING, GOAWAY, ...) checked as RFC 9113 asks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

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

int hex(char c) {
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

int on_frame(int type, int flags, uint32_t stream, const uint8_t *p, size_t len) {
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
