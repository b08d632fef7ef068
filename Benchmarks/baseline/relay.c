/*
 * relay.c: the raw libwebsockets relay of WatchRelay's benchmarks (see BENCHMARKS.md).
 *
 * The minimum a relay must do, written straight on lws 4.1, so `watchrelay bench` can show
 * the ceiling of this library on this machine:
 *   - pairing by path: a client connects to /pair/<n>/phone or /pair/<n>/watch (any or no
 *     subprotocol); the two connections of pair <n> are peers;
 *   - every message (text or binary) from one side is forwarded whole, in order, to its peer,
 *     or dropped if the peer is not connected;
 *   - one service thread; write-on-WRITEABLE with a per-connection FIFO (one lws_write per
 *     WRITEABLE); the sender's rx is paused (lws_rx_flow_control) while its peer's queue
 *     holds more than QUEUE_HIGH bytes, and resumed below QUEUE_LOW.
 *
 * Buffers match the Swift transport: rx_buffer_size 16384, pt_serv_buf_size 32 KiB; a whole
 * message goes to lws_write at once (tx_packet_size 128 KiB, so one send() per message).
 *
 * With --accepted (or WATCHRELAY_BENCH_C_ACCEPTED=1) it also answers every forwarded message
 * with a 38-byte `accepted` frame to its sender, shaped like WatchRelay's
 * ({"re":"m0000000000","type":"accepted"}): the same two writes per message as WatchRelay's
 * protocol makes (`accepted` to the phone, `deliver` to the watch), for an A/B of that cost.
 * The generator reads and counts those frames; `watchrelay bench` never sets it. An `accepted`
 * joins its sender's own queue, and nothing pauses a sender for that queue's sake: a phone that
 * never reads would grow it without bound (the bench's phones always read).
 *
 * Event loop: like the Swift transport, lws's libev plugin (package libwebsockets-evlib-ev,
 * epoll) on a loop this program owns and runs one iteration at a time; `--event-loop poll`
 * (or WATCHRELAY_EVENT_LOOP=poll, as for the Swift transport) runs lws's default poll() loop
 * instead, whose cost grows with the number of connections.
 *
 * Build: cc -O2 -Wall -o relay relay.c -lwebsockets -lev
 * Run:   relay [--host 127.0.0.1] [--port 0] [--event-loop libev|poll] [--rx-buffer-bytes N]
 *        [--accepted 0|1]
 *        (N as `watchrelay serve --rx-buffer-bytes`, default 16384; prints
 *        ws://HOST:PORT/ as its first line; SIGINT/SIGTERM stop it)
 */
#include <libwebsockets.h>
#define EV_COMPAT3 0
#include <ev.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MESSAGE (1u << 20)   /* larger messages close the connection with 1009 */
#define QUEUE_HIGH (4u << 20)    /* pause the sender above this many queued bytes */
#define QUEUE_LOW (1u << 20)     /* resume it below this */
#define MAX_PAIRS 1000000

/* One queued or in-assembly message: LWS_PRE bytes of headroom, then the payload. */
struct msg {
	struct msg *next;
	size_t len, cap;
	int binary;
	unsigned char buf[];
};

/* Per-connection state: lws allocates and zero-fills it (per_session_data_size). */
struct conn {
	struct lws *wsi;
	long pair;              /* index into pairs, -1 before ESTABLISHED parsed the path */
	int role;               /* 0 phone, 1 watch */
	int paused;             /* our rx is paused because the peer's queue is full */
	struct msg *head, *tail;
	size_t queued;          /* payload bytes in head..tail */
	struct msg *rx;         /* the message being reassembled */
};

struct pair {
	struct conn *side[2];
};

static struct pair *pairs;
static long pairs_cap;
static struct lws_context *context;
static volatile sig_atomic_t interrupted;
static int answer_accepted;   /* --accepted: an `accepted` frame to the sender of each message */
static const char accepted_frame[] = "{\"re\":\"m0000000000\",\"type\":\"accepted\"}";

static struct conn *peer_of(struct conn *c)
{
	return c->pair < 0 ? NULL : pairs[c->pair].side[1 - c->role];
}

/* Parses /pair/<n>/phone|watch; returns 0 on success. */
static int parse_path(const char *path, long *n, int *role)
{
	char *end;
	if (strncmp(path, "/pair/", 6))
		return -1;
	*n = strtol(path + 6, &end, 10);
	if (end == path + 6 || *n < 0 || *n >= MAX_PAIRS)
		return -1;
	if (!strcmp(end, "/phone"))
		*role = 0;
	else if (!strcmp(end, "/watch"))
		*role = 1;
	else
		return -1;
	return 0;
}

static int attach(struct conn *c, long n, int role)
{
	if (n >= pairs_cap) {
		long cap = pairs_cap ? pairs_cap : 1024;
		while (cap <= n)
			cap *= 2;
		struct pair *grown = realloc(pairs, (size_t)cap * sizeof(*pairs));
		if (!grown)
			return -1;
		memset(grown + pairs_cap, 0, (size_t)(cap - pairs_cap) * sizeof(*pairs));
		pairs = grown;
		pairs_cap = cap;
	}
	c->pair = n;
	c->role = role;
	pairs[n].side[role] = c;   /* a newer connection replaces an older one */
	return 0;
}

static void free_queue(struct conn *c)
{
	struct msg *m = c->head;
	while (m) {
		struct msg *next = m->next;
		free(m);
		m = next;
	}
	c->head = c->tail = NULL;
	c->queued = 0;
	free(c->rx);
	c->rx = NULL;
}

/* Appends one chunk of the message being received; returns -1 past MAX_MESSAGE. */
static int append_chunk(struct conn *c, struct lws *wsi, const void *in, size_t len)
{
	struct msg *m = c->rx;
	size_t need = (m ? m->len : 0) + len;
	if (need > MAX_MESSAGE)
		return -1;
	if (!m || need > m->cap) {
		size_t hint = need + lws_remaining_packet_payload(wsi);
		size_t cap = m ? m->cap * 2 : 0;
		if (cap < hint)
			cap = hint;
		struct msg *grown = realloc(m, sizeof(*m) + LWS_PRE + cap);
		if (!grown)
			return -1;
		if (!m) {
			grown->len = 0;
			grown->next = NULL;
			grown->binary = lws_frame_is_binary(wsi);
		}
		grown->cap = cap;
		c->rx = m = grown;
	}
	memcpy(m->buf + LWS_PRE + m->len, in, len);
	m->len += len;
	return 0;
}

/* Queues m on c and asks for a WRITEABLE. */
static void enqueue(struct conn *c, struct msg *m)
{
	if (c->tail)
		c->tail->next = m;
	else
		c->head = m;
	c->tail = m;
	c->queued += m->len;
	lws_callback_on_writable(c->wsi);
}

/* With --accepted: queues the `accepted` frame on the sender; 0, or -1 without memory. */
static int answer(struct conn *c)
{
	size_t len = sizeof(accepted_frame) - 1;
	struct msg *a = malloc(sizeof(*a) + LWS_PRE + len);
	if (!a)
		return -1;
	a->next = NULL;
	a->len = a->cap = len;
	a->binary = 0;
	memcpy(a->buf + LWS_PRE, accepted_frame, len);
	enqueue(c, a);
	return 0;
}

/* Hands the completed message to the peer's queue (or drops it). */
static void forward(struct conn *c)
{
	struct msg *m = c->rx;
	struct conn *peer = peer_of(c);
	c->rx = NULL;
	if (!peer) {
		free(m);
		return;
	}
	enqueue(peer, m);
	if (answer_accepted && answer(c))
		lwsl_err("relay: no memory for an accepted frame\n");
	if (peer->queued > QUEUE_HIGH && !c->paused) {
		c->paused = 1;
		lws_rx_flow_control(c->wsi, 0);
	}
}

/* One WRITEABLE: exactly one lws_write of the oldest queued message. */
static int write_next(struct conn *c)
{
	struct msg *m = c->head;
	if (!m)
		return 0;   /* lws may send WRITEABLE callbacks we did not ask for */
	int n = lws_write(c->wsi, m->buf + LWS_PRE, m->len, m->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);
	if (n < 0)
		return -1;
	c->head = m->next;
	if (!c->head)
		c->tail = NULL;
	c->queued -= m->len;
	free(m);
	if (c->head)
		lws_callback_on_writable(c->wsi);
	struct conn *source = peer_of(c);
	if (source && source->paused && c->queued < QUEUE_LOW) {
		source->paused = 0;
		lws_rx_flow_control(source->wsi, 1);
	}
	return 0;
}

static void detach(struct conn *c)
{
	struct conn *peer = peer_of(c);
	if (peer && peer->paused) {   /* it was waiting for our queue to drain */
		peer->paused = 0;
		lws_rx_flow_control(peer->wsi, 1);
	}
	if (c->pair >= 0 && pairs[c->pair].side[c->role] == c)
		pairs[c->pair].side[c->role] = NULL;
	c->pair = -1;
	free_queue(c);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct conn *c = user;
	char path[128];
	long n;
	int role;

	switch (reason) {
	case LWS_CALLBACK_ESTABLISHED:
		c->wsi = wsi;
		c->pair = -1;
		if (lws_hdr_copy(wsi, path, sizeof(path), WSI_TOKEN_GET_URI) < 0 || parse_path(path, &n, &role) ||
		    attach(c, n, role))
			return -1;
		return 0;
	case LWS_CALLBACK_RECEIVE:
		if (append_chunk(c, wsi, in, len)) {
			lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, NULL, 0);
			return -1;
		}
		if (lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi))
			forward(c);
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return write_next(c);
	case LWS_CALLBACK_CLOSED:
		detach(c);
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

/* not const: --rx-buffer-bytes sets protocols[0].rx_buffer_size before the context exists */
static struct lws_protocols protocols[] = {
	/* protocols[0] also takes upgrades that offer no subprotocol */
	{ "relay", callback, sizeof(struct conn), 16384, 0, NULL, 128 * 1024 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
	if (context)
		lws_cancel_service(context);
}

int main(int argc, char **argv)
{
	const char *host = "127.0.0.1";
	int port = 0;
	/* the same switch as the Swift transport's, so one variable flips both for an A/B run */
	const char *loop_env = getenv("WATCHRELAY_EVENT_LOOP");
	int use_libev = !(loop_env && !strcmp(loop_env, "poll"));
	const char *accepted_env = getenv("WATCHRELAY_BENCH_C_ACCEPTED");
	answer_accepted = accepted_env && !strcmp(accepted_env, "1");
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--host"))
			host = argv[i + 1];
		else if (!strcmp(argv[i], "--port"))
			port = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--accepted"))
			answer_accepted = atoi(argv[i + 1]) != 0;
		else if (!strcmp(argv[i], "--event-loop"))
			use_libev = strcmp(argv[i + 1], "poll") != 0;
		else if (!strcmp(argv[i], "--rx-buffer-bytes")) {
			/* as `watchrelay serve --rx-buffer-bytes`: per-connection buffer and read size */
			int n = atoi(argv[i + 1]);
			if (n < 512 || n > 32768) {
				fprintf(stderr, "--rx-buffer-bytes must be 512...32768\n");
				return 2;
			}
			protocols[0].rx_buffer_size = (size_t)n;
		}
	}
	lws_set_log_level(LLL_ERR | LLL_WARN, NULL);

	struct lws_context_creation_info info;
	memset(&info, 0, sizeof(info));
	info.port = port;
	info.iface = host;
	info.protocols = protocols;
	info.pt_serv_buf_size = 32 * 1024;
	info.gid = -1;
	info.uid = -1;
	/* lws 4.1 with IPv6 on binds every interface for an IPv4 literal; this binds exactly it */
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6 | LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
	struct ev_loop *loop = NULL;
	void *foreign_loops[1];
	if (use_libev) {
		loop = ev_loop_new(EVFLAG_AUTO);
		if (!loop) {
			fprintf(stderr, "relay: ev_loop_new failed\n");
			return 1;
		}
		foreign_loops[0] = loop;
		info.options |= LWS_SERVER_OPTION_LIBEV;
		info.foreign_loops = foreign_loops;
	}

	context = lws_create_context(&info);
	if (!context) {
		fprintf(stderr, "relay: lws_create_context failed\n");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	struct lws_vhost *vhost = lws_get_vhost_by_name(context, "default");
	printf("ws://%s:%d/\n", host, vhost ? lws_get_vhost_listen_port(vhost) : port);
	fflush(stdout);

	if (loop) {
		/* one iteration per call: a signal (EINTR) ends it too, so `interrupted` is seen */
		while (!interrupted)
			ev_run(loop, EVRUN_ONCE);
	} else {
		while (!interrupted && lws_service(context, 0) >= 0)
			;
	}
	lws_context_destroy(context);
	if (loop)
		ev_loop_destroy(loop);
	free(pairs);
	return 0;
}
