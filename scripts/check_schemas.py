#!/usr/bin/env python3
"""Checks that Protocol/schema and Protocol/vectors agree with each other and with PROTOCOL.md.

    python3 scripts/check_schemas.py

1. Every *.schema.json under Protocol/schema is a valid JSON Schema 2020-12 document whose
   `$id` is https://watchrelay.dev/schema/<path>, and every `$ref` in it resolves through one
   `referencing.Registry` holding all of them.
2. Every file under Protocol/vectors is covered by exactly one rule (PROTOCOL.md §14):
   - valid/client/*.json, valid/relay/*.json: strict JSON, an object whose `type` has a schema
     in that direction and matches the file name; validates. Client send/reply payloads fit the
     default per-mode limit; a payload whose `kind` has a payload schema validates against it.
   - valid/payload/*.json: validates against payload/<kind>.schema.json, or user/repo by name.
   - invalid/<name>.json (+ <name>.expect.json): by the sidecar's stage and code:
     bad_json must not parse as strict JSON; bad_frame must parse but fail its client schema
     (or not be an object, or lack a string type), naming the sidecar's field; unknown_type must
     name no client frame; limits and session vectors must validate (their failure is not
     structural), and payload_too_large ones must really exceed the limit.
   - invalid/*.bin: a binary message (sidecar says binary, unsupported_frame); not parsed.
   - generate.py, and the files it writes, which must be up to date.
3. Every protocol error code a single client frame can earn appears in some invalid vector.
4. Every frame line of the worked examples in PROTOCOL.md §13 validates against its schema.

Exits 0 when all is consistent, 1 otherwise, listing each failing file and why.
"""

from __future__ import annotations

import importlib.util
import json
import unicodedata
import re
import sys
from pathlib import Path

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable

ROOT = Path(__file__).resolve().parent.parent / "Protocol"
PROTOCOL_MD = ROOT / "PROTOCOL.md"
SCHEMA_DIR = ROOT / "schema"
VECTOR_DIR = ROOT / "vectors"
BASE_URI = "https://watchrelay.dev/schema/"
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

ERROR_CODES = [
    "hello_required", "already_hello", "unsupported_protocol", "bad_json", "bad_frame", "unknown_type",
    "unsupported_frame", "payload_too_large", "unauthorized", "not_paired", "not_reachable", "reply_timeout",
    "not_supported", "already_delivered", "unknown_id", "pairing_code_invalid", "pairing_code_expired",
    "pairing_locked", "rate_limited", "quota_exceeded", "internal", "watch_app_not_installed",
    "companion_app_not_installed",
]
# Codes that need elapsed time or earlier history, so no single frame in a fixed setup earns them.
NEEDS_HISTORY = {"rate_limited", "reply_timeout", "already_delivered", "pairing_code_expired", "pairing_locked",
                 "quota_exceeded", "internal", "watch_app_not_installed", "companion_app_not_installed"}
SETUPS = {"connected", "hello_phone_unpaired", "hello_watch_unpaired", "paired_phone_peer_offline",
          "paired_watch_peer_offline", "paired_phone_watch_background", "paired_phone", "paired_watch"}
CLOSING_CODES = {"hello_required": 1008, "unsupported_protocol": 1008, "unauthorized": 1008}
# Session outcomes decided after the size check (PROTOCOL.md §4): their vectors must fit the limit.
AFTER_SIZE_CHECK = {"not_reachable", "unknown_id", "already_delivered", "pairing_code_invalid",
                    "pairing_code_expired", "pairing_locked"}
SIDECAR_KEYS = {"code", "field", "stage", "setup", "closes", "note", "binary"}
MAX_DEPTH = 64
DEFAULT_LIMITS = {"message": 65536, "userInfo": 65536, "complication": 65536, "context": 262144}
REPLY_LIMIT = DEFAULT_LIMITS["message"]


class NotStrictJSON(Exception):
    """The bytes are not a strict JSON text as PROTOCOL.md §3.1 defines it."""


# ---------------------------------------------------------------------------- strict JSON

def max_depth(text: str) -> int:
    """Deepest nesting of objects/arrays, counted without recursion (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _reject_constant(name: str) -> None:
    raise NotStrictJSON(f"{name} is not JSON")


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    seen: dict[str, object] = {}
    normalized: set[str] = set()
    for key, value in pairs:
        if key in seen:
            raise NotStrictJSON(f"duplicate member name {key!r}")
        # PROTOCOL.md 3.1: names that differ only by Unicode normalization are refused too.
        if unicodedata.normalize("NFC", key) in normalized:
            raise NotStrictJSON(f"member names differing only by Unicode normalization: {key!r}")
        seen[key] = value
        normalized.add(unicodedata.normalize("NFC", key))
    return seen


def _finite_float(token: str) -> float:
    value = float(token)
    if value in (float("inf"), float("-inf")):
        raise NotStrictJSON(f"number {token} is not finite as a double")
    return value


def _finite_int(token: str) -> int:
    # 309 digits already exceed the largest finite double (about 1.8e308).
    if len(token.lstrip("-")) > 309:
        raise NotStrictJSON(f"integer of {len(token)} characters is not finite as a double")
    return int(token)


def _check_scalars(value: object) -> None:
    """Rejects lone surrogates in any string or member name (Python's json lets "\\ud800" through)."""
    stack = [value]
    while stack:
        item = stack.pop()
        strings: list[str] = []
        if isinstance(item, str):
            strings.append(item)
        elif isinstance(item, dict):
            strings.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        for s in strings:
            if any("\ud800" <= ch <= "\udfff" for ch in s):
                raise NotStrictJSON("lone surrogate escape in a string")


def strict_parse(data: bytes) -> object:
    """Parses one WebSocket text message the way the WatchRelay codec does, or raises NotStrictJSON."""
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as error:
        raise NotStrictJSON(f"invalid UTF-8: {error.reason} at byte {error.start}") from None
    if text.startswith("\ufeff"):
        raise NotStrictJSON("byte order mark")
    depth = max_depth(text)
    if depth > MAX_DEPTH:
        raise NotStrictJSON(f"nesting depth {depth} > {MAX_DEPTH}")
    try:
        value = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates,
                           parse_float=_finite_float, parse_int=_finite_int)
    except RecursionError:
        # Our codec stops at depth 64 long before any stack limit; treat this as that refusal.
        raise NotStrictJSON("nesting too deep for the parser") from None
    except json.JSONDecodeError as error:
        raise NotStrictJSON(f"{error.msg} at char {error.pos}") from None
    except ValueError as error:
        raise NotStrictJSON(str(error)) from None
    _check_scalars(value)
    return value


def compact_size(payload: object) -> int:
    """Byte length of the canonical compact encoding the per-mode limits measure (PROTOCOL.md §3.6)."""
    return len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode("utf-8"))


# ---------------------------------------------------------------------------- schemas

class Schemas:
    """All schemas, one registry, a validator per schema file."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        self.documents: dict[str, dict] = {}  # path relative to schema/ without .schema.json → document
        for path in sorted(SCHEMA_DIR.rglob("*.schema.json")):
            rel = path.relative_to(SCHEMA_DIR).as_posix()
            where = f"schema/{rel}"
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as error:
                problems.append(f"{where}: not JSON: {error}")
                continue
            if doc.get("$schema") != DRAFT_2020_12:
                problems.append(f"{where}: $schema must be {DRAFT_2020_12}")
            if doc.get("$id") != BASE_URI + rel:
                problems.append(f"{where}: $id must be {BASE_URI + rel}")
            try:
                Draft202012Validator.check_schema(doc)
            except SchemaError as error:
                problems.append(f"{where}: not a valid 2020-12 schema: {error.message}")
                continue
            self.documents[rel.removesuffix(".schema.json")] = doc
        self.registry = Registry().with_resources(
            (doc["$id"], Resource.from_contents(doc)) for doc in self.documents.values())
        self.format_checker = Draft202012Validator.FORMAT_CHECKER
        if "date-time" not in self.format_checker.checkers:
            print("warning: no date-time format checker installed (pip install rfc3339-validator); "
                  "timestamps are checked by pattern only", file=sys.stderr)
        self.validators = {name: Draft202012Validator(doc, registry=self.registry,
                                                      format_checker=self.format_checker)
                           for name, doc in self.documents.items()}
        for name, doc in self.documents.items():
            self._check_refs(name, doc)

    def _check_refs(self, name: str, doc: dict) -> None:
        resolver = self.registry.resolver(base_uri=doc["$id"])
        stack: list[object] = [doc]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str):
                    try:
                        resolver.lookup(ref)
                    except Unresolvable as error:
                        self.problems.append(f"schema/{name}.schema.json: $ref {ref} does not resolve: {error}")
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)

    def names(self, direction: str) -> set[str]:
        prefix = direction + "/"
        return {n.removeprefix(prefix) for n in self.documents if n.startswith(prefix)}

    def errors(self, name: str, instance: object) -> list:
        return list(self.validators[name].iter_errors(instance))


def error_fields(errors: list) -> set[str]:
    """The dotted instance paths each schema error points at; a missing property names itself."""
    fields: set[str] = set()
    for error in errors:
        path = [str(p) for p in error.absolute_path]
        if error.validator == "required" and isinstance(error.instance, dict):
            for missing in error.validator_value:
                if missing not in error.instance:
                    fields.add(".".join(path + [missing]))
        else:
            fields.add(".".join(path))
    return fields


def describe(errors: list) -> str:
    return "; ".join(f"{'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors[:3])


def resolve_name(stem: str, known: set[str]) -> str | None:
    """The longest known type/kind that the file stem is, or starts with followed by a dot."""
    matches = [k for k in known if stem == k or stem.startswith(k + ".")]
    return max(matches, key=len) if matches else None


# ---------------------------------------------------------------------------- vectors

class Checker:
    """Walks Protocol/vectors, applies the rule for each file, and collects every problem."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.schemas = Schemas(self.problems)
        self.valid_count = 0
        self.invalid_count = 0
        self.codes_seen: set[str] = set()
        self.stages: dict[str, int] = {}
        self.example_count = 0
        self.binary_skipped = 0

    def fail(self, path: Path, reason: str) -> None:
        self.problems.append(f"{path.relative_to(ROOT.parent).as_posix()}: {reason}")

    # -- valid -------------------------------------------------------------------------

    def check_valid(self, path: Path, direction: str) -> None:
        self.valid_count += 1
        try:
            value = strict_parse(path.read_bytes())
        except NotStrictJSON as error:
            return self.fail(path, f"not strict JSON: {error}")
        if not isinstance(value, dict):
            return self.fail(path, "a vector must be a JSON object")
        stem = path.name.removesuffix(".json")
        known = self.schemas.names(direction)
        by_name = resolve_name(stem, known)
        if direction == "payload":
            declared = value.get("kind")
            if declared is None and by_name in ("user", "repo"):
                declared = by_name
        else:
            declared = value.get("type")
        if not isinstance(declared, str) or declared not in known:
            return self.fail(path, f"{'kind' if direction == 'payload' else 'type'} {declared!r} has no "
                                   f"{direction} schema")
        if by_name != declared:
            return self.fail(path, f"file name must start with {declared!r} (resolves to {by_name!r})")
        errors = self.schemas.errors(f"{direction}/{declared}", value)
        if errors:
            return self.fail(path, f"does not validate against {direction}/{declared}: {describe(errors)}")
        if direction == "client":
            self.check_size_within(path, value)
        self.check_embedded_payloads(path, direction, value)

    def check_size_within(self, path: Path, frame: dict) -> None:
        limit = self.limit_for(frame)
        if limit is not None and compact_size(frame["payload"]) > limit:
            self.fail(path, f"payload is {compact_size(frame['payload'])} compact bytes, over the default {limit}")

    @staticmethod
    def limit_for(frame: dict) -> int | None:
        if frame.get("type") == "send":
            return DEFAULT_LIMITS.get(frame.get("mode"))
        if frame.get("type") == "reply":
            return REPLY_LIMIT
        return None

    def check_embedded_payloads(self, path: Path, direction: str, frame: dict) -> None:
        """An app payload carried inside a frame must match its payload schema when it has one."""
        carried = []
        if direction in ("client", "relay") and isinstance(frame.get("payload"), dict):
            carried.append(frame["payload"])
        if direction == "relay" and isinstance(frame.get("context"), dict):
            carried.append(frame["context"].get("payload"))
        payload_kinds = self.schemas.names("payload") - {"user", "repo"}
        for payload in carried:
            kind = payload.get("kind") if isinstance(payload, dict) else None
            if kind in payload_kinds:
                errors = self.schemas.errors(f"payload/{kind}", payload)
                if errors:
                    self.fail(path, f"carried {kind} payload does not validate: {describe(errors)}")

    # -- invalid -----------------------------------------------------------------------

    def load_sidecar(self, path: Path) -> dict | None:
        sidecar_path = path.with_name(path.name.removesuffix(path.suffix) + ".expect.json")
        if not sidecar_path.is_file():
            self.fail(path, f"no sidecar {sidecar_path.name}")
            return None
        try:
            sidecar = strict_parse(sidecar_path.read_bytes())
        except NotStrictJSON as error:
            self.fail(sidecar_path, f"sidecar is not JSON: {error}")
            return None
        problems = []
        if not isinstance(sidecar, dict):
            self.fail(sidecar_path, "sidecar must be an object")
            return None
        unknown = set(sidecar) - SIDECAR_KEYS
        missing = {"code", "field", "stage", "setup", "closes", "note"} - set(sidecar)
        if unknown:
            problems.append(f"unknown keys {sorted(unknown)}")
        if missing:
            problems.append(f"missing keys {sorted(missing)}")
        code, stage, setup, closes = (sidecar.get(k) for k in ("code", "stage", "setup", "closes"))
        if code not in ERROR_CODES:
            problems.append(f"code {code!r} is not a protocol error code")
        if stage not in ("codec", "limits", "session"):
            problems.append(f"stage {stage!r} must be codec, limits or session")
        if stage == "session" and setup not in SETUPS:
            problems.append(f"setup {setup!r} must be one of {sorted(SETUPS)}")
        if stage != "session" and setup is not None:
            problems.append("setup must be null outside the session stage")
        if closes != CLOSING_CODES.get(code):
            problems.append(f"closes must be {CLOSING_CODES.get(code)} for {code}")
        if not (sidecar.get("field") is None or isinstance(sidecar.get("field"), str)):
            problems.append("field must be a string or null")
        if not isinstance(sidecar.get("note"), str) or not sidecar.get("note"):
            problems.append("note must be a non-empty string")
        if problems:
            self.fail(sidecar_path, "; ".join(problems))
            return None
        return sidecar

    def check_invalid(self, path: Path) -> None:
        self.invalid_count += 1
        sidecar = self.load_sidecar(path)
        if sidecar is None:
            return
        code, stage, field = sidecar["code"], sidecar["stage"], sidecar["field"]
        self.codes_seen.add(code)
        self.stages[stage] = self.stages.get(stage, 0) + 1
        binary = sidecar.get("binary") is True
        if path.suffix == ".bin" or binary or code == "unsupported_frame":
            if not (path.suffix == ".bin" and binary and code == "unsupported_frame" and stage == "codec"):
                self.fail(path, "a binary vector is a .bin file whose sidecar has binary: true, "
                                "code unsupported_frame, stage codec")
            self.binary_skipped += 1
            return  # the bytes are arbitrary: nothing to parse, only the sidecar is checked
        data = path.read_bytes()
        if code == "bad_json":
            if stage != "codec":
                return self.fail(path, "bad_json is decided by the codec stage")
            try:
                strict_parse(data)
            except NotStrictJSON:
                return
            return self.fail(path, "expected bad_json but the bytes parse as strict JSON")
        try:
            value = strict_parse(data)
        except NotStrictJSON as error:
            return self.fail(path, f"expected {code} but the bytes are not strict JSON ({error}): that is bad_json")
        client_types = self.schemas.names("client")
        if code in ("bad_frame", "unknown_type"):
            if stage != "codec":
                return self.fail(path, f"{code} is decided by the codec stage")
            return self.check_structural(path, value, code, field, client_types)
        if stage == "codec":
            return self.fail(path, f"the codec stage yields only bad_json, bad_frame, unknown_type, "
                                   f"unsupported_frame, not {code}")
        # limits and session: the frame itself must be structurally valid.
        if not isinstance(value, dict) or value.get("type") not in client_types:
            return self.fail(path, f"a {stage} vector must be a client frame with a known type")
        errors = self.schemas.errors(f"client/{value['type']}", value)
        if errors:
            return self.fail(path, f"a {stage} vector must validate, but: {describe(errors)}")
        if "id" not in value:
            self.fail(path, "put an id in every invalid vector, so the error's re can be checked")
        limit = self.limit_for(value)
        if code == "payload_too_large":
            if limit is None or compact_size(value["payload"]) <= limit:
                return self.fail(path, "payload_too_large needs a send/reply whose payload exceeds the default limit")
        elif stage == "limits":
            return self.fail(path, "the limits stage yields only payload_too_large")
        elif code in AFTER_SIZE_CHECK and limit is not None and compact_size(value["payload"]) > limit:
            return self.fail(path, f"{code} is checked after the size limit, but this payload is too large")

    def check_structural(self, path: Path, value: object, code: str, field: object, client_types: set[str]) -> None:
        if not isinstance(value, dict):
            if code != "bad_frame" or field is not None:
                self.fail(path, "a non-object frame is bad_frame with field null")
            return
        frame_type = value.get("type")
        if not isinstance(frame_type, str):
            if code != "bad_frame" or field != "type":
                self.fail(path, "a missing or non-string type is bad_frame with field 'type'")
            return
        if frame_type not in client_types:
            if code != "unknown_type" or field != "type":
                self.fail(path, f"type {frame_type!r} has no client schema: expected unknown_type, field 'type'")
            return
        if code == "unknown_type":
            return self.fail(path, f"type {frame_type!r} is a client frame type, so this cannot be unknown_type")
        errors = self.schemas.errors(f"client/{frame_type}", value)
        if not errors:
            return self.fail(path, f"expected bad_frame but it validates against client/{frame_type}")
        fields = error_fields(errors)
        if field not in fields:
            self.fail(path, f"sidecar field {field!r} is not among the schema's complaints {sorted(fields)}")

    # -- PROTOCOL.md §13 ------------------------------------------------------------------

    EXAMPLE_LINE = re.compile(r"^(phone|watch|relay) → (phone|watch|relay)\s+(.*)$")

    def check_examples(self) -> None:
        """Every `sender → receiver  {frame}` line in a code block of PROTOCOL.md must validate."""
        if not PROTOCOL_MD.is_file():
            self.problems.append("Protocol/PROTOCOL.md: missing")
            return
        in_block = False
        for number, line in enumerate(PROTOCOL_MD.read_text(encoding="utf-8").splitlines(), start=1):
            if line.startswith("```"):
                in_block = not in_block
                continue
            match = self.EXAMPLE_LINE.match(line) if in_block else None
            if match is None:
                continue
            where = f"Protocol/PROTOCOL.md:{number}"
            sender, receiver, text = match.groups()
            if (sender == "relay") == (receiver == "relay"):
                self.problems.append(f"{where}: an example frame goes between a device and the relay")
                continue
            direction = "relay" if sender == "relay" else "client"
            self.example_count += 1
            try:
                frame = strict_parse(text.encode("utf-8"))
            except NotStrictJSON as error:
                self.problems.append(f"{where}: example frame is not strict JSON: {error}")
                continue
            frame_type = frame.get("type") if isinstance(frame, dict) else None
            if frame_type not in self.schemas.names(direction):
                self.problems.append(f"{where}: example {direction} frame type {frame_type!r} has no schema")
                continue
            errors = self.schemas.errors(f"{direction}/{frame_type}", frame)
            if errors:
                self.problems.append(f"{where}: example {frame_type} does not validate: {describe(errors)}")
                continue
            if direction == "client":
                limit = self.limit_for(frame)
                if limit is not None and compact_size(frame["payload"]) > limit:
                    self.problems.append(f"{where}: example payload exceeds the default limit")
            for payload in (frame.get("payload"), (frame.get("context") or {}).get("payload")):
                kind = payload.get("kind") if isinstance(payload, dict) else None
                if kind in self.schemas.names("payload"):
                    payload_errors = self.schemas.errors(f"payload/{kind}", payload)
                    if payload_errors:
                        self.problems.append(f"{where}: example {kind} payload does not validate: "
                                             f"{describe(payload_errors)}")
        if self.example_count == 0:
            self.problems.append("Protocol/PROTOCOL.md: no example frames found in §13")

    # -- the walk ----------------------------------------------------------------------

    def run(self) -> int:
        generated = self.generated_files()
        for path in sorted(p for p in VECTOR_DIR.rglob("*") if p.is_file()):
            rel = path.relative_to(VECTOR_DIR)
            if "__pycache__" in rel.parts:
                continue
            parts = rel.parts
            if rel.as_posix() == "generate.py":
                continue
            if len(parts) == 3 and parts[0] == "valid" and parts[1] in ("client", "relay", "payload") \
                    and path.suffix == ".json":
                self.check_valid(path, parts[1])
            elif len(parts) == 2 and parts[0] == "invalid" and path.name.endswith(".expect.json"):
                twin = [path.with_name(path.name.removesuffix(".expect.json") + s) for s in (".json", ".bin")]
                if sum(t.is_file() for t in twin) != 1:
                    self.fail(path, "a sidecar needs exactly one vector (<name>.json or <name>.bin)")
            elif len(parts) == 2 and parts[0] == "invalid" and path.suffix in (".json", ".bin"):
                self.check_invalid(path)
            else:
                self.fail(path, "not covered by any rule (see PROTOCOL.md §14)")
        for rel, data in generated.items():
            path = VECTOR_DIR / rel
            if not path.is_file() or path.read_bytes() != data:
                self.fail(path, "differs from what generate.py writes: run python3 Protocol/vectors/generate.py")
        self.check_examples()
        earnable = set(ERROR_CODES) - NEEDS_HISTORY
        for code in sorted(earnable - self.codes_seen):
            self.problems.append(f"Protocol/vectors/invalid: no vector earns {code}")
        if self.problems:
            print(f"schema check: {len(self.problems)} problem(s)", file=sys.stderr)
            for problem in self.problems:
                print(f"  {problem}", file=sys.stderr)
            return 1
        by_stage = ", ".join(f"{self.stages.get(s, 0)} {s}" for s in ("codec", "limits", "session"))
        by_stage += f"; {self.binary_skipped} binary, sidecar only"
        print(f"schema check: {len(self.schemas.documents)} schemas, {self.valid_count} valid vectors, "
              f"{self.invalid_count} invalid vectors ({by_stage}), {self.example_count} example frames: "
              f"all consistent")
        return 0

    def generated_files(self) -> dict[str, bytes]:
        sys.dont_write_bytecode = True
        spec = importlib.util.spec_from_file_location("watchrelay_vector_generator", VECTOR_DIR / "generate.py")
        if spec is None or spec.loader is None:
            self.problems.append("Protocol/vectors/generate.py: cannot be loaded")
            return {}
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.build()


def main() -> int:
    return Checker().run()


if __name__ == "__main__":
    sys.exit(main())
