"""The static site of the archive: ``repoherald site`` and ``[site] out`` under ``run``.

:func:`build_site` reads the archive's JSON twins (:mod:`.twins`, the one
place the site parses them) and writes, incrementally (:mod:`.manifest`):

==============================  ===============================================
``index.html``                  home: repositories, recent days, 🔴 counts, heat-map, problems
``<twin path>.html``            one page per twin (a repository-day in one language), beside
                                where the twin lies in the archive: ``2026/vllm/2026-08-20.en.html``
``repos/<name>.html``           a repository's history, 🔴 and "affects your code" across days
``repos/<name>.trends.html``    its weekly trends; ``trends.html``: every repository's
``search.html``, ``search/``    client-side search, its index (:mod:`.searchindex`)
``assets/``                     ``site.css``, ``site.js`` (filters), ``search.js``
==============================  ===============================================

Stable hooks for browser tests (kept across versions):

* every page: ``<body data-page="home|day|repo|trends|search" data-root="../">``;
  navigation links ``#nav-home``, ``#nav-trends``, ``#nav-search`` (day pages
  also ``#nav-repo``, language switches ``a.lang-switch[data-lang-switch=en]``);
  ``h1#title``.
* filters (day, repo and search pages): ``form#filters`` (GET) with
  ``select[name=importance|type|area|label]`` (ids ``#f-importance``…) and
  ``input[name=affects]`` (``#f-affects``); the query string
  ``?importance=high&type=bugfix&area=x&label=y&affects=1`` is the filter.
  Filtered items carry ``[data-commit]`` with ``data-importance``,
  ``data-type``, ``data-areas`` / ``data-labels`` (JSON lists) and
  ``data-affects`` (``1``/``0``); hidden ones get the ``hidden`` attribute;
  ``output#filter-count`` counts the shown rows.
* day page: ``section.repo[data-repo]``, ``article.commit#<anchor>`` per commit
  (the Markdown report's anchors) holding ``span#c-<first 10 digits of the SHA>``
  (where search results link), ``table.commits`` rows linking to them.
* home: ``section#heat svg.heatmap`` (``rect[data-date][data-commits][data-high]``),
  ``section#problems li[data-problem]`` (one per unusable twin),
  ``.repo-card[data-repo] a[data-repo-link]``, ``a[data-day-link]``,
  ``form#quick-search`` (to ``search.html?q=``).
* trends: ``section.trend#trend-types|high|affects`` with ``svg.chart[data-chart]``
  and ``table.numbers[data-table]`` inside ``details``.
* search: ``form#search-form input#q`` (``?q=`` in the URL), ``#search-status``
  (``data-count``, ``data-ms``: the last search's time), ``ol#search-results
  li[data-result=<sha10>] a``; ``window.RHSearch.run(query, filters)`` resolves to
  ``{count, results: [{href, title, repo, date, importance, type, sha, author}]}``.
"""

from __future__ import annotations

from repoherald.site.build import SiteResult, build_site

__all__ = ["SiteResult", "build_site"]
