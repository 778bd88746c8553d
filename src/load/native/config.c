/* The native worker's configuration: the WorkerConfig a Node worker reads as JSON, given as key=value
 * arguments (src/load/worker/native-args.ts writes them), so the worker needs no JSON reader. */
#include <stdlib.h>
#include <string.h>

#include "worker.h"

const char *const METHOD_NAMES[METHODS] = {"FetchJWTSVID", "FetchX509SVID", "FetchX509Bundles", "FetchJWTBundles", "ValidateJWTSVID"};

struct worker_config cfg = {.deadline_ms = 1000, .max_calls = -1};

int parse_args(int argc, char **argv, int first) {
  for (int i = first; i < argc; i++) {
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
