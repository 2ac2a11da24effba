import re,sys,os
tag=sys.argv[1]
names=sys.argv[2:]
for n in names:
    o=f"/tmp/s41/{n}.{tag}.out"; e=f"/tmp/s41/{n}.{tag}.err"
    if not os.path.exists(e): continue
    out=open(o).read() if os.path.exists(o) else ""; err=open(e).read()
    m=re.search(r"TIME ([\d.]+) user ([\d.]+) sys ([\d.]+) wall (\d+) KB",err)
    cpu=f"{float(m.group(1))+float(m.group(2)):.1f}" if m else "-"
    mib=f"{int(m.group(4))//1024}" if m else "-"
    wall=m.group(3) if m else "-"
    rc=re.findall(r"rc=(\d+)",err)
    first=out.splitlines()[0] if out else ""
    verdict=first.split(": ")[-1] if first else "(none)"
    key=[l.strip() for l in out.splitlines() if "symbolic" in l or "note:" in l]
    print(f"### {n} rc={rc} cpu={cpu} wall={wall} MiB={mib} verdict={verdict}")
    for k in key: print("   ", k[:600])
    load=open(f"/tmp/s41/{n}.{tag}.load").read().split("load average:") if os.path.exists(f"/tmp/s41/{n}.{tag}.load") else []
    print("    load:", [l.split("\n")[0].strip() for l in load[1:]])
