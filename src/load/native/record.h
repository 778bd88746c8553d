/* A native worker's measurements for the current second, as the Node workers keep them
 * (src/load/worker/recorder.ts): counts per outcome and per status code, and one HDR histogram of
 * latency per outcome, shipped as node IPC 'interval' lines whose histograms are in the V2
 * compressed encoding hdr-histogram-js decodes. */
#ifndef ATTESTORM_RECORD_H
#define ATTESTORM_RECORD_H

#include <stddef.h>
#include <stdint.h>

enum { OUT_OK, OUT_RATE_LIMITED, OUT_DEADLINE, OUT_ERROR, OUTCOMES };

struct line {
  char *p;
  size_t n, cap;
};

void record_init(void);
/* Records one call; returns the finished previous second's 'interval' line when `second` moved on. */
const struct line *record_call(long second, int outcome, int code, uint64_t us);
/* The current second's line (NULL when nothing was recorded), and a fresh second. */
const struct line *record_take(void);
/* The second being recorded (-1 before the first call). */
long record_second(void);
/* The compressed base64 encoding of a histogram holding `values` (for tests). */
const char *record_encode_values(const uint64_t *values, size_t n);

#endif
