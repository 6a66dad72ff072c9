"""The documentation cannot rot: the tutorials run, public symbols have docstrings, code cites pages and papers.

Tutorials (docs/tutorials/*.md). The ```python blocks of a page are one
program, run top to bottom from the repository root. Two conventions keep the
test short and the committed pictures untouched:

* a line ending in ``# docs-test: <expression>`` has its right-hand side
  replaced by ``<expression>`` under test (shorter runs, pictures to a
  temporary folder ``TMP``); the page shows the full settings;
* a block whose first line is ``# not run`` is shown only (e.g. the Siconos
  code a tutorial ports).

Each tutorial ends with checks (``assert``) that hold at both settings.

Regenerate a tutorial's pictures at full settings (into docs/images/, its trajectory pages into
docs/viewer/):

    python tests/test_docs.py four-bar-wall
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUTORIALS = os.path.join(ROOT, "docs", "tutorials")
PAGES = sorted(f[:-3] for f in os.listdir(TUTORIALS) if f.endswith(".md") and f != "index.md")

_BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
_SHORT = re.compile(r"^(?P<lhs>\s*[\w.\[\]\"', ]+=\s*)(?P<rhs>.*?)\s*#\s*docs-test:\s*(?P<short>.+)$", re.M)


def tutorial_code(page: str, short: bool) -> str:
    """The page's runnable code; with ``short`` the ``# docs-test:`` substitutions applied."""
    with open(os.path.join(TUTORIALS, page + ".md"), encoding="utf-8") as f:
        text = f.read()
    blocks = [b for b in _BLOCK.findall(text) if not b.lstrip().startswith("# not run")]
    code = "\n".join(blocks)
    if short:
        code = _SHORT.sub(lambda m: f"{m['lhs']}{m['short'].strip()}", code)
    return code


def run_tutorial(page: str, short: bool, tmp: str | None = None) -> dict:
    """Execute a tutorial from the repository root; returns its namespace."""
    namespace = {"__name__": f"tutorial_{page.replace('-', '_')}", "TMP": tmp}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(tutorial_code(page, short), f"docs/tutorials/{page}.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
        import matplotlib.pyplot as plt

        plt.close("all")
    return namespace


def test_every_tutorial_has_code_and_short_settings():
    assert len(PAGES) == 9
    for page in PAGES:
        full, short = tutorial_code(page, False), tutorial_code(page, True)
        assert full.strip(), page
        # Under test every picture and page goes to the temporary folder, never to docs/images/ or docs/viewer/.
        for folder in ("docs/images", "docs/viewer"):
            assert folder not in short, f"{page}: a path into {folder} has no '# docs-test: TMP' substitution"


# Tutorials on the shared measured data (beside the repository, not in it), by the file they read.
DATA = {"cube-tosses": os.path.join(ROOT, "..", "shared", "data", "contactnets", "cube_tosses.npz")}


@pytest.mark.parametrize("page", PAGES)
def test_tutorial_runs(page, tmp_path):
    if page in DATA and not os.path.exists(DATA[page]):
        pytest.skip(f"{DATA[page]} is not beside the repository")
    before = {
        f: os.path.getmtime(os.path.join(ROOT, "docs", "images", f))
        for f in os.listdir(os.path.join(ROOT, "docs", "images"))
    }
    run_tutorial(page, short=True, tmp=str(tmp_path))
    after = {
        f: os.path.getmtime(os.path.join(ROOT, "docs", "images", f))
        for f in os.listdir(os.path.join(ROOT, "docs", "images"))
    }
    assert after == before, "a tutorial under test wrote into docs/images/"
    assert any(f.endswith(".png") for f in os.listdir(tmp_path)), f"{page} drew no picture"


def _public_modules():
    import jaxcontact

    for info in pkgutil.walk_packages(jaxcontact.__path__, "jaxcontact."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            yield importlib.import_module(info.name)


def test_every_public_symbol_has_a_docstring():
    """Modules, the names of each package's ``__all__``, and every public function and class a module defines
    (methods included) carry a docstring — mkdocstrings renders only documented objects."""
    missing = []
    for mod in _public_modules():
        if not (mod.__doc__ or "").strip():
            missing.append(mod.__name__)
        names = getattr(mod, "__all__", None)
        if names is None:
            names = [
                n
                for n, v in vars(mod).items()
                if not n.startswith("_")
                and (inspect.isfunction(v) or inspect.isclass(v))
                and v.__module__ == mod.__name__
            ]
        for name in names:
            obj = getattr(mod, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if not (obj.__doc__ or "").strip():
                missing.append(f"{mod.__name__}.{name}")
            if inspect.isclass(obj) and obj.__module__ == mod.__name__:
                for attr, member in vars(obj).items():
                    if attr.startswith("_") or not inspect.isfunction(member):
                        continue
                    if not (member.__doc__ or "").strip():
                        missing.append(f"{mod.__name__}.{name}.{attr}")
    assert not missing, f"public symbols without a docstring: {sorted(set(missing))}"


if __name__ == "__main__":
    for page in sys.argv[1:] or PAGES:
        run_tutorial(page, short=False)


def test_no_references_to_the_internal_specification_or_issue_numbers():
    """Code and tests say what they mean (a theory page or the paper), not the team's spec tags or issue numbers."""
    tag = re.compile(r"\bS" r"PEC\b|\b[Ii]ssue ?#?\d+")
    here = os.path.relpath(os.path.abspath(__file__), ROOT)
    found = [hit for hit in _matching_lines(tag, ("jaxcontact", "tests")) if not hit.startswith(here + ":")]
    assert not found, "\n".join(found)


def _matching_lines(pattern, folders, extra_files=()) -> list[str]:
    """'path:line: text' of every line of the .py and .md files under ``folders`` (and ``extra_files``)
    that ``pattern`` matches."""
    paths = [os.path.join(ROOT, f) for f in extra_files]
    for folder in folders:
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            paths += [os.path.join(dirpath, n) for n in sorted(files) if n.endswith((".py", ".md"))]
    found = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            found += [
                f"{os.path.relpath(path, ROOT)}:{i}: {line.strip()}"
                for i, line in enumerate(f, 1)
                if pattern.search(line)
            ]
    return found


def test_every_module_is_in_the_api_reference():
    """Each public module has its ``::: module`` line in docs/api/ (packages may be listed with members off)."""
    api = os.path.join(ROOT, "docs", "api")
    pages = "".join(open(os.path.join(api, f)).read() for f in sorted(os.listdir(api)) if f.endswith(".md"))
    listed = set(re.findall(r"^::: ([\w.]+)", pages, flags=re.M))
    missing = sorted(m.__name__ for m in _public_modules() if m.__name__ not in listed)
    assert not missing, f"modules missing from docs/api/*.md: {missing}"


def test_distribution_arguments_in_commands_are_quoted_for_the_shell():
    """``--param name=uniform(a,b)`` unquoted is a shell syntax error: every one the project shows is quoted."""
    unquoted = re.compile(r"--param[ =][^'\"` ][^ ]*\(")
    found = _matching_lines(unquoted, ("docs", "examples", "jaxcontact", "bench"), extra_files=("README.md",))
    assert not found, "\n".join(found)


def test_home_page_names_every_model_and_command_and_its_links_resolve():
    from jaxcontact.cli import COMMANDS
    from jaxcontact.models import REGISTRY

    docs = os.path.join(ROOT, "docs")
    with open(os.path.join(docs, "index.md"), encoding="utf-8") as f:
        home = f.read()
    names = list(REGISTRY) + [importlib.import_module(f"jaxcontact.commands.{c}").NAME for c in COMMANDS]
    assert not [n for n in names if f"`{n}`" not in home]
    links = re.findall(r"\]\(([^)#:]+\.md)\)", home)
    assert links and not [link for link in links if not os.path.isfile(os.path.join(docs, link))]


def test_a_broken_reference_fails_the_ci_docs_build(tmp_path):
    """CI's own ``mkdocs build`` line (from .ci/run) fails on a link to a page that does not exist, naming the
    link: a flag that silences the warnings strict mode counts (``--quiet``) would let it pass."""
    pytest.importorskip("mkdocs")
    import shutil
    import subprocess

    for name in ("mkdocs.yml", "README.md"):
        shutil.copy(os.path.join(ROOT, name), tmp_path / name)
    for name in ("docs", "bench", "jaxcontact", "examples"):
        shutil.copytree(
            os.path.join(ROOT, name), tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.npz", "*.json")
        )
    with open(tmp_path / "docs" / "index.md", "a") as f:
        f.write("\nSee [a page that is gone](no-such-page.md).\n")
    line = next(x for x in open(os.path.join(ROOT, ".ci", "run")) if "mkdocs build" in x and not x.startswith("#"))
    options = line.split("mkdocs", 1)[1].replace('"$site"', str(tmp_path / "site")).split()
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", *options], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert build.returncode != 0
    assert "no-such-page.md" in build.stderr


def _math_hook():
    pytest.importorskip("latex2mathml")
    pytest.importorskip("mkdocs")
    import importlib.util

    spec = importlib.util.spec_from_file_location("math_hook", os.path.join(ROOT, "docs", "hooks", "math.py"))
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    return hook


def test_every_equation_of_the_docs_becomes_mathml_with_no_script_or_network():
    """Each page's formulas, as arithmatex marks them, leave the hook as MathML (which browsers render natively),
    none as raw TeX; and the site loads no script from a CDN."""
    import glob
    import types

    hook = _math_hook()
    import markdown  # mkdocs's own dependency, there when _math_hook did not skip

    n = 0
    for path in glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True):
        text = open(path, encoding="utf-8").read()
        body = markdown.markdown(
            text,
            extensions=["pymdownx.arithmatex", "pymdownx.superfences", "md_in_html", "tables"],
            extension_configs={"pymdownx.arithmatex": {"generic": True}},
        )
        formulas = body.count('class="arithmatex"')
        page = types.SimpleNamespace(file=types.SimpleNamespace(src_path=os.path.relpath(path, ROOT)))
        out = hook.on_page_content(body, page=page)
        assert out.count("<math ") == formulas, path
        assert "arithmatex" not in out and "\\(" not in out and "\\[" not in out, path
        n += formulas
    assert n > 100  # the theory pages are mostly equations
    config = open(os.path.join(ROOT, "mkdocs.yml")).read()
    assert "extra_javascript" not in config and "mathjax" not in config.lower()


def test_an_equation_that_cannot_be_translated_fails_the_build_naming_it():
    hook = _math_hook()
    from mkdocs.exceptions import PluginError

    page = type("Page", (), {"file": type("File", (), {"src_path": "theory/x.md"})})
    bad = '<div class="arithmatex">\\[\n\\begin{aligned} a &amp;= b \\end{aligned}\n\\]</div>'
    with pytest.raises(PluginError, match=r"theory/x\.md: equation cannot translate .*aligned"):
        hook.on_page_content(bad, page=page)
    good = '<span class="arithmatex">\\(\\tfrac12 \\lVert \\Phi \\rVert\\)</span>'
    assert hook.on_page_content(good, page=page).startswith('<math xmlns="http://www.w3.org/1998/Math/MathML"')
