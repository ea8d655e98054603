"""Every user-facing string of the report, in Chinese and English.

One table, one spelling: the old tool's reports had ten ad-hoc spellings of
the same labels. Keys are stable identifiers; templates and rules look text
up here and nowhere else.
"""

from __future__ import annotations

from typing import Any

from repoherald.models import ChangeType, Importance

_TYPE = {
    "zh": {
        ChangeType.FEATURE: "新功能",
        ChangeType.BUGFIX: "问题修复",
        ChangeType.PERFORMANCE: "性能优化",
        ChangeType.REFACTOR: "代码重构",
        ChangeType.DOCS: "文档",
        ChangeType.TESTS: "测试",
        ChangeType.CI_BUILD: "CI/构建",
        ChangeType.DEPENDENCIES: "依赖更新",
        ChangeType.REVERT: "回退",
        ChangeType.OTHER: "其他",
    },
    "en": {
        ChangeType.FEATURE: "Feature",
        ChangeType.BUGFIX: "Bug fix",
        ChangeType.PERFORMANCE: "Performance",
        ChangeType.REFACTOR: "Refactor",
        ChangeType.DOCS: "Docs",
        ChangeType.TESTS: "Tests",
        ChangeType.CI_BUILD: "CI/Build",
        ChangeType.DEPENDENCIES: "Dependencies",
        ChangeType.REVERT: "Revert",
        ChangeType.OTHER: "Other",
    },
}

_IMPORTANCE = {
    "zh": {Importance.HIGH: "高", Importance.MEDIUM: "中", Importance.LOW: "低"},
    "en": {Importance.HIGH: "High", Importance.MEDIUM: "Medium", Importance.LOW: "Low"},
}

EMOJI = {Importance.HIGH: "🔴", Importance.MEDIUM: "🟡", Importance.LOW: "🟢"}

_TEXT: dict[str, dict[str, str]] = {
    "zh": {
        "title": "每日更新报告（{date}）",
        "window": "时间窗口",
        "branch": "分支",
        "analysed_by": "分析方式",
        "rules_only": "规则分析（{analyser}，未使用 LLM）",
        "generated": "生成时间",
        "tool": "工具",
        "toc": "📋 目录",
        "stats": "📊 统计摘要",
        "commits_table": "📝 提交列表",
        "group": "{emoji} {label}重要度变更 ({count})",
        "stats_line": "本日共 {n} 个提交 | 🔴高 {h} | 🟡中 {m} | 🟢低 {l}",
        "stats_lines": "改动 {files} 个文件，+{added}/−{deleted} 行；作者 {authors} 人",
        "stats_types": "变更类型",
        "stats_areas": "主要领域",
        "col_time": "提交时间",
        "col_author": "作者",
        "col_message": "提交信息",
        "col_importance": "重要度",
        "col_sha": "SHA",
        "view_commit": "查看提交",
        "view_pr": "PR #{n}",
        "field_type": "🎯 变更类型",
        "field_importance": "⚡ 重要程度",
        "field_summary": "📋 摘要",
        "field_summary_full": "📋 变更摘要",
        "field_reasons": "🧭 判定依据",
        "field_author": "👤 作者",
        "field_coauthors": "共同作者",
        "field_files": "📁 改动",
        "files_fmt": "{files} 个文件，+{added}/−{deleted} 行",
        "field_areas": "🧩 涉及领域",
        "field_description": "💬 提交说明（作者原文摘录）",
        "field_impact": "🎯 影响范围",
        "field_insights": "🔍 技术洞察",
        "field_risks": "⚠️ 潜在风险",
        "field_recommendations": "✅ 关注建议",
        "risk_col": "风险",
        "detail_col": "说明",
        "mitigation_col": "缓解措施",
        "insight_architecture": "架构影响",
        "insight_performance": "性能影响",
        "insight_security": "安全考虑",
        "insight_maintainability": "可维护性",
        "insight_compatibility": "兼容性",
        "quiet_day": "本日没有新的提交。",
        "no_commits_repo": "该仓库在本时间窗口内没有提交。",
        "repo_failed": "❌ 无法读取该仓库：{error}",
        "decode_warning": "提交信息含有无法按声明编码解码的字节，已替换显示。",
        "more_files": "……另有 {n} 个文件",
        "merge_note": "合并提交：改动按第一父提交计算。",
        "empty_message": "（空提交信息）",
        "footer": "由 repoherald {version} 生成；分析仅依据提交本身的内容。",
        "back_to_top": "返回目录",
        "llm_failed": "{error}；以下为规则分析。",
        "rule_verdict": "模型调整了规则判断（原为 {verdict}），依据见判定依据",
        "unverified": "事实核查：{n} 处无法由改动证实的内容已标注或删除（{items}）",
        "unseen": "模型未看到的文件：{files}",
        "llm_usage": "LLM 用量：{n} 个提交由模型分析，"
        "提示 {prompt} tokens，生成 {completion} tokens。",
        "llm_by": "规则 + 模型（{analysers}）",
    },
    "en": {
        "title": "Daily update report ({date})",
        "window": "Window",
        "branch": "Branch",
        "analysed_by": "Analysis",
        "rules_only": "rules ({analyser}, no LLM)",
        "generated": "Generated",
        "tool": "Tool",
        "toc": "📋 Contents",
        "stats": "📊 Statistics",
        "commits_table": "📝 Commits",
        "group": "{emoji} {label} importance ({count})",
        "stats_line": "{n} commits today | 🔴 High {h} | 🟡 Medium {m} | 🟢 Low {l}",
        "stats_lines": "{files} files changed, +{added}/−{deleted} lines; {authors} authors",
        "stats_types": "Change types",
        "stats_areas": "Main areas",
        "col_time": "Time",
        "col_author": "Author",
        "col_message": "Message",
        "col_importance": "Importance",
        "col_sha": "SHA",
        "view_commit": "View commit",
        "view_pr": "PR #{n}",
        "field_type": "🎯 Change type",
        "field_importance": "⚡ Importance",
        "field_summary": "📋 Summary",
        "field_summary_full": "📋 Summary of changes",
        "field_reasons": "🧭 Why this rating",
        "field_author": "👤 Author",
        "field_coauthors": "co-authors",
        "field_files": "📁 Changes",
        "files_fmt": "{files} files, +{added}/−{deleted} lines",
        "field_areas": "🧩 Areas",
        "field_description": "💬 Description (the author's words)",
        "field_impact": "🎯 Impact scope",
        "field_insights": "🔍 Technical insights",
        "field_risks": "⚠️ Potential risks",
        "field_recommendations": "✅ Recommendations",
        "risk_col": "Risk",
        "detail_col": "Detail",
        "mitigation_col": "Mitigation",
        "insight_architecture": "Architecture",
        "insight_performance": "Performance",
        "insight_security": "Security",
        "insight_maintainability": "Maintainability",
        "insight_compatibility": "Compatibility",
        "quiet_day": "No new commits on this day.",
        "no_commits_repo": "No commits in this window.",
        "repo_failed": "❌ This repository could not be read: {error}",
        "decode_warning": "The commit message has bytes that do not decode in its declared"
        " encoding; they are shown replaced.",
        "more_files": "…and {n} more files",
        "merge_note": "Merge commit: changes are counted against the first parent.",
        "empty_message": "(empty commit message)",
        "footer": "Generated by repoherald {version}; analysis states only what the commit shows.",
        "back_to_top": "Back to contents",
        "llm_failed": "{error}; the rule analysis is shown instead.",
        "rule_verdict": "the model changed the rules' verdict (was {verdict}); see why above",
        "unverified": "Fact-check: {n} claims the change does not support were marked or removed"
        " ({items})",
        "unseen": "Files the model did not see: {files}",
        "llm_usage": "LLM usage: {n} commits analysed by the model, {prompt} prompt tokens,"
        " {completion} completion tokens.",
        "llm_by": "rules + model ({analysers})",
    },
}


def t(lang: str, key: str, **kwargs: Any) -> str:
    """The text for ``key`` in ``lang``, formatted with ``kwargs``."""
    text = _TEXT[lang][key]
    return text.format(**kwargs) if kwargs else text


def type_label(lang: str, change_type: ChangeType) -> str:
    return _TYPE[lang][change_type]


def importance_label(lang: str, importance: Importance) -> str:
    return _IMPORTANCE[lang][importance]


def importance_badge(lang: str, importance: Importance) -> str:
    """``🔴 高`` — always the emoji, one space, the word."""
    return f"{EMOJI[importance]} {_IMPORTANCE[lang][importance]}"
