"""One block-scaled mma.sync per warp (PTX 9.7.14.3), its operands loaded per lane: shared by the
emulator's oracle tests and the equivalence-term tests."""

from __future__ import annotations


def kernel(form: str, sel_a: str, sel_b: str, scaled: bool = True) -> str:
    """Lane t loads its 14 words from in[14 t] (a0..a3, b0, b1, c0..c3, scale-a-data, scale-b-data, then
    %h0..%h3: four 16-bit halves for register selectors) and stores d0..d3 to out[4 t]."""
    lines = [".version 8.8", ".target sm_120a", ".address_size 64",
             ".visible .entry k(.param .u64 pin, .param .u64 pout) {",
             " .reg .b32 %a<4>; .reg .b32 %b<2>; .reg .f32 %c<4>; .reg .f32 %d<4>; .reg .b32 %sa, %sb, %t;",
             " .reg .b16 %h<4>; .reg .b64 %rd<6>;",
             " ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout]; cvta.to.global.u64 %rd1, %rd1;",
             " cvta.to.global.u64 %rd2, %rd2; mov.u32 %t, %tid.x;",
             " mul.wide.u32 %rd3, %t, 56; add.s64 %rd3, %rd1, %rd3; mul.wide.u32 %rd4, %t, 16; add.s64 %rd4, %rd2, %rd4;"]
    lines += [f" ld.global.b32 %a{r}, [%rd3+{4 * r}];" for r in range(4)]
    lines += [f" ld.global.b32 %b{r}, [%rd3+{16 + 4 * r}];" for r in range(2)]
    lines += [f" ld.global.f32 %c{r}, [%rd3+{24 + 4 * r}];" for r in range(4)]
    lines += [" ld.global.b32 %sa, [%rd3+40]; ld.global.b32 %sb, [%rd3+44];"]
    lines += [f" ld.global.b16 %h{r}, [%rd3+{48 + 2 * r}];" for r in range(4)]
    tail = f", %sa, {sel_a}, %sb, {sel_b}" if scaled else ""
    lines.append(f" {form} {{%d0,%d1,%d2,%d3}}, {{%a0,%a1,%a2,%a3}}, {{%b0,%b1}}, {{%c0,%c1,%c2,%c3}}{tail};")
    lines += [f" st.global.f32 [%rd4+{4 * r}], %d{r};" for r in range(4)]
    lines += [" ret;", "}"]
    return "\n".join(lines)
