#ifndef WATCHRELAY_CTHREADSANITIZER_SHIM_H
#define WATCHRELAY_CTHREADSANITIZER_SHIM_H
/* The two ThreadSanitizer annotations LockedState (Primitives) needs; no library to link. */

/* ThreadSanitizer does not see Swift's Synchronization.Mutex on Linux: the stdlib locks it with
 * raw futex calls in code TSan does not instrument, so TSan reports races on state the mutex
 * does protect (a 10-line Swift program reproduces it). LockedState marks the inside of each
 * critical section with these two helpers so TSan sees the happens-before edges the mutex
 * creates. The TSan runtime defines __tsan_acquire/__tsan_release; elsewhere the weak
 * references are NULL and the helpers do nothing. */
extern void __tsan_acquire(void *addr) __attribute__((weak));
extern void __tsan_release(void *addr) __attribute__((weak));

/* Tells TSan that the critical section guarded by `addr` starts (after the lock was taken). */
static inline void relay_tsan_acquire(void *addr) {
    if (__tsan_acquire) __tsan_acquire(addr);
}

/* Tells TSan that the critical section guarded by `addr` ends (before the lock is released). */
static inline void relay_tsan_release(void *addr) {
    if (__tsan_release) __tsan_release(addr);
}

#endif
