#ifndef WATCHRELAY_CHIREDIS_SHIM_H
#define WATCHRELAY_CHIREDIS_SHIM_H
/* By its Debian path: hiredis.pc's cflags carry -D_FILE_OFFSET_BITS=64, which SwiftPM refuses
 * (with a warning) when it reads them, so the target does not go through pkg-config. */
#include <hiredis/hiredis.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

/* hiredis seen through two opaque handles, so Swift never reads a C struct's fields through
 * a pointer: a connection (redisContext) and a reply (redisReply). Commands go in already
 * encoded as RESP (the Swift side writes the bytes); replies come out through accessors. */
typedef struct relay_redis relay_redis;
typedef struct relay_redis_reply relay_redis_reply;

/* Connects with a timeout for connect, and for each read and write after it. NULL only when
 * hiredis could not allocate; otherwise check relay_redis_err. */
static inline relay_redis *relay_redis_connect(const char *host, int port, int timeout_ms) {
    struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
    redisContext *c = redisConnectWithTimeout(host, port, tv);
    if (c != NULL && c->err == 0) {
        redisSetTimeout(c, tv);
        redisEnableKeepAlive(c);
    }
    return (relay_redis *)c;
}
/* The connection's socket (for relay_redis_shutdown_fd from another thread), -1 if none. */
static inline int relay_redis_fd(relay_redis *c) { return ((redisContext *)c)->fd; }
/* Read/write timeout from now on; 0 waits forever (a subscriber waits for messages). */
static inline int relay_redis_set_timeout(relay_redis *c, int timeout_ms) {
    struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
    return redisSetTimeout((redisContext *)c, tv);
}
/* Ends a blocking read on the socket (it sees EOF); any thread may call it while the owning
 * thread has not freed the connection. */
static inline void relay_redis_shutdown_fd(int fd) { if (fd >= 0) shutdown(fd, SHUT_RDWR); }
static inline void relay_redis_free(relay_redis *c) { redisFree((redisContext *)c); }
/* 0, or REDIS_ERR_IO / REDIS_ERR_EOF / REDIS_ERR_PROTOCOL / REDIS_ERR_OOM / REDIS_ERR_OTHER. */
static inline int relay_redis_err(relay_redis *c) { return ((redisContext *)c)->err; }
static inline const char *relay_redis_errstr(relay_redis *c) { return ((redisContext *)c)->errstr; }

/* Queues one RESP-encoded command in the output buffer (nothing is written yet). */
static inline int relay_redis_append(relay_redis *c, const unsigned char *bytes, size_t length) {
    return redisAppendFormattedCommand((redisContext *)c, (const char *)bytes, length);
}
/* Writes what is buffered (if anything) and reads the next reply; NULL on failure (see err). */
static inline relay_redis_reply *relay_redis_next_reply(relay_redis *c) {
    void *reply = NULL;
    if (redisGetReply((redisContext *)c, &reply) != REDIS_OK) return NULL;
    return (relay_redis_reply *)reply;
}
static inline void relay_redis_reply_free(relay_redis_reply *r) { freeReplyObject(r); }

/* REDIS_REPLY_STRING 1, ARRAY 2, INTEGER 3, NIL 4, STATUS 5, ERROR 6. */
static inline int relay_redis_reply_type(const relay_redis_reply *r) { return ((const redisReply *)r)->type; }
static inline long long relay_redis_reply_integer(const relay_redis_reply *r) {
    return ((const redisReply *)r)->integer;
}
/* Bytes of a string, status or error reply. */
static inline size_t relay_redis_reply_length(const relay_redis_reply *r) { return ((const redisReply *)r)->len; }
static inline void relay_redis_reply_copy(const relay_redis_reply *r, unsigned char *out) {
    if (((const redisReply *)r)->len > 0) memcpy(out, ((const redisReply *)r)->str, ((const redisReply *)r)->len);
}
/* Elements of an array reply; an element is owned by its array (never freed on its own). */
static inline size_t relay_redis_reply_count(const relay_redis_reply *r) { return ((const redisReply *)r)->elements; }
static inline const relay_redis_reply *relay_redis_reply_element(const relay_redis_reply *r, size_t i) {
    return (const relay_redis_reply *)((const redisReply *)r)->element[i];
}

#endif
