"""The template environment and the one way a page is written.

Autoescape is on for every template; untrusted text reaches a page only
through it (and :mod:`repoherald.site.text`). Every finished page passes
:func:`~repoherald.render.invisible.strip_invisible`, as every renderer's
output does.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from repoherald._version import __version__
from repoherald.i18n import t
from repoherald.render.invisible import strip_invisible
from repoherald.site.daypage import badge, catalogue_lang, type_name
from repoherald.site.text import line, rich
from repoherald.site.words import word


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("repoherald.site", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
    )
    env.filters["rich"] = rich
    env.filters["line"] = line
    return env


def root_of(rel: str) -> str:
    """The relative prefix from the page at ``rel`` back to the site root (``../../``)."""
    return "../" * rel.count("/")


def render(template: str, rel: str, lang: str, **context: Any) -> str:
    """The page at ``rel`` (relative to the site root) from ``template``, in ``lang``."""
    cat = catalogue_lang(lang)
    page = (
        environment()
        .get_template(template)
        .render(
            lang=lang,
            root=root_of(rel),
            version=__version__,
            w=lambda key, **kw: word(lang, key, **kw),
            rt=lambda key, **kw: t(cat, key, **kw),
            badge=lambda imp: badge(lang, imp),
            type_name=lambda ty: type_name(lang, ty),
            **context,
        )
    )
    return strip_invisible(page)


def write_page(out: Path, rel: str, text: str) -> bool:
    """Write ``text`` at ``out/rel`` unless it is already there; True when written."""
    path = out / rel
    data = text.encode("utf-8")
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return True
