"""The site's own words (navigation, filters, charts), in each report language.

Report labels (field names, change types, importance) come from the report
catalogues in :mod:`repoherald.i18n`, so a day page says what the Markdown
says; only what exists on the site alone is written here.
"""

from __future__ import annotations

WORDS: dict[str, dict[str, str]] = {
    "en": {
        "site_title": "repoherald archive",
        "home": "Home",
        "trends": "Trends",
        "search": "Search",
        "repos": "Repositories",
        "recent_days": "Recent days",
        "history": "History",
        "day": "Day",
        "commits": "Commits",
        "failed": "Failed",
        "problems": "Pages that could not be built",
        "problems_intro": "These twins were skipped; every other page is current.",
        "filters": "Filters",
        "all": "All",
        "importance": "Importance",
        "type": "Change type",
        "area": "Area",
        "label": "PR label",
        "affects": "Affects your code",
        "affects_yes": "Only commits that affect your code",
        "apply": "Apply",
        "shown": "Commits shown",
        "other_lang": "Also in",
        "heatmap": "Commits per day over the year",
        "notable": "🔴 and commits that affect your code",
        "week": "Week",
        "per_week_type": "Commits per week by change type",
        "per_week_high": "🔴 per week by area",
        "per_week_affects": "Commits that affected your code, per week",
        "table": "As a table",
        "search_placeholder": "Title, summary, reason, API, author or SHA",
        "search_nojs": "Search runs in your browser: it needs JavaScript.",
        "search_intro": "Searches every report of the archive, in this browser.",
        "trends_all": "Trends of every repository",
        "repo_trends": "Trends",
        "no_days": "No report in the archive yet.",
        "generated": "Built by repoherald {version} from the archive's JSON twins.",
        "other": "other",
        "none": "none",
    },
    "zh": {
        "site_title": "repoherald 归档",
        "home": "首页",
        "trends": "趋势",
        "search": "搜索",
        "repos": "仓库",
        "recent_days": "最近几天",
        "history": "历史",
        "day": "日期",
        "commits": "提交",
        "failed": "失败",
        "problems": "未能生成的页面",
        "problems_intro": "以下 JSON 报告被跳过；其余页面均已更新。",
        "filters": "筛选",
        "all": "全部",
        "importance": "重要性",
        "type": "变更类型",
        "area": "领域",
        "label": "PR 标签",
        "affects": "影响你的代码",
        "affects_yes": "只看影响你代码的提交",
        "apply": "应用",
        "shown": "显示的提交",
        "other_lang": "其他语言",
        "heatmap": "一年中每天的提交数",
        "notable": "🔴 以及影响你代码的提交",
        "week": "周",
        "per_week_type": "每周提交数（按变更类型）",
        "per_week_high": "每周 🔴 数（按领域）",
        "per_week_affects": "每周影响你代码的提交",
        "table": "表格",
        "search_placeholder": "标题、摘要、理由、API、作者或 SHA",
        "search_nojs": "搜索在浏览器中运行，需要 JavaScript。",
        "search_intro": "在浏览器中搜索归档中的所有报告。",
        "trends_all": "所有仓库的趋势",
        "repo_trends": "趋势",
        "no_days": "归档中还没有报告。",
        "generated": "由 repoherald {version} 根据归档的 JSON 报告生成。",
        "other": "其他",
        "none": "无",
    },
}


def word(lang: str, key: str, **kwargs: object) -> str:
    """The site's text for ``key`` in ``lang`` (English when the language has none)."""
    text = WORDS.get(lang, WORDS["en"]).get(key) or WORDS["en"][key]
    return text.format(**kwargs) if kwargs else text
