/* repoherald site: filters from the URL query. Without JavaScript every commit stays shown. */
(function () {
  "use strict";
  var KEYS = ["importance", "type", "area", "label", "affects"];
  function read() {
    var q = new URLSearchParams(window.location.search), f = {};
    KEYS.forEach(function (k) { f[k] = q.get(k) || ""; });
    return f;
  }
  function list(el, name) {
    try { return JSON.parse(el.getAttribute(name) || "[]"); } catch (e) { return []; }
  }
  function matches(el, f) {
    if (f.importance && el.dataset.importance !== f.importance) { return false; }
    if (f.type && el.dataset.type !== f.type) { return false; }
    if (f.area && list(el, "data-areas").indexOf(f.area) < 0) { return false; }
    if (f.label && list(el, "data-labels").indexOf(f.label) < 0) { return false; }
    if (f.affects && el.dataset.affects !== "1") { return false; }
    return true;
  }
  function apply(form, f) {
    var shown = 0, total = 0;
    document.querySelectorAll("[data-commit]").forEach(function (el) {
      var ok = matches(el, f);
      el.hidden = !ok;
      if (el.tagName === "TR") { total += 1; shown += ok ? 1 : 0; }
    });
    if (!total) {
      document.querySelectorAll("article[data-commit]").forEach(function (el) {
        total += 1; shown += el.hidden ? 0 : 1;
      });
    }
    var out = document.getElementById("filter-count");
    if (out) { out.textContent = String(shown); }
  }
  function fill(form, f) {
    KEYS.forEach(function (k) {
      var el = form.elements.namedItem(k);
      if (!el) { return; }
      if (el.type === "checkbox") { el.checked = f[k] === "1"; } else { el.value = f[k]; }
    });
  }
  function fromForm(form) {
    var f = {};
    KEYS.forEach(function (k) {
      var el = form.elements.namedItem(k);
      f[k] = !el ? "" : (el.type === "checkbox" ? (el.checked ? "1" : "") : el.value);
    });
    return f;
  }
  function toUrl(f) {
    var q = new URLSearchParams(window.location.search);
    KEYS.forEach(function (k) { if (f[k]) { q.set(k, f[k]); } else { q.delete(k); } });
    var s = q.toString();
    history.replaceState(null, "", window.location.pathname + (s ? "?" + s : "") + window.location.hash);
  }
  window.RHFilters = { read: read, fromForm: fromForm, toUrl: toUrl };
  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("filters");
    if (!form) { return; }
    var f = read();
    fill(form, f);
    var scope = form.getAttribute("data-filter-scope");
    function changed(ev) {
      if (ev) { ev.preventDefault(); }
      var g = fromForm(form);
      toUrl(g);
      if (scope === "search") {
        document.dispatchEvent(new CustomEvent("rh-filters"));
      } else {
        apply(form, g);
      }
    }
    form.addEventListener("change", changed);
    form.addEventListener("submit", changed);
    if (scope !== "search") { apply(form, f); }
  });
})();
