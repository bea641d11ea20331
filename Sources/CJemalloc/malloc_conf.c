#include "CJemalloc.h"

// jemalloc replaces glibc's malloc in the worker (this target links it, ahead of libc): about 8% less CPU
// per notification, mostly glibc's bins and chunk consolidation (docs/performance.md).
// jemalloc reads this string once, before main. Its defaults keep more memory than the worker's 64 MB budget
// at a 1M backlog allows (64-66 MB at peak against glibc's 60-62 MB), so:
// - narenas:1: one arena (the default is four per core), so freed pages are not kept apart per thread; the
//   threads' caches still serve most allocations without its lock;
// - dirty_decay_ms:250: freed pages go back to the system after a quarter of a second rather than ten;
// - muzzy_decay_ms:0: and at once with MADV_DONTNEED, not MADV_FREE, whose pages still count in the RSS.
// Together: 60-62 MB, also over 3M notifications, at the defaults' CPU within the noise. MALLOC_CONF in the
// environment overrides any of these.
// Sanitizer builds define malloc themselves (their runtime is in the executable), so jemalloc stays unused.
const char *malloc_conf = "narenas:1,dirty_decay_ms:250,muzzy_decay_ms:0";
