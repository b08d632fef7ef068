"""Protocol-level attacks on a relay started here (loopback), by authenticated-but-malicious
clients, while another pair measures its message round trip. Not part of `make test`.

usage: protocol_attack.py [reply-flood|queue-walk|expired-code|token-race|kill9|hello-churn] ... (default: all)

- reply-flood: a pair's phone floods its own (never replying) watch with `wantsReply` messages
  for 12 s; prints the messages the relay got through, the `quota_exceeded` answers and the
  flooder's close code, the victim pair's worst round trip and the relay's RSS and CPU.
  (Before RelayCore's PendingReplies: ~70,000 messages, round trips over 300 ms; after:
  ~400,000, round trips mostly under 30 ms, debug build; since the pending-reply quota: 10,000
  delivered and every later one refused with quota_exceeded, which does not close the flooder
  (PROTOCOL.md §4.2); RSS 39 MB; the debug relay's core is busy with the flood, round trips
  up to ~60 ms, as with any flood of messages.)
- queue-walk: 10,000 userInfo items with 64-character ids sharing a 60-character prefix queued
  to an offline watch, then `outstanding`, repeated `cancel`s and complication retries of the
  last id; prints the time per frame (before: 166 ms, 36 ms, 36 ms; after: ~15 ms, <1 ms, <1 ms).
- expired-code: a code that expired, then its phone asks for another: the late watch must get
  `pairing_code_expired`, not `pairing_code_invalid` (PROTOCOL.md §6.3).
- token-race: two connections say hello with one token at once, 50 times: exactly one of them
  must stay, the other closed with 4001.
- hello-churn: 32 workers connect, say hello as a new phone, ask for a pairing code and hang up,
  for 12 s, while a victim pair's round trip is timed; RSS before, at the end, and 5 s later.
- kill9: 2,000 userInfo sends, the relay killed with SIGKILL mid-stream and restarted on the same
  port and file: every id that got `accepted` must be delivered to the watch, once.

Each prints one JSON line. Needs `.build/debug/watchrelay` (or WATCHRELAY_BIN) and `websockets`.
"""

import asyncio
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from websockets.asyncio.client import connect

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("WATCHRELAY_BIN", os.path.join(ROOT, ".build", "debug", "watchrelay"))
_ids = itertools.count()


def nid(prefix):
    return f"{prefix}-{next(_ids)}"


class Relay:
    """`watchrelay serve` on a free loopback port (the same port again after `restart`)."""

    def __init__(self, db, port=0):
        self.db = db
        self.proc = subprocess.Popen(
            [BINARY, "serve", "--port", str(port), "--db", db, "--log-level", "error"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.url = self.proc.stdout.readline().strip()
        self.port = int(re.match(r"ws://[^:/]+:(\d+)/v1", self.url).group(1))

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

    def cpu_s(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().split(")")[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.kill9()


class Client:
    def __init__(self, ws):
        self.ws = ws

    @classmethod
    async def open(cls, url):
        return cls(await connect(url, subprotocols=["watchrelay.v1"], max_size=4 << 20))

    async def send(self, frame):
        await self.ws.send(json.dumps(frame))

    async def until(self, pred, timeout=10):
        end = time.time() + timeout
        while True:
            f = json.loads(await asyncio.wait_for(self.ws.recv(), max(0.01, end - time.time())))
            if pred(f):
                return f

    async def hello(self, role, token=None):
        h = {"type": "hello", "id": nid("h"), "protocol": 1, "role": role, "device": {"name": role}}
        if token:
            h["token"] = token
        await self.send(h)
        return await self.until(lambda f: f.get("re") == h["id"])


async def pair(url):
    phone, watch = await Client.open(url), await Client.open(url)
    await phone.hello("phone")
    await watch.hello("watch")
    await phone.send({"type": "pair.begin", "id": nid("pb")})
    code = (await phone.until(lambda f: f["type"] == "pair.code"))["code"]
    await watch.send({"type": "pair.join", "id": nid("pj"), "code": code})
    wt = (await watch.until(lambda f: f["type"] == "paired"))["token"]
    pt = (await phone.until(lambda f: f["type"] == "paired"))["token"]
    return phone, watch, pt, wt


async def round_trip_ms(phone, watch):
    i = nid("m")
    t = time.perf_counter()
    await phone.send({"type": "send", "id": i, "mode": "message", "wantsReply": True, "payload": {"kind": "ping"}})
    await watch.until(lambda f: f["type"] == "deliver" and f["id"] == i, 30)
    await watch.send({"type": "reply", "id": nid("r"), "re": i, "payload": {"kind": "pong"}})
    await phone.until(lambda f: f["type"] == "reply" and f["re"] == i, 30)
    return (time.perf_counter() - t) * 1000


async def drain(client, seconds, counting=None):
    """Frames read within `seconds` (and, with `counting`, how many of them contain it)."""
    n, matched, end = 0, 0, time.time() + seconds
    try:
        while time.time() < end:
            frame = await asyncio.wait_for(client.ws.recv(), 1)
            n += 1
            matched += counting is not None and counting in frame
    except Exception:
        pass
    return (n, matched) if counting is not None else n


async def reply_flood(relay):
    vp, vw, _, _ = await pair(relay.url)
    ap, aw, _, _ = await pair(relay.url)
    base = max([await round_trip_ms(vp, vw) for _ in range(20)])
    readers = [asyncio.create_task(drain(ap, 14, "quota_exceeded")), asyncio.create_task(drain(aw, 14))]
    sent, t0, cpu0, worst = 0, time.time(), relay.cpu_s(), 0.0

    async def flood():
        # Past the pending-reply quota (PROTOCOL.md §9.1) the relay answers quota_exceeded, and
        # after 100 errors in a minute closes the flooder with 1008 (§4.2): the flood ends there.
        nonlocal sent
        try:
            while time.time() - t0 < 12:
                for _ in range(200):
                    await ap.send({"type": "send", "id": nid("f"), "mode": "message", "wantsReply": True,
                                   "payload": {"kind": "x"}})
                    sent += 1
                await asyncio.sleep(0)
        except Exception:
            pass

    flooding = asyncio.create_task(flood())
    while time.time() - t0 < 12:
        await asyncio.sleep(0.5)
        worst = max(worst, await round_trip_ms(vp, vw))
    await flooding
    delivered = await readers[1]
    _, refused = await readers[0]
    return {"attack": "reply-flood", "sent": sent, "delivered_to_attacker_watch": delivered,
            "quota_exceeded": refused, "attacker_close_code": ap.ws.close_code,
            "victim_rtt_ms_before": round(base, 1), "victim_rtt_ms_worst": round(worst, 1),
            "rss_kib": relay.rss_kib(), "relay_cpu_s": round(relay.cpu_s() - cpu0, 1)}


async def queue_walk(relay):
    phone, watch, _, _ = await pair(relay.url)
    await watch.ws.close()
    n = 10_000
    ids = ["%064d" % i for i in range(n)]
    for i in ids:
        await phone.send({"type": "send", "id": i, "mode": "userInfo", "payload": {"kind": "x"}})
    accepted = 0
    while accepted < n:
        f = await phone.until(lambda f: f["type"] in ("accepted", "error"), 60)
        accepted += f["type"] == "accepted"
    await phone.send({"type": "send", "id": "over", "mode": "userInfo", "payload": {"kind": "x"}})
    over = (await phone.until(lambda f: f.get("re") == "over"))["code"]

    async def per_frame(frames):
        t = time.perf_counter()
        for f in frames:
            await phone.send(f)
        for _ in frames:
            await phone.until(lambda f: True, 60)
        return round((time.perf_counter() - t) * 1000 / len(frames), 2)

    out = await per_frame([{"type": "outstanding", "id": nid("o")} for _ in range(5)])
    retry = await per_frame([{"type": "send", "id": ids[-1], "mode": "complication", "payload": {"kind": "x"}}
                             for _ in range(100)])
    cancel = await per_frame([{"type": "cancel", "id": nid("c"), "target": ids[-1]} for _ in range(90)])
    return {"attack": "queue-walk", "queued": accepted, "one_more": over, "outstanding_ms": out,
            "complication_retry_ms": retry, "cancel_ms": cancel, "rss_kib": relay.rss_kib()}


async def expired_code(relay_unused):
    # A relay of its own, with a 1 s code lifetime.
    with tempfile.TemporaryDirectory() as d:
        proc = subprocess.Popen([BINARY, "serve", "--port", "0", "--db", os.path.join(d, "r.db"),
                                 "--pairing-code-ttl-s", "1", "--log-level", "error"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        url = proc.stdout.readline().strip()
        try:
            phone, watch = await Client.open(url), await Client.open(url)
            await phone.hello("phone")
            await watch.hello("watch")
            await phone.send({"type": "pair.begin", "id": "b1"})
            first = (await phone.until(lambda f: f["type"] == "pair.code"))["code"]
            await asyncio.sleep(1.2)
            await phone.send({"type": "pair.begin", "id": "b2"})
            await phone.until(lambda f: f["type"] == "pair.code")
            await watch.send({"type": "pair.join", "id": "j1", "code": first})
            answer = (await watch.until(lambda f: f.get("re") == "j1"))["code"]
        finally:
            proc.terminate()
            proc.wait()
    return {"attack": "expired-code", "late_join_after_new_begin": answer, "ok": answer == "pairing_code_expired"}


async def token_race(relay):
    phone, watch, _, wt = await pair(relay.url)
    await watch.ws.close()
    bad = 0
    for _ in range(50):
        a, b = await Client.open(relay.url), await Client.open(relay.url)
        await asyncio.gather(a.hello("watch", wt), b.hello("watch", wt))
        await asyncio.sleep(0.05)
        closed = [c.ws.close_code for c in (a, b)]
        bad += sorted(map(str, closed)) != ["4001", "None"]
        for c in (a, b):
            await c.ws.close()
    return {"attack": "token-race", "rounds": 50, "rounds_not_exactly_one_survivor": bad}


async def kill9(relay):
    phone, watch, pt, wt = await pair(relay.url)
    await watch.ws.close()
    accepted = set()

    async def reader():
        try:
            while True:
                f = json.loads(await phone.ws.recv())
                if f["type"] == "accepted":
                    accepted.add(f["re"])
        except Exception:
            pass

    r = asyncio.create_task(reader())
    sends = 0
    try:
        for i in range(2000):
            await phone.send({"type": "send", "id": f"k-{i}", "mode": "userInfo", "payload": {"kind": "x", "i": i}})
            sends += 1
            if i % 50 == 0:
                await asyncio.sleep(0.005)  # let the reader see the accepted frames
            if i == 1200:
                relay.kill9()
    except Exception:
        pass
    await r
    again = Relay(relay.db, relay.port)
    try:
        w = await Client.open(again.url)
        await w.hello("watch", wt)
        got, last = [], 0
        while True:
            try:
                f = await w.until(lambda f: f["type"] == "deliver", 3)
            except asyncio.TimeoutError:
                break
            got.append(f["id"])
            last = f["seq"]
            if len(got) % 100 == 0:
                await w.send({"type": "ack", "seq": last})
        lost = accepted - set(got)
        return {"attack": "kill9", "sent": sends, "accepted": len(accepted), "delivered": len(got),
                "lost_accepted": len(lost), "duplicates": len(got) - len(set(got))}
    finally:
        again.stop()


async def hello_churn(relay):
    """Workers that connect, say hello as a new phone, ask for a pairing code and hang up, as fast
    as they can for 12 s, while a victim pair's round trip is timed; then 5 s idle."""
    vp, vw, _, _ = await pair(relay.url)
    base = max([await round_trip_ms(vp, vw) for _ in range(20)])
    rss0, cpu0, t0 = relay.rss_kib(), relay.cpu_s(), time.time()
    cycles, refused, rtts = 0, {}, []

    async def worker():
        nonlocal cycles
        while time.time() - t0 < 12:
            try:
                c = await Client.open(relay.url)
                await c.hello("phone")
                await c.send({"type": "pair.begin", "id": nid("pb")})
                await c.until(lambda f: f.get("type") in ("pair.code", "error"))
                await c.ws.close()
                cycles += 1
            except Exception as e:  # a refusal is an outcome, counted by its kind
                kind = type(e).__name__
                refused[kind] = refused.get(kind, 0) + 1

    workers = [asyncio.create_task(worker()) for _ in range(32)]
    while time.time() - t0 < 12:
        await asyncio.sleep(0.2)
        rtts.append(await round_trip_ms(vp, vw))
    await asyncio.gather(*workers)
    rss_end = relay.rss_kib()
    await asyncio.sleep(5)
    rtts.sort()
    return {"attack": "hello-churn", "cycles": cycles, "per_s": round(cycles / 12), "refused": refused,
            "victim_rtt_ms_before": round(base, 1), "victim_rtt_ms_p50": round(rtts[len(rtts) // 2], 1),
            "victim_rtt_ms_worst": round(rtts[-1], 1), "rss_kib": [rss0, rss_end, relay.rss_kib()],
            "relay_cpu_s": round(relay.cpu_s() - cpu0, 1), "victim_still_works": await round_trip_ms(vp, vw) < 1000,
            "store_bytes": sum(os.path.getsize(relay.db + x) for x in ("", "-wal") if os.path.exists(relay.db + x))}


ATTACKS = {"reply-flood": reply_flood, "queue-walk": queue_walk, "expired-code": expired_code,
           "token-race": token_race, "kill9": kill9, "hello-churn": hello_churn}


async def main(names):
    for name in names:
        with tempfile.TemporaryDirectory() as d:
            relay = Relay(os.path.join(d, "relay.db"))
            try:
                print(json.dumps(await ATTACKS[name](relay)), flush=True)
            finally:
                if relay.proc.poll() is None:
                    relay.stop()


if __name__ == "__main__":
    chosen = sys.argv[1:] or list(ATTACKS)
    unknown = [n for n in chosen if n not in ATTACKS]
    if unknown:
        sys.exit(f"unknown attack {unknown}; choose from {list(ATTACKS)}")
    asyncio.run(main(chosen))
