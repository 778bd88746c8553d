/* The native worker's clocks (monotonic for deadlines and pacing, the epoch for seconds the pod
 * process shares, its own CPU time) and the random numbers of its method mix and back-off. */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "worker.h"

double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
double epoch_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
double cpu_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static uint64_t rng_state;
void seed_random(void) {
  rng_state = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(epoch_ms() * 1000);
  if (!rng_state) rng_state = 1;
}
double random01(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (rng_state >> 11) * (1.0 / 9007199254740992.0);
}
