"""SMT-LIB 2 scripts re-checked by cvc5 (a second solver: the writer proved them with Z3)."""

from __future__ import annotations

__all__ = ["SmtError", "cvc5_result"]


class SmtError(Exception):
    """The script does not parse, or cvc5 is not installed (named)."""


def cvc5_result(text: str, name: str, timeout_ms: int = 60_000) -> str:
    """cvc5's answer to the script's last (check-sat): "sat", "unsat" or "unknown"."""
    try:
        import cvc5
    except ImportError:
        raise SmtError("cvc5 is not installed (pip install 'volta[certificates]')") from None
    tm = cvc5.TermManager()
    solver = cvc5.Solver(tm)
    solver.setOption("tlimit-per", str(timeout_ms))
    if "(set-logic" not in text:  # Z3's to_smt2() names no logic: all of cvc5's theories
        solver.setLogic("ALL")
    parser = cvc5.InputParser(solver)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, name)
    sm = parser.getSymbolManager()
    answer = None
    try:
        while True:
            cmd = parser.nextCommand()
            if cmd.isNull():
                break
            out = cmd.invoke(solver, sm)
            if cmd.getCommandName() == "check-sat":
                answer = out.strip()
    except RuntimeError as e:  # cvc5 reports parse errors as RuntimeError (CVC5ApiException)
        raise SmtError(f"{name}: {e}") from None
    if answer is None:
        raise SmtError(f"{name}: no (check-sat)")
    if answer.startswith("(error"):
        raise SmtError(f"{name}: {answer}")
    return answer
