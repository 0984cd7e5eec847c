"""The output boundary for text equilens did not write: run, model, attribute and group names from
configs, prompts, answers and endpoint error bodies. All of it is hostile until shown otherwise.

* **Terminal.** :func:`console` is the one Rich console of the CLI. It parses no markup, emoji
  codes or highlighting in what it prints ("[link=...]dog owner[/link]" prints as those
  characters), and every string it renders first passes :func:`visible`. Styles equilens means to
  show are given as ``rich.text.Text`` with a style, never as markup in a string.
* **Control characters.** :func:`visible` removes escape sequences (CSI such as colours, OSC such
  as a window title or an OSC-8 hyperlink, and two-byte ESC sequences), turns ``\\r\\n`` into a
  newline, and writes every other C0 or C1 control character and DEL as a visible ``\\xNN``, so
  a bare ``\\r`` cannot overwrite a line and BEL cannot ring. Newline and tab are kept.
* **HTML.** :func:`escape` is :func:`visible` and then ``html.escape``: the HTML report writes every
  text through it, so ``cat report.html`` replays no escape sequence, BEL, NUL or C1 byte an
  answer carried.
* **Markdown** (the Prefect artifacts). :func:`markdown` is :func:`visible` on one line, every
  character markdown reads as markup backslash-escaped and ``<``, ``>``, ``&`` written as HTML
  entities: no emphasis, link, image, code span, table cell, heading or HTML tag comes from a
  name, a model or an answer. :func:`markdown_code` is a code span a backtick cannot close.
* **CSV.** :func:`csv_cell` gives a text cell the terminal's treatment (:func:`visible`: a CSV on
  stdout or ``cat`` to a terminal replays no escape sequence), then neutralises a cell that a
  spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``, tab or carriage
  return) by prefixing a single quote, the convention OWASP documents for CSV injection; a cell
  that is a plain number is left alone.
"""

from __future__ import annotations

import re
from typing import Any

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: ESC [ parameters intermediates final
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\|$)"  # OSC: ESC ] ... BEL or ST (or the end of the text)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\|$)"  # DCS, SOS, PM, APC strings up to ST
    r"|\x9b[0-?]*[ -/]*[@-~]"  # the 8-bit CSI
    r"|\x1b[ -~]?"  # any other ESC sequence (two bytes), or a lone ESC
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def visible(text: object) -> str:
    """``text`` as plain, inert characters for a terminal (see the module docstring)."""
    s = str(text).replace("\r\n", "\n")
    s = _ESCAPES.sub("", s)
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", s)


def escape(text: object, quote: bool = True) -> str:
    """``text`` for an HTML page: :func:`visible`, then ``html.escape`` (``quote``: also quotes)."""
    import html

    return html.escape(visible(text), quote=quote)


_MARKUP = {**{c: "\\" + c for c in "\\`*_{}[]#!~|"}, "<": "&lt;", ">": "&gt;", "&": "&amp;"}


def _one_line(text: object) -> str:
    return visible(text).replace("\n", " ").replace("\t", " ")


def markdown(text: object) -> str:
    """``text`` as inert markdown text on one line (see the module docstring)."""
    return "".join(_MARKUP.get(c, c) for c in _one_line(text))


def markdown_code(text: object) -> str:
    """``text`` as a markdown code span on one line: fenced by one backtick more than its longest
    run of backticks, and padded with a space, so no backtick in it closes the span."""
    s = _one_line(text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", s)), default=0) + 1)
    return f"{fence} {s} {fence}"


def csv_cell(value: Any) -> Any:  # any cell
    """A cell a terminal shows inert and a spreadsheet will not evaluate: text is :func:`visible`,
    and text starting a formula gets a leading quote."""
    if not isinstance(value, str):
        return value
    value = visible(value)
    if value.startswith(_FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def from_csv_cell(value: str) -> str:
    """The text :func:`csv_cell` wrote a cell for (a CSV read back after review)."""
    return value[1:] if value.startswith("'") and value[1:].startswith(_FORMULA_START) else value


def csv_text(frame: Any) -> str:  # a pandas DataFrame
    """``frame`` as CSV text with every text cell (and header) passed through :func:`csv_cell`."""
    from pandas.api.types import is_numeric_dtype

    out = frame.copy()
    out.columns = [csv_cell(str(c)) for c in out.columns]
    for col in out.columns:
        if not is_numeric_dtype(out[col]):
            out[col] = out[col].map(csv_cell)
    return out.to_csv(index=False)


def console(**kwargs: Any) -> Any:  # a rich Console
    """The CLI's Rich console: no markup, emoji or highlighting; every string shown via :func:`visible`."""
    from rich.console import Console

    class PlainConsole(Console):
        def render_str(self, text: str, **options: Any) -> Any:  # a rich Text
            options.update(markup=False, emoji=False, highlight=False)
            return super().render_str(visible(text), **options)

    return PlainConsole(markup=False, emoji=False, highlight=False, **kwargs)


def text(value: object, style: str = "") -> Any:  # a rich Text
    """A styled piece of text equilens means to show (``style`` is Rich's), its content made visible."""
    from rich.text import Text

    return Text(visible(value), style=style)
