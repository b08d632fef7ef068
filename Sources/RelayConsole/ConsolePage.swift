/// The console page: plain HTML, CSS and JavaScript served from the binary (no build step,
/// no external assets). It reads the token from its own URL, listens to the server-sent events
/// of `/console/api/events` (no polling: the relay pushes when something changed) and posts
/// faults to the JSON API.
enum ConsolePage {
    static let html = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>WatchRelay console</title>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <style>
        body{font:13px/1.4 system-ui,sans-serif;margin:0;background:#101418;color:#e6e6e6}
        header{padding:10px 16px;background:#1b2229;display:flex;gap:16px;align-items:baseline}
        header h1{font-size:16px;margin:0} #status{color:#8fa3b3}
        main{display:grid;grid-template-columns:1fr 1fr;gap:12px;padding:12px}
        section{background:#182028;border-radius:8px;padding:10px 12px;overflow:auto}
        h2{font-size:13px;margin:0 0 8px;color:#9fc3e6;text-transform:uppercase;letter-spacing:.05em}
        table{border-collapse:collapse;width:100%} td,th{padding:3px 6px;text-align:left;border-bottom:1px solid #26313b;vertical-align:top}
        th{color:#8fa3b3;font-weight:500} .on{color:#7bd88f} .off{color:#ff7a7a} .warn{color:#ffcf5c}
        #faces img{background:#000;border-radius:10px;margin:4px;max-width:100%}
        .mono{font-family:ui-monospace,monospace;font-size:12px} .pair{margin-bottom:14px}
        #frames td.preview{max-width:520px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
        form{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin-bottom:8px}
        select,input,button{background:#0f1418;color:#e6e6e6;border:1px solid #34414d;border-radius:4px;padding:3px 6px}
        button{cursor:pointer} .wide{grid-column:1 / span 2}
        </style></head>
        <body>
        <header><h1>WatchRelay console</h1><span id="status">connecting…</span></header>
        <main>
        <section id="pairs-section"><h2>Pairs and devices</h2><div id="pairs">no pairs yet</div></section>
        <section id="faults-section"><h2>Faults</h2>
        <form id="fault-form" onsubmit="return false">
        <select id="fault-target"></select>
        <select id="fault-kind">
        <option>unreachable</option><option>flap</option><option>delay</option><option>drop</option>
        <option>no-reply</option><option>complication-budget</option><option>disconnect</option><option>slow-writes</option>
        </select>
        <input id="fault-param" placeholder="ms / p / left" size="10">
        <button id="fault-set" type="button">Set</button><button id="fault-clear" type="button">Clear target</button>
        <button id="fault-clear-all" type="button">Clear all</button></form>
        <div id="fault-result" class="mono"></div>
        <table id="faults"><thead><tr><th>target</th><th>kind</th><th>param</th><th>since</th></tr></thead><tbody></tbody></table>
        <div id="fired" class="mono"></div>
        </section>
        <section class="wide" id="faces-section" hidden><h2>Watch faces</h2><div id="faces"></div></section>
        <section class="wide"><h2>Queues</h2><div id="queues">nothing queued</div></section>
        <section class="wide"><h2>Frames <select id="frame-pair"><option value="">all pairs</option></select></h2>
        <table id="frames"><thead><tr><th>#</th><th>time</th><th>dir</th><th>device</th><th>type</th><th>fault</th><th>frame</th></tr></thead><tbody></tbody></table>
        </section>
        </main>
        <script>
        "use strict";
        const token = new URLSearchParams(location.search).get("token") || "";
        const auth = {headers: {"Authorization": "Bearer " + token}};
        const $ = (id) => document.getElementById(id);
        const esc = (s) => String(s ?? "").replace(/[&<>"']/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;","\\"":"&quot;","'":"&#39;"}[c]));
        const yes = (b, t, f) => b ? `<span class="on">${t}</span>` : `<span class="off">${f}</span>`;
        let lastState = null;
        function age(ms) { return ms < 1000 ? ms + " ms" : ms < 60000 ? (ms / 1000).toFixed(1) + " s" : Math.round(ms / 60000) + " min"; }
        function renderPairs(s) {
          if (s.node && !s.node.leads) { $("pairs").innerHTML = `cluster node ${esc(s.node.id)} is an edge: it forwards its clients to the leading node, whose console shows every device`; return; }
          if (!s.pairs.length) { $("pairs").innerHTML = `no pairs yet (${s.unpairedConnections} unpaired connection(s))`; return; }
          $("pairs").innerHTML = s.pairs.map(p => `<div class="pair" data-pair="${esc(p.id)}"><div class="mono">${esc(p.id)} · complications left ${p.complicationsLeft}</div>
            <table><tr><th>role</th><th>name</th><th>presence</th><th>reachable</th><th>foreground</th><th>last seen</th></tr>
            ${p.devices.map(d => `<tr class="device" data-device="${esc(d.id)}"><td>${esc(d.role)}</td><td>${esc(d.name)}<div class="mono">${esc(d.id)}</div></td>
            <td>${yes(d.connected, "connected", "away")}</td><td>${yes(d.reachable, "reachable", "not reachable")}${d.forcedUnreachable ? ' <span class="warn">(fault)</span>' : ""}</td>
            <td>${d.role === "watch" ? yes(d.foreground, "foreground", "background") : "–"}</td><td class="mono">${esc(d.lastSeen ?? "–")}</td></tr>`).join("")}</table></div>`).join("");
        }
        function renderQueues(s) {
          const rows = [];
          for (const p of s.pairs) for (const d of p.directions) {
            rows.push(`<tr><td class="mono">${esc(p.id)}</td><td>${esc(d.from)} → ${esc(d.to)}</td><td>${d.count} held · last seq ${d.lastSeq} · ${d.pendingReplies} reply(s) owed</td></tr>`);
            for (const i of d.items) rows.push(`<tr class="item" data-item="${esc(i.id)}"><td></td><td class="mono">${esc(i.mode)} ${esc(i.id)}</td>
              <td class="mono">${esc(i.kind)} · ${i.size} B · age ${age(i.ageMs)} · seq ${i.seq ?? "–"}${i.outstanding ? ' · <span class="warn">outstanding</span>' : ""}</td></tr>`);
          }
          $("queues").innerHTML = rows.length ? `<table>${rows.join("")}</table>` : "nothing queued";
        }
        function renderFaults(s) {
          $("faults").tBodies[0].innerHTML = s.faults.map(f => `<tr class="fault" data-kind="${esc(f.kind)}" data-target="${esc(f.target)}"><td class="mono">${esc(f.target)}</td>
            <td>${esc(f.kind)}</td><td>${esc(f.ms ?? f.p ?? f.left ?? "")}</td><td class="mono">${esc(f.setAt)}</td></tr>`).join("");
          $("fired").textContent = "fired: " + (Object.entries(s.fired).map(([k, n]) => k + " " + n).join(", ") || "nothing yet") + ` · frames held ${s.heldFrames}`;
          const targets = [];
          for (const p of s.pairs) { targets.push("pair:" + p.id); for (const d of p.devices) targets.push("device:" + d.id); }
          for (const sel of [$("fault-target")]) {
            const keep = sel.value;
            if (sel.options.length !== targets.length || [...sel.options].some((o, i) => o.value !== targets[i])) {
              sel.innerHTML = targets.map(t => `<option value="${esc(t)}">${esc(t)}</option>`).join("");
              if (targets.includes(keep)) sel.value = keep;
            }
          }
          // Rebuilt when the pairs differ, not only their number (one replaced by another in one
          // push kept the old list). A pair the log is filtered on stays listed after it went,
          // marked: the stream is still filtered on it, and its frames are still in the log.
          const fp = $("frame-pair"), keep = fp.value, ids = s.pairs.map(p => p.id);
          const listed = keep && !ids.includes(keep) ? ids.concat([keep]) : ids;
          if (fp.options.length !== listed.length + 1 || listed.some((id, i) => fp.options[i + 1].value !== id)) {
            fp.innerHTML = `<option value="">all pairs</option>` + listed.map(i =>
              `<option value="${esc(i)}">${esc(i)}${ids.includes(i) ? "" : " (gone)"}</option>`).join("");
            fp.value = keep;
          }
        }
        let facesShown = "";
        function renderFaces(s) {
          $("faces-section").hidden = !s.faces.length;
          const key = s.faces.map(f => f.watch + f.at).join("|");
          if (key === facesShown) return;
          facesShown = key;
          // As images (data URIs): an SVG shown this way runs no script.
          $("faces").innerHTML = s.faces.map(f => `<figure class="face" data-watch="${esc(f.watch)}"><img alt="${esc(f.watch)}"
            src="data:image/svg+xml;charset=utf-8,${encodeURIComponent(f.svg)}"><figcaption class="mono">${esc(f.watch)} · ${esc(f.at.slice(11, 19))}</figcaption></figure>`).join("");
        }
        let shownFrames = [];
        function renderFrames(list, reset) {
          if (reset) shownFrames = [];
          const newest = shownFrames.length ? shownFrames[0].number : 0;
          shownFrames = list.filter(e => e.number > newest).concat(shownFrames).slice(0, 100);
          $("frames").tBodies[0].innerHTML = shownFrames.map(e => `<tr class="frame" data-number="${e.number}"><td>${e.number}</td><td class="mono">${esc(e.at.slice(11, 23))}</td><td>${e.direction === "in" ? "→ relay" : "relay →"}</td>
            <td>${esc(e.role ?? "link " + e.link)}</td><td>${esc(e.type)}</td><td class="warn">${esc(e.fault)}</td><td class="preview mono" title="${esc(e.preview)}">${esc(e.preview)}</td></tr>`).join("");
        }
        let events = null, updates = 0;
        function listen() {
          if (events) events.close();
          const pair = $("frame-pair").value;
          let reset = true;
          events = new EventSource("/console/api/events?token=" + encodeURIComponent(token) + (pair ? "&pair=" + encodeURIComponent(pair) : ""));
          events.addEventListener("state", (m) => {
            const s = JSON.parse(m.data);
            lastState = s; renderPairs(s); renderQueues(s); renderFaults(s);
            updates += 1;
            $("status").textContent = "live · " + new Date(s.now).toISOString().slice(11, 19) + " UTC";
            document.body.dataset.updates = updates;
          });
          events.addEventListener("faces", (m) => renderFaces({faces: JSON.parse(m.data)}));
          events.addEventListener("frames", (m) => { renderFrames(JSON.parse(m.data).frames, reset); reset = false; });
          events.onopen = () => { reset = true; };
          const mine = events;
          events.onerror = () => {
            if (mine.readyState !== EventSource.CLOSED) { $("status").textContent = "relay unreachable, reconnecting…"; return; }
            // Not a stream (the relay serves a limited number at once: 503): the browser gives up, the page retries.
            $("status").textContent = "the relay refused the event stream (too many console pages open?), retrying in 5 s";
            setTimeout(() => { if (events === mine) listen(); }, 5000);
          };
        }
        $("frame-pair").onchange = listen;
        async function post(path) {
          const r = await fetch(path, {method: "POST", headers: auth.headers});
          const body = await r.json();
          $("fault-result").textContent = r.ok ? (body.message ?? ("set " + body.kind + " on " + body.target)) : ("refused: " + body.message);
        }
        $("fault-set").onclick = () => {
          const kind = $("fault-kind").value, param = $("fault-param").value.trim();
          const name = {flap: "ms", delay: "ms", "slow-writes": "ms", drop: "p", "complication-budget": "left"}[kind];
          let q = "target=" + encodeURIComponent($("fault-target").value) + "&kind=" + kind;
          if (name && param) q += "&" + name + "=" + encodeURIComponent(param);
          post("/console/api/faults?" + q);
        };
        $("fault-clear").onclick = () => post("/console/api/faults/clear?target=" + encodeURIComponent($("fault-target").value));
        $("fault-clear-all").onclick = () => post("/console/api/faults/clear");
        listen();
        </script></body></html>
        """
}
