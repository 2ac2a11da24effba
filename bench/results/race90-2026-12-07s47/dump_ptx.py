"""Write the sm_90a PTX of gemm_tma_persistent at an instance and print the source line of given pcs."""
import sys
import ptx_parser
from harness.compile import compile_contract
from harness.suite import get
from symexec import load_program
c = get("gemm_tma_persistent")
comp = compile_contract(c, "sm_90a", instance=sys.argv[1])
open(sys.argv[2], "w").write(comp.ptx)
prog = load_program(ptx_parser.parse(comp.ptx, "k.ptx"), comp.entry)
for pc in map(int, sys.argv[3:]):
    print(pc, prog.code[pc].span, prog.code[pc])
