"""Seeded mutation testing of the checker: mutants of the suite's PTX that delete or weaken one
synchronisation step (engine.py), run through `symexec.check.check_kernel` and classified against
the reviewed table verdicts.toml (runner.py). Used by tests/test_mutation.py and bench/mutation.py."""
