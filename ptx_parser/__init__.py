"""PTX front end: grammar (lark LALR), typed AST with source spans, printer, located errors.

    >>> from ptx_parser import parse, print_module
    >>> m = parse(open("k.ptx").read(), "k.ptx")
    >>> parse(print_module(m)) == m
    True
"""

from . import ast
from .ast import Instruction, Module, SourceLoc
from .errors import ParseError
from .parse import parse, parse_file
from .printer import print_module
from .locations import source_location

__all__ = ["parse", "parse_file", "print_module", "ParseError", "Module", "Instruction",
           "SourceLoc", "source_location", "ast"]
