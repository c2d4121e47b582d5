// sortie's live operations page: the map drawn from the world, the fleet live over one stream, the flights with
// their progress and a stop each, the approvals waiting, the alerts. Plain browser JavaScript, no library, no
// network but this server. Every call carries the signed-in person's own token; nothing here decides: the
// authority does (flows/server/routes/ops.py says which routes). Text from the server is only ever set as text.
"use strict";

const KEY = "sortie.ops.token";
const SVG = "http://www.w3.org/2000/svg";
const M_PER_DEG = 111320;
const ACTIVE = new Set(["DISPATCHED", "LAUNCHED", "IN_FLIGHT", "PAUSED", "RECALLING", "LINK_LOST", "TURNAROUND"]);
const ALERTS = {"fleet.battery_low": "warn", "fleet.intrusion": "bad", "fleet.offline": "warn",
  "flight.alert": "warn", "flight.link_lost": "bad", "dispatch.failed": "bad", "dispatch.uncertain": "bad",
  "fleet.session": "info", "fleet.cleared": "info"};
const MAX_ALERTS = 50;

const S = {
  token: sessionStorage.getItem(KEY), me: null, map: null, origin: null, view: null,
  drones: new Map(), tracks: new Map(), flights: new Map(), progress: new Map(), planned: new Map(),
  ended: new Map(), said: new Map(), pending: [], alerts: [], stream: null, retry: 0, timers: {}, serverTime: null,
  shownRoute: null, cards: new Map(),
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) e.setAttribute(k, String(v));
  return e;
}

// ------------------------------------------------------------------ the authority, as the signed-in person

class Refused extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || `HTTP ${status}`);
    this.status = status; this.code = err.code || `HTTP_${status}`;
  }
}

async function tokenStillGood() {
  try { return (await fetch("/v1/whoami", {headers: {"Authorization": `Bearer ${S.token}`}})).ok; } catch (e) { return false; }
}

async function api(method, path, body) {
  const opts = {method, headers: {"Authorization": `Bearer ${S.token}`}};
  if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
  const res = await fetch(path, opts);
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (res.status === 401 && !(body && body.totp && await tokenStillGood())) {
    signOut("your token was refused: sign in again");  // (a refused one-time code is a 401 too: said where typed)
  }
  if (!res.ok) throw new Refused(res.status, data);
  return data;
}

// ------------------------------------------------------------------ signing in and out

function showSignIn(message) {
  $("room").hidden = true; $("signout").hidden = true; $("signin").hidden = false;
  $("who").textContent = ""; $("signin-error").textContent = message || "";
  $("token").value = ""; $("token").focus();
}

function signOut(message) {
  sessionStorage.removeItem(KEY); S.token = null; S.me = null;
  S.cards = new Map();  // the next person starts with no one else's typed code or answer
  if (S.stream) S.stream.abort();
  S.stream = null;
  setLink("off", "signed out");
  showSignIn(message);
}

async function signIn(token) {
  S.token = token.trim();
  let me;
  try {
    me = await api("GET", "/v1/whoami");
  } catch (e) {
    S.token = null;
    showSignIn(e.status === 401 ? "that token is not accepted by this server" : `cannot sign in: ${e.message}`);
    return;
  }
  sessionStorage.setItem(KEY, S.token);
  S.me = me;
  $("signin").hidden = true; $("room").hidden = false; $("signout").hidden = false;
  $("who").textContent = `${me.user}${me.name ? " · " + me.name : ""} (${(me.roles || []).join(", ")})`;
  await loadMap();
  refreshFlights(); refreshPending();
  openStream();
}

// ------------------------------------------------------------------ the live stream

function setLink(kind, text) {
  const l = $("link"); l.className = `link-state ${kind}`; l.textContent = text;
}

async function openStream() {
  if (!S.token) return;
  const ctrl = new AbortController();
  S.stream = ctrl;
  try {
    const res = await fetch("/v1/ops/stream", {headers: {"Authorization": `Bearer ${S.token}`}, signal: ctrl.signal});
    if (res.status === 401) { signOut("your token was refused: sign in again"); return; }
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    setLink("live", "live");
    S.retry = 0;
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buf += dec.decode(value, {stream: true});
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const chunk = buf.slice(0, i); buf = buf.slice(i + 2);
        onChunk(chunk);
      }
    }
  } catch (e) {
    if (ctrl.signal.aborted) return;
  }
  if (S.stream !== ctrl || !S.token) return;
  S.retry = Math.min(S.retry + 1, 5);
  setLink("off", "reconnecting…");
  setTimeout(openStream, 1000 * S.retry);
}

function onChunk(chunk) {
  let kind = "message", data = "";
  for (const line of chunk.split("\n")) {
    if (line.startsWith(":")) continue;
    if (line.startsWith("event:")) kind = line.slice(6).trim();
    else if (line.startsWith("data:")) data += line.slice(5).trim();
  }
  if (!data) return;
  let payload;
  try { payload = JSON.parse(data); } catch (e) { return; }
  onEvent(kind, payload);
}

function later(name, fn, ms) {
  clearTimeout(S.timers[name]);
  S.timers[name] = setTimeout(fn, ms);
}

function onEvent(kind, d) {
  if (kind === "hello") return;
  if (kind === "session.ended") { signOut(`signed out: ${d.reason}`); return; }
  if (kind === "fleet") { onFleet(d); return; }
  if (kind.startsWith("approval.") || kind.startsWith("draft.") || kind.startsWith("request.")) {
    later("pending", refreshPending, 300);
  }
  if (kind.startsWith("draft.") || kind.startsWith("dispatch.") || kind.startsWith("flight.")) {
    later("flights", refreshFlights, 300);
  }
  if (kind === "flight.progress") { S.progress.set(d.draft_id, d); renderFlights(); }
  if (kind === "flight.finished") {
    S.ended.set(d.draft_id, d);
    addAlert(d.state === "SUCCEEDED" ? "info" : "warn", `${d.draft_id} v${d.version} ended ${d.state}` +
      (d.reason ? `: ${d.reason}` : ""));
  }
  if (ALERTS[kind]) addAlert(ALERTS[kind], alertText(kind, d));
}

function alertText(kind, d) {
  const who = d.drone_id || (d.draft_id ? `${d.draft_id} v${d.version}` : "");
  const what = {"fleet.battery_low": `battery low: ${d.battery_pct ?? "?"} %`,
    "fleet.offline": `offline${d.fault ? ": " + d.fault.code + " — " + d.fault.message : ""}`,
    "fleet.intrusion": `intrusion (${d.kind}): ${d.message || ""}`}[kind];
  return `${who} ${what || kind.replace(".", " ") + (d.message ? ": " + d.message : d.reason ? ": " + d.reason : "")}`;
}

function addAlert(level, text) {
  const t = S.serverTime ? S.serverTime.slice(11, 19) : new Date().toISOString().slice(11, 19);
  S.alerts.unshift({level, text, t});
  S.alerts.length = Math.min(S.alerts.length, MAX_ALERTS);
  renderAlerts();
}

// ------------------------------------------------------------------ the fleet

function onFleet(d) {
  S.serverTime = d.server_time;
  $("clock").textContent = d.server_time ? d.server_time.replace("T", " ").slice(0, 19) : "";
  for (const row of d.drones) {
    const was = S.drones.get(row.id);
    S.drones.set(row.id, row);
    if (!row.armed || row.lon === null || row.lat === null) continue;
    let track = S.tracks.get(row.id);
    if (!track || (was && !was.armed)) { track = []; S.tracks.set(row.id, track); }
    const last = track[track.length - 1];
    if (!last || metres(last, [row.lon, row.lat]) >= 1) track.push([row.lon, row.lat, row.alt_m]);
  }
  renderDrones(); renderFleet(); renderTracks(); renderFlights();
}

function metres(a, b) {
  const dx = (b[0] - a[0]) * M_PER_DEG * Math.cos(a[1] * Math.PI / 180), dy = (b[1] - a[1]) * M_PER_DEG;
  return Math.hypot(dx, dy);
}

function fmt(v, digits, unit) {
  return v === null || v === undefined ? "—" : `${Number(v).toFixed(digits)}${unit || ""}`;
}

function renderFleet() {
  const body = $("fleet").tBodies[0];
  body.replaceChildren(...[...S.drones.values()].map((r) => el("tr", {"data-id": r.id, class: `s-${r.status}`},
    el("td", null, r.id), el("td", null, r.status), el("td", null, r.mode || "—"),
    el("td", {class: r.battery_pct !== null && r.battery_pct < 30 ? "low" : null}, fmt(r.battery_pct, 0, " %")),
    el("td", null, fmt(r.alt_m, 0, " m")),
    el("td", {title: r.fault ? r.fault.message : ""}, r.fault ? r.fault.code : (r.source === "live" ? "live" : "file")))));
}

// ------------------------------------------------------------------ the map

function project(lon, lat) {
  const [lon0, lat0] = S.origin;
  return [(lon - lon0) * M_PER_DEG * Math.cos(lat0 * Math.PI / 180), (lat0 - lat) * M_PER_DEG];
}

function pathOf(rings) {
  return rings.map((ring) => ring.map(([lon, lat], i) => {
    const [x, y] = project(lon, lat);
    return `${i ? "L" : "M"}${x.toFixed(1)},${y.toFixed(1)}`;
  }).join("") + "Z").join("");
}

function lineOf(points) {
  return points.map(([lon, lat], i) => {
    const [x, y] = project(lon, lat);
    return `${i ? "L" : "M"}${x.toFixed(1)},${y.toFixed(1)}`;
  }).join("");
}

async function loadMap() {
  const m = await api("GET", "/v1/ops/map");
  S.map = m;
  const b = m.bounds || [24.94, 60.16, 24.96, 60.18];
  S.origin = [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];
  $("world").textContent = m.world;
  $("attribution").textContent = m.attribution || "";
  const regions = $("l-regions"), zones = $("l-zones"), lanes = $("l-lanes");
  regions.replaceChildren(...m.regions.flatMap((r) => r.polygons.map((p) => {
    const e = svg("path", {d: pathOf(p), class: "region", "data-id": r.id});
    e.append(svg("title")); e.firstChild.textContent = `${r.id} — ${r.name} (${r.tenant})`;
    return e;
  })));
  zones.replaceChildren(...m.zones.flatMap((z) => z.shapes.map((s) => {
    let e;
    if (s.circle) {
      const [x, y] = project(s.circle.lon, s.circle.lat);
      e = svg("circle", {cx: x.toFixed(1), cy: y.toFixed(1), r: s.circle.radius_m});
    } else {
      e = svg("path", {d: s.polygons.map(pathOf).join("")});
    }
    e.setAttribute("class", `zone r-${z.restriction}${z.applies_now ? "" : " inactive"}`);
    e.setAttribute("data-id", z.id);
    e.append(svg("title"));
    e.firstChild.textContent = `${z.id} ${z.name}: ${z.restriction}${z.applies_now ? "" : " (not now)"} — ${z.message}`;
    return e;
  })));
  lanes.replaceChildren(...m.lanes.map((l) => svg("path", {d: lineOf(l.line), class: "lane", "data-id": l.id})));
  fit();
}

function fit() {
  if (!S.map) return;
  const b = S.map.bounds || [24.94, 60.16, 24.96, 60.18];
  const [x0, y1] = project(b[0], b[1]), [x1, y0] = project(b[2], b[3]);
  const pad = 0.08 * Math.max(x1 - x0, y1 - y0) + 50;
  setView(x0 - pad, y0 - pad, x1 - x0 + 2 * pad, y1 - y0 + 2 * pad);
}

function setView(x, y, w, h) {
  const box = $("map").getBoundingClientRect();
  const aspect = box.width > 0 && box.height > 0 ? box.width / box.height : 1.4;
  if (w / h > aspect) { const nh = w / aspect; y -= (nh - h) / 2; h = nh; } else { const nw = h * aspect; x -= (nw - w) / 2; w = nw; }
  S.view = {x, y, w, h};
  $("map").setAttribute("viewBox", `${x.toFixed(1)} ${y.toFixed(1)} ${w.toFixed(1)} ${h.toFixed(1)}`);
  renderScaled();
}

function mpp() {
  const box = $("map").getBoundingClientRect();
  return S.view && box.width > 0 ? S.view.w / box.width : 1;
}

function zoom(factor, cx, cy) {
  const v = S.view;
  if (!v) return;
  cx = cx ?? v.x + v.w / 2; cy = cy ?? v.y + v.h / 2;
  setView(cx - (cx - v.x) * factor, cy - (cy - v.y) * factor, v.w * factor, v.h * factor);
}

function toMap(evt) {
  const box = $("map").getBoundingClientRect(), v = S.view;
  return [v.x + (evt.clientX - box.left) / box.width * v.w, v.y + (evt.clientY - box.top) / box.height * v.h];
}

function renderScaled() {
  renderDocks(); renderDrones();
}

function renderDocks() {
  if (!S.map) return;
  const k = mpp();
  $("l-labels").replaceChildren(...S.map.regions.map((r) => {
    const [x, y] = project(r.label[0], r.label[1]);
    const t = svg("text", {class: "region-label", transform: `translate(${x.toFixed(1)} ${y.toFixed(1)}) scale(${k})`});
    t.textContent = r.id;
    return t;
  }));
  $("l-docks").replaceChildren(...S.map.docks.map((d) => {
    const [x, y] = project(d.lon, d.lat);
    const g = svg("g", {class: "dock", "data-id": d.id, transform: `translate(${x.toFixed(1)} ${y.toFixed(1)}) scale(${k})`});
    g.append(svg("rect", {x: -6, y: -6, width: 12, height: 12}));
    const t = svg("text", {x: -9, y: 16, "text-anchor": "end"}); t.textContent = d.id; g.append(t);
    const title = svg("title"); title.textContent = `${d.id} — ${d.name}`; g.append(title);
    return g;
  }));
}

function dockOf(row) {
  return S.map && S.map.docks.find((d) => d.id === row.dock);
}

function renderDrones() {
  if (!S.map) return;
  const k = mpp(), out = [], placedAt = [];
  for (const r of S.drones.values()) {
    let lon = r.lon, lat = r.lat, placed = true;
    if (lon === null || lat === null) {
      const d = dockOf(r);
      if (!d) continue;
      lon = d.lon; lat = d.lat; placed = false;  // no live position: drawn hollow at its dock
    }
    const [x, y] = project(lon, lat);
    const g = svg("g", {class: `drone s-${r.status}${placed ? "" : " unplaced"}`, "data-id": r.id,
      "data-lon": lon, "data-lat": lat, transform: `translate(${x.toFixed(1)} ${y.toFixed(1)}) scale(${k})`});
    const arrow = svg("path", {d: "M0,-10 L7,8 L0,4 L-7,8 Z",
      transform: `rotate(${r.heading_deg === null || r.heading_deg === undefined ? 0 : r.heading_deg})`});
    g.append(arrow);
    const stacked = placedAt.filter(([px, py]) => Math.hypot(px - x, py - y) < 14 * k).length;  // drones on one dock
    placedAt.push([x, y]);
    const dy = stacked * 26;
    const label = svg("text", {x: 11, y: dy - 4});
    label.textContent = r.id;
    const sub = svg("text", {x: 11, y: dy + 9, class: "sub"});
    sub.textContent = `${fmt(r.battery_pct, 0, "%")} ${r.armed ? fmt(r.alt_m, 0, "m") + " " : ""}${r.mode || r.status}`;
    g.append(label, sub);
    const title = svg("title");
    title.textContent = `${r.id} ${r.status} ${r.mode || ""} battery ${fmt(r.battery_pct, 0, " %")}` +
      ` altitude ${fmt(r.alt_m, 1, " m")} heading ${fmt(r.heading_deg, 0, "°")} speed ${fmt(r.speed_mps, 1, " m/s")}` +
      (r.fault ? ` — ${r.fault.code}: ${r.fault.message}` : "");
    g.append(title);
    out.push(g);
  }
  $("l-drones").replaceChildren(...out);
}

function renderTracks() {
  const planned = [];
  for (const [draft, lines] of S.planned) {
    const shown = S.flights.has(draft) || S.shownRoute === draft;
    if (!shown) continue;
    for (const l of lines) {
      planned.push(svg("path", {d: lineOf(l.coords), class: `planned${S.shownRoute === draft && !S.flights.has(draft) ? " proposed" : ""}`,
        "data-draft": draft, "data-drone": l.drone}));
    }
  }
  $("l-planned").replaceChildren(...planned);
  $("l-flown").replaceChildren(...[...S.tracks.entries()].filter(([, t]) => t.length > 1)
    .map(([id, t]) => svg("path", {d: lineOf(t), class: "flown", "data-drone": id})));
}

// ------------------------------------------------------------------ flights

async function refreshFlights() {
  let data;
  try { data = await api("GET", "/v1/ops/flights"); } catch (e) { return; }
  const now = new Set();
  for (const f of data.flights) {
    now.add(f.draft_id);
    const was = S.flights.get(f.draft_id);
    S.flights.set(f.draft_id, f);
    for (const [drone, t] of Object.entries(f.flown || {})) {
      const mine = S.tracks.get(drone);
      if (!mine || mine.length < t.length) S.tracks.set(drone, t);
    }
    if (!was || was.version !== f.version) loadPlanned(f.draft_id, f.version);
  }
  for (const [id, f] of S.flights) {
    if (!now.has(id) && !S.ended.has(id)) S.ended.set(id, {draft_id: id, version: f.version, state: "ENDED"});
  }
  renderFlights(); renderTracks();
}

async function loadPlanned(draftId, version) {
  try {
    const out = await api("GET", `/v1/drafts/${encodeURIComponent(draftId)}/export?format=geojson&version=${version}`);
    const text = new TextDecoder().decode(Uint8Array.from(atob(out.content_b64), (c) => c.charCodeAt(0)));
    const gj = JSON.parse(text);
    const lines = [], points = {};
    for (const f of gj.features) {
      const p = f.properties || {};
      if (p.role === "sortie" && f.geometry.type === "LineString") lines.push({drone: p.drone_id, sortie: p.sortie, coords: f.geometry.coordinates, duration_s: p.duration_s});
      if (p.role === "waypoint") points[p.sortie] = Math.max(points[p.sortie] ?? 0, p.seq + 1);
    }
    for (const l of lines) l.items = points[l.sortie] ?? null;
    S.planned.set(draftId, lines);
    renderTracks(); renderFlights();
  } catch (e) { /* the plan shows once the export answers */ }
}

function progressOf(f) {
  const p = S.progress.get(f.draft_id);
  if (p) return p;
  // Before the follower's first progress event: the vehicle's own mission item against the planned items.
  const lines = S.planned.get(f.draft_id) || [];
  for (const l of lines) {
    const r = S.drones.get(l.drone);
    if (!r || !r.armed || r.mission_seq === null || r.mission_seq === undefined || !l.items) continue;
    const pct = Math.min(100, 100 * r.mission_seq / Math.max(1, l.items - 1));
    return {drone_id: l.drone, item: r.mission_seq, items: l.items, pct, battery_pct: r.battery_pct,
      time_left_s: l.duration_s ? l.duration_s * (1 - pct / 100) : null, sortie: l.sortie, sorties: lines.length};
  }
  return null;
}

function duration(s) {
  if (s === null || s === undefined) return "—";
  s = Math.max(0, Math.round(s));
  return s >= 60 ? `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s` : `${s} s`;
}

function renderFlights() {
  const box = $("flights");
  const cards = [];
  for (const [id, f] of S.flights) {
    const end = S.ended.get(id);
    const state = end ? end.state : shownState(f, f.state);
    const p = end ? null : progressOf(f);  // an ended flight shows its end, not its last progress
    const card = el("div", {class: `flight st-${state}`, "data-draft": id},
      el("div", {class: "title"}, `${id} v${f.version}`, el("span", {class: "state"}, state)),
      el("div", {class: "what"}, `${f.region_id || "area"} · ${f.drones.join(", ")} · ${f.mission_type || ""}`));
    if (p) {
      const bar = el("div", {class: "bar"});
      bar.style.width = `${Math.max(0, Math.min(100, p.pct ?? 0)).toFixed(0)}%`;
      card.append(el("div", {class: "progress", title: `${fmt(p.pct, 0, " %")}`}, bar),
        el("div", {class: "figures"},
          el("span", null, `item ${p.reached ?? p.item ?? "—"}/${p.items ?? "—"}`),  // items reached of the planned ones
          el("span", null, fmt(p.pct, 0, " %")),
          el("span", null, `sortie ${p.sortie !== undefined && p.sortie !== null ? p.sortie + 1 : "—"}/${p.sorties ?? "—"}`),
          el("span", null, `left ${duration(p.time_left_s)}`),
          el("span", {class: "battery"}, `battery ${fmt(p.battery_pct, 0, " %")} → landing ${fmt(p.projected_landing_pct, 0, " %")}` +
            (p.reserve_pct !== undefined && p.reserve_pct !== null ? ` (reserve ${fmt(p.reserve_pct, 0, " %")})` : ""))));
    }
    if (end) {
      card.append(el("div", {class: "ended"}, end.reason ? `${state}: ${end.reason}` : state),
        el("button", {type: "button", class: "dismiss", onclick: () => { S.flights.delete(id); S.ended.delete(id); renderFlights(); renderTracks(); }}, "Dismiss"));
    } else if (ACTIVE.has(state)) {
      card.append(stopControls(f, state));
    }
    const said = S.said.get(id);
    if (said) card.append(el("div", {class: `result ${said.ok ? "ok" : "bad"}`, role: "status"}, said.text));
    cards.push(card);
  }
  if (!cards.length) cards.push(el("p", {class: "none"}, "No flight dispatched or in the air."));
  const focus = document.activeElement && document.activeElement.closest && document.activeElement.closest(".flight");
  if (focus && box.contains(focus)) return;  // never redraw under a confirming hand
  box.replaceChildren(...cards);
}

function held(f) {
  // Held in its mission: the vehicles' own telemetry says so (a pause is a flag on the flight, not a ledger state).
  return f.drones.some((d) => (S.drones.get(d) || {}).paused === true);
}

function shownState(f, state) {
  return state === "IN_FLIGHT" && held(f) ? "PAUSED" : state;
}

function stopControls(f, state) {
  const wrap = el("div", {class: "actions"});
  const ask = (label, action, body) => el("button", {type: "button", class: `stop ${action}`, "data-action": action,
    onclick: () => confirmStop(wrap, f, label, action, body)}, label);
  wrap.append(ask("Recall", "recall", {land_here: false}), ask("Land here", "land", {land_here: true}));
  if (state === "PAUSED") wrap.append(ask("Resume", "resume", {}));
  else if (state !== "RECALLING") wrap.append(ask("Pause", "pause", {}));  // a recall is not held nor resumed
  return wrap;
}

// A stop (Recall, Land here, Pause) is made as the signed-in person, proven by their own token, as `sortie recall`
// is: a click to confirm and no one-time code, so it never waits on a code window (a code already used for an
// approval in the same 30 s step would be refused as a replay) and no code lockout can hold it. It only ever
// brings a vehicle home, down or to a hold. Resume sends it back to work: that asks for the one-time code.
const NEEDS_CODE = new Set(["resume"]);

function confirmStop(wrap, f, label, action, body) {
  const needsCode = NEEDS_CODE.has(action);
  const code = needsCode ? el("input", {class: "code stop-code", inputmode: "numeric", pattern: "[0-9]{6}",
    maxlength: 6, placeholder: "one-time code", "aria-label": "your one-time code", autocomplete: "one-time-code"})
    : null;
  const said = el("span", {class: "result bad", role: "status"});
  const go = () => stop(f, label, action, body, code ? code.value : null, said);
  if (code) code.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); go(); } });
  const yes = el("button", {type: "button", class: "stop confirm", "data-action": `confirm-${action}`, onclick: go},
    `${label}: confirm`);
  const no = el("button", {type: "button", class: "cancel", onclick: () => renderFlightsNow()}, "Cancel");
  wrap.replaceChildren(el("span", {class: "ask"}, `${label} ${f.draft_id} (${f.drones.join(", ")})?`), code, yes, no,
    said);
  (code || yes).focus();
}

function renderFlightsNow() {
  if (document.activeElement) document.activeElement.blur();
  renderFlights();
}

async function stop(f, label, action, body, code, said) {
  if (code !== null) {
    code = code.trim();
    if (!/^[0-9]{6}$/.test(code)) { said.textContent = "type your 6-digit one-time code"; return; }
  }
  const path = action === "land" ? "recall" : action;
  const t0 = performance.now();
  const reason = `${label.toLowerCase()} from the operations page by ${S.me ? S.me.user : "?"}`;
  const proof = code === null ? {} : {totp: {user: S.me.user, code}};
  let out;
  try {
    out = await api("POST", `/v1/drafts/${encodeURIComponent(f.draft_id)}/${path}`,
      {version: f.version, reason, ...proof, ...body});
  } catch (e) {
    if (e.code === "UNAUTHENTICATED" || e.code === "TOO_MANY_ATTEMPTS") {  // the code: say so where it was typed
      said.textContent = `${e.code}: ${e.message}`;
      return;
    }
    S.said.set(f.draft_id, {ok: false, text: `${label} refused: ${e.code} — ${e.message}`});
    renderFlightsNow();
    return;
  }
  const ms = performance.now() - t0;
  S.said.set(f.draft_id, {ok: true, text: `${label}: ${out.state || out.outcome || "sent"} — answered in ${(ms / 1000).toFixed(1)} s`});
  renderFlightsNow();
  later("flights", refreshFlights, 200);
}

// ------------------------------------------------------------------ approvals

async function refreshPending() {
  let data;
  try { data = await api("GET", "/v1/pending"); } catch (e) { return; }
  S.pending = data.pending || [];
  renderPending();
}

function renderPending() {
  const box = $("approvals");
  const typing = document.activeElement && document.activeElement.tagName === "INPUT" &&
    document.activeElement.closest(".approval");
  if (typing && box.contains(typing)) return;  // someone is typing a code (a clicked button does not hold the list)
  const me = S.me ? S.me.user : null;
  const kept = new Map();
  const cards = S.pending.map((p) => {
    const mine = (p.approvers || []).includes(me);
    const key = `${p.draft_id}/${p.version}/${mine}`;
    // a card still waiting is the same element, updated: a click on it, a code typed in it or the answer to its
    // decision is never lost to the list being drawn again (another request came in meanwhile)
    let card = S.cards.get(key);
    if (card) {
      card.querySelector(".left").textContent = left(p);
      card.querySelector("button.route").textContent = S.shownRoute === p.draft_id ? "Hide route" : "Show route";
    } else {
      card = pendingCard(p, mine);
    }
    kept.set(key, card);
    return card;
  });
  S.cards = kept;
  if (!cards.length) cards.push(el("p", {class: "none"}, "Nothing waits for a decision."));
  if (cards.length !== box.children.length || cards.some((c, i) => box.children[i] !== c)) box.replaceChildren(...cards);
}

function pendingCard(p, mine) {
  const card = el("div", {class: "approval", "data-draft": p.draft_id},
    el("div", {class: "title"}, `${p.draft_id} v${p.version}`, el("span", {class: "left"}, left(p))),
    el("div", {class: "what"}, `“${p.request_text}” — ${p.region_id || "area"}, requested by ${p.requested_by}`),
    el("button", {type: "button", class: "route", onclick: () => showRoute(p)}, S.shownRoute === p.draft_id ? "Hide route" : "Show route"));
  if (!mine) {
    card.append(el("div", {class: "who"}, `may approve: ${(p.approvers || []).join(", ") || "nobody"}`));
    return card;
  }
  const code = el("input", {class: "code", inputmode: "numeric", pattern: "[0-9]{6}", maxlength: 6, placeholder: "one-time code",
    "aria-label": "your one-time code", autocomplete: "one-time-code"});
  const reason = el("input", {class: "reason", placeholder: "reason to reject", "aria-label": "reason to reject", maxlength: 2000});
  const said = el("div", {class: "result", role: "status"});
  card.append(el("div", {class: "decide"}, code,
    el("button", {type: "button", class: "approve", onclick: () => decide(p, "approve", code.value, reason.value, said)}, "Approve")),
  el("div", {class: "decide"}, reason,
    el("button", {type: "button", class: "reject", onclick: () => decide(p, "reject", code.value, reason.value, said)}, "Reject")),
  said);
  return card;
}

function left(p) {
  const seconds = S.serverTime ? (Date.parse(p.deadline) - Date.parse(S.serverTime)) / 1000 : p.seconds_left;
  return seconds < 0 ? `overdue ${duration(-seconds)}` : `${duration(seconds)} left`;
}

async function showRoute(p) {
  S.shownRoute = S.shownRoute === p.draft_id ? null : p.draft_id;
  if (S.shownRoute && !S.planned.has(p.draft_id)) await loadPlanned(p.draft_id, p.version);
  renderTracks(); renderPending();
}

async function decide(p, what, code, reason, said) {
  code = (code || "").trim(); reason = (reason || "").trim();
  if (what === "approve" && !/^[0-9]{6}$/.test(code)) { said.textContent = "type your 6-digit one-time code"; return; }
  if (what === "reject" && !reason) { said.textContent = "say why you reject it"; return; }
  const totp = /^[0-9]{6}$/.test(code) ? {user: S.me.user, code} : undefined;
  const body = what === "approve"
    ? {version: p.version, plan_hash: p.plan_hash, comment: "approved on the operations page", totp}
    : {version: p.version, reason, totp};
  try {
    const out = await api("POST", `/v1/drafts/${encodeURIComponent(p.draft_id)}/${what}`, body);
    said.className = "result ok";
    said.textContent = `${out.status}${out.resumed_run ? " — the waiting run was woken" : ""}`;
  } catch (e) {
    said.className = "result bad";
    said.textContent = `${e.code}: ${e.message}`;
    return;
  }
  if (document.activeElement) document.activeElement.blur();
  later("pending", refreshPending, 800);
}

// ------------------------------------------------------------------ alerts

function renderAlerts() {
  $("alerts-count").textContent = S.alerts.length ? String(S.alerts.length) : "";
  $("alerts").replaceChildren(...S.alerts.map((a) => el("li", {class: `alert ${a.level}`}, el("time", null, a.t), " ", a.text)));
}

// ------------------------------------------------------------------ start

function start() {
  $("signin-form").addEventListener("submit", (e) => { e.preventDefault(); signIn($("token").value); });
  $("signout").addEventListener("click", () => signOut(""));
  $("fit").addEventListener("click", fit);
  $("zoom-in").addEventListener("click", () => zoom(1 / 1.5));
  $("zoom-out").addEventListener("click", () => zoom(1.5));
  const map = $("map");
  map.addEventListener("wheel", (e) => { e.preventDefault(); const [x, y] = toMap(e); zoom(e.deltaY > 0 ? 1.2 : 1 / 1.2, x, y); },
    {passive: false});
  let drag = null;
  map.addEventListener("pointerdown", (e) => { drag = {x: e.clientX, y: e.clientY, v: {...S.view}}; map.setPointerCapture(e.pointerId); });
  map.addEventListener("pointermove", (e) => {
    if (!drag || !S.view) return;
    const k = mpp();
    setView(drag.v.x - (e.clientX - drag.x) * k, drag.v.y - (e.clientY - drag.y) * k, drag.v.w, drag.v.h);
  });
  map.addEventListener("pointerup", () => { drag = null; });
  window.addEventListener("resize", () => { if (S.view) setView(S.view.x, S.view.y, S.view.w, S.view.h); });
  setInterval(() => { if (S.pending.length) renderPending(); }, 15000);
  if (S.token) signIn(S.token); else showSignIn("");
}

document.addEventListener("DOMContentLoaded", start);
