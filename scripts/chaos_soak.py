#!/usr/bin/env python3
"""Chaos soak of the relay: durable traffic both ways across kill -9, drops and slow readers.

A phone and a watch, written here from Protocol/PROTOCOL.md alone (`websockets` 17), pair
through a real `watchrelay serve` on loopback and send numbered userInfo items (random sizes,
some cancelled at once) and application contexts to each other, while the relay is killed
with SIGKILL at random moments (and right after a send, an accept, a delivery or an ack),
connections are aborted, clients "crash" (abort, forget what they had not persisted) and stop
reading for a while, with the peer flooding messages at them. With `--store redis`, the relay keeps its state in a
redis-server of its own (appendfsync always) that is killed too.

After a quiet period the soak checks PROTOCOL.md's promises:
  - every userInfo the relay answered `accepted` for was processed by the peer exactly once,
    with the exact payload bytes (§3.7), in the order accepted (§8.4); an id never comes with
    two seqs (a redelivery keeps its seq, §8.6); a new seq is above every seq seen before, and
    seqs rise within a connection;
  - the receiver's latest context is the sender's last accepted one (§8.3), and contexts never
    go back;
  - nothing the relay answered `cancelled` for is delivered (§8.8);
  - `transferred` names only items the peer processed; at the end `outstanding` is empty (§8.9);
  - the relay never exited by itself, and its resident memory did not keep growing while it
    ran without kills.

It prints a summary and `N passed, N failed`, and exits 1 on any violation; with `--keep` (or
on a failure) the work directory keeps the relay's log and each device's trace (trace-ROLE.txt:
connections, hellos, deliveries, acks, kills), the story of any violation.

Usage: scripts/chaos_soak.py [--seconds 120] [--calm-seconds 60] [--store sqlite|redis] [--seed N]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import hashlib
import json
import os
import pathlib
import random
import shutil
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

REPO = pathlib.Path(__file__).resolve().parent.parent
SUBPROTOCOL = "watchrelay.v1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Soak:
    """What both devices and the chaos share: the clock of events, the relay, the findings."""

    def __init__(self, args: argparse.Namespace, workdir: pathlib.Path) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.workdir = workdir
        self.tick = 0  # a logical clock: every send and accept takes the next value
        self.violations: list[str] = []
        self.chaos = True  # drops, crashes, pauses and kills happen only while this holds
        self.new_items = True  # senders create new items only while this holds
        self.stopping = False
        self.relay: Relay | None = None
        self.redis: Redis | None = None
        self.counts: dict[str, int] = {}
        self.devices: list[Device] = []

    def trace_note(self, what: str) -> None:
        for device in self.devices:
            device.trace.append(f"{time.monotonic():.3f} {what}")

    def now(self) -> int:
        self.tick += 1
        return self.tick

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n

    def violation(self, what: str) -> None:
        self.trace_note(f"VIOLATION {what}")
        if len(self.violations) < 200:
            print(f"VIOLATION {what}", flush=True)
        self.violations.append(what)

    def task_ended(self, name: str, task: asyncio.Task) -> None:
        """A device's or the chaos's task ended by an exception (a soak bug, or the relay not
        coming back): said at once, as the cause of what fails after."""
        if not task.cancelled() and task.exception() is not None:
            self.violation(f"the {name} task failed: {task.exception()!r}")

    async def stop_children(self) -> None:
        """Kills what is still running (the relay, redis-server), whatever ended the soak."""
        for proc in (self.relay.proc if self.relay else None, self.redis.proc if self.redis else None):
            if proc is not None and proc.returncode is None:
                if self.relay:
                    self.relay.expected_exit = True
                proc.kill()
                await proc.wait()

    def event(self, what: str) -> None:
        """A moment worth killing the relay at (mid-send, mid-commit, mid-delivery, mid-ack)."""
        if self.relay and self.chaos and self.rng.random() < self.args.targeted_kill_p:
            self.relay.kill_now(f"after {what}")


class Relay:
    """`watchrelay serve` as a child: killed with SIGKILL, restarted on the same store."""

    def __init__(self, soak: Soak, store_args: list[str]) -> None:
        self.soak = soak
        self.store_args = store_args
        self.proc: asyncio.subprocess.Process | None = None
        self.url: str | None = None
        self.kills = 0
        self.starts = 0
        self.crashes = 0
        self.expected_exit = False
        # Incarnations this script ended itself: a kill's `wait` can finish while the next
        # start is already under way (`expected_exit` reset, `proc` not yet replaced).
        self.ended_by_us: set[int] = set()
        self.log = open(soak.workdir / "relay.log", "ab")
        self.rss_samples: list[tuple[float, int]] = []  # (time, KiB) of the current incarnation

    async def start(self) -> None:
        for attempt in range(50):
            self.expected_exit = False
            self.log.write(f"--- start {self.starts + 1}\n".encode())
            self.log.flush()
            self.proc = await asyncio.create_subprocess_exec(
                self.soak.args.binary, "serve", "--port", "0", *self.store_args, "--log-level", "info",
                "--exit-on-stdin-eof",  # its stdin's writer is this script: killed, it leaves no relay behind
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=self.log)
            try:
                line = await asyncio.wait_for(self.proc.stdout.readline(), 30)
            except asyncio.TimeoutError:
                line = b""
            if line.startswith(b"ws"):
                self.url = line.decode().strip()
                self.soak.trace_note(f"relay up {self.url}")
                self.starts += 1
                self.rss_samples = []
                asyncio.get_running_loop().create_task(self._watch(self.proc))
                return
            # Not up (the Redis lease of the killed incarnation, Redis down): try again.
            self.expected_exit = True
            self.ended_by_us.add(self.proc.pid)
            if self.proc.returncode is None:
                self.proc.kill()
            await self.proc.wait()
            await asyncio.sleep(0.5)
        raise RuntimeError("the relay did not start in 50 attempts")

    async def _watch(self, proc: asyncio.subprocess.Process) -> None:
        code = await proc.wait()
        if proc is self.proc and not self.expected_exit and proc.pid not in self.ended_by_us:
            self.crashes += 1
            self.soak.violation(f"the relay exited by itself with {code} (see relay.log)")
            self.url = None

    def kill_now(self, why: str) -> None:
        if self.proc is None or self.proc.returncode is not None or self.url is None:
            return
        self.sample_rss()
        self.expected_exit = True
        self.url = None
        self.ended_by_us.add(self.proc.pid)
        os.kill(self.proc.pid, signal.SIGKILL)
        self.soak.trace_note(f"relay killed ({why})")
        self.kills += 1
        self.soak.count(f"relay kill {why.split()[0]} {why.split()[-1]}" if why != "timer" else "relay kill timer")

    def sample_rss(self) -> int | None:
        if self.proc is None or self.proc.returncode is not None:
            return None
        try:
            for line in open(f"/proc/{self.proc.pid}/status"):
                if line.startswith("VmRSS:"):
                    kib = int(line.split()[1])
                    self.rss_samples.append((time.monotonic(), kib))
                    return kib
        except OSError:
            return None
        return None

    async def stop(self) -> None:
        if self.proc and self.proc.returncode is None:
            self.expected_exit = True
            self.ended_by_us.add(self.proc.pid)
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 20)
            except asyncio.TimeoutError:
                self.soak.violation("the relay did not stop within 20 s of SIGTERM")
                self.proc.kill()
                await self.proc.wait()


class Redis:
    """A redis-server of the soak's own (append-only, fsync always), killed with SIGKILL."""

    def __init__(self, soak: Soak) -> None:
        self.soak = soak
        self.port = free_port()
        self.dir = soak.workdir / "redis"
        self.dir.mkdir()
        self.proc: asyncio.subprocess.Process | None = None
        self.kills = 0

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            "redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
            "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no",
            stdout=open(self.soak.workdir / "redis.log", "ab"), stderr=asyncio.subprocess.STDOUT)
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            await asyncio.sleep(0.1)
        raise RuntimeError("redis-server did not start")

    async def kill9(self) -> None:
        if self.proc and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
            self.kills += 1

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


@dataclass
class Item:
    n: int
    mode: str
    id: str
    text: str  # the payload exactly as sent
    first_sent: int = 0
    accepted_at: int | None = None
    transferred: bool = False
    cancel: str | None = None  # "asked", then "cancelled" or "already_delivered" (§8.8)


@dataclass
class Connection:
    ws: object
    number: int
    inflight: set[str] = field(default_factory=set)
    last_deliver_seq: int = 0
    unacked_high: int = 0  # the highest processed durable seq not acked on this connection
    unacked_count: int = 0
    ack_policy: str = "each"
    peer_reachable: bool = False
    closed: bool = False


class Device:
    """One side, with the state a real app persists: token, lastSeq, what it processed."""

    def __init__(self, soak: Soak, role: str) -> None:
        self.soak = soak
        self.role = role
        self.rng = random.Random(f"{soak.args.seed}-{role}")
        self.token: str | None = None
        self.peer: Device | None = None
        # receiver
        self.last_seq = 0
        self.max_seen_seq = 0
        self.id_of_seq: dict[int, str] = {}
        self.seq_of_id: dict[str, int] = {}
        self.processed: list[str] = []  # durable userInfo ids, in first-processing order
        self.contexts: list[str] = []  # context ids, in first-processing order
        # sender
        self.items: dict[str, Item] = {}
        self.order: list[str] = []  # userInfo ids in creation order
        self.ctx_order: list[str] = []
        self.next_n = 0
        self.next_ctx = 0
        self.conn: Connection | None = None
        self.connections = 0
        self.paused_until = 0.0
        self.close_codes: dict[str, int] = {}
        self.trace: list[str] = []  # what came and went, for a violation's story (trace-ROLE.txt)

    def note(self, conn: Connection | None, what: str) -> None:
        self.trace.append(f"{time.monotonic():.3f} c{conn.number if conn else '-'} {what}")

    # -- payloads ---------------------------------------------------------------------------

    def payload_text(self, kind: str, n: int, size: int) -> str:
        digest = hashlib.sha256(f"{self.role}-{kind}-{n}".encode()).hexdigest()
        pad = (digest * (size // 64 + 1))[:size]
        # Escapes and number spellings the relay must pass through untouched (§3.7).
        return f'{{"kind":"soak.{kind}", "n":{n},"from":"{self.role}","e":"\\u00e9","x":1.0,"pad":"{pad}"}}'

    def new_item(self) -> Item:
        n = self.next_n
        self.next_n += 1
        r = self.rng.random()
        size = self.rng.randint(10, 400) if r < 0.7 else self.rng.randint(1000, 16000) if r < 0.95 else self.rng.randint(30000, 60000)
        item = Item(n, "userInfo", f"{self.role[0]}u-{n}", self.payload_text("userInfo", n, size))
        self.items[item.id] = item
        self.order.append(item.id)
        return item

    def new_context(self) -> Item:
        n = self.next_ctx
        self.next_ctx += 1
        size = self.rng.randint(10, 2000) if self.rng.random() < 0.8 else self.rng.randint(20000, 200000)
        item = Item(n, "context", f"{self.role[0]}c-{n}", self.payload_text("context", n, size))
        self.items[item.id] = item
        self.ctx_order.append(item.id)
        return item

    # -- connection ---------------------------------------------------------------------------

    async def open(self) -> object:
        url = self.soak.relay.url if self.soak.relay else None
        if url is None:
            raise OSError("relay down")
        return await connect(
            url, subprotocols=[SUBPROTOCOL], max_size=4 * 1024 * 1024, max_queue=4, ping_interval=None,
            open_timeout=5, close_timeout=2, compression=None)

    async def send_frame(self, conn: Connection, frame: dict | str) -> None:
        text = frame if isinstance(frame, str) else json.dumps(frame, separators=(",", ":"))
        await conn.ws.send(text)

    async def pair_phone(self) -> str:
        ws = await self.open()
        await ws.send(json.dumps({"type": "hello", "id": "h0", "protocol": 1, "role": "phone", "device": {"name": "soak phone"}}))
        json.loads(await ws.recv())
        await ws.send(json.dumps({"type": "pair.begin", "id": "pb"}))
        code = json.loads(await ws.recv())["code"]
        self._pair_ws = ws
        return code

    async def pair_watch(self, code: str) -> None:
        ws = await self.open()
        await ws.send(json.dumps({"type": "hello", "id": "h0", "protocol": 1, "role": "watch", "device": {"name": "soak watch"}}))
        json.loads(await ws.recv())
        await ws.send(json.dumps({"type": "pair.join", "id": "pj", "code": code}))
        await self.take_token(ws)

    async def finish_phone_pairing(self) -> None:
        await self.take_token(self._pair_ws)

    async def take_token(self, ws: object) -> None:
        """Keeps the token of the `paired` that comes on `ws` (§6.2), then closes it."""
        while True:
            f = json.loads(await ws.recv())
            if f["type"] == "paired":
                self.token = f["token"]
                break
        await ws.close()

    async def run(self) -> None:
        while not self.soak.stopping:
            try:
                ws = await self.open()
            except (OSError, InvalidHandshake, asyncio.TimeoutError, EOFError):
                self.soak.count("connect failed")
                await asyncio.sleep(self.rng.uniform(0.05, 0.4))
                continue
            self.connections += 1
            conn = Connection(ws, self.connections)
            conn.ack_policy = self.rng.choice(["each", "each", "batch", "lazy"])
            self.conn = conn
            tasks: list[asyncio.Task] = []
            try:
                lie = self.soak.chaos and self.rng.random() < 0.05
                hello = {"type": "hello", "id": f"h{self.connections}", "protocol": 1, "role": self.role,
                         "device": {"name": f"soak {self.role}"}, "token": self.token,
                         "lastSeq": 0 if lie else self.last_seq}
                if lie:
                    self.soak.count(f"{self.role} hello lastSeq 0")
                await self.send_frame(conn, hello)
                self.note(conn, f"hello lastSeq {hello['lastSeq']}")
                raw_welcome = await asyncio.wait_for(ws.recv(), 15)
                welcome = json.loads(raw_welcome)
                if welcome.get("type") != "welcome":
                    if welcome.get("code") == "unauthorized":
                        self.soak.violation(f"{self.role}: token refused: {welcome}")
                    raise ConnectionError(f"no welcome: {welcome}")
                conn.peer_reachable = welcome.get("peer", {}).get("reachable", False)
                if "context" in welcome:
                    self.on_welcome_context(conn, welcome["context"])
                tasks = [asyncio.create_task(self.writer(conn)), asyncio.create_task(self.acker(conn)),
                         asyncio.create_task(self.chaos(conn))]
                await self.reader(conn)
            except (ConnectionClosed, OSError, asyncio.TimeoutError, ConnectionError, EOFError) as e:
                pass
            finally:
                conn.closed = True
                for t in tasks:
                    t.cancel()
                for t in tasks:
                    try:
                        await t
                    except (asyncio.CancelledError, ConnectionClosed, OSError):
                        pass
                    except Exception as e:  # noqa: BLE001 - a soak bug, shown, not hidden
                        self.soak.violation(f"{self.role}: task failed: {e!r}")
                code = ws.close_code
                self.note(conn, f"closed {code} {ws.close_reason}")
                self.close_codes[str(code)] = self.close_codes.get(str(code), 0) + 1
                try:
                    ws.transport.abort()
                except Exception:  # noqa: BLE001
                    pass
                self.conn = None
            await asyncio.sleep(self.rng.uniform(0.02, 0.3))

    async def reader(self, conn: Connection) -> None:
        while True:
            while time.monotonic() < self.paused_until and not conn.closed:
                await asyncio.sleep(0.05)
            text = await conn.ws.recv()
            frame = json.loads(text)
            t = frame.get("type")
            if t == "accepted":
                if frame["re"][1:3] == "m-":
                    continue  # a message's (§8.2)
                item = self.items.get(frame["re"])
                if item is None:
                    self.soak.violation(f"{self.role}: accepted for unknown id {frame['re']}")
                    continue
                conn.inflight.discard(item.id)
                if item.accepted_at is None:
                    item.accepted_at = self.soak.now()
                    self.soak.count(f"{self.role} accepted {item.mode}")
                else:
                    self.soak.count(f"{self.role} accepted again")
                self.soak.event(f"{self.role} accepted")
            elif t == "deliver":
                if frame["mode"] == "message":
                    self.soak.count(f"{self.role} got message")
                    seq = frame["seq"]
                    if seq <= conn.last_deliver_seq:
                        self.soak.violation(f"{self.role}: message seq {seq} not above {conn.last_deliver_seq} on one connection")
                    conn.last_deliver_seq = seq
                    self.note(conn, f"message seq {seq} {frame['id']}")
                    if seq <= self.max_seen_seq:
                        self.soak.violation(f"{self.role}: message seq {seq} not above max seen {self.max_seen_seq}")
                    self.max_seen_seq = max(self.max_seen_seq, seq)
                    self.last_seq = max(self.last_seq, seq)
                    continue
                seq = frame["seq"]
                if seq <= conn.last_deliver_seq:
                    self.soak.violation(f"{self.role}: deliver seq {seq} not above {conn.last_deliver_seq} on one connection")
                conn.last_deliver_seq = seq
                self.on_durable(conn, frame, text)
                self.soak.event(f"{self.role} deliver")
            elif t == "transferred":
                for i in frame["ids"]:
                    item = self.items.get(i)
                    # Its `accepted` may have been lost with a killed relay: sent is enough.
                    if item is None or item.first_sent == 0:
                        self.soak.violation(f"{self.role}: transferred {i} never sent")
                    elif self.peer and i not in self.peer.seq_of_id:
                        self.soak.violation(f"{self.role}: transferred {i} the peer never processed")
                    else:
                        item.transferred = True
                self.soak.count(f"{self.role} transferred", len(frame["ids"]))
            elif t == "peer":
                conn.peer_reachable = frame["reachable"]
            elif t == "error":
                self.soak.count(f"{self.role} error {frame['code']}")
                re_id = frame.get("re")
                if re_id in conn.inflight:
                    conn.inflight.discard(re_id)  # retried by the writer
                if re_id and re_id.startswith("x-") and frame["code"] in ("already_delivered", "unknown_id"):
                    item = self.items.get(re_id[2:])
                    if frame["code"] == "already_delivered" and item:
                        item.cancel = "already_delivered"
                elif frame["code"] not in ("not_reachable", "quota_exceeded", "internal", "reply_timeout"):
                    self.soak.violation(f"{self.role}: unexpected error {frame}")
            elif t == "outstanding":
                self.outstanding_answer = frame["ids"]
            elif t == "cancelled":
                item = self.items.get(frame["re"][2:])
                if item is None:
                    self.soak.violation(f"{self.role}: cancelled for an unknown cancel {frame}")
                else:
                    item.cancel = "cancelled"
                    self.soak.count(f"{self.role} cancelled")
                    self.soak.event(f"{self.role} cancelled")
            else:
                self.soak.count(f"{self.role} frame {t}")

    def on_welcome_context(self, conn: Connection, context: dict) -> None:
        """`welcome.context` mirrors the last context sent (§5.2): one already processed must
        match; one not yet processed is delivered again after the backlog, whose redelivered
        items may have lower seqs (§5.3), so it counts towards nothing here (as the reference
        client's SessionCore does): taking its seq as lastSeq would ack those items unseen."""
        seq, sid = context["seq"], context["id"]
        self.note(conn, f"welcome.context seq {seq} {sid}")
        if seq in self.id_of_seq and self.id_of_seq[seq] != sid:
            self.soak.violation(f"{self.role}: welcome.context seq {seq} is {sid}, earlier {self.id_of_seq[seq]}")
        elif seq not in self.id_of_seq:
            self.soak.count(f"{self.role} welcome.context ahead of the backlog")

    def on_durable(self, conn: Connection, frame: dict, text: str) -> None:
        seq, sid, mode = frame["seq"], frame["id"], frame["mode"]
        self.note(conn, f"deliver seq {seq} {sid}")
        if seq in self.id_of_seq:
            if self.id_of_seq[seq] != sid:
                self.soak.violation(f"{self.role}: seq {seq} came with {sid}, earlier with {self.id_of_seq[seq]}")
            self.soak.count(f"{self.role} redelivered")
            conn.unacked_high = max(conn.unacked_high, seq)
            return
        if sid in self.seq_of_id:
            self.soak.violation(f"{self.role}: {sid} came again with seq {seq}, first with {self.seq_of_id[sid]} (a duplicate §8.6 does not allow)")
            return
        if seq <= self.max_seen_seq:
            self.soak.violation(f"{self.role}: new seq {seq} ({sid}) not above every seq seen ({self.max_seen_seq})")
        item = self.peer.items.get(sid) if self.peer else None
        if item is None:
            self.soak.violation(f"{self.role}: delivered {sid} the peer never sent")
        else:
            if item.cancel == "cancelled":
                self.soak.violation(f"{self.role}: {sid} delivered after the relay answered cancelled (§8.8)")
            if item.mode != mode:
                self.soak.violation(f"{self.role}: {sid} came as {mode}, sent as {item.mode}")
            if f'"payload":{item.text}' not in text:
                self.soak.violation(f"{self.role}: {sid} payload bytes differ from what was sent (§3.7)")
            if json.loads(item.text) != frame["payload"]:
                self.soak.violation(f"{self.role}: {sid} payload differs from what was sent")
        self.id_of_seq[seq] = sid
        self.seq_of_id[sid] = seq
        self.max_seen_seq = max(self.max_seen_seq, seq)
        (self.contexts if mode == "context" else self.processed).append(sid)
        self.soak.count(f"{self.role} processed {mode}")
        # Processed durably (this process is the app's storage), so lastSeq moves now (§8.6).
        self.last_seq = max(self.last_seq, seq)
        conn.unacked_high = max(conn.unacked_high, seq)
        conn.unacked_count += 1

    async def acker(self, conn: Connection) -> None:
        while True:
            await asyncio.sleep(0.01 if conn.ack_policy == "each" else 0.2 if conn.ack_policy == "batch" else 1.0)
            if time.monotonic() < self.paused_until:
                continue
            if conn.unacked_high > 0 and (conn.ack_policy != "batch" or conn.unacked_count >= 8 or self.rng.random() < 0.3):
                seq = conn.unacked_high
                conn.unacked_high = 0
                conn.unacked_count = 0
                await self.send_frame(conn, {"type": "ack", "seq": seq})
                self.note(conn, f"ack {seq}")
                self.soak.count(f"{self.role} ack")
                self.soak.event(f"{self.role} ack")

    async def writer(self, conn: Connection) -> None:
        window = self.rng.randint(1, 24)
        last_ctx = 0.0
        retry_at: dict[str, float] = {}
        while True:
            now = time.monotonic()
            # Retries first, with the same id (§8.1), in the order created.
            pending = [i for i in self.order + self.ctx_order
                       if self.items[i].accepted_at is None and self.items[i].cancel is None
                       and i not in conn.inflight and retry_at.get(i, 0) <= now]
            ctx_inflight = any(self.items[i].mode == "context" for i in conn.inflight)
            for sid in pending:
                if len(conn.inflight) >= window:
                    break
                item = self.items[sid]
                if item.mode == "context" and ctx_inflight:
                    continue
                await self.send_item(conn, item)
                retry_at[sid] = now + 2
                ctx_inflight = ctx_inflight or item.mode == "context"
            if self.soak.new_items and len(self.order) < self.soak.args.max_items:
                while len(conn.inflight) < window and self.rng.random() < 0.8:
                    item = self.new_item()
                    await self.send_item(conn, item)
                    if self.rng.random() < 0.04:
                        # Cancel it at once: never sent yet, most of the time (§8.8).
                        item.cancel = "asked"
                        await self.send_frame(conn, {"type": "cancel", "id": f"x-{item.id}", "target": item.id})
                        self.soak.count(f"{self.role} cancel asked")
                if not ctx_inflight and now - last_ctx > self.rng.uniform(0.3, 3) and not any(
                        self.items[i].accepted_at is None for i in self.ctx_order):
                    last_ctx = now
                    await self.send_item(conn, self.new_context())
            # A peer that stopped reading gets messages, to fill its outbound queue (§2.2).
            if self.peer and time.monotonic() < self.peer.paused_until and conn.peer_reachable and self.soak.chaos:
                for _ in range(8):
                    n = self.soak.now()
                    await self.send_frame(conn, {"type": "send", "id": f"{self.role[0]}m-{n}", "mode": "message",
                                                 "payload": json.loads(self.payload_text("message", n, 60000))})
                    self.soak.count(f"{self.role} message sent")
            await asyncio.sleep(self.rng.uniform(0.0, 0.03))

    async def send_item(self, conn: Connection, item: Item) -> None:
        if item.first_sent == 0:
            item.first_sent = self.soak.now()
            self.soak.count(f"{self.role} sent {item.mode}")
        else:
            self.soak.count(f"{self.role} retried")
        conn.inflight.add(item.id)
        await self.send_frame(conn, f'{{"type":"send","id":"{item.id}","mode":"{item.mode}","payload":{item.text}}}')
        self.soak.event(f"{self.role} send")

    async def chaos(self, conn: Connection) -> None:
        while True:
            await asyncio.sleep(self.rng.uniform(0.5, 2.0))
            if not self.soak.chaos:
                continue
            r = self.rng.random()
            if r < 0.06:
                self.soak.count(f"{self.role} drop")
                conn.ws.transport.abort()  # the TCP connection ends, no close frame
                return
            if r < 0.09:
                self.soak.count(f"{self.role} crash")
                conn.unacked_high = 0  # what it had not acked yet is forgotten with the process
                conn.ws.transport.abort()
                return
            if r < 0.11 and time.monotonic() > self.paused_until:
                pause = self.rng.uniform(3, 40)
                self.soak.count(f"{self.role} slow reader")
                self.soak.count(f"{self.role} slow reader seconds", int(pause))
                self.paused_until = time.monotonic() + pause

    async def outstanding(self) -> list[str] | None:
        conn = self.conn
        if conn is None:
            return None
        self.outstanding_answer = None
        try:
            await self.send_frame(conn, {"type": "outstanding", "id": f"o{self.soak.now()}"})
        except (ConnectionClosed, OSError):
            return None
        for _ in range(50):
            await asyncio.sleep(0.1)
            if self.outstanding_answer is not None:
                return self.outstanding_answer
        return None


async def relay_chaos(soak: Soak) -> None:
    relay, redis = soak.relay, soak.redis
    while not soak.stopping:
        if relay.url is None:
            await asyncio.sleep(soak.rng.uniform(0.0, 1.0))
            if redis and redis.proc.returncode is not None:
                await redis.start()
            await relay.start()
            continue
        await asyncio.sleep(0.1)
        relay.sample_rss()
        # Kills only while `kill_every` > 0: the calm phase sets it to 0 (no relay nor Redis
        # kills), and a Redis killed just before stays this task's to restart.
        if soak.chaos and soak.args.kill_every > 0 and soak.rng.random() < 0.1 / soak.args.kill_every:
            relay.kill_now("timer")
        if soak.chaos and redis and soak.args.kill_every > 0 and soak.rng.random() < 0.1 / (soak.args.kill_every * 4):
            await redis.kill9()
            soak.trace_note("redis killed")
            soak.count("redis kill")
            await asyncio.sleep(soak.rng.uniform(0.2, 3))
            await redis.start()


def report(checks: list[tuple[str, bool, str]]) -> int:
    """Prints each check and the closing `N passed, N failed` line; returns the failures."""
    passed = failed = 0
    for name, ok, detail in checks:
        print(f"{'PASS' if ok else 'FAIL'} {name}" + (f" ({detail})" if detail else ""))
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return failed


def check_order(soak: Soak, sender: Device, receiver: Device, ids: list[str], processed: list[str], what: str) -> None:
    """An item accepted before another was first sent is processed before it (§8.4)."""
    pos = {sid: k for k, sid in enumerate(processed)}
    accepted = sorted((sender.items[i].accepted_at, pos.get(i, -1)) for i in ids if sender.items[i].accepted_at)
    times = [a for a, _ in accepted]
    prefix_max, m = [], -1
    for _, p in accepted:
        m = max(m, p)
        prefix_max.append(m)
    bad = 0
    for i in ids:
        item = sender.items[i]
        if i not in pos:
            continue
        k = bisect.bisect_left(times, item.first_sent) - 1
        if k >= 0 and prefix_max[k] > pos[i]:
            bad += 1
            if bad <= 5:
                soak.violation(f"{what} {sender.role}→{receiver.role}: {i} processed before an item accepted before it was sent")


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.environ.get("WATCHRELAY_BIN", str(REPO / ".build/debug/watchrelay")))
    ap.add_argument("--seconds", type=float, default=120, help="chaos phase")
    ap.add_argument("--calm-seconds", type=float, default=60, help="then no relay kills, for the memory check")
    ap.add_argument("--store", choices=["sqlite", "redis"], default="sqlite")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--kill-every", type=float, default=4.0, help="mean seconds between timed relay kills")
    ap.add_argument("--targeted-kill-p", type=float, default=0.0004)
    ap.add_argument("--max-items", type=int, default=1_000_000)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="chaos-soak-"))
    print(f"seed {args.seed}, store {args.store}, work {workdir}", flush=True)
    soak = Soak(args, workdir)
    # SIGTERM ends the soak as Ctrl-C does: through the `finally` that stops its children.
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, asyncio.current_task().cancel)
    try:
        return await run_soak(args, workdir, soak)
    except asyncio.CancelledError:
        print(f"interrupted: its processes stopped, {workdir} kept", flush=True)
        return 1
    finally:
        await soak.stop_children()


async def run_soak(args: argparse.Namespace, workdir: pathlib.Path, soak: Soak) -> int:
    if args.store == "redis":
        soak.redis = Redis(soak)
        await soak.redis.start()
        store_args = ["--store", soak.redis.url]
    else:
        store_args = ["--db", str(workdir / "relay.db")]
    soak.relay = Relay(soak, store_args)
    await soak.relay.start()

    phone, watch = Device(soak, "phone"), Device(soak, "watch")
    phone.peer, watch.peer = watch, phone
    soak.devices = [phone, watch]
    code = await phone.pair_phone()
    await watch.pair_watch(code)
    await phone.finish_phone_pairing()

    started = time.monotonic()
    runners = [asyncio.create_task(phone.run()), asyncio.create_task(watch.run()), asyncio.create_task(relay_chaos(soak))]
    for name, task in zip(("phone", "watch", "relay chaos"), runners):
        task.add_done_callback(lambda t, name=name: soak.task_ended(name, t))
    last_report = started
    while time.monotonic() - started < args.seconds:
        await asyncio.sleep(1)
        if time.monotonic() - last_report > 15:
            last_report = time.monotonic()
            print(f"  t={int(time.monotonic() - started)}s kills={soak.relay.kills} "
                  f"phone accepted={sum(1 for i in phone.order if phone.items[i].accepted_at)} watch processed={len(watch.processed)} "
                  f"watch accepted={sum(1 for i in watch.order if watch.items[i].accepted_at)} phone processed={len(phone.processed)}", flush=True)

    # Calm: the relay stays up (memory is watched); clients still drop and pause.
    soak.chaos = True
    kill_every = args.kill_every
    args.kill_every = 0
    args.targeted_kill_p = 0
    redis = soak.redis  # no Redis kills either (`kill_every` 0); one killed just now comes back
    up_by = time.monotonic() + 120
    while soak.relay.url is None and time.monotonic() < up_by:
        await asyncio.sleep(0.1)
    calm_start = time.monotonic()
    soak.relay.rss_samples = []
    while time.monotonic() - calm_start < args.calm_seconds:
        await asyncio.sleep(1)
        if int(time.monotonic() - calm_start) % 30 == 0:
            print(f"  calm t={int(time.monotonic() - calm_start)}s relay RSS {soak.relay.sample_rss()} KiB", flush=True)
    rss = list(soak.relay.rss_samples)

    # Quiet: no new items, no chaos; everything accepted must arrive.
    soak.chaos = False
    soak.new_items = False
    phone.paused_until = watch.paused_until = 0
    deadline = time.monotonic() + 120
    settled = False
    while time.monotonic() < deadline:
        await asyncio.sleep(1)
        done = all(d.items[i].accepted_at or d.items[i].cancel for d in (phone, watch) for i in d.order + d.ctx_order)
        done = done and all(set(d.peer.processed) >= {i for i in d.order if d.items[i].cancel is None} for d in (phone, watch))
        done = done and all(d.peer.contexts and d.peer.contexts[-1] == d.ctx_order[-1] for d in (phone, watch) if d.ctx_order)
        if done:
            settled = True
            break
    await asyncio.sleep(3)  # the last acks and transferred
    outstanding = {d.role: await d.outstanding() for d in (phone, watch)}
    soak.stopping = True
    for t in runners:
        t.cancel()
    await asyncio.gather(*runners, return_exceptions=True)
    await soak.relay.stop()
    if redis:
        await redis.kill9()

    # -- verdicts ----------------------------------------------------------------------------
    checks: list[tuple[str, bool, str]] = []
    for s, r in ((phone, watch), (watch, phone)):
        accepted = [i for i in s.order if s.items[i].accepted_at]
        missing = [i for i in accepted if i not in r.seq_of_id and s.items[i].cancel in (None, "already_delivered")]
        late = [i for i in r.processed if s.items[i].cancel == "cancelled"]
        checks.append((f"{s.role}→{r.role}: nothing cancelled delivered", not late, f"{late[:10]}"))
        checks.append((f"{s.role}→{r.role}: every accepted userInfo processed", not missing and settled,
                       f"{len(accepted)} accepted, {len(r.processed)} processed, missing {missing[:10]}"))
        extra = [i for i in r.processed if i not in s.items]
        checks.append((f"{s.role}→{r.role}: processed exactly once, nothing unsent", len(set(r.processed)) == len(r.processed) and not extra, f"extra {extra[:5]}"))
        before = len(soak.violations)
        check_order(soak, s, r, s.order, r.processed, "userInfo order")
        check_order(soak, s, r, s.ctx_order, r.contexts, "context order")
        checks.append((f"{s.role}→{r.role}: FIFO order and contexts never go back", len(soak.violations) == before, ""))
        last_ctx = s.ctx_order[-1] if s.ctx_order else None
        got_ctx = r.contexts[-1] if r.contexts else None
        checks.append((f"{s.role}→{r.role}: latest context delivered", last_ctx == got_ctx, f"sent {last_ctx}, latest processed {got_ctx}"))
        not_transferred = [i for i in accepted if not s.items[i].transferred]
        checks.append((f"{s.role}: outstanding empty at the end", outstanding[s.role] == [],
                       f"outstanding {outstanding[s.role] if outstanding[s.role] is None else outstanding[s.role][:10]}, "
                       f"{len(not_transferred)} without transferred (may be lost with a connection, §8.7)"))
    checks.append(("no protocol violation seen while running", not soak.violations, f"{len(soak.violations)} violations"))
    checks.append(("the relay never exited by itself", soak.relay.crashes == 0, f"{soak.relay.crashes} exits"))
    if len(rss) >= 10:
        # A relay started at the last kill warms up for a while (its allocator's arenas, the
        # delivery windows, lws's buffers: with Redis up to ~90 s and 20 MB, then flat; seed 5
        # grew 37.6 → 48.4 → 52.1 MB at 30/60/90 s and stayed there to 180 s). A leak keeps
        # growing: what counts is the growth between the calm's last two quarters.
        k = len(rss)
        third = rss[k // 2: 3 * k // 4]
        fourth = rss[3 * k // 4:]
        first = sum(v for _, v in third) / max(1, len(third))
        last = sum(v for _, v in fourth) / max(1, len(fourth))
        growth = last - first
        checks.append(("relay memory bounded while it ran without kills", growth < 8 * 1024,
                       f"RSS {rss[0][1]} KiB at calm start, max {max(v for _, v in rss)} KiB, mean {first:.0f} → {last:.0f} KiB "
                       f"over the last half of {args.calm_seconds:.0f} s"))

    print(f"\nchaos {args.seconds:.0f} s (kill every ~{kill_every} s) + calm {args.calm_seconds:.0f} s, store {args.store}, seed {args.seed}")
    print(f"relay starts {soak.relay.starts}, kills {soak.relay.kills}" + (f", redis kills {redis.kills}" if redis else ""))
    for d in (phone, watch):
        acc = sum(1 for i in d.order if d.items[i].accepted_at)
        print(f"{d.role}: connections {d.connections}, userInfo sent {len(d.order)} accepted {acc}, contexts sent {len(d.ctx_order)}, "
              f"peer processed {len(d.peer.processed)} userInfo + {len(d.peer.contexts)} contexts; close codes {d.close_codes}")
    print("counts: " + ", ".join(f"{k}={v}" for k, v in sorted(soak.counts.items())))
    failed = report(checks)
    for d in (phone, watch):
        (workdir / f"trace-{d.role}.txt").write_text("\n".join(d.trace) + "\n")
    if not args.keep and failed == 0:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
