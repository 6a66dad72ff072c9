"""mkdocs hook: the equations become MathML when the site is built, so pages show them with no script,
no font download and no network (browsers render MathML natively).

``pymdownx.arithmatex`` (generic mode) wraps each formula as ``\\( … \\)`` in a ``span`` or ``\\[ … \\]`` in a
``div`` of class ``arithmatex``; latex2mathml turns the TeX into MathML. A formula it cannot translate fully
(a command left as text, an alignment ``&`` it did not place) fails the build, naming the page and the formula.
"""

import html
import re

from latex2mathml.converter import convert
from mkdocs.exceptions import PluginError

_FORMULA = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)
# What latex2mathml leaves when it does not know a construct: the command as an identifier, or a bare "&".
_UNTRANSLATED = re.compile(r"<m[io][^>]*>(\\[A-Za-z]+|&amp;|&)</m[io]>")


def to_mathml(tex: str, display: bool) -> str:
    """One formula (without its delimiters) as MathML; ValueError when part of it would show as raw TeX."""
    try:
        out = convert(tex, display="block" if display else "inline")
    except Exception as e:  # latex2mathml raises its own exception types, and IndexError/KeyError on bad input
        raise ValueError(f"cannot translate {tex!r}: {e}") from None
    left = _UNTRANSLATED.findall(out)
    if left:
        raise ValueError(f"cannot translate {left} in {tex!r}")
    return out


def on_page_content(content, page, **kwargs):
    """Replace every arithmatex formula of a rendered page by its MathML."""

    def replace(m):
        display = m.group(1) == "div"
        tex = html.unescape(m.group(2)).strip()
        if tex[:2] not in ("\\(", "\\[") or tex[-2:] not in ("\\)", "\\]"):
            raise PluginError(f"{page.file.src_path}: equation {tex!r} lacks its \\( \\) or \\[ \\] delimiters")
        try:
            return to_mathml(tex[2:-2].strip(), display)
        except ValueError as e:
            raise PluginError(f"{page.file.src_path}: equation {e}") from None

    return _FORMULA.sub(replace, content)
