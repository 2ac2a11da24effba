"""volta check (the S=512 pair) with prove's and equiv_cli's wall timers reading CPU time instead."""
import sys, time, types, runpy
import proofs.prove as P, volta.equiv_cli as E
cpu = types.SimpleNamespace(perf_counter=time.process_time, process_time=time.process_time, monotonic=time.monotonic)
P.time = cpu; E.time = cpu
sys.argv = ["volta", "check", "examples/pairs/attention/fast.ptx", "--launch", "examples/pairs/attention/fast.s512.json",
            "--reference", "examples/pairs/attention/naive.ptx", "--reference-launch", "examples/pairs/attention/naive.s512.json",
            "--json", "-q", "--timeout", "3000"]
runpy.run_module("volta.cli", run_name="__main__")
