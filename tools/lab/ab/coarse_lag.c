// tools/lab/ab/coarse_lag.c: how far CLOCK_MONOTONIC_COARSE lags
// CLOCK_MONOTONIC, sampled every ~20 us (a sleep between samples, as a
// thread that waits does) for N seconds. core/spin_clock.hpp relies on the
// coarse clock never leading; this shows how far it can lag (past a tick).
//   gcc -O2 -o /tmp/coarse_lag tools/lab/ab/coarse_lag.c && /tmp/coarse_lag 3
// (in the lab VM: build it on the host into a --share'd folder, run it there)
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long long ns(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char** argv) {
    const int secs = argc > 1 ? atoi(argv[1]) : 3;
    if (secs <= 0 || secs > 60) {
        fprintf(stderr, "usage: coarse_lag [SECONDS 1-60]\n");
        return 2;
    }
    const long long end = ns(CLOCK_MONOTONIC) + secs * 1000000000LL;
    long long max_lag = 0, n = 0, over_tick = 0;
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC_COARSE, &res);
    const long long tick = res.tv_sec * 1000000000LL + res.tv_nsec;
    for (;;) {
        const long long c = ns(CLOCK_MONOTONIC_COARSE), m = ns(CLOCK_MONOTONIC);
        if (m > end) break;
        const long long lag = m - c;
        if (lag > max_lag) max_lag = lag;
        if (lag > tick) ++over_tick;
        ++n;
        usleep(20);
    }
    printf("coarse resolution %.3f ms; %lld samples; max lag %.3f ms; %lld past a tick\n", tick / 1e6, n, max_lag / 1e6,
           over_tick);
    return 0;
}
