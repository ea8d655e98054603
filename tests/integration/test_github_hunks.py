"""One side of a changed file rebuilt from the other and GitHub's patch, byte for byte.

The patches are git's own, in GitHub's shape (:class:`tests.github_shapes.GitShapes`),
for the awkward cases: no newline at the end on either side, CRLF lines, an added
and a deleted file, a rename with an edit, hunks at both ends of a long file.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from repoherald.github.hunks import git_blob_id, other_side, rebuilt
from tests.gitfixture import GitFixture
from tests.github_shapes import GitShapes

BEFORE = {
    "eof.py": "a = 1\nb = 2",
    "gains_eol.py": "x = 1",
    "loses_eol.py": "y = 1\n",
    "crlf.py": "one\r\ntwo\r\nthree\r\n",
    "long.py": "".join(f"line_{i} = {i}\n" for i in range(200)),
    "gone.py": "def f():\n    return 'é'\n",
    "old_name.py": "".join(f"v{i} = {i}\n" for i in range(20)),
    "blank.py": "\n\n\n",
}
AFTER = {
    "eof.py": "a = 1\nb = 3",
    "gains_eol.py": "x = 1\n",
    "loses_eol.py": "y = 2",
    "crlf.py": "one\r\nTWO\r\nthree\r\nfour\r\n",
    "long.py": "head = 0\n"
    + "".join(f"line_{i} = {i}\n" for i in range(200) if i not in (3, 100))
    + "tail = 1",
    "added.py": "def g(x):\n    return x  # ünïcode\n",
    "new_name.py": "".join(f"v{i} = {i}\n" for i in range(20) if i != 7) + "w = 0\n",
    "blank.py": "\n\nx\n\n",
}


@pytest.fixture(scope="module")
def shaped(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitShapes, list[dict[str, object]]]:
    fx = GitFixture.init(tmp_path_factory.mktemp("hunks") / "repo")
    fx.write_many(BEFORE)
    fx.commit("before", when=datetime(2026, 1, 1, tzinfo=UTC))
    for path in BEFORE:
        if path not in AFTER:
            fx.remove(path)
    fx.write_many(AFTER)
    fx.commit("after", when=datetime(2026, 1, 2, tzinfo=UTC))
    shapes = GitShapes(fx.path, "http://unused", "http://unused")
    return shapes, shapes.files(fx.rev(), 1_000_000)


def _blob(shapes: GitShapes, rev: str, path: str) -> bytes:
    return shapes.git("cat-file", "blob", f"{rev}:{path}")


def test_every_side_is_rebuilt_exactly(shaped: tuple[GitShapes, list[dict[str, object]]]) -> None:
    shapes, files = shaped
    by_status = {str(f["filename"]): str(f["status"]) for f in files}
    assert by_status["new_name.py"] == "renamed"
    assert by_status["added.py"] == "added" and by_status["gone.py"] == "removed"
    for f in files:
        path, patch = str(f["filename"]), str(f["patch"])
        old_path = str(f.get("previous_filename") or path)
        old = b"" if f["status"] == "added" else _blob(shapes, "HEAD~1", old_path)
        new = b"" if f["status"] == "removed" else _blob(shapes, "HEAD", path)
        assert other_side(old, patch, reverse=False) == new, path
        assert other_side(new, patch, reverse=True) == old, path
        if new:
            assert rebuilt(old, patch, git_blob_id(new), reverse=False) == new


def test_a_patch_that_does_not_fit_rebuilds_nothing(
    shaped: tuple[GitShapes, list[dict[str, object]]],
) -> None:
    shapes, files = shaped
    long = next(f for f in files if f["filename"] == "long.py")
    new = _blob(shapes, "HEAD", "long.py")
    old_id = git_blob_id(_blob(shapes, "HEAD~1", "long.py"))
    assert rebuilt(new, str(long["patch"]), old_id, reverse=True) is not None
    # The wrong base, a base cut short, a patch cut short: no wrong file, ever.
    wrong = new.replace(b"line_50 = 50", b"line_50 = 51")
    assert rebuilt(wrong, str(long["patch"]), old_id, reverse=True) is None
    assert other_side(new[:20], str(long["patch"]), reverse=True) is None
    cut = str(long["patch"]).rsplit("\n", 3)[0]
    assert rebuilt(new, cut, old_id, reverse=True) is None
    assert other_side(new, "@@ -1 +1 @@\n?what\n", reverse=True) is None
    assert rebuilt(new, None, old_id, reverse=True) is None
