/* repoherald site: client-side search over the index the build wrote (search/*.js).
   Index files are scripts calling RHS.*, so the search works from file:// too. */
(function () {
  "use strict";
  var CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af";
  var TOKEN = new RegExp("[" + CJK + "]+|(?:(?![" + CJK + "])[\\p{L}\\p{N}\\p{M}_])+", "gu");
  var ISCJK = new RegExp("^[" + CJK + "]");
  var LIMIT = 100;
  var data = { meta: null, terms: {}, docs: {}, facets: null };
  var waiting = {};
  window.RHS = {
    meta: function (m) { data.meta = m; },
    terms: function (k, t) { data.terms[k] = t; },
    docs: function (i, rows) { data.docs[i] = rows; },
    facets: function (f) { data.facets = f; }
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
  function decode(s, into) {
    var n = 0;
    s.split(",").forEach(function (d) { n += parseInt(d, 36); into.add(n); });
  }
  function idsFor(token) {
    var key = termKey(token);
    if (data.meta.terms.indexOf(key) < 0) { return Promise.resolve(new Set()); }
    return load("t-" + key + ".js").then(function () {
      var found = new Set(), shard = data.terms[key];
      Object.keys(shard).forEach(function (term) {
        if (term.lastIndexOf(token, 0) === 0) { decode(shard[term], found); }
      });
      return found;
    });
  }
  function filtered(ids, f) {
    var fx = data.facets, m = data.meta;
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
  /* The search itself: resolves to {count, results: [doc rows]} (used by the page and tests). */
  function run(query, f) {
    f = f || {};
    var words = tokens(query || "");
    var anyFilter = f.importance || f.type || f.area || f.label || f.affects;
    return load("meta.js").then(function () {
      if (!words.length && !anyFilter) { return null; }
      var sets = words.length ? Promise.all(words.map(idsFor)) : Promise.resolve(null);
      return Promise.all([sets, anyFilter ? load("facets.js") : null]);
    }).then(function (got) {
      if (got === null) { return { count: 0, results: [], empty: true }; }
      var sets = got[0], ids;
      if (sets === null) {
        ids = [];
        for (var i = 0; i < data.meta.count; i++) { ids.push(i); }
      } else {
        sets.sort(function (a, b) { return a.size - b.size; });
        ids = Array.from(sets[0]).filter(function (id) {
          return sets.every(function (s) { return s.has(id); });
        });
        ids.sort(function (a, b) { return a - b; });
      }
      if (anyFilter) { ids = filtered(ids, f); }
      var shown = ids.slice(0, LIMIT);
      var blocks = Array.from(new Set(shown.map(function (id) { return Math.floor(id / data.meta.block); })));
      return Promise.all(blocks.map(function (b) { return load("docs-" + b + ".js"); })).then(function () {
        return {
          count: ids.length,
          results: shown.map(function (id) { return data.docs[Math.floor(id / data.meta.block)][id % data.meta.block]; })
        };
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
    res.results.forEach(function (row) {
      var li = document.createElement("li"), a = document.createElement("a");
      li.setAttribute("data-result", row[6]);
      a.href = root + row[0];
      a.textContent = row[1];
      var where = document.createElement("div");
      where.className = "where";
      var imp = { h: "🔴", m: "🟡", l: "🟢" }[row[4]] || "";
      where.textContent = imp + " " + data.meta.repos[row[2]] + " · " + row[3] + " · " + data.meta.types[row[5]] + " · " + row[6].slice(0, 7) + " · " + row[7];
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
