"""A paired phone and watch exchanging messages for N seconds; prints the round trips as JSON.

usage: probe.py URL SECONDS
"""
import asyncio
import json
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from common import Pair  # noqa: E402


async def main(url, seconds):
    pair = Pair(url)
    await pair.setup()
    print("ready", flush=True)
    await pair.run(seconds)
    print(json.dumps(pair.summary()), flush=True)


asyncio.run(main(sys.argv[1], float(sys.argv[2])))
