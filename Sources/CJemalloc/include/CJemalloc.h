#ifndef C_JEMALLOC_H
#define C_JEMALLOC_H

/// The worker's jemalloc settings (see malloc_conf.c). Nothing here is called: linking this target into the
/// worker is what makes jemalloc its allocator and these its settings.
extern const char *malloc_conf;

#endif
