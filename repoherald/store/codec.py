"""The store's JSON codec: the pipeline's dataclasses to JSON builtins and back.

Only what is cached is rebuilt here (commits, facts, analyses and the
language-neutral messages inside them); the JSON twin of a report writes
with :func:`to_jsonable` too, so both keep one spelling of every field. It
lives beside the store rather than in :mod:`repoherald.models` so that the
models stay plain data, and a second store backend reuses it unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

from repoherald.models import (
    Analysis,
    ApiChange,
    Arg,
    ChangeType,
    Commit,
    DependencyChange,
    Facts,
    FileChange,
    FileStatus,
    FlagChange,
    HostBump,
    Importance,
    Message,
    OpChange,
    Person,
    PullRequest,
    Risk,
    Text,
)

_PLAIN = frozenset({str, int, float, bool, type(None)})
_Reader = tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]]
_FIELDS: dict[type, _Reader | None] = {}
"""Per type: a dataclass's field names and one getter that reads them all (None: not one)."""


def _field_reader(cls: type) -> _Reader | None:
    fields = getattr(cls, "__dataclass_fields__", None)
    if fields is None:
        _FIELDS[cls] = None
        return None
    names = tuple(fields)
    if len(names) == 1:
        one = attrgetter(names[0])
        reader: Callable[[Any], tuple[Any, ...]] = lambda obj: (one(obj),)  # noqa: E731
    else:
        reader = attrgetter(*names)
    _FIELDS[cls] = (names, reader)
    return names, reader


def to_jsonable(obj: Any) -> Any:
    """Turn a dataclass tree into JSON-compatible builtins, in one pass.

    (``dataclasses.asdict`` deep-copies first and was the main cost of
    writing a report from the cache.) Plain values, most of the tree, are
    taken as they are without a call; each dataclass type's fields are read
    by one ``attrgetter``.
    """
    cls = type(obj)
    if cls in _PLAIN:
        return obj
    spec = _FIELDS[cls] if cls in _FIELDS else _field_reader(cls)
    if spec is not None:
        names, read = spec
        return {
            name: value if type(value) in _PLAIN else to_jsonable(value)
            for name, value in zip(names, read(obj), strict=True)
        }
    if isinstance(obj, str | int | float | bool) or obj is None:
        return obj
    if isinstance(obj, dict):
        return {str(k): v if type(v) in _PLAIN else to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [v if type(v) in _PLAIN else to_jsonable(v) for v in obj]
    return obj


def facts_from_dict(d: dict[str, Any]) -> Facts:
    """Rebuild :class:`Facts` from its JSON form (as stored in SQLite)."""
    return Facts(
        files=tuple(FileChange(**{**f, "status": FileStatus(f["status"])}) for f in d["files"]),
        added=d["added"],
        deleted=d["deleted"],
        areas=tuple(d["areas"]),
        pr_number=d["pr_number"],
        tags=tuple(d["tags"]),
        conventional_type=d["conventional_type"],
        conventional_scope=d["conventional_scope"],
        breaking_marker=d["breaking_marker"],
        is_revert=d["is_revert"],
        reverted_sha=d["reverted_sha"],
        co_authors=tuple(d["co_authors"]),
        kinds=dict(d["kinds"]),
        api_changes=tuple(ApiChange(**a) for a in d["api_changes"]),
        dependency_changes=tuple(DependencyChange(**c) for c in d["dependency_changes"]),
        is_merge=d.get("is_merge", False),
        unparsed=tuple(d.get("unparsed", ())),
        pull_request=_pull_from_dict(d.get("pull_request")),
        host_bumps=tuple(HostBump(**b) for b in d.get("host_bumps", ())),
        env_removed=tuple(d.get("env_removed", ())),
        home_words=tuple(d.get("home_words", ())),
        op_changes=tuple(OpChange(**o) for o in d.get("op_changes", ())),
        flag_changes=tuple(FlagChange(**c) for c in d.get("flag_changes", ())),
        version_only=d.get("version_only", False),
        file_areas=tuple(d.get("file_areas", ())),
        pin_moves=tuple((str(p), str(o), str(n)) for p, o, n in d.get("pin_moves", ())),
        env_redefaulted=tuple((str(n), str(o), str(w)) for n, o, w in d.get("env_redefaulted", ())),
    )


def _pull_from_dict(d: dict[str, Any] | None) -> PullRequest | None:
    if d is None:
        return None
    return PullRequest(**{**d, "labels": tuple(d["labels"])})


def message_from_json(value: str | dict[str, Any]) -> Message:
    """Rebuild a :data:`Message`: a JSON string is prose, an object is a :class:`Text`."""
    return value if isinstance(value, str) else _text_from_json(value)


def _text_from_json(d: dict[str, Any]) -> Text:
    return Text(d["code"], {k: _arg_from_json(a) for k, a in d["args"].items()})


def _arg_from_json(value: Any) -> Arg:
    if isinstance(value, dict):
        return _text_from_json(value)
    if isinstance(value, list):
        return tuple(_text_from_json(v) for v in value)
    if isinstance(value, str | int):
        return value
    raise TypeError(f"not a message argument: {value!r}")


def _messages(values: Any) -> tuple[Message, ...]:
    return tuple(message_from_json(v) for v in values)


def analysis_from_dict(d: dict[str, Any]) -> Analysis:
    """Rebuild :class:`Analysis` from its JSON form."""
    return Analysis(
        analyser=d["analyser"],
        change_type=ChangeType(d["change_type"]),
        importance=Importance(d["importance"]),
        reasons=_messages(d["reasons"]),
        summary=message_from_json(d["summary"]),
        impact=_messages(d.get("impact", ())),
        insights={k: message_from_json(v) for k, v in d.get("insights", {}).items()},
        risks=tuple(
            Risk(*(message_from_json(r[k]) for k in ("risk", "detail", "mitigation")))
            for r in d.get("risks", ())
        ),
        recommendations=_messages(d.get("recommendations", ())),
        description=d.get("description", ""),
        error=message_from_json(d.get("error", "")),
        llm_error=message_from_json(d.get("llm_error", "")),
        usage=(int(d.get("usage", (0, 0))[0]), int(d.get("usage", (0, 0))[1])),
        unverified=tuple(d.get("unverified", ())),
        unseen_files=tuple(d.get("unseen_files", ())),
        rule_verdict=d.get("rule_verdict", ""),
    )


def commit_from_dict(d: dict[str, Any]) -> Commit:
    """Rebuild :class:`Commit` from its JSON form."""
    return Commit(
        sha=d["sha"],
        parents=tuple(d["parents"]),
        author=Person(**d["author"]),
        author_time=d["author_time"],
        author_offset=d["author_offset"],
        committer=Person(**d["committer"]),
        commit_time=d["commit_time"],
        commit_offset=d["commit_offset"],
        message=d["message"],
        encoding=d.get("encoding"),
        decode_errors=d.get("decode_errors", False),
        files_truncated=d.get("files_truncated", False),
    )
