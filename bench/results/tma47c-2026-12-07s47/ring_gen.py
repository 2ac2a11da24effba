def ring_kernel(rows: int, inner: int, stages: int, r0: int, j0: int, barrier: bool) -> str:
    xbytes = 8 * rows * inner * 32 * 4
    far = 0 if barrier else xbytes
    return f"""// launch: {{"grid": [8], "block": [32], "buffers": {{"x": {{"dtype": "float32", "shape": [{xbytes // 4}], \
"init": "random"}}, "out": {{"dtype": "float32", "shape": [{8 * rows * 32}]}}}}, "params": ["x", "out"]}}
.version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u64 x, .param .u64 out)
{{
	.reg .pred %p<4>;
	.reg .b32 %r<64>;
	.reg .b64 %rd<16>;
	.reg .f32 %f<8>;
	.shared .align 4 .b8 tile[{stages * 128}];
	ld.param.u64 %rd1, [x];
	ld.param.u64 %rd2, [out];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r40, tile;
	shl.b32 %r41, %r2, 2;
	xor.b32 %r42, %r2, 1;
	shl.b32 %r42, %r42, 2;
	mul.lo.u32 %r20, %r3, {rows};
	mov.u32 %r10, 0;
OUTER:
	add.u32 %r21, %r20, %r10;
	mul.lo.u32 %r22, %r21, {inner};
	shl.b32 %r22, %r22, 5;
	add.u32 %r22, %r22, %r2;
	mul.wide.u32 %rd3, %r22, 4;
	add.s64 %rd3, %rd1, %rd3;
	mov.f32 %f1, 0f00000000;
	mov.u32 %r11, 0;
	mov.u32 %r50, 0;
INNER:
	xor.b32 %r30, %r10, {r0};
	xor.b32 %r31, %r11, {j0};
	or.b32 %r30, %r30, %r31;
	setp.eq.u32 %p3, %r30, {0 if barrier else 1 << 20};
	sub.u32 %r30, %r30, 1;
	shr.u32 %r30, %r30, 31;
	mul.lo.u32 %r30, %r30, {far};
	cvt.u64.u32 %rd6, %r30;
	add.s64 %rd7, %rd3, %rd6;
	ld.global.f32 %f2, [%rd7];
	add.u32 %r51, %r40, %r50;
	add.u32 %r52, %r51, %r41;
	st.shared.f32 [%r52], %f2;
	@%p3 bra NOBAR;
	bar.sync 0;
NOBAR:
	add.u32 %r53, %r51, %r42;
	ld.shared.f32 %f3, [%r53];
	add.f32 %f1, %f1, %f3;
	add.u32 %r50, %r50, 128;
	and.b32 %r50, %r50, {stages * 128 - 1};
	add.s64 %rd3, %rd3, 128;
	add.u32 %r11, %r11, 1;
	setp.lt.u32 %p2, %r11, {inner};
	@%p2 bra INNER;
	shl.b32 %r13, %r21, 5;
	add.u32 %r13, %r13, %r2;
	mul.wide.u32 %rd5, %r13, 4;
	add.s64 %rd5, %rd2, %rd5;
	st.global.f32 [%rd5], %f1;
	add.u32 %r10, %r10, 1;
	setp.lt.u32 %p1, %r10, {rows};
	@%p1 bra OUTER;
	ret;
}}
"""
