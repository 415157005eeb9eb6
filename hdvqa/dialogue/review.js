// hdvqa review page: label each question set (Ego-EXTRA steps 2 and 3) and export the labels.
// Every text from the data goes in through textContent, never as HTML. The URL fragment may
// carry labels (#reviewer=NAME&label=KEY:VALIDATION:GROUNDING&...&export=1): they are applied by
// clicking the page's own radio buttons and export button, as a reviewer would. Labels and the
// reviewer's name are saved in localStorage under the sets' identity as they are made, restored on
// reload; leaving with labels not yet exported asks first.
(function () {
  "use strict";
  const ITEMS = JSON.parse(document.getElementById("items").textContent);
  const SETS = JSON.parse(document.getElementById("labelsets").textContent);
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const URLS = JSON.parse(document.getElementById("urls").textContent);
  const STORE = "hdvqa-review:" + JSON.parse(document.getElementById("identity").textContent);
  const labels = {}; // key -> {validation, grounding}
  let unsaved = false; // labels made since the last export

  function storage() {
    try {
      return window.localStorage; // null or throwing where the browser keeps none (privacy modes)
    } catch (e) {
      return null;
    }
  }

  function save() {
    const store = storage();
    if (!store) return;
    try {
      store.setItem(STORE, JSON.stringify({ reviewer: $("reviewer").value, labels: labels, unsaved: unsaved }));
    } catch (e) {
      /* full or refused: the labels stay in the page, the beforeunload warning still guards them */
    }
  }

  function restore() {
    const store = storage();
    let doc = null;
    try {
      doc = store ? JSON.parse(store.getItem(STORE) || "null") : null;
    } catch (e) {
      doc = null;
    }
    if (!doc || typeof doc !== "object") return;
    if (typeof doc.reviewer === "string") $("reviewer").value = doc.reviewer;
    const index = new Map(ITEMS.map((q, i) => [q.k, i]));
    for (const [key, got] of Object.entries(doc.labels || {})) {
      if (!index.has(key) || !got || typeof got !== "object") continue;
      for (const set of ["validation", "grounding"]) {
        if (typeof got[set] !== "string") continue;
        const input = document.querySelector('input[name="' + set + "-" + index.get(key) + '"][value="' + CSS.escape(got[set]) + '"]');
        if (input) {
          input.checked = true;
          labels[key] = labels[key] || {};
          labels[key][set] = got[set];
        }
      }
    }
    unsaved = Boolean(doc.unsaved);
  }

  function progress() {
    const done = ITEMS.filter((q) => labels[q.k] && labels[q.k].validation && labels[q.k].grounding).length;
    $("progress").textContent = done + " of " + ITEMS.length + " sets labelled" + (unsaved ? " (not exported yet)" : "");
    $("progress").dataset.done = String(done);
    $("progress").dataset.unsaved = unsaved ? "1" : "0"; // what beforeunload asks about
  }

  function choose(key, set, value) {
    labels[key] = labels[key] || {};
    labels[key][set] = value;
    unsaved = true;
    save();
    progress();
  }

  function labelGroup(q, i, set) {
    const box = el("fieldset", "labels " + set);
    box.append(el("legend", null, set === "validation" ? "Step 2: the set" : "Step 3: grounding in the clip"));
    for (const [value, title] of SETS[set]) {
      const lab = el("label");
      const input = el("input");
      input.type = "radio";
      input.name = set + "-" + i;
      input.value = value;
      input.dataset.key = q.k;
      input.addEventListener("change", () => choose(q.k, set, value));
      lab.append(input, " " + title);
      box.append(lab);
    }
    return box;
  }

  function card(q, i) {
    const art = el("article", "q");
    art.dataset.key = q.k;
    art.append(el("div", "key", q.k + (q.v ? "  (variant of " + q.v + ")" : "")));
    const clip = Object.values(q.in || {})[0];
    if (clip) {
      const line = el("div", "clip", "clip: ");
      const label = clip.id + " " + (clip.start_time || "") + " - " + (clip.end_time || "");
      const url = Object.prototype.hasOwnProperty.call(URLS, clip.id) ? URLS[clip.id] : "";
      if (typeof url === "string" && /^https?:\/\//i.test(url)) { // the video at the clip's start, as view links inputs
        const a = el("a", "cliplink", label);
        a.href = url + (url.includes("?") ? "&" : "?") + "t=" + Math.max(0, Math.floor(seconds(clip.start_time) || 0));
        a.target = "_blank";
        a.rel = "noopener";
        line.append(a);
      } else {
        line.append(label);
      }
      art.append(line);
    }
    const talk = el("ol", "turns");
    for (const t of q.turns) {
      const li = el("li", t.focus ? "turn focus" : "turn", "ID " + t.id + " " + (t.who === "trainee" ? "T" : "E") + ": " + t.text);
      li.dataset.turn = t.id;
      talk.append(li);
    }
    if (!q.turns.length) talk.append(el("li", "turn missing", "(the conversation of this set is not in the dialogue given)"));
    art.append(talk);
    art.append(el("h2", "question", q.q));
    const list = el("ol", "choices");
    q.ch.forEach((c, j) => list.append(el("li", j === q.a ? "choice correct" : "choice", c)));
    art.append(list, labelGroup(q, i, "validation"), labelGroup(q, i, "grounding"));
    return art;
  }

  function seconds(clock) {
    const p = String(clock || "").split(":").map(Number);
    return p.length === 3 ? p[0] * 3600 + p[1] * 60 + p[2] : NaN;
  }

  function exported() {
    const name = $("reviewer").value.trim();
    const doc = { reviewer: name, labels: {} };
    for (const q of ITEMS) if (labels[q.k]) doc.labels[q.k] = labels[q.k];
    return JSON.stringify(doc, null, 1);
  }

  function doExport() {
    if (!$("reviewer").value.trim()) {
      $("exported").value = "";
      $("exported").placeholder = "give your name first";
      return;
    }
    const text = exported();
    $("exported").value = text;
    $("exported").textContent = text; // also in the DOM a dump shows
    const link = $("download");
    link.href = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    link.download = "labels-" + $("reviewer").value.trim().replace(/[^\w.-]+/g, "_") + ".json";
    link.hidden = false;
    unsaved = false;
    save();
    progress();
  }

  function applyFragment() {
    const params = new URLSearchParams(location.hash.slice(1));
    if (params.has("reviewer")) $("reviewer").value = params.get("reviewer");
    const index = new Map(ITEMS.map((q, i) => [q.k, i]));
    for (const spec of params.getAll("label")) {
      const parts = spec.split(":");
      const grounding = parts.pop(), validation = parts.pop(), key = parts.join(":");
      if (!index.has(key)) continue;
      for (const [set, value] of [["validation", validation], ["grounding", grounding]]) {
        const input = document.querySelector('input[name="' + set + "-" + index.get(key) + '"][value="' + value + '"]');
        if (input) input.click();
      }
    }
    if (params.get("export") === "1") $("export").click();
  }

  const main = $("list");
  ITEMS.forEach((q, i) => main.append(card(q, i)));
  $("export").addEventListener("click", doExport);
  $("reviewer").addEventListener("input", save);
  window.addEventListener("beforeunload", (event) => {
    if (!unsaved) return;
    event.preventDefault();
    event.returnValue = ""; // the browser's own "leave site?" question
  });
  restore();
  progress();
  applyFragment();
})();
