#!/usr/bin/env python3
"""Chaos soak with real processes: `wc-probe` apps (WatchConnectivity over the relay) as phone
and watch, `watchrelay pair` for their state directories, and `kill -9` of the relay, the phone
and the watch at random moments.

Each app queues numbered userInfo transfers (`transferUserInfo`, stdin `userInfo N`, printed
`queued N` once the call returned: the transfer is the session's from then on). The soak checks,
after a quiet period, that every queued transfer reached the other app's delegate
(`userInfo N`), in the order queued, and that its sender heard `finished N`. A delegate killed
while handling an item may see it again (the app never acknowledged it): those repeats are
counted, not failed; any other repeat fails.

Usage: scripts/chaos_soak_apps.py [--seconds 120] [--seed N]  (needs `swift build` first)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pathlib
import random
import shutil
import signal
import sys
import tempfile
import time

from chaos_soak import free_port, report

REPO = pathlib.Path(__file__).resolve().parent.parent
# Every process started, killed at the end whatever ended the soak (an exception, Ctrl-C, SIGTERM).
CHILDREN: list[asyncio.subprocess.Process] = []


async def spawn(*argv: str, **kwargs) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(*argv, **kwargs)
    CHILDREN.append(proc)
    return proc


class App:
    """One wc-probe process at a time for a role; what it printed across its lives."""

    def __init__(self, role: str, probe: str, url: str, state: pathlib.Path, log: pathlib.Path) -> None:
        self.role, self.probe, self.url, self.state = role, probe, url, state
        self.log = open(log, "ab")
        self.proc: asyncio.subprocess.Process | None = None
        self.queued: list[int] = []
        self.received: list[int] = []  # every delegate call, repeats included
        self.finished: set[int] = set()
        self.failed: list[str] = []
        self.kills = 0
        self.lives = 0
        self.handling: int | None = None  # the item the delegate got last in this life
        self.killed_while_handling: set[int] = set()
        self.reader: asyncio.Task | None = None
        self.exits: list[int] = []
        self.activated = False  # in this life: transfers before activation fail (WCError 7004)
        self.lines = open(log.with_suffix(".out"), "a")

    async def start(self) -> None:
        env = dict(os.environ, WATCHRELAY_URL=self.url, WATCHRELAY_ROLE=self.role, WATCHRELAY_STATE=str(self.state))
        self.proc = await spawn(
            self.probe, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=self.log, env=env)
        self.lives += 1
        self.activated = False
        self.handling = None
        self.reader = asyncio.create_task(self.read(self.proc))

    async def read(self, proc: asyncio.subprocess.Process) -> None:
        while line := await proc.stdout.readline():
            words = line.decode().split()
            if not words:
                continue
            self.lines.write(f"{time.monotonic():.3f} life {self.lives} {line.decode()}")
            if words[0] == "activated":
                self.activated = True
            elif words[0] == "queued":
                self.queued.append(int(words[1]))
            elif words[0] == "userInfo":
                self.received.append(int(words[1]))
                self.handling = int(words[1])
            elif words[0] == "finished":
                self.finished.add(int(words[1]))
            elif words[0] == "failed":
                self.failed.append(" ".join(words))
        code = await proc.wait()
        if code != -signal.SIGKILL:
            self.exits.append(code)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None and self.activated

    async def send(self, n: int) -> None:
        if self.alive():
            try:
                self.proc.stdin.write(f"userInfo {n}\n".encode())
                await self.proc.stdin.drain()
            except (ConnectionError, BrokenPipeError):
                pass

    async def kill9(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
            if self.reader:
                await self.reader
            if self.handling is not None:
                self.killed_while_handling.add(self.handling)
            self.kills += 1


async def main() -> int:
    # SIGTERM ends the soak as Ctrl-C does: through the `finally` that stops its children.
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, asyncio.current_task().cancel)
    try:
        return await run_soak()
    except asyncio.CancelledError:
        print("interrupted: its processes stopped, its work directory kept", flush=True)
        return 1
    finally:
        for proc in CHILDREN:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


async def run_soak() -> int:
    ap = argparse.ArgumentParser()
    bin_dir = pathlib.Path(os.environ.get("WATCHRELAY_BIN_DIR", str(REPO / ".build/debug")))
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = pathlib.Path(tempfile.mkdtemp(prefix="chaos-apps-"))
    print(f"seed {args.seed}, work {work}", flush=True)
    port = free_port()
    url = f"ws://127.0.0.1:{port}/v1"
    relay_log = open(work / "relay.log", "ab")
    relay: dict[str, asyncio.subprocess.Process | None] = {"proc": None}
    relay_stats = {"kills": 0, "starts": 0, "crashes": 0}

    async def start_relay() -> None:
        for _ in range(40):
            # Its stdin's writer is this script (as the apps' is): killed, it leaves no relay behind.
            proc = await spawn(
                str(bin_dir / "watchrelay"), "serve", "--port", str(port), "--db", str(work / "relay.db"),
                "--log-level", "info", "--exit-on-stdin-eof", stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=relay_log)
            line = await asyncio.wait_for(proc.stdout.readline(), 30)
            if line.startswith(b"ws"):
                relay["proc"] = proc
                relay_stats["starts"] += 1
                return
            await proc.wait()
            await asyncio.sleep(0.25)
        raise RuntimeError("relay did not start")

    await start_relay()
    pair = await spawn(
        str(bin_dir / "watchrelay"), "pair", "--relay", url, "--phone-state", str(work / "phone"),
        "--watch-state", str(work / "watch"), stdout=asyncio.subprocess.DEVNULL)
    assert await pair.wait() == 0, "pair failed"
    probe = str(bin_dir / "wc-probe")
    phone = App("phone", probe, url, work / "phone", work / "phone.log")
    watch = App("watch", probe, url, work / "watch", work / "watch.log")
    await phone.start()
    await watch.start()
    counters = {"phone": 0, "watch": 0}
    started = time.monotonic()
    chaos = True
    relay_crashes: list[int] = []

    async def senders() -> None:
        while True:
            for app in (phone, watch):
                if app.alive() and rng.random() < 0.5:
                    counters[app.role] += 1
                    await app.send(counters[app.role])
            await asyncio.sleep(rng.uniform(0.005, 0.05))

    send_task = asyncio.create_task(senders())
    while time.monotonic() - started < args.seconds:
        await asyncio.sleep(rng.uniform(0.3, 2.5))
        r = rng.random()
        proc = relay["proc"]
        if proc.returncode is not None:
            relay_crashes.append(proc.returncode)
            await start_relay()
        elif r < 0.4:
            proc.kill()
            await proc.wait()
            relay_stats["kills"] += 1
            await asyncio.sleep(rng.uniform(0, 1))
            await start_relay()
        elif r < 0.7:
            await phone.kill9()
            await asyncio.sleep(rng.uniform(0, 1))
            await phone.start()
        else:
            await watch.kill9()
            await asyncio.sleep(rng.uniform(0, 1))
            await watch.start()
        if int(time.monotonic() - started) % 15 == 0:
            print(f"  t={int(time.monotonic() - started)}s phone queued {len(phone.queued)} watch got {len(watch.received)}; "
                  f"watch queued {len(watch.queued)} phone got {len(phone.received)}", flush=True)
    send_task.cancel()
    # Quiet: everything up, nothing new; wait for every queued transfer to arrive and finish.
    for app in (phone, watch):
        if app.proc.returncode is not None:
            await app.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        await asyncio.sleep(1)
        if relay["proc"].returncode is not None:
            relay_crashes.append(relay["proc"].returncode)
            await start_relay()
        if all(set(a.queued) <= set(b.received) and set(a.queued) <= a.finished for a, b in ((phone, watch), (watch, phone))):
            break
    await asyncio.sleep(2)
    for app in (phone, watch):
        if app.proc.returncode is None:
            app.proc.kill()
            await app.proc.wait()
    relay["proc"].send_signal(signal.SIGTERM)
    await relay["proc"].wait()

    checks = []
    for a, b in ((phone, watch), (watch, phone)):
        missing = sorted(set(a.queued) - set(b.received))
        checks.append((f"{a.role}→{b.role}: every queued transfer reached the delegate", not missing,
                       f"{len(a.queued)} queued, missing {missing[:10]}"))
        firsts, seen = [], set()
        for n in b.received:
            if n not in seen:
                seen.add(n)
                firsts.append(n)
        checks.append((f"{a.role}→{b.role}: in the order queued", firsts == sorted(firsts), ""))
        repeats = [n for n in b.received if b.received.count(n) > 1]
        unexplained = sorted({n for n in repeats if n not in b.killed_while_handling})
        checks.append((f"{a.role}→{b.role}: repeats only of an item its receiver was killed handling", not unexplained,
                       f"{len(set(repeats))} repeated, unexplained {unexplained[:10]}"))
        unfinished = sorted(set(a.queued) - a.finished)
        checks.append((f"{a.role}: heard finished for every transfer", not unfinished and not a.failed,
                       f"unfinished {unfinished[:10]}, failed {a.failed[:5]}"))
        checks.append((f"{a.role}: no exit but by kill -9", not a.exits, f"exits {a.exits}"))
    checks.append(("the relay never exited by itself", not relay_crashes, f"{relay_crashes}"))
    print(f"\napps soak {args.seconds:.0f} s, seed {args.seed}: relay starts {relay_stats['starts']}, kills {relay_stats['kills']}; "
          f"phone lives {phone.lives} (kills {phone.kills}), watch lives {watch.lives} (kills {watch.kills})")
    print(f"phone queued {len(phone.queued)}, watch queued {len(watch.queued)}; watch delegate calls {len(watch.received)}, "
          f"phone delegate calls {len(phone.received)}")
    failed = report(checks)
    if not args.keep and not failed:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
