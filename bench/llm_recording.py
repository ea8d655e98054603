"""Recorded model answers, keyed by the request they answer, and the endpoint that serves them.

A request is identified by what decides the model's answer and nothing else:
the sha256 of its messages and ``response_format`` in canonical JSON (see
:func:`request_id`). The wire format is OpenAI chat completions, so nothing
here depends on the prompts' wording: a new prompt simply makes new ids, and
the answers recorded for the old ones become "stale".

A recording directory (``bench/llm/<set>/``) holds:

* ``pending/<id>.txt`` — exactly what a model would see: every message of the
  request and, when the request asks for ``json_schema``, the schema and the
  instruction to answer with one JSON object matching it;
* ``pending/<id>.json`` — the request itself with the set, repository, commit
  and depth it was sent for;
* ``answers/<id>.json`` — just the model's JSON text, written by whoever acts
  as the model (``answers/<id>.meta.json`` may add ``answered_by`` and the
  endpoint's ``usage`` when a real endpoint answered);
* ``recording.jsonl.xz`` — the compact, committed form of both (:func:`pack`).
"""

from __future__ import annotations

import hashlib
import json
import lzma
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.goldset import GoldCommit
from tests.llm_server import Reply, message_text, ok, server_error

PACK_NAME = "recording.jsonl.xz"
HELPER = "helper session acting as the model (one prompt file at a time, nothing else)"


def request_id(body: Mapping[str, Any]) -> str:
    """The stable id of a request: sha256 of its canonical messages and response format."""
    canonical = json.dumps(
        {"messages": body.get("messages"), "response_format": body.get("response_format")},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def depth_of(body: Mapping[str, Any]) -> str:
    """``full`` when the requested answer has an ``impact`` list, else ``short``.

    Read from the schema sent (or, for servers without ``json_schema``, from
    the schema the prompt carries), not from the prompt's words.
    """
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema")
    if isinstance(schema, Mapping):
        return "full" if "impact" in (schema.get("properties") or {}) else "short"
    texts = " ".join(message_text(m) for m in body.get("messages", []))
    return "full" if '"impact"' in texts else "short"


def is_repair(body: Mapping[str, Any]) -> bool:
    """A repair turn quotes the model's previous answer back to it."""
    return any(m.get("role") == "assistant" for m in body.get("messages", []))


def prompt_text(body: Mapping[str, Any]) -> str:
    """What a model sees for this request, as one plain text."""
    parts = []
    for message in body.get("messages", []):
        parts.append(f"=== {message.get('role', '?')} ===\n{message_text(message)}")
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        schema = json.dumps(fmt["json_schema"]["schema"], indent=2, ensure_ascii=False)
        parts.append(
            f"=== response schema ===\n{schema}\n\n"
            "Answer with one JSON object matching this schema, and nothing else."
        )
    elif fmt.get("type") == "json_object":
        parts.append("=== response format ===\nAnswer with one JSON object, and nothing else.")
    return "\n\n".join(parts) + "\n"


@dataclass(frozen=True)
class Entry:
    """One recorded request and, once answered, its answer."""

    id: str
    set: str
    repo: str
    sha: str
    depth: str
    prompt_version: str
    request: dict[str, Any]
    answer: str | None = None
    answered_by: str = ""
    usage: dict[str, int] | None = None


def commit_of(body: Mapping[str, Any], commits: list[GoldCommit]) -> GoldCommit | None:
    """The labelled commit a request is about: by the nonce the prompt derives from
    the SHA, by the SHA itself, or else by the commit's title in the user message."""
    texts = "\n".join(message_text(m) for m in body.get("messages", []))
    for c in commits:
        nonce = hashlib.sha256(f"repoherald:{c.sha}".encode()).hexdigest()[:16]
        if nonce in texts or c.sha in texts:
            return c
    user = next((message_text(m) for m in body.get("messages", []) if m.get("role") == "user"), "")
    return next((c for c in commits if c.title and c.title in user), None)


@dataclass(frozen=True)
class Forward:
    """A real OpenAI-compatible endpoint to ask what the recording does not answer."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 300.0


@dataclass
class Recording:
    """A set's recording directory, served to the pipeline as an endpoint's answers."""

    root: Path
    set_name: str
    prompt_version: str
    commits: list[GoldCommit]
    forward: Forward | None = None
    entries: dict[str, Entry] = field(default_factory=dict)
    requested: dict[str, Entry] = field(default_factory=dict)
    """Every request of this run about a labelled commit, by id."""
    pending: list[str] = field(default_factory=list)
    unlabelled: int = 0
    """Requests about commits of the same days that carry no label (answered 503, ignored)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def open(
        cls,
        root: Path,
        set_name: str,
        prompt_version: str,
        commits: list[GoldCommit],
        forward: Forward | None = None,
    ) -> Recording:
        """Read the pack, then the answers directory (newer answers win)."""
        rec = cls(root, set_name, prompt_version, commits, forward)
        pack_path = root / PACK_NAME
        if pack_path.is_file():
            with lzma.open(pack_path, "rt", encoding="utf-8") as fh:
                for line in fh:
                    row = json.loads(line)
                    rec.entries[row["id"]] = Entry(**row)
        for path in sorted((root / "answers").glob("*.json")):
            if path.name.endswith(".meta.json"):
                continue
            rid = path.stem
            meta = _read_meta(path.with_name(f"{rid}.meta.json"))
            request_path = root / "pending" / f"{rid}.json"
            base = rec.entries.get(rid)
            if base is None and request_path.is_file():
                base = Entry(**json.loads(request_path.read_text("utf-8")))
            if base is None:
                continue
            rec.entries[rid] = Entry(
                **{
                    **base.__dict__,
                    "answer": path.read_text("utf-8").strip(),
                    "answered_by": meta.get("answered_by", base.answered_by or HELPER),
                    "usage": meta.get("usage", base.usage),
                }
            )
        return rec

    def older_versions(self) -> dict[str, int]:
        """Answered entries recorded with another prompt version, counted by version."""
        out: dict[str, int] = {}
        for e in self.entries.values():
            if e.answer is not None and e.prompt_version != self.prompt_version:
                out[e.prompt_version] = out.get(e.prompt_version, 0) + 1
        return out

    def stale(self) -> list[Entry]:
        """Answers whose request this run never sent (the prompt or the facts changed)."""
        return [e for rid, e in self.entries.items() if e.answer and rid not in self.requested]

    def responder(self) -> Callable[[dict[str, Any], int], Reply]:
        """The FakeLLM responder: a recorded answer, a forwarded one, or 503 and a pending file."""

        def respond(body: dict[str, Any], _attempt: int) -> Reply:
            commit = commit_of(body, self.commits)
            if commit is None:
                with self._lock:
                    self.unlabelled += 1
                return server_error(503, "not a labelled commit: not recorded")
            rid = request_id(body)
            with self._lock:
                known = self.entries.get(rid)
                entry = known or Entry(
                    rid, self.set_name, commit.repo, commit.sha, depth_of(body),
                    self.prompt_version, body,
                )  # fmt: skip
                self.requested[rid] = entry
            if entry.answer is None and self.forward is not None:
                entry = self._ask(entry)
            if entry.answer is None:
                self._write_pending(entry)
                return server_error(503, "no recorded answer yet: see pending/")
            usage = entry.usage or {}
            return ok(
                entry.answer,
                prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
            )

        return respond

    def _ask(self, entry: Entry) -> Entry:
        """Forward one request to the real endpoint and keep its answer as a recorded one."""
        assert self.forward is not None
        headers = (
            {"Authorization": f"Bearer {self.forward.api_key}"} if self.forward.api_key else {}
        )
        body = {**entry.request, "model": self.forward.model}
        try:
            response = httpx.post(
                f"{self.forward.base_url.rstrip('/')}/chat/completions",
                json=body,
                headers=headers,
                timeout=self.forward.timeout,
            )
            response.raise_for_status()
            data = response.json()
            content = data["choices"][0]["message"]["content"]
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
            print(f"endpoint failed on {entry.id[:12]}: {type(exc).__name__}", flush=True)
            return entry
        if not isinstance(content, str):
            return entry
        usage = {k: int(v) for k, v in (data.get("usage") or {}).items() if k.endswith("_tokens")}
        by = f"{self.forward.model} at {self.forward.base_url}"
        answered = Entry(**{**entry.__dict__, "answer": content, "answered_by": by, "usage": usage})
        answers = self.root / "answers"
        answers.mkdir(parents=True, exist_ok=True)
        (answers / f"{entry.id}.json").write_text(content.strip() + "\n", "utf-8")
        meta = {"answered_by": by, "usage": usage}
        (answers / f"{entry.id}.meta.json").write_text(json.dumps(meta) + "\n", "utf-8")
        self._write_request(answered)
        with self._lock:
            self.entries[entry.id] = answered
            self.requested[entry.id] = answered
        return answered

    def _write_pending(self, entry: Entry) -> None:
        pending = self.root / "pending"
        pending.mkdir(parents=True, exist_ok=True)
        (pending / f"{entry.id}.txt").write_text(prompt_text(entry.request), "utf-8")
        self._write_request(entry)
        with self._lock:
            if entry.id not in self.pending:
                self.pending.append(entry.id)

    def _write_request(self, entry: Entry) -> None:
        pending = self.root / "pending"
        pending.mkdir(parents=True, exist_ok=True)
        row = {k: v for k, v in entry.__dict__.items() if k not in ("answer", "usage")}
        row["answered_by"] = ""
        text = json.dumps(row, ensure_ascii=False, indent=1)
        (pending / f"{entry.id}.json").write_text(text + "\n", "utf-8")


def _read_meta(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = json.loads(path.read_text("utf-8"))
    return data if isinstance(data, dict) else {}


def pack(rec: Recording) -> tuple[Path, int]:
    """Write every answered entry to ``recording.jsonl.xz``, sorted by id; how many."""
    rows = sorted((e for e in rec.entries.values() if e.answer is not None), key=lambda e: e.id)
    path = rec.root / PACK_NAME
    with lzma.open(path, "wt", encoding="utf-8", preset=9) as fh:
        for e in rows:
            fh.write(json.dumps(e.__dict__, ensure_ascii=False, sort_keys=True) + "\n")
    return path, len(rows)
