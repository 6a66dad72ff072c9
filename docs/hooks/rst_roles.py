"""mkdocs hook: drop the Sphinx roles (:func:, :class:, :mod: …) that the docstrings use before a ``name``.

The docstrings are read in the terminal (``help()``) as well as on the site; there the role prefix is noise,
so the rendered page keeps only the code-formatted name.
"""

import re

_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|obj|exc):(?=<code>)")


def on_page_content(html, **kwargs):
    """Strip the role prefixes from a rendered page."""
    return _ROLE.sub("", html)
