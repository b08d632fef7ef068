"""Hostile HTTP clients against a relay started here, while a paired phone and watch keep a
message round trip going (probe.py in a process of its own, so this process's load does not
bend its numbers).

usage: attack.py NAME [--n N] [--seconds S]

Prints one JSON line: the attack, its connections, what a fresh client saw during it
(`/healthz`, a new WebSocket hello), the pair's round trips, the relay's RSS before and after.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import Relay, http, status  # noqa: E402

PROBE = os.path.join(os.path.dirname(__file__), "probe.py")
UPGRADE = (b"GET /v1 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
           b"Sec-WebSocket-Protocol: watchrelay.v1\r\n\r\n")


def connect(relay):
    s = socket.create_connection((relay.host, relay.port), timeout=10)
    s.setblocking(True)
    return s


def open_many(relay, n, first=b""):
    socks = []
    for _ in range(n):
        try:
            s = connect(relay)
            if first:
                s.sendall(first)
            socks.append(s)
        except OSError as e:
            return socks, repr(e)
    return socks, None


def still_open(socks):
    """How many of `socks` the relay has not closed (a non-blocking peek)."""
    n = 0
    for s in socks:
        try:
            s.setblocking(False)
            b = s.recv(1, socket.MSG_PEEK)
            n += 1 if b else 0
        except BlockingIOError:
            n += 1
        except OSError:
            pass
    return n


def fresh_checks(relay):
    """What a new client gets now: /healthz status and a WebSocket 101, each with its time."""
    out = {}
    t0 = time.monotonic()
    try:
        r = http(relay.host, relay.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 10)
        out["healthz"] = status(r)
    except OSError as e:
        out["healthz"] = repr(e)
    out["healthzMs"] = round((time.monotonic() - t0) * 1000)
    t0 = time.monotonic()
    try:
        s = connect(relay)
        s.sendall(UPGRADE)
        s.settimeout(10)
        out["upgrade"] = status(s.recv(4096))
        s.close()
    except OSError as e:
        out["upgrade"] = repr(e)
    out["upgradeMs"] = round((time.monotonic() - t0) * 1000)
    return out


# MARK: - attacks; each runs for `seconds` while the probe runs, returns a dict


def slowloris(relay, n, seconds):
    """`n` connections, each sending a request header a byte at a time, one byte per second."""
    line = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000
    socks, err = open_many(relay, n)
    t0 = time.monotonic()
    i = 0
    checks = []
    while time.monotonic() - t0 < seconds:
        for s in socks:
            try:
                s.send(line[i % len(line):i % len(line) + 1])
            except OSError:
                pass
        i += 1
        if i % 5 == 0:
            checks.append(fresh_checks(relay))
        time.sleep(1)
    return {"opened": len(socks), "openError": err, "openAtEnd": still_open(socks), "checks": checks[-3:],
            "closeAll": [s.close() for s in socks] and None}


def hold(relay, n, seconds, first):
    """`n` connections that send `first` and then nothing; fresh clients checked every 5 s."""
    socks, err = open_many(relay, n, first)
    checks = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        time.sleep(5)
        checks.append(fresh_checks(relay))
    res = {"opened": len(socks), "openError": err, "openAtEnd": still_open(socks), "checks": checks[-3:]}
    for s in socks:
        s.close()
    return res


def silent(relay, n, seconds):
    """`n` connections that send nothing at all (a handshake that never starts)."""
    return hold(relay, n, seconds, b"")


def half_upgrade(relay, n, seconds):
    """`n` upgrades with the headers cut short before the blank line."""
    return hold(relay, n, seconds, UPGRADE[:-2])


def upgraded_silent(relay, n, seconds):
    """`n` completed upgrades (101) that never say hello."""
    return hold(relay, n, seconds, UPGRADE)


def churn(relay, n, seconds):
    """Connections opened and closed as fast as one thread can: `/healthz`, upgrades, resets."""
    done = {"healthz": 0, "upgrade": 0, "reset": 0, "errors": 0}
    t0 = time.monotonic()
    k = 0
    while time.monotonic() - t0 < seconds:
        k += 1
        try:
            s = connect(relay)
            if k % 3 == 0:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                s.recv(4096)
                done["healthz"] += 1
            elif k % 3 == 1:
                s.sendall(UPGRADE)
                s.recv(4096)
                done["upgrade"] += 1
            else:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                s.sendall(UPGRADE[:40])
                done["reset"] += 1
            s.close()
        except OSError:
            done["errors"] += 1
    done["checks"] = [fresh_checks(relay)]
    return done


def post_body(relay, n, seconds):
    """POSTs to the console API with large bodies: Content-Length, chunked, and a lying length."""
    tok = relay.token.encode()
    big = b"x" * (1 << 20)
    sent = 0
    results = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        for path in (b"/console/api/faults/clear?token=" + tok, b"/console/api/faults/clear"):
            s = connect(relay)
            s.settimeout(5)
            try:
                s.sendall(b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (64 * len(big)))
                for _ in range(64):
                    s.sendall(big)
                    sent += len(big)
            except OSError as e:
                results.append(repr(e)[:60])
            try:
                results.append(status(s.recv(4096)))
            except OSError as e:
                results.append(repr(e)[:60])
            s.close()
        s = connect(relay)
        s.settimeout(5)
        try:
            s.sendall(b"POST /console/api/faults/clear?token=" + tok + b" HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            for _ in range(64):
                s.sendall(b"100000\r\n" + big + b"\r\n")
                sent += len(big)
            s.sendall(b"0\r\n\r\n")
            results.append(status(s.recv(4096)))
        except OSError as e:
            results.append(repr(e)[:60])
        s.close()
    return {"bytesSent": sent, "statuses": sorted(set(map(str, results))), "checks": [fresh_checks(relay)]}


def subscribe(relay, n, receive_buffer=None):
    """`n` open `/console/api/events` streams (with the token)."""
    req = b"GET /console/api/events?token=" + relay.token.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    socks = []
    for _ in range(n):
        s = connect(relay)
        if receive_buffer:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        s.sendall(req)
        socks.append(s)
    return socks


def statuses(socks):
    """Each socket's HTTP status so far (a peek at its first bytes): how many were served, refused."""
    seen = {}
    for s in socks:
        try:
            s.setblocking(False)
            head = s.recv(12, socket.MSG_PEEK)
            status = head[9:12].decode() if head.startswith(b"HTTP/1.1 ") else "none"
        except BlockingIOError:
            status = "none"
        except OSError:
            status = "closed"
        seen[status] = seen.get(status, 0) + 1
    return seen


def sse_stuck(relay, n, seconds):
    """`n` SSE subscribers that never read, while the pair's traffic makes the console push
    (the relay serves 16 at once and answers the rest 503)."""
    socks = subscribe(relay, n, 4096)
    time.sleep(1)
    served = statuses(socks)
    checks = []
    rss = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        time.sleep(5)
        checks.append(fresh_checks(relay))
        rss.append(relay.rss_kib())
    res = {"opened": len(socks), "statuses": served, "openAtEnd": still_open(socks), "checks": checks[-2:],
           "rssEvery5sKiB": rss}
    for s in socks:
        s.close()
    return res


def sse_many(relay, n, seconds):
    """`n` SSE subscribers that read everything."""
    socks = subscribe(relay, n)
    got = [0]
    stop = [False]

    def reader():
        import selectors
        sel = selectors.DefaultSelector()
        for s in socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        while not stop[0]:
            for key, _ in sel.select(0.5):
                try:
                    got[0] += len(key.fileobj.recv(65536))
                except OSError:
                    pass
    th = threading.Thread(target=reader)
    th.start()
    checks = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        time.sleep(5)
        checks.append(fresh_checks(relay))
    stop[0] = True
    th.join()
    res = {"opened": len(socks), "bytesRead": got[0], "checks": checks[-2:]}
    for s in socks:
        s.close()
    return res


def fd_exhaust(relay, n, seconds, first=b""):
    """More idle connections than the relay has descriptors (its ulimit -n)."""
    socks, err = open_many(relay, n, first)
    checks = []
    t0 = time.monotonic()
    cpu0 = cpu(relay)
    while time.monotonic() - t0 < seconds:
        time.sleep(5)
        checks.append(fresh_checks(relay))
    res = {"opened": len(socks), "openError": err, "relayFds": relay.fds(), "openAtEnd": still_open(socks),
           "relayCpuS": round(cpu(relay) - cpu0, 2), "checks": checks[-2:]}
    for s in socks:
        s.close()
    time.sleep(2)
    res["afterClose"] = fresh_checks(relay)
    return res


def connect_raw(relay, n, seconds):
    """`n` `CONNECT` requests: lws turns each into a raw socket with no timeout."""
    return fd_exhaust(relay, n, seconds, b"CONNECT a:1 HTTP/1.1\r\nHost: x\r\n\r\n")


def cpu(relay):
    with open(f"/proc/{relay.proc.pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


ATTACKS = {f.__name__: f for f in (slowloris, silent, half_upgrade, upgraded_silent, churn, post_body, sse_stuck,
                                   sse_many, fd_exhaust, connect_raw)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("attack", choices=sorted(ATTACKS))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--relay-arg", action="append", default=[])
    a = ap.parse_args()
    db = f"/tmp/hostile-{a.attack}-{os.getpid()}.db"
    relay = Relay(db, a.relay_arg)
    try:
        probe = subprocess.Popen([sys.executable, PROBE, relay.url, str(a.seconds + 10)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        assert probe.stdout.readline().strip() == "ready"
        time.sleep(2)
        rss_before = relay.rss_kib()
        t0 = time.monotonic()
        result = ATTACKS[a.attack](relay, a.n, a.seconds)
        took = time.monotonic() - t0
        time.sleep(3)
        rss_after = relay.rss_kib()
        out, err = probe.communicate(timeout=a.seconds + 120)
        pair = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"probeError": err[-500:]}
        result.pop("closeAll", None)
        print(json.dumps({"attack": a.attack, "n": a.n, "seconds": round(took, 1), "relayAlive": relay.alive(),
                          "rssKiB": [rss_before, rss_after], "pair": pair, **result}))
        errs = [l for l in relay.stderr_lines if " E: " in l or "error" in l.lower()]
        if errs:
            print("relay errors (%d), last: %s" % (len(errs), errs[-1].strip()), file=sys.stderr)
    finally:
        relay.stop()
        for suffix in ("", "-wal", "-shm", "-lock"):
            try:
                os.remove(db + suffix)
            except OSError:
                pass


main()
