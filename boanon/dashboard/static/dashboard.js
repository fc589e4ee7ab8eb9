// BoAnon dashboard: polls the run's JSON views and draws them (Chart.js, Cytoscape + dagre).
// Everything the page shows comes from /api/run, /api/graph and /api/models; nothing is computed
// here beyond layout, sorting and filtering.
"use strict";

const COLORS = { init: "#868e96", structured: "#2f6fd6", gp: "#e8590c", random: "#ae3ec9", user: "#0ca678",
  "multitask-gp": "#f08c00" };
const STATUS_COLORS = { done: "#2f9e44", stopped: "#e8890c", failed: "#d6336c", interrupted: "#868e96", running: "#1c7ed6" };
const ROLE_STYLE = { param: ["#cfe2ff", "#3d6bb3", "round-rectangle"], metric: ["#eeeeee", "#777777", "ellipse"],
  objective: ["#f8c4c0", "#b3403d", "octagon"] };
const state = { study: 0, studies: null, studiesText: "", run: null, runText: "", objective: 0, statusFilter: "all", search: "", sort: { key: "id", asc: true },
  selectedTrial: null, extraColumns: [], brush: {}, logScale: false, sliceParam: null, scope: "auto", scopeNode: null, graphKey: null, graph: null, folded: new Set(), foldedInit: false,
  models: null, modelsKey: null, fitNode: null, effectParam: null, charts: {}, cy: null };
window.boanon = state;  // for the browser test and for poking at the data from the console

// --- helpers ----------------------------------------------------------------------------------------
const $ = (sel) => document.querySelector(sel);
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined) e.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}
function fmt(v) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v !== "number") return String(v);
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return (a !== 0 && (a < 1e-3 || a >= 1e6)) ? v.toExponential(3) : String(Number(v.toPrecision(4)));
}
// units (declared in the space or objective, else read off the name: boanon.units), the same everywhere
const unitOf = (name) => ((state.run && state.run.summary.units) || {})[name];
const withUnit = (name) => unitOf(name) ? `${name} (${unitOf(name)})` : name;
const fmtU = (name, v) => fmt(v) + (typeof v === "number" && unitOf(name) ? ` ${unitOf(name)}` : "");
// "1 lane", "3 lanes": every count the page writes goes through here ("1 lanes" did not)
const count = (n, noun, nouns = `${noun}s`) => `${n} ${n === 1 ? noun : nouns}`;
const ROLE_NOUN = { param: "parameter", metric: "metric", objective: "objective" };
function fmtSeconds(s) {
  if (s === null || s === undefined) return "–";
  if (s < 60) return `${fmt(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}
async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store" });
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  const text = await r.text();
  return { text, data: JSON.parse(text), date: r.headers.get("Date") };
}
// the views of the study picked (several stores served side by side: boanon dashboard A.db B.db)
const apiUrl = (path) => path + (path.includes("?") ? "&" : "?") + `study=${state.study}`;
const logsUrl = (trial, file) => `${state.study ? `/logs-${state.study}` : "/logs"}/${encodeURIComponent(trial)}/${encodeURIComponent(file)}`;
// the data point under a Chart.js click
const clicked = (chart, items) => items.length ? chart.data.datasets[items[0].datasetIndex].data[items[0].index] : null;
function chart(id, config) {
  if (state.charts[id]) { const c = state.charts[id]; c.data = config.data; c.options = config.options; c.update("none"); return c; }
  state.charts[id] = new Chart(document.getElementById(id), config);
  return state.charts[id];
}
function setTabs(container, items, current, onPick) {
  container.replaceChildren(...items.map(([key, label]) =>
    el("button", { class: key === current ? "on" : "", "data-key": key, onclick: () => onPick(key) }, label)));
}
Chart.defaults.font.size = 11;
Chart.defaults.animation = false;

// --- header -----------------------------------------------------------------------------------------
function drawHeader(run) {
  const s = run.summary;
  $("#store").textContent = s.store;
  if (!s.recorded) { $("#run-facts").replaceChildren("no run recorded in this store yet"); return; }
  const c = s.counts;
  const facts = [
    el("span", {}, "strategy ", el("b", {}, s.strategy), ", seed ", s.seed, ", ", s.n_params, " parameters"),
    el("span", {}, ...Object.entries(c).flatMap(([k, n], i) => [i ? " · " : "", el("b", {}, n), ` ${k}`])),
    el("span", {}, "elapsed ", el("b", {}, fmtSeconds(s.elapsed_s))),
  ];
  const a = s.activity;
  if (a) {  // what the tuning process does now (it records it in the store)
    const since = Math.max(0, (Date.now() - Date.parse(a.since)) / 1000);
    const text = a.killed ? "the tuning process has ended (killed?)"
      : a.state === "proposing" ? `computing a proposal… (${fmtSeconds(Math.round(since))})`
      : a.state === "finished" ? "run finished" : a.state;
    facts.push(el("span", { id: "activity", class: a.state === "proposing" ? "busy" : "" }, el("b", {}, text)));
  }
  for (const o of s.objectives) {
    const b = s.best[o.name];
    facts.push(el("span", {}, `best ${o.name} (${o.direction === "minimize" ? "min" : "max"}) `,
      el("b", {}, b ? fmtU(o.name, b.value) : "–"), b ? ` in ${b.trial}` : ""));
  }
  $("#run-facts").replaceChildren(...facts);
}

// --- best so far --------------------------------------------------------------------------------------
function drawConvergence(run) {
  const conv = run.convergence;
  if (!conv.length) return;
  if (state.objective >= conv.length) state.objective = 0;
  setTabs($("#objective-tabs"), conv.length > 1 ? conv.map((c, i) => [i, c.objective]) : [], state.objective, pickObjective);
  const c = conv[state.objective];
  const xs = c.points.map((p) => p.x);
  const [x0, x1] = [Math.min(0, ...xs), Math.max(1, ...xs)];
  const bySurrogate = {};
  for (const p of c.points) (bySurrogate[p.surrogate || "?"] ||= []).push(p);
  const datasets = Object.entries(bySurrogate).map(([name, pts]) => ({
    type: "scatter", label: `trials: ${name}`, data: pts, parsing: false, order: 2,
    pointRadius: 4.5, pointHoverRadius: 7,
    pointStyle: pts.map((p) => !p.feasible ? "crossRot" : "circle"),
    backgroundColor: pts.map((p) => p.status === "stopped" ? "rgba(255,255,255,0.9)" : COLORS[name] || "#495057"),
    borderColor: COLORS[name] || "#495057", borderWidth: 1.5,
  }));
  // Chart.js's "before" is matplotlib's where="post": the old best holds up to the trial that improves
  // on it ("after" drew the drop at the trial before, showing a value before it was measured)
  datasets.push({ type: "line", label: "best so far", data: c.best, parsing: false, stepped: "before",
    borderColor: "#1f2933", borderWidth: 2, pointRadius: 0, order: 1 });
  if (c.default !== null) {
    datasets.push({ type: "line", label: `default configuration (${c.default_trial})`, parsing: false,
      data: [{ x: x0, y: c.default }, { x: x1, y: c.default }], borderColor: "#c92a2a", borderDash: [6, 4],
      borderWidth: 1.5, pointRadius: 0, order: 0 });
  }
  chart("convergence", {
    data: { datasets },
    options: { maintainAspectRatio: false, scales: {
      x: { type: "linear", title: { display: true, text: "trial (t0000 = 0)" }, ticks: { precision: 0, stepSize: 1, autoSkip: true } },
      y: { type: state.logScale ? "logarithmic" : "linear", title: { display: true, text: `${withUnit(c.objective)}, ${c.direction}d` } } },
      plugins: { tooltip: { callbacks: { label: (ctx) => ctx.raw.trial
        ? `${ctx.raw.trial}: ${fmtU(c.objective, ctx.raw.y)} [${ctx.raw.surrogate}]${ctx.raw.status === "stopped" ? " stopped early" : ""}${ctx.raw.feasible ? "" : " infeasible"}`
        : `${ctx.dataset.label}: ${fmt(ctx.raw.y)}` } } },
      onClick: (evt, items, c) => { const p = clicked(c, items); if (p && p.trial) selectTrial(p.trial, true); } },
  });
  const last = c.best.length ? c.best[c.best.length - 1].y : null;
  // a gain over the default is only a gain over a configuration one could deploy
  const gain = (last !== null && c.default && c.default_feasible) ? (c.direction === "minimize"
    ? (c.default - last) / Math.abs(c.default) : (last - c.default) / Math.abs(c.default)) : null;
  const bestIsDefault = (run.summary.best[c.objective] || {}).trial === c.default_trial;
  const against = c.default === null ? "; the default configuration was not measured"
    : bestIsDefault ? `: the default configuration (${c.default_trial}) itself, no trial has beaten it yet`
    : !c.default_feasible ? ` (the default's ${fmtU(c.objective, c.default)} is infeasible: no gain over it is claimed)`
    : ` against the default's ${fmtU(c.objective, c.default)}` + (gain !== null ? ` (${(100 * Math.abs(gain)).toFixed(1)} % ${gain >= 0 ? "better" : "worse"})` : "");
  $("#progress-caption").textContent = `${count(c.points.length, "trial")} measured; best feasible ${c.objective} ${fmtU(c.objective, last)}` + against +
    ". Hollow points: stopped early; crosses: infeasible. Click a point to open its trial.";
}
function pickObjective(k) {  // every panel follows the objective tab
  state.objective = Number(k);
  drawConvergence(state.run); drawBest(state.run); drawEffects(); drawSlice(); drawParcoords(); drawStudies();
}

function drawBest(run) {
  const s = run.summary, o = s.objectives[state.objective] || s.objectives[0];
  const b = o && s.best[o.name];
  if (!b) {  // finished trials that all break an output constraint are no best, but they did finish
    $("#best-caption").textContent = s.counts.done === 1 ? "the one finished trial does not meet the output constraints"
      : s.counts.done ? `none of the ${s.counts.done} finished trials meets the output constraints yet`
      : "no finished trial yet";
    $("#best-config").replaceChildren(); return;
  }
  const defaultTrial = (run.convergence[state.objective] || {}).default_trial;
  const dflt = (run.trials.find((t) => t.name === defaultTrial) || {}).config || {};
  const changed = Object.entries(b.config).filter(([k, v]) => k in dflt && dflt[k] !== v).length;
  // bold marks a change only where there is one: the default itself, or its values, have none
  const marks = b.trial === defaultTrial ? "It is the default configuration: no trial has beaten it yet."
    : !defaultTrial ? "The default configuration was not measured."
    : changed ? `Bold: the ${count(changed, "parameter")} that ${changed === 1 ? "differs" : "differ"} from the default.`
    : "Every value is the default's.";
  $("#best-head").textContent = `Best configuration by ${o.name}`;
  $("#best-caption").textContent = `${b.trial}: ${o.name} = ${fmtU(o.name, b.value)}, ${b.origin}. ${marks}`;
  $("#best-config").replaceChildren(el("tr", {}, el("td", {}, "parameter"), el("td", {}, "best"), el("td", {}, "default")),
    ...Object.entries(b.config).map(([k, v]) => el("tr", { class: k in dflt && dflt[k] !== v ? "changed" : "" },
      el("td", {}, k), el("td", {}, fmtU(k, v)), el("td", {}, k in dflt ? fmtU(k, dflt[k]) : "–"))));
}

// --- trials table ---------------------------------------------------------------------------------------
function trialColumns(run) {
  const objs = run.summary.objectives.map((o) => o.name);
  return [
    ["id", "#", (t) => t.id, true], ["name", "trial", (t) => t.name], ["status", "status", (t) => t.status],
    ...objs.map((o) => [`obj:${o}`, withUnit(o), (t) => t.objectives[o] ?? null, true]),
    ...state.extraColumns.map((c) => [`col:${c}`, withUnit(c), (t) => trialValue(t, c) ?? null, true]),
    ["duration_s", "duration", (t) => t.duration_s, true], ["surrogate", "surrogate", (t) => t.surrogate],
    ["reason", "why", (t) => t.error ? `error: ${t.error}` : t.reason], ["started", "started", (t) => t.started],
  ];
}
// The text filter: space-separated terms, all must hold. A plain word is a trial's name, status or
// surrogate (whole word: "structured" is not "chose structured over gp" in a gp trial's reason) or
// part of its error; "why:word" searches the reasons; "x3>0.5", "cost<=10", "m0_worker=true" compare
// a parameter, objective or metric.
function trialValue(t, name) {
  return name in t.config ? t.config[name] : name in t.objectives ? t.objectives[name] : (t.metrics || {})[name];
}
function trialFilter(text) {
  const terms = text.trim().toLowerCase().split(/\s+/).filter(Boolean).map((term) => {
    const cmp = term.match(/^([^<>=!]+)(<=|>=|!=|<|>|=)(.+)$/);
    if (cmp) {
      const [, name, op, raw] = cmp, num = Number(raw);
      return (t) => { const key = Object.keys({ ...t.config, ...t.objectives, ...(t.metrics || {}) }).find((k) => k.toLowerCase() === name);
        if (key === undefined) return false;
        const v = trialValue(t, key), x = typeof v === "number" && !Number.isNaN(num) ? num : raw;
        const a = typeof v === "boolean" ? String(v) : typeof v === "string" ? v.toLowerCase() : v;  // as the term is
        return op === "<" ? a < x : op === ">" ? a > x : op === "<=" ? a <= x : op === ">=" ? a >= x : op === "!=" ? a != x : a == x; };  // eslint-disable-line eqeqeq
    }
    if (term.startsWith("why:")) return (t) => (t.reason || "").toLowerCase().includes(term.slice(4));
    return (t) => [t.name, t.status, t.surrogate].some((v) => v && v.toLowerCase() === term) || (t.error || "").toLowerCase().includes(term);
  });
  return (t) => terms.every((f) => f(t));
}
function drawTrials(run) {
  const counts = { all: run.trials.length };
  for (const t of run.trials) counts[t.status] = (counts[t.status] || 0) + 1;
  setTabs($("#status-filter"), ["all", ...Object.keys(run.summary.counts)].map((k) => [k, `${k} (${counts[k] || 0})`]),
    state.statusFilter, (k) => { state.statusFilter = k; drawTrials(state.run); });
  const cols = trialColumns(run);
  $("#trial-table thead").replaceChildren(el("tr", {}, ...cols.map(([key, label]) => el("th", {
    class: state.sort.key === key ? `sorted ${state.sort.asc ? "asc" : ""}` : "", "data-key": key,
    onclick: () => { state.sort = { key, asc: state.sort.key === key ? !state.sort.asc : true }; drawTrials(state.run); },
  }, label, key.startsWith("col:") ? el("span", { class: "drop", title: "remove this column", onclick: (e) => {
    e.stopPropagation(); state.extraColumns = state.extraColumns.filter((c) => `col:${c}` !== key); drawTrials(state.run); } }, " ×") : ""))));
  const params = Object.keys((run.trials[0] || {}).config || {});
  const metrics = [...new Set(run.trials.flatMap((t) => Object.keys(t.metrics || {})))].sort();
  if ($("#add-column").options.length !== 1 + params.length + metrics.length) {
    $("#add-column").replaceChildren(el("option", { value: "" }, "+ column…"),
      el("optgroup", { label: "parameters" }, ...params.map((n) => el("option", { value: n }, n))),
      el("optgroup", { label: "metrics" }, ...metrics.map((n) => el("option", { value: n }, n))));
  }
  const get = Object.fromEntries(cols.map(([k, , f]) => [k, f]));
  const match = trialFilter(state.search);
  const rows = run.trials.filter((t) => (state.statusFilter === "all" || t.status === state.statusFilter) && match(t) &&
    inBrush(t));
  const f = get[state.sort.key] || get.id;
  rows.sort((a, b) => { const x = f(a), y = f(b);
    const r = x === y ? 0 : x === null ? 1 : y === null ? -1 : x < y ? -1 : 1;
    return state.sort.asc || x === null || y === null ? r : -r; });
  $("#trial-table tbody").replaceChildren(...rows.map((t) => el("tr", {
    class: t.name === state.selectedTrial ? "selected" : "", "data-trial": t.name, onclick: () => selectTrial(t.name) },
  ...cols.map(([key, , fn, num]) => {
    const v = fn(t);
    if (key === "status") return el("td", {}, el("span", { class: `status ${v}` }, v));
    if (key === "duration_s") return el("td", { class: "num" }, fmtSeconds(v));
    if (key === "reason") return el("td", { class: "reason", title: v || "" }, v || "");
    if (key === "started") return el("td", {}, v ? v.replace("T", " ").slice(0, 19) : "");
    return el("td", { class: num ? "num" : "" }, fmt(v));
  }))));
  if (state.selectedTrial) drawTrialDetail();
}
function selectTrial(name, scroll = false) {
  state.selectedTrial = name;
  for (const tr of document.querySelectorAll("#trial-table tbody tr")) tr.classList.toggle("selected", tr.dataset.trial === name);
  drawTrialDetail();
  if (scroll) { const tr = document.querySelector(`#trial-table tbody tr[data-trial="${name}"]`);
    if (tr) tr.scrollIntoView({ block: "nearest" }); $("#trials").scrollIntoView(); }
}
function drawTrialDetail() {
  const t = state.run.trials.find((x) => x.name === state.selectedTrial);
  const box = $("#trial-detail");
  if (!t) { box.replaceChildren(el("p", { class: "hint" }, `${state.selectedTrial} is not in this run`)); return; }
  const parts = [el("h3", {}, t.name, " ", el("span", { class: `status ${t.status}` }, t.status)),
    el("div", { class: "hint" }, `${t.origin}; ran ${fmtSeconds(t.duration_s)}`,
      t.retry_of !== null ? ` (re-run of t${String(t.retry_of).padStart(4, "0")})` : "")];
  if (t.reason) parts.push(el("div", { class: "why" }, t.reason));
  if (t.error) parts.push(el("div", { class: "why bad" }, "error: ", t.error));
  const breaks = (x) => x.breaks.length ? `infeasible: breaks ${x.breaks.join(", ")}` : "";
  if (t.breaks.length) parts.push(el("div", { class: "why bad", id: "trial-breaks" }, breaks(t)));
  const objs = Object.keys({ ...t.objectives, ...t.predicted });
  if (objs.length) {
    parts.push(el("table", { class: "kv" }, el("tr", {}, el("td", {}, "objective"), el("td", {}, "observed"), el("td", {}, "predicted")),
      ...objs.map((o) => el("tr", {}, el("td", {}, o), el("td", {}, fmtU(o, t.objectives[o])),
        el("td", {}, t.predicted[o] ? `${fmt(t.predicted[o].mean)} ± ${fmtU(o, t.predicted[o].sd)}` : "–")))));
  }
  const dflt = state.run.trials.find((x) => x.name === (state.run.convergence[0] || {}).default_trial);
  const other = dflt && dflt.name !== t.name ? dflt : null;
  const change = (a, b) => typeof a === "number" && typeof b === "number" && b !== 0 ? ` (${a >= b ? "+" : ""}${fmt(100 * (a - b) / Math.abs(b))} %)` : "";
  if (other) {
    parts.push(el("div", { class: "hint", id: "vs-default" }, `against the default configuration (${other.name}${other.breaks.length ? `, ${breaks(other)}` : ""}): ` +
      Object.keys(t.objectives).map((o) => `${o} ${fmtU(o, t.objectives[o])} vs ${fmtU(o, other.objectives[o])}${change(t.objectives[o], other.objectives[o])}`).join("; ")));
  }
  parts.push(el("h3", {}, "configuration"), el("table", { class: "kv", id: "trial-config" },
    ...Object.entries(t.config).map(([k, v]) => el("tr", { class: other && other.config[k] !== v ? "changed" : "" },
      el("td", {}, k), el("td", {}, fmtU(k, v)), other ? el("td", {}, fmtU(k, other.config[k])) : ""))));
  const logged = Object.entries(t.metrics || {});
  if (logged.length) {
    parts.push(el("h3", {}, `logged metrics (${logged.length})` + (other ? `, against ${other.name}` : "")),
      el("table", { class: "kv", id: "trial-metrics" }, ...logged.map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", {}, fmtU(k, v)),
        other ? el("td", {}, fmtU(k, (other.metrics || {})[k]) + change(v, (other.metrics || {})[k])) : ""))));
  }
  const cv = Object.entries(t.cv || {});
  if (cv.length) parts.push(el("h3", {}, "surrogates compared (held-out)"), el("table", { class: "kv" },
    el("tr", {}, el("td", {}, "model"), el("td", {}, "log density"), el("td", {}, "rank corr")),
    ...cv.map(([m, s]) => el("tr", {}, el("td", {}, m), el("td", {}, fmt(s.log_predictive_density)), el("td", {}, fmt(s.rank_correlation))))));
  parts.push(el("h3", {}, "logs"), el("div", { class: "mono" }, t.logs || "–"), el("div", { id: "trial-files" }));
  box.replaceChildren(...parts);
  drawTrialFiles(t.name);
}
function fmtBytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  const i = n > 0 ? Math.min(units.length - 1, Math.floor(Math.log2(n) / 10)) : 0;
  return i ? `${fmt(Number((n / 1024 ** i).toPrecision(3)))} ${units[i]}` : `${n} B`;
}
// one trial's files, asked for when it is opened (the run's JSON lists none: a system that logs a
// file per step made every poll carry hundreds of names per trial)
async function drawTrialFiles(name) {
  const study = state.study;
  let data;
  try {
    ({ data } = await getJSON(apiUrl(`/api/trial-files?trial=${encodeURIComponent(name)}`)));
  } catch (err) {
    data = { error: String(err.message || err) };
  }
  const box = $("#trial-files");
  if (study !== state.study || state.selectedTrial !== name || !box) return;  // another trial was opened meanwhile
  if (data.error) { box.replaceChildren(el("div", { class: "hint" }, `its files cannot be listed: ${data.error}`)); return; }
  box.replaceChildren(data.files.length ? el("ul", {}, ...data.files.map((f) =>
    el("li", {}, f.served ? el("a", { href: logsUrl(name, f.name), target: "_blank" }, f.name) : f.name,
      ` (${fmtBytes(f.bytes)}${f.served ? "" : ", too large to open here: it is in the directory above"})`))) :
    el("div", { class: "hint" }, "no files there (yet)"),
  data.more ? el("div", { class: "hint" }, `and ${count(data.more, "more file")}, not listed (the directory above holds them)`) : "");
}

// --- trials in parameter space: parallel coordinates (brushable) and slices ------------------------------
const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs = {}, text = null) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== null) e.textContent = text;
  return e;
}
const numeric = (v) => typeof v === "boolean" ? Number(v) : typeof v === "number" ? v : null;
// a categorical parameter's value sits at its index among the space's choices (a text value has no
// position of its own), and is labelled with its name there
const choicesOf = (name) => ((state.run && state.run.summary.choices) || {})[name];
function position(name, v) {
  const choices = choicesOf(name);
  if (!choices) return numeric(v);
  const i = choices.indexOf(v);
  return i < 0 ? null : i;
}
const positionLabel = (name, x) => choicesOf(name) ? String(choicesOf(name)[x] ?? "") : fmtU(name, x);
function parcoordAxes() {
  // the selected objective, then the parameters the model says matter most (else the space's first),
  // then the columns added to the table
  const run = state.run, obj = run.summary.objectives[state.objective] || run.summary.objectives[0];
  const params = Object.keys((run.trials[0] || {}).config || {});
  const ranked = state.models && state.models.effects ? [...state.models.effects]
    .sort((a, b) => ((b.ranges || {})[obj.name] ?? b.range) - ((a.ranges || {})[obj.name] ?? a.range)).map((e) => e.param) : params;
  return [...new Set([...ranked.slice(0, 8), ...state.extraColumns, obj.name])];
}
function inBrush(t) {
  return Object.entries(state.brush).every(([axis, [lo, hi]]) => { const v = position(axis, trialValue(t, axis)); return v !== null && v >= lo && v <= hi; });
}
function drawParcoords() {
  const run = state.run;
  if (!run || !run.trials.length) return;
  const box = $("#parcoords"), W = box.clientWidth || 600, H = 330, top = 46, bottom = H - 24;
  const axes = parcoordAxes(), obj = axes[axes.length - 1];
  const trials = run.trials.filter((t) => t.status === "done" || t.status === "stopped");
  const ranges = Object.fromEntries(axes.map((a) => {
    if (choicesOf(a)) return [a, [0, choicesOf(a).length - 1]];
    const vs = trials.map((t) => numeric(trialValue(t, a))).filter((v) => v !== null && Number.isFinite(v));
    const lo = Math.min(...vs), hi = Math.max(...vs);
    return [a, vs.length ? (hi > lo ? [lo, hi] : [lo - 0.5, hi + 0.5]) : [0, 1]];
  }));
  const x = (i) => 40 + i * (W - 80) / Math.max(1, axes.length - 1);
  const y = (a, v) => bottom - (v - ranges[a][0]) / (ranges[a][1] - ranges[a][0]) * (bottom - top);
  const [olo, ohi] = ranges[obj], dir = (run.summary.objectives.find((o) => o.name === obj) || {}).direction;
  const colour = (v) => { let f = (v - olo) / (ohi - olo || 1); if (dir === "maximize") f = 1 - f;  // blue: good, red: bad
    return `hsl(${Math.round(220 - 220 * f)}, 70%, 45%)`; };
  const kids = [];
  for (const t of trials) {
    const pts = axes.map((a, i) => { const v = position(a, trialValue(t, a)); return v === null ? null : `${x(i)},${y(a, v)}`; });
    if (pts.includes(null)) continue;
    const on = inBrush(t), ov = numeric(t.objectives[obj]);
    kids.push(svg("polyline", { points: pts.join(" "), fill: "none", "data-trial": t.name, class: on ? "kept" : "out",
      stroke: on && ov !== null ? colour(ov) : "#d0d4da", "stroke-width": on ? 1.6 : 1, opacity: on ? 0.85 : 0.5 }));
  }
  axes.forEach((a, i) => {
    kids.push(svg("line", { x1: x(i), x2: x(i), y1: top, y2: bottom, stroke: "#8a94a0" }));
    const edge = i === 0 ? ["start", -10] : i === axes.length - 1 ? ["end", 10] : ["middle", 0];  // the ends stay inside
    kids.push(svg("text", { x: x(i) + edge[1], y: top - 18 - (i % 2) * 13, "text-anchor": edge[0], class: "axis-label" }, withUnit(a)));
    if (choicesOf(a)) choicesOf(a).forEach((c, k) => kids.push(svg("text", { x: x(i) + 4, y: y(a, k) + 4, class: "tick" }, String(c))));
    else {
      kids.push(svg("text", { x: x(i) + 4, y: top - 4, class: "tick" }, fmt(ranges[a][1])));
      kids.push(svg("text", { x: x(i) + 4, y: bottom + 14, class: "tick" }, fmt(ranges[a][0])));
    }
    if (state.brush[a]) { const [lo, hi] = state.brush[a];
      kids.push(svg("rect", { x: x(i) - 7, width: 14, y: y(a, hi), height: Math.max(2, y(a, lo) - y(a, hi)), class: "brush" })); }
    const hit = svg("rect", { x: x(i) - 12, width: 24, y: top, height: bottom - top, class: "hit", "data-axis": a });
    hit.addEventListener("mousedown", (e) => startBrush(e, a, y, ranges[a], top, bottom));
    hit.addEventListener("dblclick", () => { delete state.brush[a]; brushed(); });
    kids.push(hit);
  });
  box.replaceChildren(...kids);
  const kept = trials.filter(inBrush).length;
  $("#parcoords-caption").textContent = `${count(trials.length, "measured trial")} over ${count(axes.length - 1, "parameter")} and ${obj} ` +
    `(colour: ${obj}, blue better); axes: the parameters that move ${obj} most in the model, and the table's added columns.` +
    (Object.keys(state.brush).length ? ` ${kept} in the brushed ranges.` : "");
}
function startBrush(e, axis, y, [lo, hi], top, bottom) {
  const rect = $("#parcoords").getBoundingClientRect(), y0 = e.clientY - rect.top;
  const value = (py) => lo + (bottom - Math.min(bottom, Math.max(top, py))) / (bottom - top) * (hi - lo);
  const move = (ev) => { const y1 = ev.clientY - rect.top; const a = value(y0), b = value(y1);
    state.brush[axis] = [Math.min(a, b), Math.max(a, b)]; brushed(); };
  const up = () => { window.removeEventListener("mousemove", move); window.removeEventListener("mouseup", up); };
  window.addEventListener("mousemove", move); window.addEventListener("mouseup", up);
}
function brushed() {
  const n = Object.keys(state.brush).length;
  $("#brush-note").textContent = n ? `brushed on ${Object.keys(state.brush).join(", ")} (double-click an axis to clear)` : "";
  drawParcoords(); drawTrials(state.run);
}
function drawSlice() {
  const run = state.run;
  if (!run || !run.trials.length) return;
  const params = Object.keys(run.trials[0].config || {});
  const axes = parcoordAxes();
  if (!state.slicePicked || !params.includes(state.sliceParam)) state.sliceParam = axes.find((a) => params.includes(a)) || params[0];
  if ($("#slice-param").options.length !== params.length) $("#slice-param").replaceChildren(...params.map((n) => el("option", { value: n }, n)));
  $("#slice-param").value = state.sliceParam;
  const obj = run.summary.objectives[state.objective] || run.summary.objectives[0];
  const pts = run.trials.filter((t) => t.status === "done" && numeric(t.objectives[obj.name]) !== null)
    .map((t) => ({ x: position(state.sliceParam, t.config[state.sliceParam]), y: t.objectives[obj.name], trial: t.name, surrogate: t.surrogate }));
  const choices = choicesOf(state.sliceParam), categories = choices  // one tick per choice, named
    ? { min: -0.5, max: choices.length - 0.5, afterBuildTicks: (axis) => { axis.ticks = choices.map((_, i) => ({ value: i })); },
      ticks: { callback: (v) => String(choices[v] ?? "") } } : {};
  chart("slice-chart", { data: { datasets: [{ type: "scatter", label: `${obj.name} against ${state.sliceParam}`, data: pts, parsing: false,
    backgroundColor: pts.map((p) => COLORS[p.surrogate] || "#495057"), pointRadius: 4.5 }] },
  options: { maintainAspectRatio: false, plugins: { legend: { display: false },
    tooltip: { callbacks: { label: (c) => `${c.raw.trial}: ${state.sliceParam} ${positionLabel(state.sliceParam, c.raw.x)}, ${obj.name} ${fmtU(obj.name, c.raw.y)}` } } },
  scales: { x: { type: "linear", title: { display: true, text: withUnit(state.sliceParam) }, ...categories },
    y: { type: state.logScale ? "logarithmic" : "linear", title: { display: true, text: `${withUnit(obj.name)}, measured` } } },
  onClick: (evt, items, c) => { const p = clicked(c, items); if (p) selectTrial(p.trial, true); } } });
}

// --- graph --------------------------------------------------------------------------------------------
function graphElements(view) {
  const folded = state.folded, shown = {};
  const nodes = [];
  for (const g of view.groups) {
    const members = view.nodes.filter((n) => n.group === g);
    if (folded.has(g)) {
      const label = `▸ ${g} (${members.length})`;
      nodes.push({ group: "nodes", data: { id: `group:${g}`, label, kind: "folded", groupName: g, w: 8.5 * label.length + 16 } });
    } else nodes.push({ group: "nodes", data: { id: `group:${g}`, label: `▾ ${g}`, kind: "group", groupName: g } });
  }
  for (const n of view.nodes) {
    shown[n.id] = n.group && folded.has(n.group) ? `group:${n.group}` : n.id;
    if (shown[n.id] !== n.id) continue;
    const [fill, border, shape] = ROLE_STYLE[n.role] || ROLE_STYLE.metric;
    const label = n.bound ? n.bound.text : n.id;  // a bounded output wears its bound: the run steers it too
    nodes.push({ group: "nodes", data: { id: n.id, label, kind: "node", role: n.role, fill, border, shape,
      form: n.form ? n.form.kind : "", bounded: Boolean(n.bound), parent: n.group ? `group:${n.group}` : undefined,
      w: Math.max(40, 7.8 * label.length + 14) } });
  }
  const edges = {};
  for (const e of view.edges) {
    const s = shown[e.source], t = shown[e.target];
    if (s === t) continue;
    const key = `${s}->${t}`, w = e.weight === null ? null : Math.min(1, Math.abs(e.weight));
    const prev = edges[key];
    if (prev) { prev.data.count += 1; if (w !== null) prev.data.w = Math.max(prev.data.w ?? 0, w); continue; }
    edges[key] = { group: "edges", data: { id: key, source: s, target: t, w, count: 1,
      stability: e.stability === null ? 1 : e.stability, style: e.fallback ? "dotted" : e.annotated ? "dashed" : "solid",
      annotated: e.annotated, weight: e.weight } };
  }
  for (const e of Object.values(edges)) e.data.label = e.data.count > 1 ? `×${e.data.count}` : "";
  return [...nodes, ...Object.values(edges)];
}
function legendKeys(elements) {  // the key entries (data-key in index.html) the drawn elements need
  const keys = new Set();
  for (const { data: d } of elements) {
    if (d.kind === "node") {
      keys.add(ROLE_STYLE[d.role] ? d.role : "metric");  // drawn as a metric, as ROLE_STYLE does
      if (d.bounded) keys.add("bound");
      if (d.form === "function" || d.form === "formula") keys.add("form");
    } else if (d.kind === "folded") keys.add("folded");
    else if (d.source !== undefined) {
      if (d.w !== null) keys.add("weight");
      if (d.style === "dotted") keys.add("fallback");
      if (d.annotated) keys.add("expression");
    }
  }
  return keys;
}
const LABEL_PX = 12, MIN_LABEL_PX = 9;  // node labels' font size, and the smallest it is ever drawn at
const GRAPH_STYLE = [
  { selector: "node[kind = 'node']", style: { label: "data(label)", "background-color": "data(fill)", "border-color": "data(border)",
    "border-width": 1.2, shape: "data(shape)", width: "data(w)", height: 26, "font-size": LABEL_PX, "text-valign": "center", "text-halign": "center" } },
  { selector: "node[form = 'function'], node[form = 'formula']", style: { "border-color": "#6a3d9a", "border-width": 3 } },
  { selector: "node[?bounded]", style: { "border-color": "#b3403d", "border-width": 3 } },
  { selector: "node[kind = 'group']", style: { label: "data(label)", "text-valign": "top", "text-halign": "center", "font-size": LABEL_PX,
    "font-weight": "bold", color: "#8a6d00", "background-color": "#fffbeb", "background-opacity": 0.6, "border-color": "#e2c76a",
    "border-width": 1, shape: "round-rectangle", padding: 20, "text-margin-y": 18 } },
  { selector: "node[kind = 'folded']", style: { label: "data(label)", "background-color": "#fff7e0", "border-color": "#c9a227",
    "border-style": "dashed", "border-width": 1.5, shape: "round-rectangle", width: "data(w)", height: 26,
    "font-size": LABEL_PX + 1, "text-valign": "center", "text-halign": "center" } },
  { selector: "edge", style: { width: (e) => e.data("w") === null ? 1.5 : 0.8 + 5 * e.data("w"), "curve-style": "bezier",
    "target-arrow-shape": "triangle", "arrow-scale": 0.8, "line-color": "#555", "target-arrow-color": "#555",
    "line-style": "data(style)", opacity: (e) => (e.data("count") > 1 ? 0.25 : 0.3) + 0.6 * e.data("stability") * (e.data("count") > 1 ? 0.5 : 1),
    label: "data(label)", "font-size": 9,
    color: "#8a6d00", "text-background-color": "#fff", "text-background-opacity": 0.8 } },
  { selector: "edge[?annotated]", style: { "line-color": "#6a3d9a", "target-arrow-color": "#6a3d9a" } },
  { selector: ".faded", style: { opacity: 0.12 } },
  { selector: "node:selected", style: { "border-color": "#f08c00", "border-width": 3 } },
];
function drawGraph() {
  const view = state.graph;
  if (!view) { $("#graph-caption").textContent = "no graph yet: the run has not learned or been given one"; return; }
  if (state.foldedInit !== `${view.scope}:${view.node}`) {  // large views open folded: one box per machine or subsystem
    state.folded.clear();
    if (view.nodes.length > 40) view.groups.forEach((g) => state.folded.add(g));
    state.foldedInit = `${view.scope}:${view.node}`;
  }
  const roles = {};
  for (const n of view.nodes) roles[n.role] = (roles[n.role] || 0) + 1;
  const what = { neighbourhood: "The objectives' strongest paths (the parameters that reach them most strongly, each by its strongest way)",
    ancestors: view.nodes.some((n) => n.bound) ? "The objectives, the bounded outputs and their ancestors" : "The objectives and their ancestors", all: "The whole graph", node: `${view.node}, its ancestors and descendants` }[view.scope];
  for (const b of document.querySelectorAll("#graph-scope button")) b.classList.toggle("on", b.dataset.scope === view.scope);
  $("#graph-caption").textContent = `${what}: ` +
    `${view.nodes.length} of ${count(view.total_nodes, "node")} (${Object.entries(roles).map(([r, k]) => count(k, ROLE_NOUN[r] || r)).join(", ")}), ` +
    count(view.edges.length, "edge") + (view.learned_from_trials ? `, learned from ${count(view.learned_from_trials, "trial")}` : "") +
    (view.groups.length ? `; ${count(view.groups.length, "name group")} (${view.groups.slice(0, 8).join(", ")}${view.groups.length > 8 ? "…" : ""})` : "") + ".";
  const elements = graphElements(view);
  const drawn = legendKeys(elements);  // the key names what the picture holds, nothing else
  for (const entry of document.querySelectorAll("#graph-legend [data-key]")) entry.hidden = !drawn.has(entry.dataset.key);
  if (!state.cy) {
    // labels never drawn below MIN_LABEL_PX: a graph too large for the box is panned, not shrunk
    state.cy = cytoscape({ container: $("#cy"), elements, style: GRAPH_STYLE, minZoom: MIN_LABEL_PX / LABEL_PX, maxZoom: 3 });
    state.cy.on("tap", "node", (evt) => onNodeTap(evt.target));
    state.cy.on("tap", (evt) => { if (evt.target === state.cy) state.cy.elements().removeClass("faded"); });
  } else { state.cy.elements().remove(); state.cy.add(elements); }
  // left to right: parameters, then metrics, then objectives; node labels are wider than tall
  state.cy.layout({ name: "dagre", rankDir: "LR", nodeSep: 8, rankSep: 70, edgeSep: 4, animate: false, fit: true, padding: 12 }).run();
  if (state.cy.zoom() > 1.1) { state.cy.zoom(1.1); state.cy.center(); }  // a small graph is not blown up
  const focus = view.scope === "node" ? state.cy.getElementById(view.node) : state.cy.nodes("[role = 'objective']");
  if (state.cy.zoom() <= state.cy.minZoom() + 1e-6 && focus.length) {  // too large to fit: start at what matters
    state.cy.center(focus);  // the objectives at the right edge, what feeds them to their left (drag to pan)
    if (view.scope !== "node") state.cy.panBy({ x: state.cy.width() / 2 - focus.renderedBoundingBox().w / 2 - 30, y: 0 });
  }
  if (view.scope === "node") state.cy.getElementById(view.node).select();
}
function onNodeTap(node) {
  const kind = node.data("kind");
  if (kind === "group" || kind === "folded") {
    const g = node.data("groupName");
    if (state.folded.has(g)) state.folded.delete(g); else state.folded.add(g);
    drawGraph();
    return;
  }
  state.cy.elements().addClass("faded");
  node.closedNeighborhood().removeClass("faded");
  node.ancestors().removeClass("faded");
  drawNodeDetail(node.id());
}
function drawNodeDetail(id) {
  const view = state.graph, n = view.nodes.find((x) => x.id === id);
  if (!n) return;
  const parents = view.edges.filter((e) => e.target === id), children = view.edges.filter((e) => e.source === id);
  const fit = state.models && state.models.nodes ? state.models.nodes[id] : null;
  const edgeLine = (e, other) => el("li", {}, other, e.weight !== null ? ` (weight ${fmt(e.weight)}${e.stability !== null ? `, stability ${fmt(e.stability)}` : ""})` : "",
    e.fallback ? " fallback" : "", e.annotated ? " (expression)" : "");
  const parts = [el("h3", {}, id), el("div", { class: "hint" }, `${n.role}${n.group ? `, group ${n.group}` : ""}`)];
  if (n.bound) parts.push(el("div", { class: "why", id: "node-bound" }, `output constraint: ${n.bound.text}` +
    (n.bound.learned ? "" : " (no learned path into it)")));
  if (n.form) parts.push(el("div", { class: "why" }, `${n.form.kind} ${n.form.source}: `, el("span", { class: "mono" }, n.form.text),
    n.form.kind === "formula" ? ` (free: ${n.form.free.join(", ") || "none"}; residual ${n.form.residual})` : ""));
  const model = fit ? { label: fit.label, parents: fit.parents } : n.model;
  if (model) parts.push(el("div", { id: "node-model" }, `model in the structured proposal of ${(state.models && state.models.model_trial) || "the run"}: `,
    el("b", {}, model.label), model.parents.length ? ` on ${count(model.parents.length, "parent")} (${model.parents.join(", ")})` : ""));
  if (fit) {
    parts.push(el("div", {}, `held-out fit on ${count(fit.n, "trial")}: rank correlation `, el("b", {}, fmt(fit.rank_correlation)),
      `, standardised RMSE ${fmt(fit.rmse_standardised)} `, el("a", { href: "#models", onclick: () => selectFitNode(id) }, "(plot)")));
  }
  parts.push(el("div", { class: "tabs" }, el("button", { id: "focus-node", onclick: () => focusNode(id) }, "show its ancestors and descendants")));
  const inView = view.scope === "all" ? "" : " in this view";
  parts.push(el("h3", {}, `graph parents${inView} (${parents.length})`), el("ul", {}, ...parents.map((e) => edgeLine(e, e.source))));
  parts.push(el("h3", {}, `graph children${inView} (${children.length})`), el("ul", {}, ...children.map((e) => edgeLine(e, e.target))));
  $("#node-detail").replaceChildren(...parts);
}

// --- node models ----------------------------------------------------------------------------------------
function modelStatus(m) {
  if (!m || m.status === "computing") return "fitting the run's model in the background…";
  if (m.error) return `not available: ${m.error}`;
  return `${m.surrogate} surrogate` + (m.model_trial ? ` as it proposed ${m.model_trial}`
    : m.surrogate === "structured" ? " fitted afresh on the run's current graph (no structured proposal yet)" : "") +
    `, refitted on ${count(m.n_trials, "measured trial")} (${fmt(m.seconds)} s to fit)` +
    (m.unused && m.unused.length ? `; not sampled (no chosen model reads them): ${m.unused.join(", ")}` : "") + (m.status === "stale" ? "; refitting on newer trials…" : "");
}
function drawModels() {
  const m = state.models;
  $("#models-status").textContent = modelStatus(m);
  $("#effects-status").textContent = modelStatus(m);
  if (!m || !m.nodes) return;
  const roleOf = Object.fromEntries((state.graph ? state.graph.nodes : []).map((n) => [n.id, n.role]));
  const nodes = Object.entries(m.nodes).sort(([a, x], [b, y]) => (roleOf[a] === "objective") - (roleOf[b] === "objective") ||
    (x.rank_correlation ?? 2) - (y.rank_correlation ?? 2)).reverse();
  $("#fit-table thead").replaceChildren(el("tr", {}, ...["node", "model", "parents", "trials", "rank corr", "std. RMSE"].map((h) => el("th", {}, h))));
  $("#fit-table tbody").replaceChildren(...nodes.map(([id, f]) => el("tr", { class: id === state.fitNode ? "selected" : "",
    "data-node": id, onclick: () => selectFitNode(id) }, el("td", {}, id), el("td", {}, f.label), el("td", { class: "num" }, f.parents.length),
  el("td", { class: "num" }, f.n), el("td", { class: `num ${f.rank_correlation < 0.5 ? "bad" : f.rank_correlation > 0.8 ? "good" : ""}` }, fmt(f.rank_correlation)),
  el("td", { class: "num" }, fmt(f.rmse_standardised)))));
  drawEffects(); drawParcoords();
  if (!nodes.length) { $("#fit-caption").textContent = `no per-node models: the ${m.surrogate} surrogate models the objectives directly`; return; }
  if (!state.fitNode || !m.nodes[state.fitNode]) state.fitNode = nodes[0][0];
  drawFit();
}
function selectFitNode(id) { state.fitNode = id; drawModels(); }
function drawFit() {
  const f = state.models.nodes[state.fitNode];
  const pts = f.observed.map((y, i) => ({ x: y, y: f.predicted[i], trial: f.trials[i], sd: f.sd[i] }));
  const all = [...f.observed, ...f.predicted].filter(Number.isFinite);
  const lo = Math.min(...all), hi = Math.max(...all);
  $("#fit-caption").textContent = `${state.fitNode} (${f.label} on ${count(f.parents.length, "parent")}): each trial's value predicted by the model refitted without it, from its observed parents. On the line: perfect.`;
  chart("fit-chart", { data: { datasets: [
    { type: "scatter", label: "trials", data: pts, parsing: false, backgroundColor: "#2f6fd6", pointRadius: 4 },
    { type: "line", label: "predicted = observed", data: [{ x: lo, y: lo }, { x: hi, y: hi }], parsing: false,
      borderColor: "#adb5bd", borderDash: [4, 4], pointRadius: 0 }] },
  options: { maintainAspectRatio: false, scales: { x: { type: "linear", title: { display: true, text: `observed ${withUnit(state.fitNode)}` } },
    y: { title: { display: true, text: `predicted (held out)${unitOf(state.fitNode) ? `, ${unitOf(state.fitNode)}` : ""}` } } },
  plugins: { tooltip: { callbacks: { label: (c) => c.raw.trial ? `${c.raw.trial}: observed ${fmt(c.raw.x)}, predicted ${fmt(c.raw.y)} ± ${fmt(c.raw.sd)}` : "" } } } } });
  for (const tr of document.querySelectorAll("#fit-table tbody tr")) tr.classList.toggle("selected", tr.dataset.node === state.fitNode);
}

// --- parameter effects ----------------------------------------------------------------------------------
// the configuration the effects hold the other parameters at (the same for every objective's curves)
const heldAt = (b) => b && b.trial ? `${b.trial}'s values (the best by ${b.by})` : "the default configuration (no feasible best yet)";
const PALETTE = ["#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#D55E00", "#0072B2"];  // Okabe-Ito: tell apart, also colour-blind
const DASHES = [[], [6, 3], [2, 2], [8, 3, 2, 3], [4, 4], [1, 3]];
function effectObjective() {
  const m = state.models, names = Object.keys(m.effects[0].objectives);
  return names[Math.min(state.objective, names.length - 1)];
}
function drawEffects() {
  const m = state.models;
  if (!m || !m.effects || !m.effects.length) return;
  const objName = effectObjective();
  const rangeOf = (e) => (e.ranges ? e.ranges[objName] : e.range);
  const ranked = [...m.effects].sort((a, b) => rangeOf(b) - rangeOf(a));
  const top = ranked.slice(0, 15);
  $("#effects-head").textContent = `Parameter effects on ${objName}`;
  chart("effect-ranking", { type: "bar", data: { labels: top.map((e) => e.param), datasets: [{ label: `range of predicted ${withUnit(objName)} mean`,
    data: top.map(rangeOf), backgroundColor: top.map((e) => e.param === state.effectParam ? "#f08c00" : "#2f6fd6") }] },
  options: { indexAxis: "y", maintainAspectRatio: false, plugins: { legend: { display: false },
    title: { display: true, text: `How far each parameter moves the predicted ${withUnit(objName)} (top ${top.length} of ${m.effects.length}; click one)` } },
  onClick: (evt, items) => { if (items.length) { state.effectParam = top[items[0].index].param; drawEffects(); } } } });
  if (!state.effectParam || !m.effects.find((e) => e.param === state.effectParam)) state.effectParam = top[0].param;
  const e = m.effects.find((x) => x.param === state.effectParam);
  const curve = e.objectives[objName];
  const labels = e.values.map(fmt);
  chart("effect-curve", { type: "line", data: { labels, datasets: [
    { label: "- 1 sd", data: curve.low, borderWidth: 0, pointRadius: 0, fill: false, yAxisID: "y" },
    { label: "± 1 sd band", data: curve.high, borderWidth: 0, pointRadius: 0, fill: "-1", backgroundColor: "rgba(47,111,214,0.15)", yAxisID: "y" },
    { label: `${objName} (mean)`, data: curve.mean, borderColor: "#2f6fd6", borderWidth: 2.5, pointRadius: 3, yAxisID: "y" },
    ...e.metrics.map((x, i) => ({ label: `${x.name} (change, sds)`, data: x.change_sd || x.mean, borderColor: PALETTE[i % PALETTE.length],
      borderDash: DASHES[i % DASHES.length], borderWidth: 2, pointRadius: 0, yAxisID: "y2" }))] },
  options: { maintainAspectRatio: false, scales: { x: { title: { display: true, text: `${withUnit(e.param)}; others at ${heldAt(m.base)} (there ${fmtU(e.param, e.base)})` } },
    y: { title: { display: true, text: `predicted ${withUnit(objName)}` } },
    y2: { display: e.metrics.length > 0, position: "right", grid: { drawOnChartArea: false },
      title: { display: true, text: "metric's change from the base, in sds across the trials" } } },
  plugins: { legend: { labels: { filter: (item) => item.text !== "- 1 sd" } } } } });
  $("#effect-caption").textContent = `${e.param}: predicted ${objName} from ${fmtU(objName, Math.min(...curve.mean))} to ${fmtU(objName, Math.max(...curve.mean))} over its range (mean and ± 1 sd, as boanon plot --kind effects draws it).`;
  $("#effect-metrics").replaceChildren(...(e.metrics.length ? e.metrics.map((x) =>
    el("li", {}, `through ${withUnit(x.name)}: moves ${fmt(x.moved_sd)} × its spread across the trials`)) :
    [el("li", {}, m.surrogate === "structured" ? "reaches the objective directly (no modelled metric in between)" : "the plain GP has no metrics in between")]),
  e.n_metrics > e.metrics.length ? el("li", {}, `and ${count(e.n_metrics - e.metrics.length, "more metric")}`) : "");
}

// --- Pareto front and workers ----------------------------------------------------------------------------
function drawPareto(run) {
  const p = run.pareto;
  $("#pareto").hidden = !p;
  if (!p) return;
  const [a, b] = p.objectives;
  const pts = (sel) => p.points.filter(sel).map((q) => ({ x: q.values[0], y: q.values[1], trial: q.trial }));
  const xDirection = (run.summary.objectives.find((x) => x.name === a) || {}).direction;
  const front = pts((q) => q.front).sort((u, v) => xDirection === "maximize" ? v.x - u.x : u.x - v.x);  // best x first
  $("#pareto-caption").textContent = `${front.length} of ${count(p.points.length, "finished trial")} on the front` +
    (p.objectives.length > 2 ? ` (first two of ${p.objectives.length} objectives shown)` : "") + ".";
  // the front as the staircase of what its trials attain (as boanon plot draws it): a straight line
  // between two of them claimed the trade-offs in between were reached. From the best x on, each
  // point's y holds up to the next one's x (stepped "before"), whatever the directions: stepping in
  // y first (where they differ, or both were maximised) drew a corner better than both points
  chart("pareto-chart", { data: { datasets: [
    { type: "scatter", label: "Pareto front", data: front, parsing: false, backgroundColor: "#d6336c", pointRadius: 5, showLine: true, stepped: "before", borderColor: "#d6336c" },
    { type: "scatter", label: "dominated", data: pts((q) => !q.front && q.feasible), parsing: false, backgroundColor: "#adb5bd", pointRadius: 4 },
    { type: "scatter", label: "infeasible", data: pts((q) => !q.feasible), parsing: false, pointStyle: "crossRot", borderColor: "#495057", pointRadius: 5 },
    ...(p.ref ? [{ type: "scatter", label: "hypervolume reference point", data: [{ x: p.ref[0], y: p.ref[1], trial: "reference point" }], parsing: false,
      pointStyle: "rectRot", backgroundColor: "#f08c00", pointRadius: 6 }] : [])] },
  options: { maintainAspectRatio: false, scales: { x: { type: "linear", title: { display: true, text: withUnit(a) } }, y: { title: { display: true, text: withUnit(b) } } },
    plugins: { tooltip: { callbacks: { label: (c) => `${c.raw.trial}: ${fmt(c.raw.x)}, ${fmt(c.raw.y)}` } } },
    onClick: (evt, items, c) => { const p = clicked(c, items); if (p) selectTrial(p.trial, true); } } });
  $("#hv-caption").textContent = "Hypervolume of the feasible finished trials after each trial, against one reference point fixed from the run's start: " +
    (p.ref ? p.objectives.map((o, i) => `${o} = ${fmtU(o, p.ref[i])}`).join(", ") + ` (${p.ref_how}).` : `none yet (${p.ref_how}).`);
  chart("hv-chart", { data: { datasets: [{ type: "line", label: "hypervolume", data: p.hypervolume, parsing: false, stepped: "before",
    borderColor: "#2f6fd6", pointRadius: 2 }] },
  options: { maintainAspectRatio: false, plugins: { legend: { display: false } },
    scales: { x: { type: "linear", title: { display: true, text: "trial (t0000 = 0)" }, ticks: { precision: 0 } }, y: { title: { display: true, text: "hypervolume" } } } } });
}
function drawTimeline(run, serverDate) {
  // running trials end at the server's clock (the Date header): redrawn at every poll while any runs
  const tl = run.timeline, stopped = tl.bars.filter((b) => b.status === "stopped").length;
  const now = serverDate && tl.origin ? (Date.parse(serverDate) - Date.parse(tl.origin)) / 1000
    : Math.max(0, ...tl.bars.map((b) => b.end ?? b.start));
  $("#timeline").hidden = tl.lanes < 2 && !stopped;
  if ($("#timeline").hidden) return;
  const lanes = Array.from({ length: tl.lanes }, (_, i) => `lane ${i + 1}`);
  const live = !(run.summary.activity && run.summary.activity.killed);  // a killed run's trials run no more
  const datasets = Object.keys(run.summary.counts).map((s) => ({ label: s, grouped: false, barThickness: 16,
    // a white edge keeps back-to-back trials of one lane two bars, not one
    backgroundColor: STATUS_COLORS[s], borderColor: s === "stopped" ? "#7f4a00" : "#ffffff", borderWidth: s === "stopped" ? 2 : 1.5,
    borderSkipped: false,
    // no end: still running (to the server's clock), or left running by a dead run (end unknown: a mark at its start)
    data: tl.bars.filter((b) => b.status === s).map((b) => ({ x: [b.start, Math.max(b.end ?? (s === "running" && live ? now : b.start), b.start)], y: lanes[b.lane], trial: b.trial })) }));
  $("#timeline-caption").textContent = `${count(tl.bars.length, "trial")} on ${count(tl.lanes, "lane")} (a trial takes the first lane free when it starts: as many lanes as trials ran at once); ${stopped} stopped early.`;
  chart("timeline-chart", { type: "bar", data: { labels: lanes, datasets },
    options: { indexAxis: "y", maintainAspectRatio: false, scales: { x: { type: "linear", title: { display: true, text: "seconds since the first trial started" } } },
      plugins: { tooltip: { callbacks: { label: (c) => `${c.raw.trial}: ${fmt(c.raw.x[0])}–${fmt(c.raw.x[1])} s (${c.dataset.label})` } } },
      onClick: (evt, items, c) => { const p = clicked(c, items); if (p) selectTrial(p.trial, true); } } });
}

// --- polling ----------------------------------------------------------------------------------------------
const graphWanted = () => `${state.study}:${state.run?.graph_id}:${state.scope}:${state.scopeNode}`;
async function refreshGraph(force = false) {
  const key = graphWanted();
  if (!force && key === state.graphKey) return;
  const { data } = await getJSON(apiUrl(`/api/graph?scope=${state.scope}` + (state.scopeNode ? `&node=${encodeURIComponent(state.scopeNode)}` : "")));
  // another study, graph or scope was asked for meanwhile: its own answer draws it, and this
  // slower one must not draw over it (a scope clicked as the page loaded was undone so)
  if (key !== graphWanted()) return;
  state.graphKey = key;
  state.graph = data.graph;
  if (data.graph) $("#node-names").replaceChildren(...data.graph.names.map((n) => el("option", { value: n })));
  drawGraph();
}
function focusNode(id) { state.scope = "node"; state.scopeNode = id; refreshGraph(true).then(() => drawNodeDetail(id)); }
async function refreshModels() {
  const key = `${state.run.graph_id}:${state.run.trials.filter((t) => t.status === "done" || t.status === "stopped").length}`;
  if (key === state.modelsKey && state.models && state.models.status === "ready") return;
  const study = state.study;
  const { data } = await getJSON(apiUrl("/api/models"));
  if (study !== state.study) return;
  state.models = data;
  if (data.status === "ready") state.modelsKey = key;
  drawModels();
}
// --- several studies side by side: a selector, their best so far overlaid -----------------------------
const STUDY_COLORS = ["#2f6fd6", "#e8590c", "#2f9e44", "#ae3ec9", "#c92a2a", "#1098ad", "#f08c00", "#495057"];
function drawStudies() {
  const list = state.studies || [];
  $("#studies").hidden = list.length < 2;
  $("#study-pick").hidden = list.length < 2;
  if (list.length < 2) return;
  if ($("#study-select").options.length !== list.length) {
    $("#study-select").replaceChildren(...list.map((x) => el("option", { value: x.index }, x.name)));
  }
  $("#study-select").value = String(state.study);
  const current = list[state.study] || list[0];
  const obj = (current.objectives[state.objective] || current.objectives[0] || {}).name;
  const units = current.units || {};
  const label = (name) => units[name] ? `${name} (${units[name]})` : name;
  const same = list.filter((x) => x.history.some((h) => h.objective === obj));
  $("#studies-caption").textContent = `${list.length} studies, read-only; best feasible ${obj} so far in each of the ${same.length} ` +
    `that have it (the selected study's tab decides the objective). Click a row, or pick above, to see a study.`;
  const names = [...new Set(list.flatMap((x) => x.objectives.map((o) => o.name)))];
  $("#studies-table thead").replaceChildren(el("tr", {}, ...["study", "strategy", "done", ...names.map((n) => `best ${label(n)}`)].map((h) => el("th", {}, h))));
  $("#studies-table tbody").replaceChildren(...list.map((x) => el("tr", { class: x.index === state.study ? "selected" : "",
    "data-study": x.index, onclick: () => pickStudy(x.index) },
  el("td", {}, x.name), el("td", {}, x.strategy || "–"), el("td", { class: "num" }, x.counts ? x.counts.done : 0),
  ...names.map((n) => el("td", { class: "num" }, x.best[n] ? `${fmt(x.best[n].value)} (${x.best[n].trial})` : "–")))));
  chart("studies-chart", { data: { datasets: same.map((x) => {
    const h = x.history.find((y) => y.objective === obj), color = STUDY_COLORS[x.index % STUDY_COLORS.length];
    return { type: "line", label: `${x.name} (${x.strategy})`, data: h.best, parsing: false, stepped: "before",
      borderColor: color, backgroundColor: color, borderWidth: x.index === state.study ? 3 : 1.8, pointRadius: 2 };
  }) },
  options: { maintainAspectRatio: false, scales: {
    x: { type: "linear", title: { display: true, text: "trial (t0000 = 0)" }, ticks: { precision: 0 } },
    y: { type: state.logScale ? "logarithmic" : "linear", title: { display: true, text: `best ${label(obj)} so far` } } } } });
}
function pickStudy(i) {  // another study: every view starts afresh on it
  if (Number(i) === state.study) return;
  Object.assign(state, { study: Number(i), run: null, runText: "", objective: 0, selectedTrial: null, extraColumns: [], brush: {},
    sliceParam: null, slicePicked: false, scope: "auto", scopeNode: null, graphKey: null, graph: null, foldedInit: false,
    models: null, modelsKey: null, fitNode: null, effectParam: null });
  state.folded.clear();
  $("#add-column").replaceChildren(el("option", { value: "" }, "+ column…"));
  $("#slice-param").replaceChildren();
  $("#trial-detail").replaceChildren(el("p", { class: "hint" }, "Click a trial to see its configuration, why it was proposed and where its logs are."));
  drawStudies();
  update();
}
async function update() {
  const study = state.study;
  const { text, data, date } = await getJSON(apiUrl("/api/run"));
  if (study !== state.study) return data;  // another study was picked meanwhile
  if (text !== state.runText) {
    state.run = data; state.runText = text;
    drawHeader(data);
    if (data.summary.recorded) {
      drawConvergence(data); drawBest(data); drawTrials(data); drawPareto(data); drawTimeline(data, date);
      drawParcoords(); drawSlice();
      await refreshGraph();
    }
  } else if (data.summary.recorded && data.summary.counts.running) drawTimeline(data, date);
  if (data.summary.activity && data.summary.activity.state === "proposing") drawHeader(data);  // the clock
  if (data.summary.recorded) await refreshModels();
  if (state.studies === null || state.studies.length > 1) {
    const { text: listed, data: studies } = await getJSON("/api/studies");
    if (listed !== state.studiesText) { state.studiesText = listed; state.studies = studies.studies; drawStudies(); }
  }
  return data;
}
async function poll() {
  let delay = 2000;
  try {
    const data = await update();
    delay = 1000 * (data.poll_s || 2);
    $("#live").className = "ok";
    $("#updated").textContent = `live · updated ${new Date().toLocaleTimeString()}`;
  } catch (err) {
    $("#live").className = "err";
    $("#updated").textContent = state.run ? `the dashboard's server stopped (the run that served it ended?): this is its last state; ` +
      `boanon dashboard ${state.run.summary.store} serves it again (${err.message})` : `cannot reach the dashboard (${err.message})`;
  }
  setTimeout(poll, delay);
}

$("#study-select").addEventListener("change", (e) => pickStudy(e.target.value));
$("#trial-search").addEventListener("input", (e) => { state.search = e.target.value; if (state.run) drawTrials(state.run); });
$("#add-column").addEventListener("change", (e) => {
  const c = e.target.value; e.target.value = "";
  if (c && !state.extraColumns.includes(c)) { state.extraColumns.push(c); drawTrials(state.run); }
});
$("#log-scale").addEventListener("change", (e) => { state.logScale = e.target.checked; if (state.run) { drawConvergence(state.run); drawSlice(); drawStudies(); } });
$("#slice-param").addEventListener("change", (e) => { state.sliceParam = e.target.value; state.slicePicked = true; drawSlice(); });
for (const b of document.querySelectorAll("#graph-scope button")) {
  b.addEventListener("click", () => { state.scope = b.dataset.scope; state.scopeNode = null; refreshGraph(true); });
}
$("#node-search").addEventListener("change", (e) => {  // a name picked or typed: that node and what it touches
  const name = e.target.value.trim();
  if (state.graph && state.graph.names.includes(name)) focusNode(name);
  else if (name) $("#graph-caption").textContent = `no node named ${name} (the list offers the names)`;
});
$("#fold-all").addEventListener("click", () => { if (state.graph) { state.graph.groups.forEach((g) => state.folded.add(g)); drawGraph(); } });
$("#unfold-all").addEventListener("click", () => { state.folded.clear(); drawGraph(); });
$("#fit-graph").addEventListener("click", () => state.cy && state.cy.fit(undefined, 12));
poll();
