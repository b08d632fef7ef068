#ifndef WATCHRELAY_CMALLOC_SHIM_H
#define WATCHRELAY_CMALLOC_SHIM_H
/* glibc's malloc tuning (mallopt), which Swift's Glibc module does not bring in; part of libc,
 * no library to link. */
#include <malloc.h>

/* M_ARENA_MAX, a negative macro Swift does not import as a constant. */
static const int relay_m_arena_max = M_ARENA_MAX;
#endif
