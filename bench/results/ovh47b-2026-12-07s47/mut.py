import sys
sys.path.insert(0, 'tests/check'); sys.path.insert(0, '.')
from hypothesis import settings, Phase
settings.register_profile("noshrink", phases=[Phase.generate], deadline=None)
settings.load_profile("noshrink")
import test_overhead_s47 as t
try:
    t.test_window_pass_keeps_and_reports_what_it_did_before(); print("MUTANT SURVIVED")
except AssertionError:
    print("MUTANT KILLED")
