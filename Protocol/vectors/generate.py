#!/usr/bin/env python3
"""Writes the WatchRelay conformance vectors that are large or must be byte-exact.

Every other vector under Protocol/vectors is a hand-written JSON file. The ones made
here need exact sizes (payloads at and just over the per-mode limits, PROTOCOL.md §3.6
and §9), bytes that are not valid UTF-8, or deep nesting, so they are generated to be
reproducible. The output is deterministic: no clock, no `random`.

    python3 Protocol/vectors/generate.py          # (re)write the files
    python3 Protocol/vectors/generate.py --check  # exit 1 if a file on disk differs

scripts/check_schemas.py also runs the --check comparison.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Default limits (PROTOCOL.md §9).
MESSAGE_BYTES = 65536
USER_INFO_BYTES = 65536
CONTEXT_BYTES = 262144


def compact(payload: object) -> bytes:
    """The canonical compact encoding whose length the per-mode limits measure (§3.6)."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode("utf-8")


def frame_bytes(frame: object) -> bytes:
    """How a generated frame is written: one line, compact, raw UTF-8."""
    return json.dumps(frame, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


def sidecar(code: str, field: str | None, stage: str, note: str, setup: str | None = None,
            closes: int | None = None, binary: bool = False) -> bytes:
    doc: dict[str, object] = {"code": code, "field": field, "stage": stage, "setup": setup, "closes": closes}
    if binary:
        doc["binary"] = True
    doc["note"] = note
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


class Lcg:
    """A tiny linear congruential generator, so the output never depends on `random`'s algorithms."""

    def __init__(self, seed: int) -> None:
        self.state = seed

    def next(self, bound: int) -> int:
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return (self.state >> 33) % bound


# ---------------------------------------------------------------------------- padding

def fill_ascii(build, target: int) -> object:
    """Returns build(pad) for the ASCII pad that makes compact(build(pad)) exactly `target` bytes."""
    base = len(compact(build("")))
    need = target - base
    if need < 0:
        raise ValueError(f"payload is already {base} bytes, over {target}")
    pad = ("WatchRelay conformance padding. " * (need // 32 + 1))[:need]
    payload = build(pad)
    assert len(compact(payload)) == target, (len(compact(payload)), target)
    return payload


def fill_hangul(build, target: int) -> object:
    """Like fill_ascii, but pads mostly with U+D55C (3 UTF-8 bytes, 1 character): sizes are bytes, not characters."""
    base = len(compact(build("")))
    need = target - base
    if need < 0:
        raise ValueError(f"payload is already {base} bytes, over {target}")
    pad = "한" * (need // 3) + "." * (need % 3)
    payload = build(pad)
    assert len(compact(payload)) == target, (len(compact(payload)), target)
    return payload


# ---------------------------------------------------------------------------- realistic payloads

GIVEN = ["jiwoo", "seojun", "haeun", "minjun", "sua", "doyun", "yerin", "siwoo", "ada", "grace", "linus", "ken"]
FAMILY = ["kim", "park", "lee", "choi", "jung", "kang", "cho", "yoon", "lovelace", "hopper", "ritchie", "thompson"]
HANGUL_NAMES = ["김지우", "박서준", "이하은", "최민준", "정수아", "강도윤", "조예린", "윤시우"]
LATIN_NAMES = ["Ada Lovelace", "Grace Hopper", "Ken Thompson", "Dennis Ritchie", None]


def make_user(n: int, rng: Lcg) -> dict:
    login = f"{GIVEN[n % len(GIVEN)]}-{FAMILY[(n // len(GIVEN)) % len(FAMILY)]}{n}"
    uid = 10_000_000 + n * 7919
    names = HANGUL_NAMES if n % 3 == 0 else LATIN_NAMES
    return {"login": login, "id": uid, "name": names[n % len(names)],
            "avatarUrl": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
            "htmlUrl": f"https://github.com/{login}",
            "publicRepos": rng.next(300), "followers": rng.next(50_000), "following": rng.next(400)}


def snapshot_of_size(target: int, revision: int, seed: int) -> dict:
    """A favorites.snapshot whose compact encoding is exactly `target` bytes (the last user's name pads)."""
    rng = Lcg(seed)
    users: list[dict] = []
    while True:
        candidate = {"kind": "favorites.snapshot", "revision": revision, "users": users + [make_user(len(users), rng)]}
        # Leave room for one more user whose name carries the padding.
        if len(compact(candidate)) > target - 400:
            break
        users = candidate["users"]
    last = make_user(len(users), Lcg(seed + 1))

    def build(pad: str) -> dict:
        return {"kind": "favorites.snapshot", "revision": revision,
                "users": users + [{**last, "name": "Padding Tester " + pad}]}

    return fill_ascii(build, target)


WORDS = ["awesome", "tiny", "fast", "cli", "kit", "node", "swift", "watch", "relay", "queue", "widget", "sync",
         "markdown", "color", "string", "path", "json", "async", "retry", "cache"]
LANGUAGES = ["JavaScript", "TypeScript", "Swift", "Go", "Rust", None]


def make_repo(owner: str, n: int, rng: Lcg) -> dict:
    name = f"{WORDS[n % len(WORDS)]}-{WORDS[(n * 7 + 3) % len(WORDS)]}-{n}"
    return {"id": 20_000_000 + n * 104_729, "name": name, "fullName": f"{owner}/{name}",
            "description": None if n % 5 == 4 else f"A {WORDS[(n * 3) % len(WORDS)]} module for {WORDS[n % 11]} things",
            "language": LANGUAGES[n % len(LANGUAGES)], "stargazersCount": rng.next(40_000),
            "forksCount": rng.next(3_000), "htmlUrl": f"https://github.com/{owner}/{name}",
            "updatedAt": f"2026-{1 + n % 11:02d}-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00Z", "fork": n % 9 == 8}


def repos_of_size(target: int, owner: str, seed: int) -> dict:
    """A profile.repos payload whose compact encoding is exactly `target` bytes (the last description pads)."""
    rng = Lcg(seed)
    repos: list[dict] = []
    head = {"kind": "profile.repos", "login": owner, "fetchedAt": "2026-11-30T04:14:16.902Z"}
    while True:
        candidate = {**head, "repos": repos + [make_repo(owner, len(repos), rng)]}
        if len(compact(candidate)) > target - 400:
            break
        repos = candidate["repos"]
    last = make_repo(owner, len(repos), Lcg(seed + 1))

    def build(pad: str) -> dict:
        return {**head, "repos": repos + [{**last, "description": "Long description: " + pad}]}

    return fill_ascii(build, target)


# Escapes and characters whose encoded size implementations get wrong (§3.6): a slash is
# not escaped, U+2028 and DEL are not escaped, controls take \n-style or \u00XX forms,
# non-ASCII is raw UTF-8 (Hangul 3 bytes, the emoji 4 bytes).
TRICKY_TEXT = ('line one\nline two: "quoted", back\\slash, tab\there, return\r, backspace\b, form feed\f, '
               'control \u0001 and \u001f, slash / in https://github.com/octocat/Hello-World, 한글 텍스트, '
               'emoji 💙, line separator \u2028, paragraph separator \u2029, delete \u007f, end')


# ---------------------------------------------------------------------------- the vectors

def build() -> dict[str, bytes]:
    out: dict[str, bytes] = {}

    # --- valid: payloads exactly at the limit -----------------------------------------
    message_at_limit = {"type": "send", "id": "p-limit-message", "mode": "message",
                        "payload": fill_ascii(lambda pad: {"kind": "diagnostics.echo", "text": TRICKY_TEXT,
                                                           "padding": pad}, MESSAGE_BYTES)}
    # Written with every non-ASCII character \u-escaped and indented: the bytes on the wire
    # are more than 65536, the re-encoded payload is exactly 65536, and the latter is what counts.
    out["valid/client/send.message-at-limit.json"] = (
        json.dumps(message_at_limit, indent=2, ensure_ascii=True) + "\n").encode("utf-8")

    out["valid/client/send.context-at-limit.json"] = frame_bytes(
        {"type": "send", "id": "p-limit-context", "mode": "context",
         "payload": snapshot_of_size(CONTEXT_BYTES, revision=412, seed=2026)})

    out["valid/client/reply.at-limit.json"] = frame_bytes(
        {"type": "reply", "id": "p-limit-reply", "re": "w-010",
         "payload": repos_of_size(MESSAGE_BYTES, "sindresorhus", seed=170270)})

    # Depth: the frame object is level 1, payload level 2, then 62 nested arrays: 64 levels.
    nested64 = "[" * 62 + "]" * 62
    out["valid/client/send.depth-64.json"] = (
        '{"type":"send","id":"w-depth-64","mode":"message",'
        '"payload":{"kind":"diagnostics.echo","nested":' + nested64 + "}}\n").encode("utf-8")

    # --- limits: payloads one byte over -----------------------------------------------
    over_message = fill_ascii(lambda pad: {"kind": "diagnostics.echo", "padding": pad}, MESSAGE_BYTES + 1)
    out["invalid/payload-too-large-message.json"] = frame_bytes(
        {"type": "send", "id": "w-big-message", "mode": "message", "payload": over_message})
    out["invalid/payload-too-large-message.expect.json"] = sidecar(
        "payload_too_large", "payload", "limits",
        "message payload of 65537 compact bytes; messageBytes is 65536")

    over_user_info = fill_hangul(lambda pad: {"kind": "favorites.delete", "login": "octocat", "note": pad},
                                 USER_INFO_BYTES + 1)
    out["invalid/payload-too-large-userinfo.json"] = frame_bytes(
        {"type": "send", "id": "w-big-userinfo", "mode": "userInfo", "payload": over_user_info})
    out["invalid/payload-too-large-userinfo.expect.json"] = sidecar(
        "payload_too_large", "payload", "limits",
        "userInfo payload of 65537 UTF-8 bytes but only about 21850 characters: the limit counts bytes")

    out["invalid/payload-too-large-complication.json"] = frame_bytes(
        {"type": "send", "id": "p-big-complication", "mode": "complication",
         "payload": snapshot_of_size(USER_INFO_BYTES + 1, revision=77, seed=50)})
    out["invalid/payload-too-large-complication.expect.json"] = sidecar(
        "payload_too_large", "payload", "limits",
        "complication payload of 65537 bytes; complications share userInfoBytes (in a session: from a paired phone)")

    out["invalid/payload-too-large-context.json"] = frame_bytes(
        {"type": "send", "id": "p-big-context", "mode": "context",
         "payload": snapshot_of_size(CONTEXT_BYTES + 1, revision=413, seed=2027)})
    out["invalid/payload-too-large-context.expect.json"] = sidecar(
        "payload_too_large", "payload", "limits", "context payload of 262145 bytes; contextBytes is 262144")

    out["invalid/payload-too-large-reply.json"] = frame_bytes(
        {"type": "reply", "id": "p-big-reply", "re": "w-010",
         "payload": repos_of_size(MESSAGE_BYTES + 1, "sindresorhus", seed=170271)})
    out["invalid/payload-too-large-reply.expect.json"] = sidecar(
        "payload_too_large", "payload", "limits",
        "reply payload of 65537 bytes; replies share messageBytes (checked before the re is looked up)")

    # --- session: the order of checks ---------------------------------------------------
    out["invalid/order-size-before-reachability.json"] = frame_bytes(
        {"type": "send", "id": "p-big-offline", "mode": "message",
         "payload": fill_ascii(lambda pad: {"kind": "diagnostics.echo", "padding": pad}, MESSAGE_BYTES + 1)})
    out["invalid/order-size-before-reachability.expect.json"] = sidecar(
        "payload_too_large", "payload", "session",
        "an oversize message to an offline watch: payload_too_large is checked before not_reachable",
        setup="paired_phone_peer_offline")

    out["invalid/order-not-supported-before-size.json"] = frame_bytes(
        {"type": "send", "id": "w-big-complication", "mode": "complication",
         "payload": fill_ascii(lambda pad: {"kind": "diagnostics.echo", "padding": pad}, USER_INFO_BYTES + 1)})
    out["invalid/order-not-supported-before-size.expect.json"] = sidecar(
        "not_supported", "mode", "session",
        "an oversize complication from a watch: not_supported is checked before payload_too_large",
        setup="paired_watch")

    # --- codec: bytes that are not strict JSON ----------------------------------------
    def bad_json(name: str, data: bytes, note: str) -> None:
        out[f"invalid/{name}.json"] = data
        out[f"invalid/{name}.expect.json"] = sidecar("bad_json", None, "codec", note)

    hello_head = b'{"type":"hello","id":"w-001","protocol":1,"role":"watch","device":{"name":"Watch '
    bad_json("bad-json-invalid-utf8", hello_head + b'\xff\xfe"}}\n', "bytes 0xFF 0xFE are never valid UTF-8")
    bad_json("bad-json-utf8-surrogate", hello_head + b'\xed\xa0\x80"}}\n',
             "ED A0 80 encodes the surrogate U+D800, which UTF-8 forbids")
    bad_json("bad-json-utf8-overlong", hello_head + b'\xc0\xaf"}}\n', "C0 AF is an overlong encoding of '/'")
    bad_json("bad-json-utf8-truncated", hello_head + b'\xea\xb8"}}\n',
             "a three-byte sequence cut after two bytes")
    bad_json("bad-json-empty", b"", "an empty text message")
    bad_json("bad-json-keys-differ-by-normalization",
             b'{"type":"send","id":"w-norm","mode":"message","payload":{"kind":"k","\\u00e9":1,"e\\u0301":2}}\n',
             "two member names that differ only by Unicode normalization (U+00E9 and U+0065 U+0301): "
             "a receiving app's dictionary cannot hold both (PROTOCOL.md 3.1)")
    bad_json("bad-json-bom", b'\xef\xbb\xbf{"type":"pair.begin","id":"p-002"}\n',
             "a UTF-8 byte order mark before the object")
    bad_json("bad-json-control-char", b'{"type":"pair.join","id":"w-003","code":"4829\n13"}\n',
             "a raw line feed inside a string must be escaped")
    bad_json("bad-json-nesting-65",
             ('{"type":"send","id":"w-depth-65","mode":"message","payload":{"kind":"diagnostics.echo","nested":'
              + "[" * 63 + "]" * 63 + "}}\n").encode("utf-8"),
             "65 levels of nesting; the limit is 64 (valid/client/send.depth-64.json is the twin at 64)")
    bad_json("bad-json-nesting-1000",
             ('{"type":"send","id":"w-depth-1000","mode":"message","payload":{"kind":"diagnostics.echo","nested":'
              + "[" * 998 + "]" * 998 + "}}\n").encode("utf-8"),
             "1000 levels of nesting; a parser must refuse without exhausting its stack")

    # --- codec: a binary WebSocket message ----------------------------------------------
    # MessagePack for {"type":"ack","seq":42}: a client that forgot the protocol is JSON text.
    out["invalid/binary-frame.bin"] = bytes([0x82, 0xA4]) + b"type" + bytes([0xA3]) + b"ack" + bytes([0xA3]) + b"seq" + bytes([0x2A])
    out["invalid/binary-frame.expect.json"] = sidecar(
        "unsupported_frame", None, "codec", "sent as a binary WebSocket message (MessagePack bytes); only text is spoken",
        binary=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the files on disk instead of writing")
    args = parser.parse_args()
    files = build()
    if args.check:
        stale = [rel for rel, data in files.items() if not (HERE / rel).is_file() or (HERE / rel).read_bytes() != data]
        for rel in stale:
            print(f"stale: {rel}", file=sys.stderr)
        return 1 if stale else 0
    for rel, data in files.items():
        path = HERE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(f"wrote {len(files)} files under {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
