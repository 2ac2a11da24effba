import harness.suite as s, harness.compile as c, sys
for n in s.names():
    out=f"/tmp/s41/{n}.sm_80.ptx"
    try:
        p=c.compile_contract(s.get(n),"sm_80","verify").ptx
        open(out,"w").write(p); print(n, len(p.splitlines()))
    except Exception as e: print(n, "ERR", e)
