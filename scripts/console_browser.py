#!/usr/bin/env python3
"""Drives headless Chromium over the DevTools protocol (--remote-debugging-pipe) against a
running relay console, for the browser test (Tests/RelayServerTests/ConsoleBrowserTests.swift).

    console_browser.py URL --item ID --device DEVICE_ID [--screenshot PATH]
    console_browser.py URL --empty-pair PAIR_ID
    console_browser.py URL --pair-replaced PAIR_ID

Loads URL (the console with its token), waits until the page lists two devices and the queued
item ID, then sets the fault `unreachable` on DEVICE_ID by the page's own form and button, and
waits until the page lists it. With --empty-pair, filters the frame log on a pair that has no
frames and waits until the page shows none. With --pair-replaced, filters it on PAIR_ID, prints
'loaded', and waits until the pair list names the pair that replaced it and keeps PAIR_ID, marked
gone. Prints one JSON object on stdout; exit 0 when every check held.
"""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


class Chromium:
    def __init__(self, binary):
        self.profile = tempfile.mkdtemp(prefix="watchrelay-chromium-")
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # Chromium reads commands on fd 3 and writes answers on fd 4. The pipes are created
        # non-inheritable (PEP 446): only the dup2'ed copies reach chromium. They are first
        # copied high so that neither dup2 overwrites the other's source.
        def fds():
            read_end, write_end = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)
        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--disable-dev-shm-usage", "--user-data-dir=" + self.profile,
             "--remote-debugging-pipe", "--window-size=1280,900", "about:blank"],
            preexec_fn=fds, close_fds=False,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0
        self.session = None

    def call(self, method, params=None, session=True, timeout=20):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while time.time() < deadline:
            while b"\0" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") == self.next_id:
                    if "error" in answer:
                        raise RuntimeError(f"{method}: {answer['error']}")
                    return answer.get("result", {})
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buffer += chunk
        raise RuntimeError(f"{method}: no answer within {timeout} s")

    def attach(self):
        targets = self.call("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call(
            "Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}, session=False)["sessionId"]

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return result.get("result", {}).get("value")

    def wait_for(self, expression, what, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.evaluate(expression):
                return
            time.sleep(0.1)
        raise RuntimeError(f"the page never showed {what}")

    def close(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def check_console(browser, args, report):
    """The page shows the pair and its queue, updates live, and sets a fault on the relay."""
    browser.wait_for("document.querySelectorAll('.device').length >= 2", "two devices", args.timeout)
    report["devices"] = browser.evaluate("document.querySelectorAll('.device').length")
    browser.wait_for(f"!!document.querySelector('.item[data-item=\"{args.item}\"]')", "the queued item", args.timeout)
    report["item"] = args.item
    if args.live_item:
        # A reload would wipe this marker: the page must update itself from the event stream.
        browser.evaluate("window.__consoleLoaded = 1; true")
        updates = browser.evaluate("Number(document.body.dataset.updates || 0)")
        print("loaded", flush=True)
        browser.wait_for(f"!!document.querySelector('.item[data-item=\"{args.live_item}\"]')",
                         "the item queued after the page loaded", args.timeout)
        if browser.evaluate("window.__consoleLoaded") != 1:
            raise RuntimeError("the page reloaded instead of updating live")
        report["liveItem"] = args.live_item
        report["liveUpdates"] = browser.evaluate("Number(document.body.dataset.updates || 0)") - updates
    if args.face:
        browser.wait_for("[...document.querySelectorAll('#faces img')].some(i => i.complete && i.naturalWidth > 0)",
                         "a watch face picture", args.timeout)
        report["faces"] = browser.evaluate("document.querySelectorAll('#faces img').length")
    target = json.dumps("device:" + args.device)
    browser.wait_for(f"[...document.getElementById('fault-target').options].some(o => o.value === {target})",
                     "the device as a fault target", args.timeout)
    browser.evaluate(
        f"document.getElementById('fault-target').value = {target};"
        "document.getElementById('fault-kind').value = 'unreachable';"
        "document.getElementById('fault-set').click(); true")
    browser.wait_for(f"!!document.querySelector('.fault[data-kind=\"unreachable\"][data-target={target}]')",
                     "the fault it set", args.timeout)
    browser.wait_for("document.body.innerText.includes('(fault)')", "the device marked unreachable by the fault",
                     args.timeout)
    report["fault"] = "unreachable"


def check_empty_pair(browser, args, report):
    """Filtered on a pair with no frames, the page shows no frames (none of the other pairs')."""
    rows = "document.querySelectorAll('#frames tbody tr').length"
    browser.wait_for(f"{rows} > 0", "the frame log", args.timeout)
    pair = json.dumps(args.empty_pair)
    browser.wait_for(f"[...document.getElementById('frame-pair').options].some(o => o.value === {pair})",
                     "the pair in the frame filter", args.timeout)
    report["framesBefore"] = browser.evaluate(rows)
    updates = browser.evaluate("Number(document.body.dataset.updates || 0)")
    browser.evaluate(f"const fp = document.getElementById('frame-pair'); fp.value = {pair}; fp.onchange(); true")
    browser.wait_for(f"Number(document.body.dataset.updates || 0) > {updates}", "the filtered stream's state", args.timeout)
    browser.wait_for(f"{rows} === 0", "an empty frame log for a pair with no frames", args.timeout)
    report["emptyPair"] = args.empty_pair


def check_pair_replaced(browser, args, report):
    """Filtered on a pair that is then replaced by another (the caller unpairs it and pairs a new
    one after 'loaded'), the pair list names the new pair, and keeps the filtered one, marked gone."""
    gone = json.dumps(args.pair_replaced)
    options = "[...document.getElementById('frame-pair').options]"
    browser.wait_for(f"{options}.some(o => o.value === {gone})", "the pair in the frame filter", args.timeout)
    browser.evaluate(f"const fp = document.getElementById('frame-pair'); fp.value = {gone}; fp.onchange(); true")
    print("loaded", flush=True)
    browser.wait_for(f"{options}.some(o => o.value && o.value !== {gone})", "the new pair in the frame filter", args.timeout)
    browser.wait_for(f"{options}.some(o => o.value === {gone} && o.textContent.includes('(gone)'))",
                     "the filtered pair marked gone", args.timeout)
    report["filter"] = browser.evaluate("document.getElementById('frame-pair').value")
    report["pairs"] = browser.evaluate(f"{options}.map(o => o.value).filter(v => v)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--item")
    parser.add_argument("--device")
    parser.add_argument("--refused", action="store_true",
                        help="the relay refuses the page's event stream: wait for the page to say so, print 'refused', "
                        "then wait for its retry to go live (the caller frees a place then); --item and --device unused")
    parser.add_argument("--live-item", help="after the page loaded, print 'loaded' and wait for this item to appear "
                        "without a reload (the caller queues it then)")
    parser.add_argument("--face", action="store_true", help="also wait for a watch face picture (decoded, not blank)")
    parser.add_argument("--empty-pair", help="filter the frame log on this pair, which has no frames, and wait for "
                        "the page to show none; --item and --device unused")
    parser.add_argument("--pair-replaced", help="filter the frame log on this pair, print 'loaded', then wait for "
                        "the list to name a new pair and keep this one marked gone (the caller replaces it); "
                        "--item and --device unused")
    parser.add_argument("--screenshot")
    parser.add_argument("--timeout", type=float, default=30)
    args = parser.parse_args()
    if not (args.refused or args.empty_pair or args.pair_replaced) and not (args.item and args.device):
        parser.error("--item and --device are required (unless --refused, --empty-pair or --pair-replaced)")
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if not binary:
        print(json.dumps({"ok": False, "error": "chromium is not installed (scripts/install-deps.sh installs it)"}))
        return 1
    browser = Chromium(binary)
    report = {"ok": False}
    try:
        browser.attach()
        browser.call("Page.enable")
        browser.call("Page.navigate", {"url": args.url})
        if args.refused:
            browser.wait_for("document.getElementById('status').textContent.includes('refused')",
                             "the page saying its event stream was refused", args.timeout)
            print("refused", flush=True)
            browser.wait_for("document.getElementById('status').textContent.startsWith('live')",
                             "the page's retry going live", args.timeout)
            report["refused"] = True
        elif args.empty_pair:
            check_empty_pair(browser, args, report)
        elif args.pair_replaced:
            check_pair_replaced(browser, args, report)
        else:
            check_console(browser, args, report)
        if args.screenshot:
            shot = browser.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
            with open(args.screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
            report["screenshot"] = args.screenshot
        report["ok"] = True
    except Exception as e:  # reported as JSON, exit 1
        report["error"] = str(e)
        try:
            report["page"] = browser.evaluate("document.body.innerText.slice(0, 2000)")
        except Exception:
            pass
    finally:
        browser.close()
    print(json.dumps(report))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
