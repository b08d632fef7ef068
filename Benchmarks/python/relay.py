#!/usr/bin/env python3
"""A phone <-> watch relay on the PyPI `websockets` package: a peer for `watchrelay bench`.

What a developer would write in an afternoon: the asyncio server of `websockets` (default
event loop, default settings), pairing by path and forwarding every message whole and in
order to the peer, or dropping it when the peer is not connected.

    /pair/<n>/phone   and   /pair/<n>/watch   are the two sides of pair <n>.

Run: python3 relay.py [--host 127.0.0.1] [--port 0]. The first line of standard output is
the URL (ws://HOST:PORT/). SIGINT and SIGTERM stop it.
"""
import argparse
import asyncio
import signal
import sys

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

# pair number -> {"phone": connection, "watch": connection}
pairs = {}


def parse_path(path):
    """Returns (pair, role) for /pair/<n>/phone|watch, else None."""
    parts = path.split("/")
    if len(parts) != 4 or parts[1] != "pair" or not parts[2].isdigit() or parts[3] not in ("phone", "watch"):
        return None
    return parts[2], parts[3]


async def handler(ws):
    parsed = parse_path(ws.request.path)
    if parsed is None:
        await ws.close(1008, "path must be /pair/<n>/phone or /pair/<n>/watch")
        return
    pair, role = parsed
    other = "watch" if role == "phone" else "phone"
    sides = pairs.setdefault(pair, {})
    sides[role] = ws  # a newer connection replaces an older one
    try:
        async for message in ws:
            peer = sides.get(other)
            if peer is None:
                continue
            try:
                await peer.send(message)  # waits while the peer's buffer is full
            except ConnectionClosed:
                pass
    except ConnectionClosed:
        pass
    finally:
        if sides.get(role) is ws:
            del sides[role]
        if not sides:
            pairs.pop(pair, None)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()

    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, lambda: stop.done() or stop.set_result(None))

    async with serve(handler, args.host, args.port, max_size=1 << 20) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"ws://{args.host}:{port}/", flush=True)
        await stop


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
