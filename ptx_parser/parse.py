"""parse(text) -> Module: sections cut out, LALR parse with AST built on reduction, symbol checks."""

from __future__ import annotations

import threading
from importlib import resources
from pathlib import Path

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from . import ast as A
from .builder import Builder, _Located
from .errors import ParseError, source_line
from .sections import extract_sections
from .symbols import check_symbols

_lock = threading.Lock()
_parser: Lark | None = None
_builder: Builder | None = None

# Friendly names for terminals in "expected X" messages.
_TOKEN_NAMES = {
    "SEMICOLON": "';'", "COMMA": "','", "COLON": "':'", "LPAR": "'('", "RPAR": "')'",
    "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['", "RSQB": "']'", "AT": "'@'",
    "IDENT": "identifier", "MOD": "modifier", "DOTTED": "instruction", "INT": "integer", "STRING": "string",
    "NUMBER_F": "number", "HEX_F32": "f32 literal", "HEX_F64": "f64 literal",
    "EQUAL": "'='", "LT": "'<'", "GT": "'>'", "QMARK": "'?'", "$END": "end of input",
}


def _get_parser() -> tuple[Lark, Builder]:
    global _parser, _builder
    if _parser is None:
        grammar = resources.files(__package__).joinpath("ptx.lark").read_text()
        _builder = Builder()
        _parser = Lark(grammar, parser="lalr", lexer="basic", transformer=_builder,
                       maybe_placeholders=False, cache=_cache_path(grammar))
    assert _builder is not None
    return _parser, _builder


def _cache_path(grammar: str) -> str | bool:
    """Lark caches its LALR tables keyed by the grammar; keep them in the user's cache dir."""
    import hashlib
    import os

    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "volta"
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    digest = hashlib.sha256(grammar.encode()).hexdigest()[:16]
    return str(base / f"ptx-lalr-{digest}.cache")


def _describe(tok) -> str:
    if tok is None or getattr(tok, "type", None) == "$END":
        return "end of input"
    text = str(tok)
    return f"'{text}'" if len(text) < 40 else f"'{text[:37]}...'"


def _expected(names) -> str:
    words = sorted({_TOKEN_NAMES.get(n, _keyword_name(n)) for n in names})
    if len(words) > 6:
        words = words[:6] + ["..."]
    return " or ".join(words) if len(words) <= 2 else ", ".join(words)


def _keyword_name(term: str) -> str:
    if term.endswith("_KW"):
        return "'." + term[:-3].lower() + "'"
    if term in ("ADDOP", "MULOP", "SHIFTOP", "EQOP", "PIPE", "AMP", "CARET", "BANG", "TILDE",
                "OROR", "ANDAND", "LE", "GE"):
        return "operator"
    return term.lower()


def parse(text: str, filename: str = "<input>", check: bool = True) -> A.Module:
    """Parse PTX source text into a Module. Raises ParseError with file:line:col on bad input.

    `check=False` skips the symbol-table checks (undeclared names, register ranges, duplicates).
    """
    if not isinstance(text, str):
        raise TypeError("parse() takes the PTX source as str")
    if "\0" in text:
        off = text.index("\0")
        line = text.count("\n", 0, off) + 1
        col = off - (text.rfind("\n", 0, off) + 1) + 1
        raise ParseError("unexpected NUL byte", filename, line, col, source_line(text, line))
    code, sections = extract_sections(text, filename)
    with _lock:
        parser, builder = _get_parser()
        builder.filename = filename
        builder.minus_at.clear()
        builder.depth.clear()
        try:
            module = parser.parse(code)
        except UnexpectedToken as e:
            expected = _acceptable(e)
            if e.token.type == "$END":
                raise _eof_error(text, filename, expected) from None
            msg = f"expected {_expected(expected)}, got {_describe(e.token)}"
            raise ParseError(msg, filename, e.line, e.column, source_line(text, e.line)) from None
        except UnexpectedCharacters as e:
            ch = text.split("\n")[e.line - 1][e.column - 1: e.column] if e.line >= 1 else "?"
            msg = f"unexpected character {ch!r}"
            if e.allowed:
                msg += f", expected {_expected(e.allowed)}"
            raise ParseError(msg, filename, e.line, e.column, source_line(text, e.line)) from None
        except UnexpectedEOF as e:
            raise _eof_error(text, filename, e.expected) from None
        except UnexpectedInput as e:  # pragma: no cover - other lark input errors
            raise ParseError(str(e).split("\n")[0], filename, getattr(e, "line", 1),
                             getattr(e, "column", 1), source_line(text, getattr(e, "line", 1))) from None
        except _Located as e:
            raise ParseError(e.message, filename, e.line, e.col, source_line(text, e.line)) from None
        except RecursionError:
            raise ParseError("expression nested too deeply", filename, 1, 1) from None
        finally:
            builder.minus_at.clear()
            builder.depth.clear()
    if sections:
        module = _merge_sections(module, [s for _, s in sections])
    if check:
        check_symbols(module, text)
    return module


def parse_file(path: str | Path, check: bool = True) -> A.Module:
    """Read and parse a file; undecodable bytes are reported as a ParseError at their position."""
    path = Path(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise ParseError(f"invalid byte 0x{data[e.start]:02x}: PTX source must be ASCII text",
                         str(path), line, col) from None
    return parse(text, str(path), check=check)


def _acceptable(e: UnexpectedToken) -> set[str]:
    """The terminals truly acceptable at the error (LALR default reductions over-report)."""
    try:
        if e.interactive_parser is not None:
            return set(e.interactive_parser.accepts()) or set(e.expected)
    except Exception:  # noqa: BLE001 - a failed refinement falls back to lark's own set
        pass
    return set(e.expected)


def _eof_error(text: str, filename: str, expected) -> ParseError:
    lines = text.rstrip("\n").split("\n")
    line = len(lines)
    col = len(lines[-1]) + 1 if lines else 1
    msg = "unexpected end of input"
    if expected:
        msg += f", expected {_expected(expected)}"
    return ParseError(msg, filename, line, col, source_line(text, line))


def _merge_sections(module: A.Module, sections: list[A.Section]) -> A.Module:
    """Put sections back among the top-level items in source order."""
    items: list = []
    pending = sorted(sections, key=lambda s: (s.span.line, s.span.col))
    for item in module.items:
        span = getattr(item, "span", None)
        while pending and span is not None and (pending[0].span.line, pending[0].span.col) < (span.line, span.col):
            items.append(pending.pop(0))
        items.append(item)
    items.extend(pending)
    return A.Module(tuple(items), module.filename)
