#include "CJemalloc.h"

// jemalloc replaces glibc's malloc in the worker (this target links it, ahead of libc): it costs the worker
// about 8% less CPU per notification, mostly in glibc's bins and chunk consolidation (docs/performance.md).
// jemalloc reads this string once, before main. Its defaults keep more memory than the worker's 64 MB
// budget at a 1M backlog allows (65-66 MB against glibc's 62 MB), so:
// - narenas:2: two arenas (the default is four per core), so freed pages are not kept apart per thread;
// - dirty_decay_ms:1000: freed pages go back to the system after a second rather than ten;
// - muzzy_decay_ms:0: and at once with MADV_DONTNEED, not MADV_FREE, whose pages still count in the RSS.
// Together: 62-63 MB, within about 2% of the defaults' CPU. MALLOC_CONF in the environment overrides these.
// Sanitizer builds define malloc themselves (their runtime is in the executable), so jemalloc stays unused.
const char *malloc_conf = "narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0";
