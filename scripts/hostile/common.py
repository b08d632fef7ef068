"""Shared pieces of the hostile-HTTP tools: start a relay, read its RSS, a paired phone/watch.

Loopback only. The pair keeps a watch -> phone message with reply going and records the worst
round trip, so an attack that stalls the relay's one service thread shows as a number.
"""

import asyncio
import json
import os
import re
import socket
import subprocess
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("WATCHRELAY_BIN", os.path.join(ROOT, ".build", "debug", "watchrelay"))


class Relay:
    """`watchrelay serve --console` on a free loopback port, its URL, token and pid."""

    def __init__(self, db, extra=()):
        self.proc = subprocess.Popen(
            [BINARY, "serve", "--port", "0", "--db", db, "--console", "--log-level", "warn", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.url = self.proc.stdout.readline().strip()
        m = re.match(r"ws://([^:/]+):(\d+)/v1", self.url)
        if not m:
            raise RuntimeError("relay did not start: " + self.url + self.proc.stderr.read())
        self.host, self.port = m.group(1), int(m.group(2))
        self.token = None
        deadline = time.time() + 10
        while self.token is None and time.time() < deadline:
            line = self.proc.stderr.readline()
            t = re.search(r"token=([0-9a-f]+)", line)
            if t:
                self.token = t.group(1)
        self.stderr_lines = []
        # Keep draining stderr so the relay never blocks on a full pipe.
        import threading
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return -1

    def fds(self):
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def http(host, port, raw, timeout=5.0):
    """Sends raw bytes, returns everything read until the peer closes or `timeout`."""
    s = socket.create_connection((host, port), timeout=timeout)
    s.sendall(raw)
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except socket.timeout:
        pass
    s.close()
    return out


def status(reply):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", reply)
    return int(m.group(1)) if m else None


class Pair:
    """A phone and a watch, paired, exchanging watch -> phone messages with replies."""

    def __init__(self, url):
        self.url = url
        self.rtts = []
        self.failures = []
        self.running = True

    async def _hello(self, role, name, extra=None):
        import websockets
        ws = await websockets.connect(self.url, subprotocols=["watchrelay.v1"], max_size=None,
                                      ping_interval=None)
        hello = {"type": "hello", "id": f"{role[0]}-1", "protocol": 1, "role": role, "device": {"name": name}}
        if role == "watch":
            hello["foreground"] = True
        hello.update(extra or {})
        await ws.send(json.dumps(hello))
        welcome = json.loads(await ws.recv())
        assert welcome["type"] == "welcome", welcome
        return ws

    async def setup(self):
        self.phone = await self._hello("phone", "hostile phone")
        await self.phone.send(json.dumps({"type": "pair.begin", "id": "p-2"}))
        code = None
        while code is None:
            f = json.loads(await self.phone.recv())
            if f["type"] == "pair.code":
                code = f["code"]
        self.watch = await self._hello("watch", "hostile watch")
        await self.watch.send(json.dumps({"type": "pair.join", "id": "w-2", "code": code}))
        while True:
            f = json.loads(await self.watch.recv())
            if f["type"] == "paired":
                break
        # Wait until the watch sees the phone reachable.
        await asyncio.sleep(0.3)

    async def _phone_loop(self):
        n = 0
        async for raw in self.phone:
            f = json.loads(raw)
            if f["type"] == "deliver" and f.get("wantsReply"):
                n += 1
                await self.phone.send(json.dumps(
                    {"type": "reply", "id": f"p-r{n}", "re": f["id"], "payload": {"kind": "pong", "n": n}}))

    async def run(self, seconds, gap=0.05):
        """Round trips for `seconds`; returns the number done."""
        phone_task = asyncio.create_task(self._phone_loop())
        n = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end and self.running:
            n += 1
            mid = f"w-m{n}"
            t0 = time.monotonic()
            await self.watch.send(json.dumps(
                {"type": "send", "id": mid, "mode": "message", "wantsReply": True, "payload": {"kind": "ping", "n": n}}))
            try:
                while True:
                    f = json.loads(await asyncio.wait_for(self.watch.recv(), 30))
                    if f["type"] == "reply" and f.get("re") == mid:
                        break
                    if f["type"] == "error" and f.get("re") == mid:
                        self.failures.append(f)
                        break
            except Exception as e:  # a stall over 30 s or a closed connection
                self.failures.append(repr(e))
                break
            self.rtts.append(time.monotonic() - t0)
            await asyncio.sleep(gap)
        phone_task.cancel()
        return n

    def summary(self):
        r = sorted(self.rtts)
        if not r:
            return {"roundTrips": 0, "failures": self.failures}
        return {"roundTrips": len(r), "p50ms": round(r[len(r) // 2] * 1000, 1),
                "p99ms": round(r[int(len(r) * 0.99) - 1 if len(r) > 1 else 0] * 1000, 1),
                "worstMs": round(r[-1] * 1000, 1), "failures": self.failures[:3]}
