/* repoherald site: client-side search over the index the build wrote (search/*.js).
   Index files are scripts calling RHS.*, so the search works from file:// too. */
(function () {
  "use strict";
  var CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af";
  var TOKEN = new RegExp("[" + CJK + "]+|(?:(?![" + CJK + "])[\\p{L}\\p{N}\\p{M}_])+", "gu");
  var ISCJK = new RegExp("^[" + CJK + "]");
  var LIMIT = 100;
  var LAST = "0123456789abcdefghijklmnopqrstuv", MORE = "wxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_";
  /* index: {months: [{id, first, count, block, repos, pages, authors, types, areas, labels}],
     terms: [shard keys]}; terms: shard key -> {term: postings}; month id -> docs, facets. */
  var data = { index: null, terms: {}, docs: {}, facets: {} };
  var waiting = {};
  window.RHS = {
    index: function (ix) { data.index = ix; },
    terms: function (k, t) { data.terms[k] = t; },
    docs: function (id, i, rows) { data.docs[id + "/" + i] = rows; },
    facets: function (id, f) { data.facets[id] = f; }
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
  function ascii(ch) { return (ch >= "a" && ch <= "z") || (ch >= "0" && ch <= "9"); }
  /* The shards a word's prefix matches may live in (see term_key in searchindex.py). */
  function shardsFor(word) {
    var ch = word[0];
    if (!ascii(ch)) { return ["_" + (ch.codePointAt(0) % 64).toString(16)]; }
    if (word.length > 1) { return [ch + (ascii(word[1]) ? word[1] : "-")]; }
    return data.index.terms.filter(function (k) { return k[0] === ch; });
  }
  /* Gaps in base 32: MORE digits, then one LAST digit; "*": every document. */
  function decode(s, into) {
    var n = 0, last = 0;
    if (s === "*") {
      var end = data.index.months[data.index.months.length - 1];
      for (var k = 0; k < end.first + end.count; k++) { into.add(k); }
      return;
    }
    for (var i = 0; i < s.length; i++) {
      var d = LAST.indexOf(s[i]);
      if (d < 0) { n = n * 32 + MORE.indexOf(s[i]); continue; }
      last += n * 32 + d; into.add(last); n = 0;
    }
  }
  function idsFor(word) {
    var keys = shardsFor(word).filter(function (k) { return data.index.terms.indexOf(k) >= 0; });
    return Promise.all(keys.map(function (k) { return load("t-" + k + ".js"); })).then(function () {
      var found = new Set();
      keys.forEach(function (k) {
        var shard = data.terms[k];
        Object.keys(shard).forEach(function (term) {
          if (term.lastIndexOf(word, 0) === 0) { decode(shard[term], found); }
        });
      });
      return found;
    });
  }
  /* The month of a document number: the last whose first is not after it. */
  function monthOf(n) {
    var months = data.index.months, lo = 0, hi = months.length - 1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (months[mid].first <= n) { lo = mid; } else { hi = mid - 1; }
    }
    return months[lo];
  }
  function filtered(ids, f) {
    return ids.filter(function (n) {
      var m = monthOf(n), fx = data.facets[m.id], i = n - m.first;
      if (f.importance && fx.imp[i] !== f.importance[0]) { return false; }
      if (f.type && fx.type[i] !== m.types.indexOf(f.type)) { return false; }
      if (f.area && fx.area[i].indexOf(m.areas.indexOf(f.area)) < 0) { return false; }
      if (f.label && fx.label[i].indexOf(m.labels.indexOf(f.label)) < 0) { return false; }
      if (f.affects && fx.affects[i] !== "1") { return false; }
      return true;
    });
  }
  /* The matching document numbers, newest first. */
  function matching(words, f, anyFilter) {
    var sets = words.length ? Promise.all(words.map(idsFor)) : Promise.resolve(null);
    return sets.then(function (sets) {
      var ids = [], i;
      if (sets === null) {
        var last = data.index.months[data.index.months.length - 1];
        var total = last ? last.first + last.count : 0;
        for (i = 0; i < total; i++) { ids.push(i); }
      } else {
        sets.sort(function (a, b) { return a.size - b.size; });
        ids = Array.from(sets[0]).filter(function (n) {
          return sets.every(function (s) { return s.has(n); });
        });
        ids.sort(function (a, b) { return a - b; });
      }
      if (!anyFilter) { return ids; }
      var months = {};
      ids.forEach(function (n) { months[monthOf(n).id] = true; });
      return Promise.all(Object.keys(months).map(function (id) { return load(id + "/facets.js"); }))
        .then(function () { return filtered(ids, f); });
    });
  }
  function row(n) {
    var m = monthOf(n), i = n - m.first;
    var r = data.docs[m.id + "/" + Math.floor(i / m.block)][i % m.block].split(" ");
    var page = m.pages[+r[0]];
    return { href: page[0] + "#c-" + r[4], title: r.slice(6).join(" "), repo: m.repos[+r[1]],
      date: page[1], importance: r[2], type: m.types[+r[3]], sha: r[4], author: m.authors[+r[5]] };
  }
  /* The search itself: resolves to {count, results: [rows]} (used by the page and tests). */
  function run(query, f) {
    f = f || {};
    var words = tokens(query || "");
    var anyFilter = f.importance || f.type || f.area || f.label || f.affects;
    if (!words.length && !anyFilter) { return Promise.resolve({ count: 0, results: [], empty: true }); }
    return load("index.js").then(function () {
      return matching(words, f, anyFilter);
    }).then(function (ids) {
      var shown = ids.slice(0, LIMIT), blocks = {};
      shown.forEach(function (n) {
        var m = monthOf(n);
        blocks[m.id + "/docs-" + Math.floor((n - m.first) / m.block) + ".js"] = true;
      });
      return Promise.all(Object.keys(blocks).map(load)).then(function () {
        return { count: ids.length, results: shown.map(row) };
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
