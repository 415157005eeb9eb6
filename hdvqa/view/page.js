// hdvqa question viewer: filters by category, prototype and text; state in the URL fragment.
// Every text from the data goes in through textContent, never as HTML.
(function () {
  "use strict";
  const QUESTIONS = JSON.parse(document.getElementById("questions").textContent);
  const URLS = JSON.parse(document.getElementById("urls").textContent);
  const PAGE = 200; // questions rendered per "show more"
  const TIME = /<TIME\s+(\d+):(\d+):(\d+(?:\.\d*)?)\s([^<>]*)>/g; // linear: no two runs of \s in a row
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  let shown = PAGE;

  function seconds(clock) {
    const p = String(clock).split(":").map(Number);
    return p.length === 3 ? p[0] * 3600 + p[1] * 60 + p[2] : NaN;
  }

  function videoLink(videoId, at, label) {
    const url = Object.prototype.hasOwnProperty.call(URLS, videoId) ? URLS[videoId] : "";
    if (typeof url !== "string" || !/^https?:\/\//i.test(url)) return el("span", "time", label);
    const a = el("a", "time", label);
    a.href = url + (url.includes("?") ? "&" : "?") + "t=" + Math.max(0, Math.floor(at || 0));
    a.target = "_blank";
    a.rel = "noopener";
    return a;
  }

  // Text with <TIME ...> tags as links to the input's video at that second.
  function richText(text, inputs) {
    const frag = document.createDocumentFragment();
    let last = 0;
    for (const m of text.matchAll(TIME)) {
      frag.append(text.slice(last, m.index));
      const at = Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
      const name = m[4].trim();
      const input = Object.prototype.hasOwnProperty.call(inputs, name) ? inputs[name] : null;
      frag.append(videoLink(input ? input.id : "", at, m[0]));
      last = m.index + m[0].length;
    }
    frag.append(text.slice(last));
    return frag;
  }

  function card(q) {
    const art = el("article", "q");
    art.dataset.key = q.k;
    art.dataset.category = q.c;
    art.dataset.prototype = q.t;
    const head = el("div", "head");
    head.append(el("span", "key", q.k), el("span", "tag", q.c), el("span", "tag", q.p));
    const question = el("p", "question");
    question.append(richText(q.q, q.in));
    const inputs = el("ul", "inputs");
    for (const [label, spec] of Object.entries(q.in)) {
      const li = el("li", "", label + ": ");
      let at = 0, span = spec.id;
      if (spec.time) { at = seconds(spec.time); span += " at " + spec.time; }
      else if (spec.start_time) { at = seconds(spec.start_time); span += " " + spec.start_time + " - " + (spec.end_time || "end"); }
      else span += " (whole video)";
      li.append(videoLink(spec.id, at, span));
      inputs.append(li);
    }
    const choices = el("ol", "choices");
    q.ch.forEach((text, i) => {
      const li = el("li", i === q.a ? "choice correct" : "choice");
      li.dataset.index = String(i);
      li.append(richText(text, q.in));
      if (i === q.a) li.append(el("span", "mark", " \u2714 correct"));
      if (q.pv[i]) li.append(el("div", "prov", q.pv[i]));
      choices.append(li);
    });
    art.append(head, question, inputs, choices);
    if (q.m) art.append(el("div", "meta", q.m));
    return art;
  }

  function state() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ""));
    return { category: p.get("category") || "", prototype: p.get("prototype") || "", text: p.get("q") || "" };
  }

  function setState(s) {
    const p = new URLSearchParams();
    if (s.category) p.set("category", s.category);
    if (s.prototype) p.set("prototype", s.prototype);
    if (s.text) p.set("q", s.text);
    history.replaceState(null, "", "#" + p.toString());
  }

  function options(select, values, current, all) {
    select.replaceChildren(el("option", "", all));
    select.firstChild.value = "";
    for (const v of values) {
      const o = el("option", "", v);
      o.value = v;
      select.append(o);
    }
    select.value = values.includes(current) ? current : "";
  }

  function matches(q, s) {
    if (s.category && q.c !== s.category) return false;
    if (s.prototype && q.t !== s.prototype && q.p !== s.prototype) return false;
    if (!s.text) return true;
    const needle = s.text.toLowerCase();
    return [q.k, q.q].concat(q.ch).some((t) => t.toLowerCase().includes(needle));
  }

  function render() {
    const s = state();
    const categories = [...new Set(QUESTIONS.map((q) => q.c))].sort();
    options($("category"), categories, s.category, "all categories");
    const protos = [...new Set(QUESTIONS.filter((q) => !s.category || q.c === s.category).map((q) => q.t))].sort();
    const protoValue = protos.includes(s.prototype) ? s.prototype : (protos.find((t) => QUESTIONS.some((q) => q.t === t && q.p === s.prototype)) || "");
    options($("prototype"), protos, protoValue, "all prototypes");
    $("text").value = s.text;
    const hits = QUESTIONS.filter((q) => matches(q, s));
    $("count").textContent = hits.length + " of " + QUESTIONS.length + " questions";
    $("count").dataset.matches = String(hits.length);
    $("list").replaceChildren(...hits.slice(0, shown).map(card));
    $("more").hidden = hits.length <= shown;
  }

  function changed() {
    shown = PAGE;
    setState({ category: $("category").value, prototype: $("prototype").value, text: $("text").value });
    render();
  }

  $("category").addEventListener("change", () => { $("prototype").value = ""; changed(); });
  $("prototype").addEventListener("change", changed);
  $("text").addEventListener("input", changed);
  $("more").addEventListener("click", () => { shown += PAGE; render(); });
  window.addEventListener("hashchange", () => { shown = PAGE; render(); });
  render();
})();
