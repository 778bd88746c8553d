/* The native worker's loop: the call in flight and how it is settled (outcome, latency from the
 * intended send, the per-second record), when the next call is sent (closed loop, paced, back-off
 * after failures, the method mix), the per-second flushes and the end. The same loop as the Node
 * workers' (src/load/worker/worker-loop.ts). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "record.h"
#include "worker.h"

struct call call;
static double t0_epoch, end_epoch; /* from 'go' */
static long last_second;
int started;
static int stopping, finished;
static long long calls;
static double cpu_at_go;
static int failures;
static double issue_at = -1; /* mono ms of the next send; -1: none scheduled */
static int issue_fires; /* at issue_at: 1 = send the call intended then, 0 = draw the next intended time */
static double pacer_next, pacer_interval; /* open loop: 1000/rate ms */
static double next_flush_epoch;
static double ok_last_at, ok_longest; /* epoch ms */

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

void stop(void) {
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

void settle(int code, const char *details, const uint8_t *response, size_t response_len) {
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

void on_close(int rst, int rst_code, int dropped) {
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

void start(double t0, double end_at) {
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

double run_due(void) {
  if (!started || finished) return INFINITY;
  double now = mono_ms();
  double wake = INFINITY;
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
      return -1;
    }
    wake = fmin(wake, call.deadline_at);
  } else if (issue_due()) {
    return -1;
  } else if (issue_at != -1) {
    wake = fmin(wake, issue_at);
  }
  return wake;
}
