import sys
from harness.suite import get
from harness.compile import compile_contract
name=sys.argv[1]
open(f"/tmp/sz3/{name}.sm_80.ptx","w").write(compile_contract(get(name),"sm_80","verify").ptx)
