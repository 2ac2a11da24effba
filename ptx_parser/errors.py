"""Located parse errors: `file:line:col: error: message`, the source line and a caret."""

from __future__ import annotations


class ParseError(Exception):
    """Bad PTX input. Carries the location; `str()` renders it like a compiler diagnostic."""

    def __init__(self, message: str, filename: str = "<input>", line: int = 1, col: int = 1,
                 source_line: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.filename = filename
        self.line = max(1, line)
        self.col = max(1, col)
        self.source_line = source_line

    @property
    def location(self) -> str:
        return f"{self.filename}:{self.line}:{self.col}"

    def __str__(self) -> str:
        head = f"{self.location}: error: {self.message}"
        if self.source_line is None:
            return head
        text = self.source_line.rstrip("\n")
        # the caret line repeats the source's tabs so the caret lines up however tabs render
        pad = "".join(ch if ch == "\t" else " " for ch in text[: self.col - 1])
        return f"{head}\n{text}\n{pad}^"


def source_line(text: str, line: int) -> str | None:
    lines = text.split("\n")
    return lines[line - 1] if 1 <= line <= len(lines) else None
