#!/usr/bin/env python3
"""WatchRelay v1 conformance client.

An independent client written from `Protocol/PROTOCOL.md` (and the schemas and vectors next
to it) alone. It starts a relay, runs one named case per behaviour, prints `PASS name` or
`FAIL name: why` for each, then `N passed, M failed`, and exits 0 only if every case passed.

Requirements: Python 3.11, `websockets` 17.x. If `jsonschema` and `referencing` are
installed, every frame the relay sends is also validated against `Protocol/schema/relay/`.

Environment:
  WATCHRELAY_BIN   the relay binary (default: <repo>/.build/debug/watchrelay)

With `--cluster` it starts a redis-server and two relay nodes on it (`serve --store redis://…`,
docs/REDIS.md): every phone connects to the first node (the leader), every watch and every
other connection to the second (an edge that forwards to the leader), so each case runs with
the devices on different nodes.

Section numbers (§) below refer to PROTOCOL.md.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any, Awaitable, Callable

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidMessage, InvalidStatus

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
PROTOCOL_DIR = REPO / "Protocol"
VECTORS = PROTOCOL_DIR / "vectors"

SUBPROTOCOL = "watchrelay.v1"  # §2.1
REPLY_TIMEOUT_MS = 1500  # what we start the relay with
PAIR_REPLIES = 4  # --quota-pair-replies we start the relay with (§9.1)
CASE_TIMEOUT = 10.0  # seconds per case
FRAME_TIMEOUT = 3.0  # seconds to wait for one expected frame
QUIET = 0.5  # seconds during which "nothing else arrives" is asserted

TIMESTAMP_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$")  # §3.5
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{43,}$")  # §6.2, §10.2 paired.token
# §11: wcCode is present on exactly these nine codes.
WC_CODES = {
    "payload_too_large": 7009,
    "not_paired": 7005,
    "not_reachable": 7007,
    "reply_timeout": 7012,
    "not_supported": 7002,
    "quota_exceeded": 7015,
    "internal": 7001,
    "watch_app_not_installed": 7006,
    "companion_app_not_installed": 7018,
}


class CheckFailed(Exception):
    """A conformance check failed; the message says what the document expects and what came."""


def check(cond: bool, msg: str) -> None:
    if not cond:
        raise CheckFailed(msg)


def compact(obj: Any) -> str:
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= 400 else text[:400] + "…"


def parse_time(ts: str) -> dt.datetime:
    m = TIMESTAMP_RE.match(ts)
    check(m is not None, f"timestamp {ts!r} is not RFC 3339 UTC with Z (§3.5)")
    base = ts[:19]
    frac = (m.group(1) or ".0")[1:]
    t = dt.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.timezone.utc)
    return t + dt.timedelta(microseconds=int((frac + "000000")[:6]))


# ---------------------------------------------------------------------------------------------
# Relay frame decoding and schema validation


def _strict_object(pairs: list[tuple[str, Any]]) -> dict:
    obj: dict = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"duplicate member {key!r}")
        obj[key] = value
    return obj


def _no_constant(name: str) -> Any:
    raise ValueError(f"non-JSON number {name}")


def strict_loads(text: str) -> Any:
    """§3.1 strict JSON, as far as a client needs it (duplicates, NaN/Infinity)."""
    return json.loads(text, object_pairs_hook=_strict_object, parse_constant=_no_constant)


class SchemaSet:
    """Validators for `schema/relay/<type>.schema.json`, if jsonschema is available."""

    def __init__(self) -> None:
        self.available = False
        self.reason = ""
        self.validators: dict[str, Any] = {}
        try:
            import jsonschema  # noqa: F401
            from jsonschema import Draft202012Validator
            from referencing import Registry, Resource
        except ImportError as exc:  # pragma: no cover - environment dependent
            self.reason = f"schema validation skipped ({exc})"
            return
        resources = []
        for path in sorted((PROTOCOL_DIR / "schema").rglob("*.schema.json")):
            doc = json.loads(path.read_text(encoding="utf-8"))
            resources.append((doc["$id"], Resource.from_contents(doc)))
        registry = Registry().with_resources(resources)
        for path in sorted((PROTOCOL_DIR / "schema" / "relay").glob("*.schema.json")):
            doc = json.loads(path.read_text(encoding="utf-8"))
            frame_type = path.name[: -len(".schema.json")]
            self.validators[frame_type] = Draft202012Validator(doc, registry=registry)
        self.available = True

    def validate(self, frame: dict) -> str | None:
        if not self.available:
            return None
        frame_type = frame.get("type")
        validator = self.validators.get(frame_type) if isinstance(frame_type, str) else None
        if validator is None:
            return None  # §3.2: a client ignores relay frame types it does not know
        errors = sorted(validator.iter_errors(frame), key=lambda e: list(e.absolute_path))
        if not errors:
            return None
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "(frame)"
        return f"schema relay/{frame_type}.schema.json: at {where}: {err.message}"


SCHEMAS: SchemaSet | None = None
BINARY = ""  # the relay binary, set by main()
_ids = itertools.count(1)


def new_id(prefix: str) -> str:
    """§3.3: ids are 1–64 characters, never reused by the device."""
    return f"{prefix}-{next(_ids):04d}"


# ---------------------------------------------------------------------------------------------
# A protocol client


class Client:
    """One WebSocket connection speaking watchrelay.v1."""

    CLOSED = object()

    def __init__(self, url: str, label: str) -> None:
        self.url = url
        self.label = label
        self.ws: ClientConnection | None = None
        self.queue: asyncio.Queue = asyncio.Queue()
        self.buffer: list[dict] = []  # received and not yet consumed
        self.closed = False
        self.close_code: int | None = None
        self.close_reason: str | None = None
        self.violations: list[str] = []
        self.reader: asyncio.Task | None = None
        self.delivered: dict[int, str] = {}  # seq -> id, delivers consumed on this connection

    async def open(self) -> "Client":
        self.ws = await connect(self.url, subprotocols=[SUBPROTOCOL], open_timeout=FRAME_TIMEOUT)
        # §2.1: a client MUST fail the connection if the 101 does not select watchrelay.v1.
        if self.ws.subprotocol != SUBPROTOCOL:
            await self.ws.close()
            raise CheckFailed(
                f"{self.label}: 101 selected subprotocol {self.ws.subprotocol!r}, expected "
                f"{SUBPROTOCOL!r} (§2.1)"
            )
        self.reader = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for message in self.ws:
                if isinstance(message, bytes):
                    self.violations.append(f"{self.label}: relay sent a binary message (§2.2: it never does)")
                    continue
                try:
                    frame = strict_loads(message)
                except ValueError as exc:
                    self.violations.append(f"{self.label}: relay sent non-strict JSON ({exc}): {message[:200]!r}")
                    continue
                if not isinstance(frame, dict) or not isinstance(frame.get("type"), str):
                    self.violations.append(f"{self.label}: relay frame is not an object with a string type: {message[:200]!r}")
                    continue
                problem = SCHEMAS.validate(frame) if SCHEMAS else None
                if problem:
                    self.violations.append(f"{self.label}: {problem}: {compact(frame)}")
                await self.queue.put(frame)
        except ConnectionClosed:
            pass
        finally:
            self.closed = True
            self.close_code = self.ws.close_code
            self.close_reason = self.ws.close_reason
            await self.queue.put(Client.CLOSED)

    def _raise_violations(self) -> None:
        if self.violations:
            raise CheckFailed("; ".join(self.violations))

    # -- sending ------------------------------------------------------------------------------

    async def send(self, frame: dict) -> None:
        assert self.ws is not None
        await self.ws.send(json.dumps(frame, separators=(",", ":"), ensure_ascii=False))

    async def send_raw(self, data: str | bytes) -> None:
        assert self.ws is not None
        await self.ws.send(data)

    # -- receiving ----------------------------------------------------------------------------

    async def _pull(self, deadline: float, what: str) -> dict:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CheckFailed(f"{self.label}: timed out waiting for {what}{self._pending_note()}")
        try:
            item = await asyncio.wait_for(self.queue.get(), remaining)
        except asyncio.TimeoutError:
            raise CheckFailed(f"{self.label}: timed out waiting for {what}{self._pending_note()}") from None
        if item is Client.CLOSED:
            # Keep the marker for later waits.
            self.queue.put_nowait(Client.CLOSED)
            raise CheckFailed(
                f"{self.label}: connection closed (code {self.close_code}) while waiting for {what}"
                f"{self._pending_note()}"
            )
        self._raise_violations()
        return item

    def _pending_note(self) -> str:
        if not self.buffer:
            return " (nothing else received)"
        return " (received instead: " + ", ".join(compact(f) for f in self.buffer[:4]) + ")"

    async def next_frame(self, what: str = "a frame", timeout: float = FRAME_TIMEOUT) -> dict:
        """The very next frame (buffered first), whatever it is."""
        self._raise_violations()
        if self.buffer:
            return self.buffer.pop(0)
        return await self._pull(time.monotonic() + timeout, what)

    async def expect(
        self,
        frame_type: str,
        timeout: float = FRAME_TIMEOUT,
        where: Callable[[dict], bool] | None = None,
        what: str | None = None,
    ) -> dict:
        """The first frame of `frame_type` (matching `where`), buffered or yet to come.

        Other frames are kept for later; an unexpected `error` fails at once.
        """
        self._raise_violations()
        what = what or f"a {frame_type!r} frame"

        def matches(f: dict) -> bool:
            return f.get("type") == frame_type and (where is None or where(f))

        for i, f in enumerate(self.buffer):
            if matches(f):
                return self.buffer.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            f = await self._pull(deadline, what)
            if matches(f):
                return f
            if f.get("type") == "error" and frame_type != "error":
                raise CheckFailed(f"{self.label}: got {compact(f)} while waiting for {what}")
            self.buffer.append(f)

    async def expect_error(self, code: str, re_id: str | None, timeout: float = FRAME_TIMEOUT) -> dict:
        """An `error` with `code`; `re` equal to re_id (None: no `re`, §4.2); wcCode as §11."""
        f = await self.expect("error", timeout=timeout, what=f"error {code}")
        check(f.get("code") == code, f"{self.label}: expected error {code}, got {compact(f)}")
        if re_id is None:
            check("re" not in f, f"{self.label}: error {code} must not carry re here (§4.2), got {compact(f)}")
        else:
            check(f.get("re") == re_id, f"{self.label}: error {code} must carry re={re_id!r} (§4.2), got {compact(f)}")
        check(isinstance(f.get("message"), str), f"{self.label}: error without string message (§10.2): {compact(f)}")
        if code in WC_CODES:
            check(f.get("wcCode") == WC_CODES[code],
                  f"{self.label}: error {code} must carry wcCode {WC_CODES[code]} (§11), got {compact(f)}")
        else:
            check("wcCode" not in f, f"{self.label}: error {code} must not carry wcCode (§11), got {compact(f)}")
        return f

    async def expect_peer(self, connected: bool, reachable: bool) -> dict:
        f = await self.expect("peer", what=f"peer connected={connected} reachable={reachable}")
        check(f.get("connected") is connected and f.get("reachable") is reachable,
              f"{self.label}: expected peer connected={connected} reachable={reachable} (§7), got {compact(f)}")
        return f

    async def quiet(self, duration: float = QUIET, allow: tuple[str, ...] = ()) -> None:
        """Nothing (other than `allow` types) is buffered or arrives within `duration`."""
        self._raise_violations()
        extra = [f for f in self.buffer if f.get("type") not in allow]
        check(not extra, f"{self.label}: unexpected frame(s): " + ", ".join(compact(f) for f in extra))
        deadline = time.monotonic() + duration
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                item = await asyncio.wait_for(self.queue.get(), remaining)
            except asyncio.TimeoutError:
                return
            if item is Client.CLOSED:
                self.queue.put_nowait(Client.CLOSED)
                raise CheckFailed(f"{self.label}: connection closed unexpectedly (code {self.close_code})")
            self._raise_violations()
            if item.get("type") in allow:
                self.buffer.append(item)
                continue
            if item.get("type") == "deliver" and item.get("seq") in self.delivered:
                raise CheckFailed(
                    f"{self.label}: seq {item.get('seq')} ({item.get('id')}) delivered a second time on the same "
                    f"connection (§5.3: after welcome the backlog is each unacked item once, in seq order): {compact(item)}")
            raise CheckFailed(f"{self.label}: unexpected frame {compact(item)}")

    async def wait_closed(self, timeout: float = FRAME_TIMEOUT) -> int | None:
        assert self.reader is not None
        try:
            await asyncio.wait_for(asyncio.shield(self.reader), timeout)
        except asyncio.TimeoutError:
            raise CheckFailed(f"{self.label}: connection still open after {timeout}s; expected a close") from None
        return self.close_code

    async def close(self) -> None:
        if self.ws is not None:
            try:
                await asyncio.wait_for(self.ws.close(), 2.0)
            except Exception:
                pass
        if self.reader is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self.reader), 2.0)
            except Exception:
                self.reader.cancel()

    # -- session helpers ----------------------------------------------------------------------

    async def hello(
        self,
        role: str,
        name: str,
        token: str | None = None,
        last_seq: int | None = None,
        foreground: bool | None = None,
    ) -> dict:
        """§5.1 hello; returns the welcome, which must be the first frame after it (§5.3)."""
        hid = new_id(role[0] + "hello")
        frame: dict[str, Any] = {"type": "hello", "id": hid, "protocol": 1, "role": role, "device": {"name": name}}
        if token is not None:
            frame["token"] = token
        if foreground is not None:
            frame["foreground"] = foreground
        if last_seq is not None:
            frame["lastSeq"] = last_seq
        await self.send(frame)
        w = await self.next_frame("welcome")
        check(w.get("type") == "welcome", f"{self.label}: first frame after hello must be welcome (§5.3), got {compact(w)}")
        check(w.get("re") == hid, f"{self.label}: welcome.re must be the hello id {hid!r}, got {compact(w)}")
        check(w.get("protocol") == 1 and w.get("role") == role,
              f"{self.label}: welcome must echo protocol 1 and role {role!r} (§10.2), got {compact(w)}")
        check(isinstance(w.get("limits"), dict), f"{self.label}: welcome without limits (§5.2): {compact(w)}")
        paired = w.get("paired")
        check(isinstance(paired, bool), f"{self.label}: welcome.paired must be a boolean: {compact(w)}")
        if paired:
            check("pairId" in w and "peer" in w, f"{self.label}: paired welcome needs pairId and peer (§10.2): {compact(w)}")
        else:
            check("pairId" not in w and "peer" not in w and "context" not in w,
                  f"{self.label}: unpaired welcome must not have pairId/peer/context (§10.2): {compact(w)}")
        self.welcome = w
        return w

    async def send_item(self, mode: str, payload: dict, wants_reply: bool | None = None, sid: str | None = None) -> str:
        sid = sid or new_id(self.label[0] + "send")
        frame: dict[str, Any] = {"type": "send", "id": sid, "mode": mode, "payload": payload}
        if wants_reply is not None:
            frame["wantsReply"] = wants_reply
        await self.send(frame)
        return sid

    async def expect_accepted(self, sid: str, complication: bool = False) -> dict:
        f = await self.expect("accepted", where=lambda f: f.get("re") == sid, what=f"accepted re={sid}")
        if not complication:
            check("remaining" not in f and "fallback" not in f,
                  f"{self.label}: accepted for a non-complication must not carry remaining/fallback (§8.1): {compact(f)}")
        return f

    async def expect_deliver(
        self,
        sid: str,
        mode: str,
        sender: str,
        payload: dict,
        wants_reply: bool = False,
        seq: int | None = None,
    ) -> dict:
        """The next deliver (in arrival order) must be item `sid` (§8.6)."""
        d = await self.expect("deliver", what=f"deliver of {sid}")
        check(d.get("id") == sid, f"{self.label}: expected deliver of {sid} next, got {compact(d)}")
        check(d.get("mode") == mode, f"{self.label}: deliver.mode should be {mode!r}: {compact(d)}")
        check(d.get("from") == sender, f"{self.label}: deliver.from should be {sender!r}: {compact(d)}")
        check(d.get("payload") == payload, f"{self.label}: deliver.payload must be exactly as sent (§10.2): {compact(d)}")
        s = d.get("seq")
        check(isinstance(s, int) and not isinstance(s, bool) and s >= 1, f"{self.label}: deliver.seq must be an int ≥ 1: {compact(d)}")
        check(s not in self.delivered,
              f"{self.label}: seq {s} ({sid}) delivered twice on the same connection "
              f"(§5.3: the backlog is each unacked item once, in seq order)")
        self.delivered[s] = sid
        if seq is not None:
            check(s == seq, f"{self.label}: deliver of {sid} should keep seq {seq} (§8.6), got {s}")
        check(isinstance(d.get("sentAt"), str), f"{self.label}: deliver.sentAt missing: {compact(d)}")
        parse_time(d["sentAt"])
        if wants_reply:
            check(d.get("wantsReply") is True, f"{self.label}: deliver must carry wantsReply true (§8.2): {compact(d)}")
        else:
            check("wantsReply" not in d, f"{self.label}: deliver.wantsReply must be absent here (§10.2): {compact(d)}")
        return d

    async def expect_transferred(self, ids: list[str]) -> None:
        """`transferred` frames (one or more, §5.3) naming exactly `ids`."""
        want = set(ids)
        got: list[str] = []
        while set(got) != want:
            f = await self.expect("transferred", what=f"transferred {sorted(want - set(got))}")
            fids = f.get("ids")
            check(isinstance(fids, list) and fids, f"{self.label}: transferred.ids must be a non-empty array: {compact(f)}")
            for i in fids:
                check(i in want, f"{self.label}: transferred names {i!r}, expected only {sorted(want)}: {compact(f)}")
                check(i not in got, f"{self.label}: transferred names {i!r} twice")
                got.append(i)

    async def outstanding(self) -> list[str]:
        oid = new_id(self.label[0] + "out")
        await self.send({"type": "outstanding", "id": oid})
        f = await self.expect("outstanding", where=lambda f: f.get("re") == oid, what=f"outstanding re={oid}")
        check(isinstance(f.get("ids"), list), f"{self.label}: outstanding.ids must be an array: {compact(f)}")
        return f["ids"]

    async def ack(self, seq: int) -> None:
        await self.send({"type": "ack", "seq": seq})

    async def uninstall(self, sid: str | None = None, foreground: bool | None = None) -> None:
        """§7.1: `state {appInstalled: false}` (the OS uninstalled this device's app): the relay
        answers nothing and closes the connection with 1000, reason `app uninstalled`."""
        frame: dict[str, Any] = {"type": "state", "appInstalled": False}
        if sid is not None:
            frame["id"] = sid
        if foreground is not None:
            frame["foreground"] = foreground
        await self.send(frame)
        await self.expect_closed_silently(1000, "app uninstalled", "after state {appInstalled: false} (§7.1)")

    async def expect_closed_silently(self, code: int, reason: str | None, why: str) -> None:
        """The relay closes this connection with `code` (and `reason`, unless None) and sends
        no frame before it."""
        got = await self.wait_closed()
        frames = list(self.buffer)
        while not self.queue.empty():
            item = self.queue.get_nowait()
            if item is not Client.CLOSED:
                frames.append(item)
        self.queue.put_nowait(Client.CLOSED)
        self._raise_violations()
        check(not frames, f"{self.label}: {why}: no frame is answered, got " + ", ".join(compact(f) for f in frames))
        check(got == code, f"{self.label}: {why}: the relay must close with {code}, close code was {got}")
        if reason is not None:
            check(self.close_reason == reason,
                  f"{self.label}: {why}: close reason should be {reason!r}, was {self.close_reason!r}")

    async def expect_peer_uninstalled(self) -> dict:
        """§7.1: one `peer` {connected: false, reachable: false, appInstalled: false}."""
        f = await self.expect("peer", what="peer appInstalled=false")
        check(f.get("connected") is False and f.get("reachable") is False and f.get("appInstalled") is False,
              f"{self.label}: expected peer {{connected: false, reachable: false, appInstalled: false}} (§7.1), got {compact(f)}")
        return f

    async def expect_peer_installed(self, connected: bool, reachable: bool) -> dict:
        """A `peer` frame without the appInstalled member (§7.1: written only when false)."""
        f = await self.expect_peer(connected, reachable)
        check("appInstalled" not in f, f"{self.label}: peer must not carry appInstalled once the app runs again (§7.1): {compact(f)}")
        return f


# ---------------------------------------------------------------------------------------------
# Case context


class Case:
    def __init__(self, url: str, other_url: str | None = None) -> None:
        self.url = url
        # With --cluster: the node for everything but phones.
        self.other_url = other_url or url
        self.clients: list[Client] = []

    async def client(self, label: str) -> Client:
        c = Client(self.url if label == "phone" else self.other_url, label)
        self.clients.append(c)
        await c.open()
        return c

    async def cleanup(self) -> None:
        for c in self.clients:
            await c.close()

    async def pair(self, tag: str) -> tuple[Client, Client, dict]:
        """A fresh pair (§6), both devices connected, the watch in the foreground."""
        phone_name, watch_name = f"{tag} phone", f"{tag} watch"
        phone = await self.client("phone")
        await phone.hello("phone", phone_name)
        bid = new_id("pbegin")
        await phone.send({"type": "pair.begin", "id": bid})
        code = await phone.expect("pair.code", where=lambda f: f.get("re") == bid)
        watch = await self.client("watch")
        await watch.hello("watch", watch_name)
        jid = new_id("wjoin")
        await watch.send({"type": "pair.join", "id": jid, "code": code["code"]})
        wp = await watch.expect("paired")
        pp = await phone.expect("paired")
        check(wp.get("re") == jid, f"watch: paired.re should be {jid!r}: {compact(wp)}")
        info = {
            "phone_name": phone_name,
            "watch_name": watch_name,
            "phone_token": pp["token"],
            "watch_token": wp["token"],
            "pairId": wp["pairId"],
        }
        return phone, watch, info

    async def reconnect(self, role: str, info: dict, last_seq: int | None = None, foreground: bool | None = None) -> tuple[Client, dict]:
        c = await self.client(role)
        w = await c.hello(role, info[f"{role}_name"], token=info[f"{role}_token"], last_seq=last_seq, foreground=foreground)
        check(w.get("paired") is True, f"{role}: welcome after hello with token should be paired (§5.2): {compact(w)}")
        check(w.get("pairId") == info["pairId"], f"{role}: welcome.pairId {w.get('pairId')!r} != paired.pairId {info['pairId']!r}")
        return c, w


# ---------------------------------------------------------------------------------------------
# Cases


async def case_pairing(case: Case) -> None:
    phone = await case.client("phone")
    w = await phone.hello("phone", "Conformance iPhone")
    check(w["paired"] is False, f"phone: new device welcome.paired should be false (§5.1): {compact(w)}")
    limits = w["limits"]
    check(limits.get("replyTimeoutMs") == REPLY_TIMEOUT_MS,
          f"phone: welcome.limits.replyTimeoutMs should report the relay setting {REPLY_TIMEOUT_MS} (§9), got {limits.get('replyTimeoutMs')}")
    check(limits.get("complicationsRemaining") == limits.get("complicationsPerDay"),
          f"phone: unpaired complicationsRemaining should equal complicationsPerDay (§9): {compact(limits)}")

    bid = new_id("pbegin")
    t0 = dt.datetime.now(dt.timezone.utc)
    await phone.send({"type": "pair.begin", "id": bid})
    pc = await phone.next_frame("pair.code")
    check(pc.get("type") == "pair.code" and pc.get("re") == bid, f"phone: expected pair.code re={bid}, got {compact(pc)}")
    code = pc.get("code")
    check(isinstance(code, str) and re.fullmatch(r"[0-9]{6}", code) is not None,
          f"phone: pair.code.code must be six ASCII digits (§6.1): {compact(pc)}")
    lifetime = (parse_time(pc["expiresAt"]) - t0).total_seconds()
    check(110 <= lifetime <= 130, f"phone: pair.code.expiresAt should be ~120 s ahead (§6.1), is {lifetime:.1f} s")

    watch = await case.client("watch")
    w = await watch.hello("watch", "Conformance Watch")
    check(w["paired"] is False, f"watch: new device welcome.paired should be false: {compact(w)}")

    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    jid = new_id("wjoin")
    await watch.send({"type": "pair.join", "id": jid, "code": wrong})
    await watch.expect_error("pairing_code_invalid", jid)

    jid = new_id("wjoin")
    await watch.send({"type": "pair.join", "id": jid, "code": code})
    wp = await watch.expect("paired")
    pp = await phone.expect("paired")
    check(wp.get("re") == jid, f"watch: paired must carry re={jid!r} (§6.2): {compact(wp)}")
    check("re" not in pp, f"phone: paired must not carry re (§6.2): {compact(pp)}")
    for who, p in (("phone", pp), ("watch", wp)):
        tok = p.get("token")
        check(isinstance(tok, str) and TOKEN_RE.match(tok) is not None,
              f"{who}: paired.token must be ≥ 43 base64url chars (§6.2): {tok!r}")
    check(pp["token"] != wp["token"], "phone and watch got the same token (§6.2: each device has its own)")
    check(pp.get("pairId") == wp.get("pairId"), f"paired.pairId differs: phone {pp.get('pairId')!r}, watch {wp.get('pairId')!r}")
    check(wp.get("peer") == {"name": "Conformance iPhone", "connected": True, "reachable": True},
          f"watch: paired.peer should be the connected phone (§6.2, §7): {compact(wp.get('peer'))}")
    check(pp.get("peer") == {"name": "Conformance Watch", "connected": True, "reachable": True},
          f"phone: paired.peer should be the connected foreground watch (§6.2, §7): {compact(pp.get('peer'))}")
    await phone.quiet()
    await watch.quiet()

    info = {"phone_name": "Conformance iPhone", "watch_name": "Conformance Watch",
            "phone_token": pp["token"], "watch_token": wp["token"], "pairId": pp["pairId"]}
    await watch.close()
    await phone.expect_peer(False, False)
    await phone.close()

    phone2, w = await case.reconnect("phone", info, last_seq=0)
    check(w["peer"] == {"name": "Conformance Watch", "connected": False, "reachable": False},
          f"phone: welcome.peer should be the offline watch: {compact(w['peer'])}")
    check("context" not in w, f"phone: welcome.context must be absent, nothing was sent (§5.2): {compact(w)}")
    watch2, w = await case.reconnect("watch", info, last_seq=0)
    check(w["peer"] == {"name": "Conformance iPhone", "connected": True, "reachable": True},
          f"watch: welcome.peer should be the connected phone: {compact(w['peer'])}")
    await phone2.expect_peer(True, True)
    await phone2.quiet()
    await watch2.quiet()


async def case_message_reply(case: Case) -> None:
    phone, watch, _ = await case.pair("msg")
    payload = {"kind": "profile.repos.request", "login": "torvalds"}
    sid = await phone.send_item("message", payload, wants_reply=True)
    await phone.expect_accepted(sid)
    d = await watch.expect_deliver(sid, "message", "phone", payload, wants_reply=True)
    reply_payload = {"kind": "profile.repos", "login": "torvalds", "repos": [], "fetchedAt": "2026-11-30T04:14:16.902Z"}
    rid = new_id("wreply")
    await watch.send({"type": "reply", "id": rid, "re": d["id"], "payload": reply_payload})
    r = await phone.expect("reply")
    check(r.get("re") == sid and r.get("payload") == reply_payload,
          f"phone: reply should be {{re: {sid}, payload: as sent}} (§8.2): {compact(r)}")
    await phone.quiet()
    await watch.quiet()  # the replier gets no answer (§4.2)

    # A message without wantsReply: deliver has no wantsReply.
    payload = {"kind": "favorites.refresh"}
    sid = await phone.send_item("message", payload)
    await phone.expect_accepted(sid)
    await watch.expect_deliver(sid, "message", "phone", payload)


async def case_message_not_reachable(case: Case) -> None:
    phone, watch, _ = await case.pair("bg")
    await watch.send({"type": "state", "foreground": False})
    await phone.expect_peer(True, False)
    await watch.quiet()  # state has no answer (§4.2)
    sid = await phone.send_item("message", {"kind": "favorites.refresh"})
    await phone.expect_error("not_reachable", sid)
    await watch.quiet()  # nothing delivered (§8.2)
    await watch.send({"type": "state", "id": new_id("wstate"), "foreground": True})
    await phone.expect_peer(True, True)
    payload = {"kind": "favorites.refresh", "n": 2}
    sid = await phone.send_item("message", payload)
    await phone.expect_accepted(sid)
    await watch.expect_deliver(sid, "message", "phone", payload)
    await phone.quiet()


async def case_message_reply_timeout(case: Case) -> None:
    phone, watch, _ = await case.pair("timeout")
    timeout_ms = phone.welcome["limits"]["replyTimeoutMs"]  # §9: use the reported value
    payload = {"kind": "profile.repos.request", "login": "octocat"}
    sid = await phone.send_item("message", payload, wants_reply=True)
    await phone.expect_accepted(sid)
    t_accepted = time.monotonic()
    await watch.expect_deliver(sid, "message", "phone", payload, wants_reply=True)
    await phone.expect_error("reply_timeout", sid, timeout=timeout_ms / 1000 + 2.0)
    elapsed = time.monotonic() - t_accepted
    check(timeout_ms / 1000 - 0.2 <= elapsed <= timeout_ms / 1000 + 1.0,
          f"phone: reply_timeout came {elapsed:.2f} s after accepted; replyTimeoutMs is {timeout_ms} (§8.2)")
    # A late reply matches no pending request: unknown_id to the replier (§8.2).
    rid = new_id("wreply")
    await watch.send({"type": "reply", "id": rid, "re": sid, "payload": {"kind": "profile.repos", "login": "octocat", "repos": []}})
    await watch.expect_error("unknown_id", rid)
    await phone.quiet()


async def case_message_pending_reply_quota(case: Case) -> None:
    """§8.2, §9.1: messages waiting for their reply are a quota per pair; past it a send with
    wantsReply gets quota_exceeded (with re, wcCode 7015), nothing is delivered, the connection
    stays (§4.2: it does not count as an error), and a reply makes room again."""
    phone, watch, _ = await case.pair("quota")
    payload = {"kind": "profile.repos.request", "login": "octocat"}
    held = []
    for _ in range(PAIR_REPLIES):
        sid = await phone.send_item("message", payload, wants_reply=True)
        await phone.expect_accepted(sid)
        held.append(await watch.expect_deliver(sid, "message", "phone", payload, wants_reply=True))
    over = await phone.send_item("message", payload, wants_reply=True)
    await phone.expect_error("quota_exceeded", over)  # with re and wcCode 7015 (§11)
    await watch.quiet()  # nothing delivered (§9.1)
    # A message that wants no reply is not held and not counted.
    plain = await phone.send_item("message", {"kind": "favorites.refresh"})
    await phone.expect_accepted(plain)
    await watch.expect_deliver(plain, "message", "phone", {"kind": "favorites.refresh"})
    # A reply makes room for one more.
    rid = new_id("wreply")
    await watch.send({"type": "reply", "id": rid, "re": held[0]["id"], "payload": {"kind": "profile.repos", "login": "octocat", "repos": []}})
    await phone.expect("reply")
    again = await phone.send_item("message", payload, wants_reply=True)
    await phone.expect_accepted(again)
    await watch.expect_deliver(again, "message", "phone", payload, wants_reply=True)
    # The rest time out (the watch never answers them); their reply_timeout errors may come now.
    await phone.quiet(duration=REPLY_TIMEOUT_MS / 1000 + 1.0, allow=("error",))


async def case_context(case: Case) -> None:
    phone, watch, info = await case.pair("ctx")
    await watch.close()
    await phone.expect_peer(False, False)
    p1 = {"kind": "favorites.snapshot", "revision": 7, "users": []}
    p2 = {"kind": "favorites.snapshot", "revision": 8, "users": []}
    s1 = await phone.send_item("context", p1)
    await phone.expect_accepted(s1)
    s2 = await phone.send_item("context", p2)
    await phone.expect_accepted(s2)
    ids = await phone.outstanding()
    check(ids == [s2], f"phone: outstanding should be [{s2}] after the older context was replaced (§8.3, §13.3), got {ids}")

    watch2, w = await case.reconnect("watch", info, last_seq=0)
    check("context" not in w, f"watch: welcome.context must be absent: no context was sent to it yet (§5.2): {compact(w)}")
    d = await watch2.expect_deliver(s2, "context", "phone", p2)
    await watch2.quiet()  # s1 is never delivered (§8.3)
    await phone.expect_peer(True, True)
    await watch2.ack(d["seq"])
    await phone.quiet(allow=())  # contexts produce no transferred (§8.3)
    ids = await phone.outstanding()
    check(ids == [], f"phone: outstanding should be empty after the ack, got {ids}")

    await watch2.close()
    await phone.expect_peer(False, False)
    watch3, w = await case.reconnect("watch", info, last_seq=d["seq"])
    ctx = w.get("context")
    expected = {k: v for k, v in d.items() if k != "type"}
    check(ctx == expected, f"watch: welcome.context should be the last context deliver without type (§5.2): "
                           f"expected {compact(expected)}, got {compact(ctx)}")
    await watch3.quiet()  # acked: not delivered again


async def case_userinfo_connected(case: Case) -> None:
    phone, watch, _ = await case.pair("ui")
    items = []
    for n in range(3):
        payload = {"kind": "favorites.delete", "login": f"user{n}"}
        sid = await phone.send_item("userInfo", payload)
        await phone.expect_accepted(sid)
        items.append((sid, payload))
    seqs = []
    for sid, payload in items:
        d = await watch.expect_deliver(sid, "userInfo", "phone", payload)
        seqs.append(d["seq"])
    check(seqs == sorted(seqs) and len(set(seqs)) == 3, f"watch: seqs must strictly increase in delivery order (§8.6): {seqs}")
    await watch.ack(seqs[-1])
    await phone.expect_transferred([sid for sid, _ in items])
    await phone.quiet()
    await watch.quiet()


async def case_userinfo_offline(case: Case) -> None:
    phone, watch, info = await case.pair("uioff")
    # One delivered and acked item first, so that lastSeq on reconnect is meaningful.
    p0 = {"kind": "favorites.delete", "login": "first"}
    s0 = await phone.send_item("userInfo", p0)
    await phone.expect_accepted(s0)
    d0 = await watch.expect_deliver(s0, "userInfo", "phone", p0)
    await watch.ack(d0["seq"])
    await phone.expect_transferred([s0])
    await watch.close()
    await phone.expect_peer(False, False)

    p1 = {"kind": "favorites.delete", "login": "gaearon"}
    p2 = {"kind": "favorites.delete", "login": "torvalds"}
    s1 = await phone.send_item("userInfo", p1)
    await phone.expect_accepted(s1)
    s2 = await phone.send_item("userInfo", p2)
    await phone.expect_accepted(s2)
    ids = await phone.outstanding()
    check(ids == [s1, s2], f"phone: outstanding should list [{s1}, {s2}] in the order accepted (§8.9), got {ids}")
    cid = new_id("pcancel")
    await phone.send({"type": "cancel", "id": cid, "target": s1})
    c = await phone.expect("cancelled", what=f"cancelled re={cid}")
    check(c.get("re") == cid, f"phone: cancelled.re should be {cid!r}: {compact(c)}")
    ids = await phone.outstanding()
    check(ids == [s2], f"phone: outstanding should be [{s2}] after cancelling {s1} (§8.8, §8.9), got {ids}")

    watch2, w = await case.reconnect("watch", info, last_seq=d0["seq"])
    d = await watch2.expect_deliver(s2, "userInfo", "phone", p2)
    check(d["seq"] > d0["seq"], f"watch: new item seq {d['seq']} must exceed earlier seq {d0['seq']} (§8.6)")
    await watch2.quiet()
    await phone.expect_peer(True, True)
    await watch2.ack(d["seq"])
    await phone.expect_transferred([s2])
    await phone.quiet()


async def case_complication(case: Case) -> None:
    phone, watch, _ = await case.pair("cmp")
    payload = {"kind": "favorites.snapshot", "revision": 9, "users": []}
    sid = await phone.send_item("complication", payload)
    a = await phone.expect_accepted(sid, complication=True)
    per_day = phone.welcome["limits"]["complicationsPerDay"]
    check(a.get("remaining") == per_day - 1, f"phone: first complication's accepted.remaining should be {per_day - 1} (§8.5): {compact(a)}")
    check("fallback" not in a, f"phone: accepted.fallback only when demoted (§8.5): {compact(a)}")
    d = await watch.expect_deliver(sid, "complication", "phone", payload)
    wid = await watch.send_item("complication", {"kind": "favorites.snapshot", "revision": 1, "users": []})
    await watch.expect_error("not_supported", wid)
    await watch.ack(d["seq"])
    await phone.expect_transferred([sid])
    await phone.quiet()
    await watch.quiet()


async def case_resume(case: Case) -> None:
    phone, watch, info = await case.pair("resume")
    items = []
    for n in range(3):
        payload = {"kind": "favorites.delete", "login": f"resume{n}"}
        sid = await phone.send_item("userInfo", payload)
        await phone.expect_accepted(sid)
        items.append((sid, payload))
    seqs = []
    for sid, payload in items:
        seqs.append((await watch.expect_deliver(sid, "userInfo", "phone", payload))["seq"])
    await watch.close()  # no ack
    await phone.expect_peer(False, False)

    watch2, _ = await case.reconnect("watch", info, last_seq=seqs[0])
    for (sid, payload), seq in zip(items[1:], seqs[1:]):
        await watch2.expect_deliver(sid, "userInfo", "phone", payload, seq=seq)
    await watch2.quiet()
    # lastSeq acked the first item exactly like ack (§5.1), so its sender learns it (§8.7).
    await phone.expect_transferred([items[0][0]])
    await phone.expect_peer(True, True)
    await watch2.ack(seqs[-1])
    await phone.expect_transferred([sid for sid, _ in items[1:]])
    await phone.quiet()


async def case_error_hello_required(case: Case) -> None:
    c = await case.client("conn")
    raw = (VECTORS / "invalid" / "hello-required-send.json").read_text(encoding="utf-8")
    vid = json.loads(raw)["id"]
    await c.send_raw(raw)
    await c.expect_error("hello_required", vid)
    code = await c.wait_closed()
    check(code == 1008, f"conn: after hello_required the relay must close with 1008 (§5.5), close code was {code}")


async def case_error_bad_json(case: Case) -> None:
    c = await case.client("conn")
    raw = (VECTORS / "invalid" / "bad-json-truncated.json").read_text(encoding="utf-8")
    # Before hello: bad_json, connection stays open, still waiting for hello (§5.5).
    await c.send_raw(raw)
    await c.expect_error("bad_json", None)
    await c.hello("phone", "bad json phone")
    # After hello: bad_json, connection usable.
    await c.send_raw(raw)
    await c.expect_error("bad_json", None)
    bid = new_id("pbegin")
    await c.send({"type": "pair.begin", "id": bid})
    f = await c.expect("pair.code", where=lambda f: f.get("re") == bid)
    check(not c.closed, "conn: connection closed after bad_json")
    await c.quiet()


async def case_error_binary(case: Case) -> None:
    c = await case.client("conn")
    await c.hello("phone", "binary phone")
    data = (VECTORS / "invalid" / "binary-frame.bin").read_bytes()
    await c.send_raw(data)
    await c.expect_error("unsupported_frame", None)
    bid = new_id("pbegin")
    await c.send({"type": "pair.begin", "id": bid})
    await c.expect("pair.code", where=lambda f: f.get("re") == bid)
    await c.quiet()


def _http_get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=FRAME_TIMEOUT) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type", "") if exc.headers else "", exc.read()


async def case_http_healthz(case: Case) -> None:
    base = case.url.replace("ws://", "http://", 1).rsplit("/v1", 1)[0]
    status, ctype, body = await asyncio.to_thread(_http_get, base + "/healthz")
    check(status == 200, f"GET /healthz: status {status}, expected 200 (§2.4)")
    check(ctype.split(";")[0].strip().lower() == "text/plain", f"GET /healthz: Content-Type {ctype!r}, expected text/plain (§2.4)")
    check(body.strip() == b"ok", f"GET /healthz: body {body[:100]!r}, expected 'ok' (§2.4)")


async def case_http_not_found(case: Case) -> None:
    base = case.url.replace("ws://", "http://", 1).rsplit("/v1", 1)[0]
    status, _, _ = await asyncio.to_thread(_http_get, base + "/no-such-path")
    check(status == 404, f"GET /no-such-path: status {status}, expected 404 (§2.4)")


async def case_upgrade_needs_subprotocol(case: Case) -> None:
    try:
        ws = await connect(case.url, open_timeout=FRAME_TIMEOUT)
    except InvalidStatus as exc:
        status = exc.response.status_code
        check(status != 101, f"upgrade without subprotocol: HTTP {status}, expected a refusal (§2.1)")
        return
    except InvalidMessage:
        return  # §2.1: the relay closes the connection without a 101
    sel = ws.subprotocol
    await ws.close()
    raise CheckFailed(f"upgrade without subprotocol was accepted (101, subprotocol {sel!r}); §2.1 refuses it")


async def case_upgrade_wrong_path(case: Case) -> None:
    url = case.url.rsplit("/v1", 1)[0] + "/v2"
    try:
        ws = await connect(url, subprotocols=[SUBPROTOCOL], open_timeout=FRAME_TIMEOUT)
    except InvalidStatus as exc:
        status = exc.response.status_code
        check(status != 101, f"upgrade on /v2: HTTP {status}, expected a refusal (§2.1)")
        return
    except InvalidMessage:
        return  # §2.1: the relay closes the connection without a 101
    await ws.close()
    raise CheckFailed("upgrade on /v2 was accepted; §2.1 refuses it")


async def case_faces(case: Case) -> None:
    """§10.1 `faces`: no answer, never delivered to the phone; a phone's is not_supported."""
    phone, watch, _ = await case.pair("faces")
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'
    await watch.send({"type": "faces", "svg": svg})
    await watch.quiet(allow=("peer",))
    await phone.quiet(allow=("peer",))
    pid = new_id("pfaces")
    await phone.send({"type": "faces", "id": pid, "svg": svg})
    await phone.expect_error("not_supported", pid)
    wid = new_id("wfaces")
    await watch.send({"type": "faces", "id": wid, "svg": "x" * 131_073})
    await watch.expect_error("payload_too_large", wid)


# -- §7.1 App installed ------------------------------------------------------------------------

SEND_MODES = ("message", "context", "userInfo")


async def _expect_refused_everywhere(sender: Client, code: str, modes: tuple[str, ...]) -> None:
    """Every new send of `modes` (and a message with wantsReply) gets `code` with re (§7.1, §11),
    and the connection stays open."""
    for mode in modes:
        sid = await sender.send_item(mode, {"kind": "favorites.delete", "login": f"refused-{mode}"})
        await sender.expect_error(code, sid)  # with re and the wcCode of §11
    sid = await sender.send_item("message", {"kind": "profile.repos.request", "login": "octocat"}, wants_reply=True)
    await sender.expect_error(code, sid)  # check 7 comes before not_reachable (§4.1)
    check(not sender.closed, f"{sender.label}: the connection must stay open after {code} (§7.1)")


async def case_watch_app_uninstalled(case: Case) -> None:
    """§7.1 from the phone's side: close 1000, one peer frame, refusals per mode, retries of an
    accepted id, the error limit, queued items kept and delivered after the next hello."""
    phone, watch, info = await case.pair("uninstall")
    # Finished before the uninstall: a userInfo acked, and a complication acked.
    p0 = {"kind": "favorites.delete", "login": "finished"}
    s0 = await phone.send_item("userInfo", p0)
    await phone.expect_accepted(s0)
    pk = {"kind": "favorites.snapshot", "revision": 2, "users": []}
    sk = await phone.send_item("complication", pk)
    remaining = (await phone.expect_accepted(sk, complication=True))["remaining"]
    await watch.expect_deliver(s0, "userInfo", "phone", p0)
    dk = await watch.expect_deliver(sk, "complication", "phone", pk)
    await watch.ack(dk["seq"])
    await phone.expect_transferred([s0, sk])
    # Queued before the uninstall: a userInfo and a context, delivered and not acked.
    p1 = {"kind": "favorites.delete", "login": "queued"}
    s1 = await phone.send_item("userInfo", p1)
    await phone.expect_accepted(s1)
    d1 = await watch.expect_deliver(s1, "userInfo", "phone", p1)
    pc = {"kind": "favorites.snapshot", "revision": 3, "users": []}
    sc = await phone.send_item("context", pc)
    await phone.expect_accepted(sc)
    dc = await watch.expect_deliver(sc, "context", "phone", pc)
    # A message waiting for its reply when the watch app goes.
    pm = {"kind": "profile.repos.request", "login": "torvalds"}
    sm = await phone.send_item("message", pm, wants_reply=True)
    await phone.expect_accepted(sm)
    await watch.expect_deliver(sm, "message", "phone", pm, wants_reply=True)

    await watch.uninstall(sid=new_id("wstate"))
    await phone.expect_peer_uninstalled()
    # The receiver of a message with wantsReply left before replying (§8.2).
    await phone.expect_error("not_reachable", sm)
    await phone.quiet()  # one peer frame

    # Nothing queued was dropped: the phone's sends stay outstanding (§7.1, §8.9).
    ids = await phone.outstanding()
    check(ids == [s1, sc], f"phone: outstanding should still be [{s1}, {sc}] while the watch app is uninstalled (§7.1), got {ids}")

    # A send too large fails on its size first (check 6 before 7, §4.1).
    limit = phone.welcome["limits"]["userInfoBytes"]
    big = await phone.send_item("userInfo", {"kind": "favorites.delete", "pad": "x" * (2 * limit)})
    await phone.expect_error("payload_too_large", big)
    # Every new send, in every mode, is refused with re and wcCode 7006.
    await _expect_refused_everywhere(phone, "watch_app_not_installed", SEND_MODES + ("complication",))
    # A retry of an id accepted before is answered accepted again (§4.1 check 7, §8.1).
    await phone.send({"type": "send", "id": s1, "mode": "userInfo", "payload": p1})
    await phone.expect_accepted(s1)
    await phone.send({"type": "send", "id": sc, "mode": "context", "payload": pc})
    await phone.expect_accepted(sc)
    await phone.send({"type": "send", "id": s0, "mode": "userInfo", "payload": p0})  # acked already
    await phone.expect_accepted(s0)
    await phone.send({"type": "send", "id": sk, "mode": "complication", "payload": pk})
    a = await phone.expect_accepted(sk, complication=True)
    check(a.get("remaining") == remaining and "fallback" not in a,
          f"phone: a retried complication is answered with the current remaining (§8.1): {compact(a)}, expected remaining {remaining}")
    # A refused id was never accepted: it is refused again, and accepted after the reinstall (below).
    refused_payload = {"kind": "favorites.delete", "login": "refused-then-sent"}
    refused = await phone.send_item("userInfo", refused_payload)
    await phone.expect_error("watch_app_not_installed", refused)
    await phone.send({"type": "send", "id": refused, "mode": "userInfo", "payload": refused_payload})
    await phone.expect_error("watch_app_not_installed", refused)
    # The refusals do not count towards the error limit (§4.2): 110 of them leave the connection open.
    sids = []
    for n in range(110):
        sid = new_id("pflood")
        sids.append(sid)
        await phone.send({"type": "send", "id": sid, "mode": "userInfo", "payload": {"kind": "favorites.delete", "n": n}})
    for sid in sids:
        await phone.expect_error("watch_app_not_installed", sid)
    ids = await phone.outstanding()  # the connection still answers, and nothing refused was stored
    check(ids == [s1, sc], f"phone: refused sends must not be stored (§7.1): outstanding {ids}, expected [{s1}, {sc}]")
    # Only send is refused (§4.1 check 7): cancel answers as usual (s1 was sent: already_delivered).
    cid = new_id("pcancel")
    await phone.send({"type": "cancel", "id": cid, "target": s1})
    await phone.expect_error("already_delivered", cid)

    # A phone that reconnects learns it from welcome.peer.appInstalled.
    await phone.close()
    phone2, w = await case.reconnect("phone", info)
    check(w["peer"] == {"name": info["watch_name"], "connected": False, "reachable": False, "appInstalled": False},
          f"phone: welcome.peer should be the uninstalled watch (§7.1): {compact(w['peer'])}")
    await phone2.quiet()

    # A hello with the watch's token that the relay refuses (protocol 2) runs no app (§5.1).
    bad = await case.client("watch")
    hid = new_id("whello")
    await bad.send({"type": "hello", "id": hid, "protocol": 2, "role": "watch",
                    "device": {"name": info["watch_name"]}, "token": info["watch_token"]})
    await bad.expect_error("unsupported_protocol", hid)
    code = await bad.wait_closed()
    check(code == 1008, f"watch: unsupported_protocol closes with 1008 (§5.5), got {code}")
    await phone2.quiet()
    sid = await phone2.send_item("userInfo", {"kind": "favorites.delete", "login": "still-refused"})
    await phone2.expect_error("watch_app_not_installed", sid)

    # The next hello with the watch's token installs the app again.
    watch2, w = await case.reconnect("watch", info, last_seq=0)
    check("appInstalled" not in w["peer"], f"watch: its peer's app is installed: {compact(w['peer'])}")
    await phone2.expect_peer_installed(True, True)
    # The kept items come again with their seqs; none of the refused ones, no duplicate of the retries.
    ctx = w.get("context")
    check(ctx is None or ctx.get("id") == sc, f"watch: welcome.context may only be the context sent before: {compact(ctx)}")
    await watch2.expect_deliver(s1, "userInfo", "phone", p1, seq=d1["seq"])
    await watch2.expect_deliver(sc, "context", "phone", pc, seq=dc["seq"])
    await watch2.quiet()
    await watch2.ack(dc["seq"])
    await phone2.expect_transferred([s1])  # the transfer completes as usual
    # New sends go through again.
    p2 = {"kind": "favorites.delete", "login": "after"}
    s2 = await phone2.send_item("userInfo", p2)
    await phone2.expect_accepted(s2)
    await watch2.expect_deliver(s2, "userInfo", "phone", p2)
    await phone2.send({"type": "send", "id": refused, "mode": "userInfo", "payload": refused_payload})
    await phone2.expect_accepted(refused)
    await watch2.expect_deliver(refused, "userInfo", "phone", refused_payload)
    await phone2.quiet()


async def case_app_uninstalled_while_peer_away(case: Case) -> None:
    """§7.1: what the uninstalled device had sent stays queued for its peer; a peer that was away
    gets no peer frame and learns it from welcome; the sender's transferred follows its next hello."""
    phone, watch, info = await case.pair("away")
    await phone.close()
    await watch.expect_peer(False, False)
    pw = {"kind": "favorites.delete", "login": "from-watch"}
    sw = await watch.send_item("userInfo", pw)
    await watch.expect_accepted(sw)
    await watch.uninstall()  # no id: state's id is optional

    phone2, w = await case.reconnect("phone", info, last_seq=0)
    check(w["peer"].get("appInstalled") is False and w["peer"].get("connected") is False,
          f"phone: welcome.peer should say appInstalled false (§7.1): {compact(w['peer'])}")
    d = await phone2.expect_deliver(sw, "userInfo", "watch", pw)
    await phone2.quiet()
    await phone2.ack(d["seq"])
    await _expect_refused_everywhere(phone2, "watch_app_not_installed", SEND_MODES)

    watch2, _ = await case.reconnect("watch", info, last_seq=0)
    await watch2.expect_transferred([sw])  # pending transferred right after welcome (§5.3)
    await phone2.expect_peer_installed(True, True)
    await watch2.quiet()
    await phone2.quiet()


async def case_companion_app_uninstalled(case: Case) -> None:
    """§7.1, the phone-side mirror: a phone's state may carry appInstalled alone."""
    phone, watch, info = await case.pair("companion")
    await phone.uninstall()
    await watch.expect_peer_uninstalled()
    await watch.quiet()
    # Refused with companion_app_not_installed (wcCode 7018); a complication from a watch is
    # not_supported first (check 5 before 7, §4.1).
    await _expect_refused_everywhere(watch, "companion_app_not_installed", SEND_MODES)
    cid = await watch.send_item("complication", {"kind": "favorites.snapshot", "revision": 1, "users": []})
    await watch.expect_error("not_supported", cid)
    await watch.close()
    watch2, w = await case.reconnect("watch", info)
    check(w["peer"] == {"name": info["phone_name"], "connected": False, "reachable": False, "appInstalled": False},
          f"watch: welcome.peer should be the uninstalled phone app (§7.1): {compact(w['peer'])}")
    phone2, w = await case.reconnect("phone", info)
    check("appInstalled" not in w["peer"], f"phone: its peer's app is installed: {compact(w['peer'])}")
    await watch2.expect_peer_installed(True, True)
    p = {"kind": "favorites.delete", "login": "again"}
    sid = await watch2.send_item("userInfo", p)
    await watch2.expect_accepted(sid)
    await phone2.expect_deliver(sid, "userInfo", "watch", p)


async def case_app_installed_state_variants(case: Case) -> None:
    """§7.1: `appInstalled: true` changes nothing; a phone's `state` with `foreground` is still
    not_supported (with or without appInstalled) and stores nothing; an unpaired device's
    `state {appInstalled: false}` only closes its connection."""
    phone, watch, _ = await case.pair("variants")
    sid = new_id("pstate")
    await phone.send({"type": "state", "id": sid, "foreground": True, "appInstalled": False})
    await phone.expect_error("not_supported", sid)
    sid = new_id("pstate")
    await phone.send({"type": "state", "id": sid, "foreground": False})
    await phone.expect_error("not_supported", sid)
    await phone.send({"type": "state", "id": new_id("pstate"), "appInstalled": True})
    await watch.send({"type": "state", "id": new_id("wstate"), "appInstalled": True})
    await phone.quiet()
    await watch.quiet()
    # With foreground, a watch's appInstalled true leaves the state change as it is (§7).
    await watch.send({"type": "state", "foreground": False, "appInstalled": True})
    await phone.expect_peer_installed(True, False)
    await watch.send({"type": "state", "foreground": True})
    await phone.expect_peer_installed(True, True)
    # Both apps are still installed: sends go both ways.
    p = {"kind": "favorites.delete", "login": "installed"}
    s = await watch.send_item("userInfo", p)
    await watch.expect_accepted(s)
    await phone.expect_deliver(s, "userInfo", "watch", p)
    s = await phone.send_item("userInfo", p)
    await phone.expect_accepted(s)
    await watch.expect_deliver(s, "userInfo", "phone", p)
    # A watch's state may carry both members; appInstalled false wins (the app is gone).
    await watch.uninstall(foreground=True)
    await phone.expect_peer_uninstalled()

    for role in ("phone", "watch"):
        c = await case.client(role)
        await c.hello(role, f"unpaired {role}")
        await c.send({"type": "state", "id": new_id("ustate"), "appInstalled": False})
        await c.expect_closed_silently(1000, None, "an unpaired device's state {appInstalled: false} (§7.1)")


async def case_app_uninstalled_new_pair(case: Case) -> None:
    """§7.1: `paired` (a new pair) never carries appInstalled; the flag stays with the old pair."""
    phone, watch, info = await case.pair("repair")
    await watch.uninstall()
    await phone.expect_peer_uninstalled()
    bid = new_id("pbegin")
    await phone.send({"type": "pair.begin", "id": bid})
    code = await phone.expect("pair.code", where=lambda f: f.get("re") == bid)
    watch2 = await case.client("watch")
    await watch2.hello("watch", "repair watch 2")
    jid = new_id("wjoin")
    await watch2.send({"type": "pair.join", "id": jid, "code": code["code"]})
    wp = await watch2.expect("paired")
    pp = await phone.expect("paired")
    for who, p in (("phone", pp), ("watch", wp)):
        check("appInstalled" not in p.get("peer", {}), f"{who}: paired.peer never carries appInstalled (§7.1): {compact(p)}")
    p = {"kind": "favorites.delete", "login": "new-pair"}
    s = await phone.send_item("userInfo", p)
    await phone.expect_accepted(s)
    await watch2.expect_deliver(s, "userInfo", "phone", p)


async def case_app_installed_survives_restart(case: Case) -> None:
    """§7.1: the flag is stored before the peer hears of it (kill -9 right after the peer frame
    keeps it), and the reinstall on hello is stored too. A relay of its own (SQLite), so that it
    can be killed."""
    relay = Relay(BINARY)
    try:
        await relay.start()
        case.url = case.other_url = relay.url
        phone, watch, info = await case.pair("restart")
        p1 = {"kind": "favorites.delete", "login": "kept"}
        s1 = await phone.send_item("userInfo", p1)
        await phone.expect_accepted(s1)
        d1 = await watch.expect_deliver(s1, "userInfo", "phone", p1)
        await watch.send({"type": "state", "appInstalled": False})
        await phone.expect_peer_uninstalled()
        await relay.stop(graceful=False)  # kill -9 as soon as the peer frame arrived

        await relay.start()
        case.url = case.other_url = relay.url
        phone2, w = await case.reconnect("phone", info)
        check(w["peer"].get("appInstalled") is False,
              f"phone: after a kill -9 the stored flag must survive (§7.1): welcome.peer {compact(w['peer'])}")
        sid = await phone2.send_item("userInfo", {"kind": "favorites.delete", "login": "refused"})
        await phone2.expect_error("watch_app_not_installed", sid)
        ids = await phone2.outstanding()
        check(ids == [s1], f"phone: outstanding after the restart should be [{s1}], got {ids}")

        watch2, _ = await case.reconnect("watch", info, last_seq=0)
        await watch2.expect_deliver(s1, "userInfo", "phone", p1, seq=d1["seq"])
        await phone2.expect_peer_installed(True, True)
        await relay.stop(graceful=False)  # kill -9 as soon as the reinstall was seen

        await relay.start()
        case.url = case.other_url = relay.url
        phone3, w = await case.reconnect("phone", info)
        check("appInstalled" not in w["peer"], f"phone: the reinstall must survive a kill -9 (§7.1): welcome.peer {compact(w['peer'])}")
        s2 = await phone3.send_item("userInfo", {"kind": "favorites.delete", "login": "after"})
        await phone3.expect_accepted(s2)
    finally:
        await case.cleanup()
        case.clients.clear()
        await relay.stop(graceful=False)
        relay.remove()


CASES: list[tuple[str, Callable[[Case], Awaitable[None]]]] = [
    ("pairing", case_pairing),
    ("message_reply", case_message_reply),
    ("message_not_reachable_background", case_message_not_reachable),
    ("message_reply_timeout", case_message_reply_timeout),
    ("message_pending_reply_quota", case_message_pending_reply_quota),
    ("context_latest_wins", case_context),
    ("userinfo_connected", case_userinfo_connected),
    ("userinfo_offline_outstanding_cancel", case_userinfo_offline),
    ("complication", case_complication),
    ("faces_not_delivered", case_faces),
    ("resume_after_reconnect", case_resume),
    ("error_hello_required", case_error_hello_required),
    ("error_bad_json", case_error_bad_json),
    ("error_binary_frame", case_error_binary),
    ("http_healthz", case_http_healthz),
    ("http_not_found", case_http_not_found),
    ("upgrade_requires_subprotocol", case_upgrade_needs_subprotocol),
    ("upgrade_wrong_path", case_upgrade_wrong_path),
    ("watch_app_uninstalled", case_watch_app_uninstalled),
    ("app_uninstalled_while_peer_away", case_app_uninstalled_while_peer_away),
    ("companion_app_uninstalled", case_companion_app_uninstalled),
    ("app_installed_state_variants", case_app_installed_state_variants),
    ("app_uninstalled_new_pair", case_app_uninstalled_new_pair),
    ("app_installed_survives_restart", case_app_installed_survives_restart),
]
# Cases that need longer than CASE_TIMEOUT (they start relays of their own).
CASE_TIMEOUTS = {"app_installed_survives_restart": 60.0}


# ---------------------------------------------------------------------------------------------
# Relay process


class RedisServer:
    """A redis-server on 127.0.0.1, a free port, its data in a temporary directory."""

    def __init__(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="watchrelay-conformance-redis-")
        self.proc: asyncio.subprocess.Process | None = None
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.proc = await asyncio.create_subprocess_exec(
            binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", self.tmp, "--appendonly", "yes",
            "--appendfsync", "always", "--save", "", "--daemonize", "no",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.write(b"PING\r\n")
                await writer.drain()
                line = await asyncio.wait_for(reader.readline(), 2)
                writer.close()
                if line.startswith(b"+PONG"):
                    return
            except (OSError, asyncio.TimeoutError):
                pass
            await asyncio.sleep(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not answer PING within 20 s")

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


class Relay:
    def __init__(self, binary: str, extra: list[str] | None = None) -> None:
        self.binary = binary
        self.extra = extra or []
        self.tmp = tempfile.mkdtemp(prefix="watchrelay-conformance-")
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""
        self.stderr_path = os.path.join(self.tmp, "relay.stderr")
        self._drain: asyncio.Task | None = None

    async def start(self) -> None:
        if not os.access(self.binary, os.X_OK):
            raise RuntimeError(f"relay binary {self.binary} not found or not executable (set WATCHRELAY_BIN)")
        if getattr(self, "_stderr", None) is not None:
            self._stderr.close()  # a restart (case_app_installed_survives_restart)
        self._stderr = open(self.stderr_path, "ab")
        # A node on Redis takes no --db (`serve` refuses --db with --store).
        store = [] if "--store" in self.extra else ["--db", os.path.join(self.tmp, "relay.db")]
        self.proc = await asyncio.create_subprocess_exec(
            self.binary, "serve", "--port", "0", *store,
            "--reply-timeout-ms", str(REPLY_TIMEOUT_MS), "--quota-pair-replies", str(PAIR_REPLIES),
            "--log-level", "warn", *self.extra,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=self._stderr,
        )
        assert self.proc.stdout is not None
        try:
            line = await asyncio.wait_for(self.proc.stdout.readline(), 20)
        except asyncio.TimeoutError:
            raise RuntimeError("relay printed no URL within 20 s") from None
        self.url = line.decode("utf-8", "replace").strip()
        if not re.fullmatch(r"wss?://[^/\s]+:[0-9]+/v1", self.url):
            raise RuntimeError(f"relay's first stdout line is not a ws://HOST:PORT/v1 URL: {self.url!r}{self.stderr_tail()}")
        self._drain = asyncio.create_task(self._drain_stdout())

    async def _drain_stdout(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while await self.proc.stdout.read(65536):
            pass

    def stderr_tail(self) -> str:
        try:
            text = pathlib.Path(self.stderr_path).read_text(errors="replace").strip()
        except OSError:
            return ""
        return f"; relay stderr: {text[-600:]}" if text else ""

    async def stop(self, graceful: bool = True) -> int | None:
        rc = None
        if self.proc is not None and self.proc.returncode is None:
            if graceful:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    rc = await asyncio.wait_for(self.proc.wait(), 10)
                except asyncio.TimeoutError:
                    self.proc.kill()
                    await self.proc.wait()
                    rc = None
            else:
                self.proc.kill()
                await self.proc.wait()
        elif self.proc is not None:
            rc = self.proc.returncode
        if self._drain is not None:
            self._drain.cancel()
        return rc

    def remove(self) -> None:
        try:
            self._stderr.close()
        except Exception:
            pass
        shutil.rmtree(self.tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Main


async def run_case(
    name: str, fn: Callable[[Case], Awaitable[None]], url: str, results: list[tuple[str, str | None]], other_url: str | None = None
) -> None:
    case = Case(url, other_url)
    why: str | None = None
    try:
        await asyncio.wait_for(fn(case), CASE_TIMEOUTS.get(name, CASE_TIMEOUT))
    except CheckFailed as exc:
        why = str(exc)
    except asyncio.TimeoutError:
        why = f"case timed out after {CASE_TIMEOUT:.0f} s"
    except InvalidStatus as exc:
        why = f"WebSocket upgrade refused: HTTP {exc.response.status_code}"
    except Exception as exc:  # noqa: BLE001 - any failure is a FAIL line
        why = f"{type(exc).__name__}: {exc}"
    finally:
        await case.cleanup()
    results.append((name, why))
    print(f"PASS {name}" if why is None else f"FAIL {name}: {why}", flush=True)


async def main() -> int:
    global SCHEMAS, BINARY
    SCHEMAS = SchemaSet()
    if not SCHEMAS.available:
        print(f"# note: {SCHEMAS.reason}", flush=True)
    binary = os.environ.get("WATCHRELAY_BIN") or str(REPO / ".build" / "debug" / "watchrelay")
    BINARY = binary
    cluster = "--cluster" in sys.argv[1:]
    redis = RedisServer() if cluster else None
    node = ["--lease-ttl-ms", "5000"]
    relay = Relay(binary, ["--store", redis.url, "--node-id", "leader", *node] if redis else None)
    edge = Relay(binary, ["--store", redis.url, "--node-id", "edge", *node]) if redis else None
    relays = [relay] + ([edge] if edge else [])
    results: list[tuple[str, str | None]] = []
    try:
        try:
            if redis is not None:
                await redis.start()
            # The first node started leads; the second forwards to it.
            for r in relays:
                await r.start()
        except Exception as exc:  # noqa: BLE001
            results.append(("relay_start", str(exc)))
            print(f"FAIL relay_start: {exc}", flush=True)
        else:
            for name, fn in CASES:
                await run_case(name, fn, relay.url, results, edge.url if edge else None)
                dead = next((r for r in relays if r.proc is not None and r.proc.returncode is not None), None)
                if dead is not None:
                    results.append(("relay_alive", f"relay exited with {dead.proc.returncode} during {name}{dead.stderr_tail()}"))
                    print(f"FAIL relay_alive: relay exited with {dead.proc.returncode} during {name}{dead.stderr_tail()}", flush=True)
                    break
            else:
                # §2.3: 1001 = the relay is shutting down. Keep one connection open across SIGTERM.
                why = None
                c = Client(relay.url, "conn")
                try:
                    await c.open()
                    await c.hello("phone", "shutdown phone")
                    relay.proc.send_signal(signal.SIGTERM)
                    code = await c.wait_closed(timeout=8)
                    check(code == 1001, f"conn: on SIGTERM the relay should close with 1001 (§2.3), close code was {code}")
                    try:
                        rc = await asyncio.wait_for(relay.proc.wait(), 8)
                    except asyncio.TimeoutError:
                        raise CheckFailed("relay did not exit within 8 s of SIGTERM") from None
                    check(rc == 0, f"relay exited with status {rc} after SIGTERM")
                except CheckFailed as exc:
                    why = str(exc)
                except Exception as exc:  # noqa: BLE001
                    why = f"{type(exc).__name__}: {exc}"
                finally:
                    await c.close()
                results.append(("shutdown_close_1001", why))
                print("PASS shutdown_close_1001" if why is None else f"FAIL shutdown_close_1001: {why}", flush=True)
    except BaseException:
        # The harness itself failed (or was interrupted): kill the relays, do not wait for them.
        for r in relays:
            await r.stop(graceful=False)
        if redis is not None:
            await redis.stop()
        raise
    finally:
        for r in relays:
            await r.stop(graceful=True)  # no-op if it already exited
            r.remove()
        if redis is not None:
            await redis.stop()
    failed = sum(1 for _, why in results if why is not None)
    passed = len(results) - failed
    print(f"{passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except KeyboardInterrupt:
        sys.exit(130)
