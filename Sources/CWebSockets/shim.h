#ifndef WATCHRELAY_CWEBSOCKETS_SHIM_H
#define WATCHRELAY_CWEBSOCKETS_SHIM_H
/* Exposes libwebsockets 4.1 to Swift. Function-like macros do not import into
 * Swift, so what the transport needs from them is re-exported here. */
#include <libwebsockets.h>

/* libev, the event library the contexts run on (lws's libev plugin, Debian package
 * libwebsockets-evlib-ev): the service thread owns the loop and hands it to lws as a
 * "foreign" loop, so it can run one iteration at a time (ev_run with EVRUN_ONCE). Only these
 * wrappers are exposed; ev.h's compatibility names (ev_loop is also a function there) stay out. */
#define EV_COMPAT3 0
#include <ev.h>

/* A new loop on the best backend of this system (epoll on Linux); NULL if none could be made. */
static inline void *relay_ev_loop_new(void) { return ev_loop_new(EVFLAG_AUTO); }
/* Waits for at least one event (or a signal), handles what is ready, and returns.
 *
 * First it makes libev re-read its timers' due times (ev_suspend + ev_resume, which shifts
 * them by the nanoseconds in between). lws 4.1's libev glue re-arms its one timer, which
 * serves every lws_sul (pings, hang-ups, lws_set_timeout, ours), with ev_timer_set +
 * ev_timer_start; on a timer that is already running the start does nothing and libev's timer
 * heap keeps the old due time it cached, so a deadline nearer than the armed one (a 2 s ping
 * while a 6 s hang-up is armed) would wait for the old one. Re-read, the new (relative, hence
 * past) time makes the timer fire at once, and lws's timer callback arms it properly. */
static inline void relay_ev_run_once(void *loop) {
    ev_suspend((struct ev_loop *)loop);
    ev_resume((struct ev_loop *)loop);
    ev_run((struct ev_loop *)loop, EVRUN_ONCE);
}
static inline void relay_ev_loop_destroy(void *loop) { ev_loop_destroy((struct ev_loop *)loop); }
/* Whether the loop polls with epoll (EVBACKEND_EPOLL). */
static inline int relay_ev_uses_epoll(void *loop) { return ev_backend((struct ev_loop *)loop) == EVBACKEND_EPOLL; }

/* An lws timer that knows its owner: lws hands a sul callback only the sul pointer, and the sul
 * is the first member, so the callback finds `owner` (the Swift ServiceCore) at that address. */
struct relay_timer {
    lws_sorted_usec_list_t sul;
    void *owner;
};

/* LWS_PRE: writable headroom lws_write() needs before the payload (16 on x86_64). */
static const size_t relay_lws_pre = LWS_PRE;

#endif
