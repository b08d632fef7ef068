#!/usr/bin/env python3
"""Regenerates Benchmarks/relay-symbol-order.txt: the functions the relay runs, for the linker.

A release `watchrelay-relay` is linked by lld with this list as its --symbol-ordering-file
(Package.swift), so the code the relay runs lies together. The kernel maps an executable's
pages 64 KiB at a time around each page fault, so code scattered over its 16 MB of `.text` left
7.3 MiB of it resident for 0.8 MB that ever runs (BENCHMARKS.md, "The relay's code, in the order
it runs").

The list comes from a run, not from the source: the relay (release build, the list as it is)
runs under valgrind's callgrind as the relay of `watchrelay bench` (its start, pairing, the
message and durable paths, 1,000 pairs), its profile dumped every 2 s (the bench ends it with
SIGKILL). Every function of the executable that ran is listed, most instructions first. A list
that has gone stale only costs memory: the linker ignores names it does not find.

Usage: python3 scripts/relay-symbol-order.py   (needs valgrind; about two minutes)
"""
import collections
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "Benchmarks", "relay-symbol-order.txt")
BENCH_ARGS = ["--scenarios", "throughput,pairs,durable", "--sizes", "64,1024,65536",
              "--peers", "none", "--seconds", "1"]


def build():
    """Release builds of the relay (relinked: SwiftPM does not see the list change) and the CLI."""
    binpath = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.strip()
    relay = os.path.join(binpath, "watchrelay-relay")
    if os.path.exists(relay):
        os.remove(relay)
    for product in ("watchrelay-relay", "watchrelay"):
        subprocess.run(["swift", "build", "-c", "release", "--product", product], cwd=ROOT, check=True)
    return relay, os.path.join(binpath, "watchrelay")


def profile(relay, watchrelay, out):
    """Runs the bench with the relay under callgrind; returns the profile files."""
    wrapper = os.path.join(out, "relay-under-callgrind")
    profiles = shlex.quote(os.path.join(out, "cg.%p"))
    log = shlex.quote(os.path.join(out, "valgrind.log"))
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\n"
                # Dumps every 2 s while the relay lives: the bench SIGKILLs its relay, which loses
                # what was not dumped (callgrind_control exits 0 for a pid that is gone).
                "(while sleep 2; do kill -0 $$ 2>/dev/null || exit 0; callgrind_control -d $$ >/dev/null 2>&1; done) &\n"
                f"exec valgrind --tool=callgrind --demangle=no --callgrind-out-file={profiles} "
                f"{shlex.quote(relay)} \"$@\" 2>>{log}\n")
    os.chmod(wrapper, 0o755)
    subprocess.run([watchrelay, "bench", *BENCH_ARGS, "--watchrelay", wrapper, "--output",
                    os.path.join(out, "bench.json")], check=True, stdout=subprocess.DEVNULL)
    return glob.glob(os.path.join(out, "cg.*"))


def self_costs(paths):
    """Instructions per function (its own, not its callees'), over every profile file."""
    cost = collections.Counter()
    for path in paths:
        names, current, after_calls = {}, None, False
        with open(path, errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
                if m:
                    if m.group(3):
                        # A recursive call's name carries its depth ("f'2"): the function is f.
                        names[m.group(2)] = re.sub(r"'\d+$", "", m.group(3))
                    if m.group(1) == "fn":
                        current, after_calls = names.get(m.group(2)), False
                        cost[current] += 0
                    continue
                if line.startswith("calls="):
                    after_calls = True  # the next cost line is the call's inclusive cost
                    continue
                if current and line[:1] and (line[0].isdigit() or line[0] in "+-*"):
                    if after_calls:
                        after_calls = False
                        continue
                    parts = line.split()
                    if len(parts) >= 2 and parts[1].isdigit():
                        cost[current] += int(parts[1])
    return cost


def defined_functions(binary):
    out = subprocess.run(["nm", "--defined-only", binary], check=True, capture_output=True, text=True).stdout
    return {p[2] for p in (line.split(" ", 2) for line in out.splitlines()) if len(p) == 3 and p[1] in "tTwW"}


def main():
    relay, watchrelay = build()
    with tempfile.TemporaryDirectory() as out:
        paths = profile(relay, watchrelay, out)
        if not paths:
            sys.exit("no callgrind profile was written (is valgrind installed?)")
        cost = self_costs(paths)
    functions = defined_functions(relay)
    ran = [name for name, _ in sorted(cost.items(), key=lambda kv: (-kv[1], kv[0] or "")) if name in functions]
    with open(OUTPUT, "w") as f:
        f.write("\n".join(ran) + "\n")
    print(f"{len(ran)} functions written to {os.path.relpath(OUTPUT, ROOT)} ({len(paths)} profile dumps)")
    os.remove(relay)  # the release relay, linked again with the new list
    subprocess.run(["swift", "build", "-c", "release", "--product", "watchrelay-relay"], cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
