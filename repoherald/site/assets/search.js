/* repoherald site: client-side search over the index the build wrote (search/*.js).
   Index files are scripts calling RHS.*, so the search works from file:// too. */
(function () {
  "use strict";
  var CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af";
  var TOKEN = new RegExp("[" + CJK + "]+|(?:(?![" + CJK + "])[\\p{L}\\p{N}\\p{M}_])+", "gu");
  var ISCJK = new RegExp("^[" + CJK + "]");
  var LIMIT = 100;
  var data = { index: null, seg: {} };
  var waiting = {};
  function seg(id) {
    if (!data.seg[id]) { data.seg[id] = { meta: null, terms: {}, docs: {}, facets: null }; }
    return data.seg[id];
  }
  window.RHS = {
    index: function (ids) { data.index = ids; },
    meta: function (id, m) { seg(id).meta = m; },
    terms: function (id, k, t) { seg(id).terms[k] = t; },
    docs: function (id, i, rows) { seg(id).docs[i] = rows; },
    facets: function (id, f) { seg(id).facets = f; }
  };
  var root = document.body.getAttribute("data-root") || "";
  function load(name) {
    if (!waiting[name]) {
      waiting[name] = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = root + "search/" + name;
        s.onload = function () { resolve(); };
        s.onerror = function () { reject(new Error("cannot load search/" + name)); };
        document.head.appendChild(s);
      });
    }
    return waiting[name];
  }
  function tokens(text) {
    var out = [];
    var runs = text.toLowerCase().match(TOKEN) || [];
    runs.forEach(function (run) {
      if (ISCJK.test(run)) {
        if (run.length === 1) { out.push(run); }
        for (var i = 0; i + 1 < run.length; i++) { out.push(run.slice(i, i + 2)); }
      } else { out.push(run); }
    });
    return out;
  }
  function termKey(term) {
    var ch = term[0];
    if ((ch >= "a" && ch <= "z") || (ch >= "0" && ch <= "9")) { return ch; }
    return "u" + (ch.codePointAt(0) % 64).toString(16);
  }
  /* Base-36 gaps; "!gaps" lists the documents a very common term is NOT in. */
  function decode(s, into, count) {
    var n = 0, listed = new Set();
    if (s[0] !== "!") {
      s.split(",").forEach(function (d) { n += parseInt(d, 36); into.add(n); });
      return;
    }
    if (s.length > 1) { s.slice(1).split(",").forEach(function (d) { n += parseInt(d, 36); listed.add(n); }); }
    for (var i = 0; i < count; i++) { if (!listed.has(i)) { into.add(i); } }
  }
  function idsFor(id, token) {
    var key = termKey(token), sg = seg(id);
    if (sg.meta.terms.indexOf(key) < 0) { return Promise.resolve(new Set()); }
    return load(id + "/t-" + key + ".js").then(function () {
      var found = new Set(), shard = sg.terms[key];
      Object.keys(shard).forEach(function (term) {
        if (term.lastIndexOf(token, 0) === 0) { decode(shard[term], found, sg.meta.count); }
      });
      return found;
    });
  }
  function filtered(id, ids, f) {
    var sg = seg(id), fx = sg.facets, m = sg.meta;
    var type = f.type ? m.types.indexOf(f.type) : -1;
    var area = f.area ? m.areas.indexOf(f.area) : -1;
    var label = f.label ? m.labels.indexOf(f.label) : -1;
    return ids.filter(function (i) {
      if (f.importance && fx.imp[i] !== f.importance[0]) { return false; }
      if (f.type && fx.type[i] !== type) { return false; }
      if (f.area && fx.area[i].indexOf(area) < 0) { return false; }
      if (f.label && fx.label[i].indexOf(label) < 0) { return false; }
      if (f.affects && fx.affects[i] !== "1") { return false; }
      return true;
    });
  }
  /* One segment (a month): the matching document numbers, newest first. */
  function searchSegment(id, words, f, anyFilter) {
    return load(id + "/meta.js").then(function () {
      var sets = words.length ? Promise.all(words.map(function (w) { return idsFor(id, w); })) : null;
      return Promise.all([sets, anyFilter ? load(id + "/facets.js") : null]);
    }).then(function (got) {
      var sets = got[0], ids;
      if (sets === null) {
        ids = [];
        for (var i = 0; i < seg(id).meta.count; i++) { ids.push(i); }
      } else {
        sets.sort(function (a, b) { return a.size - b.size; });
        ids = Array.from(sets[0]).filter(function (n) {
          return sets.every(function (s) { return s.has(n); });
        });
        ids.sort(function (a, b) { return a - b; });
      }
      return anyFilter ? filtered(id, ids, f) : ids;
    });
  }
  function row(id, n) {
    var m = seg(id).meta, r = seg(id).docs[Math.floor(n / m.block)][n % m.block];
    var page = m.pages[r[0]];
    return { href: page[0] + "#c-" + r[5], title: r[1], repo: m.repos[r[2]], date: page[1],
      importance: r[3], type: m.types[r[4]], sha: r[5], author: m.authors[r[6]] };
  }
  /* The search itself: resolves to {count, results: [rows]} (used by the page and tests). */
  function run(query, f) {
    f = f || {};
    var words = tokens(query || "");
    var anyFilter = f.importance || f.type || f.area || f.label || f.affects;
    if (!words.length && !anyFilter) { return Promise.resolve({ count: 0, results: [], empty: true }); }
    return load("index.js").then(function () {
      return Promise.all(data.index.map(function (id) { return searchSegment(id, words, f, anyFilter); }));
    }).then(function (perSegment) {
      var count = 0, shown = [];
      perSegment.forEach(function (ids, k) {
        count += ids.length;
        ids.forEach(function (n) { if (shown.length < LIMIT) { shown.push([data.index[k], n]); } });
      });
      var blocks = {};
      shown.forEach(function (p) {
        blocks[p[0] + "/docs-" + Math.floor(p[1] / seg(p[0]).meta.block) + ".js"] = true;
      });
      return Promise.all(Object.keys(blocks).map(load)).then(function () {
        return { count: count, results: shown.map(function (p) { return row(p[0], p[1]); }) };
      });
    });
  }
  window.RHSearch = { run: run, tokens: tokens };
  function render(res, ms) {
    var status = document.getElementById("search-status");
    var list = document.getElementById("search-results");
    list.textContent = "";
    status.setAttribute("data-ms", String(Math.round(ms)));
    status.setAttribute("data-count", String(res.count));
    if (res.empty) { status.textContent = ""; return; }
    status.textContent = res.count + (res.count > res.results.length ? " (" + res.results.length + ")" : "");
    res.results.forEach(function (r) {
      var li = document.createElement("li"), a = document.createElement("a");
      li.setAttribute("data-result", r.sha);
      a.href = root + r.href;
      a.textContent = r.title;
      var where = document.createElement("div");
      where.className = "where";
      var imp = { h: "🔴", m: "🟡", l: "🟢" }[r.importance] || "";
      where.textContent = imp + " " + r.repo + " · " + r.date + " · " + r.type + " · " + r.sha.slice(0, 7) + " · " + r.author;
      li.appendChild(a); li.appendChild(where); list.appendChild(li);
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("search-form");
    if (!form) { return; }
    var input = document.getElementById("q");
    var params = new URLSearchParams(window.location.search);
    input.value = params.get("q") || "";
    var seq = 0;
    function go() {
      var mine = ++seq, t0 = performance.now();
      var filters = document.getElementById("filters");
      var f = filters && window.RHFilters ? window.RHFilters.fromForm(filters) : {};
      run(input.value, f).then(function (res) {
        if (mine === seq) { render(res, performance.now() - t0); }
      }, function (err) {
        document.getElementById("search-status").textContent = String(err.message || err);
      });
    }
    function syncUrl() {
      var q = new URLSearchParams(window.location.search);
      if (input.value) { q.set("q", input.value); } else { q.delete("q"); }
      var s = q.toString();
      history.replaceState(null, "", window.location.pathname + (s ? "?" + s : ""));
    }
    form.addEventListener("submit", function (ev) { ev.preventDefault(); syncUrl(); go(); });
    input.addEventListener("input", function () { syncUrl(); go(); });
    document.addEventListener("rh-filters", go);
    setTimeout(go, 0);
  });
})();
