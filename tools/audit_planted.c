/* Functions named like avxbuf's kernels, each breaking one promise the
 * instruction audit checks (and a few keeping them), for
 * tools/audit_planted.lua. Written as assembly so that no compiler can
 * repair or move what is planted; EXPECT lines list what the audit must
 * report, and nothing else. */

#define PLANT_AT(name, pad, body) \
  __asm__(".text\n.p2align 6\n" pad ".globl " #name "\n.type " #name ", @function\n" #name ":\n" body \
          "\n.size " #name ", .-" #name "\n");
#define PLANT(name, body) PLANT_AT(name, "", body)

/* EXPECT sse2_copy isa: a VEX instruction in an SSE2 kernel */
PLANT(sse2_copy, "vmovdqu %xmm0, %xmm1\n ret")

/* EXPECT sse2_fill isa: a ymm store in an SSE2 kernel */
/* EXPECT sse2_fill zeroing: vector_zeroing=false picks sse2, whose fill uses ymm */
/* EXPECT sse2_copy agree: the sse2 kernel's widest register is then 256, not 128 */
PLANT(sse2_fill, "vmovdqu %ymm0, (%rdi)\n vzeroupper\n ret")

/* EXPECT avx_copy isa: an AVX2-only instruction in an AVX kernel */
PLANT(avx_copy, "vpbroadcastb %xmm0, %ymm0\n vmovdqu %ymm0, (%rdi)\n vzeroupper\n ret")

/* EXPECT avx_fill upper: one path returns with the upper state dirty */
PLANT(avx_fill, "vmovdqu %ymm0, (%rdi)\n test %rdx, %rdx\n je 1f\n vzeroupper\n1: ret")

/* EXPECT avx_nt_copy upper: a call with the upper state dirty */
PLANT(avx_nt_copy, "vmovntdq %ymm0, (%rdi)\n sfence\n call outside_helper\n vzeroupper\n ret")

/* clean: streams fenced on every path, vzeroupper on every path */
PLANT(avx_nt_fill, "vmovntdq %ymm0, (%rdi)\n test %rdx, %rdx\n je 1f\n nop\n1: sfence\n vzeroupper\n ret")

/* EXPECT avx2_copy isa: an EVEX instruction in an AVX2 kernel */
PLANT(avx2_copy, "vmovdqu8 %ymm0, (%rdi)\n vzeroupper\n ret")

/* EXPECT avx2_fill streaming: a non-temporal store in a temporal kernel */
PLANT(avx2_fill, "vmovntdq %ymm0, (%rdi)\n sfence\n vzeroupper\n ret")

/* EXPECT avx2_nt_copy streaming: a streaming kernel that does not stream */
PLANT(avx2_nt_copy, "vmovdqa %ymm0, (%rdi)\n vzeroupper\n ret")

/* EXPECT avx2_nt_fill fence: one path returns without an sfence */
PLANT(avx2_nt_fill, "vmovntdq %ymm0, (%rdi)\n test %rdx, %rdx\n je 1f\n sfence\n1: vzeroupper\n ret")

/* EXPECT avx512_256_copy isa: a zmm register in a 256-bit kernel */
/* EXPECT avx512_256_copy agree: its widest register is then 512, not 256 */
PLANT(avx512_256_copy, "vmovdqu64 %zmm0, (%rdi)\n vzeroupper\n ret")

/* clean */
PLANT(avx512_copy, "vmovdqu64 %zmm0, (%rdi)\n vzeroupper\n ret")

/* clean: the 512-bit family may return from registers 16-31 without vzeroupper */
PLANT(avx512_fill, "vpbroadcastb %esi, %zmm16\n vmovdqu64 %zmm16, (%rdi)\n ret")

/* clean: a kernel's _copy_skew32 is checked as part of its copy (tools/audit.lua),
 * where ymm is allowed; outside the kernels it would not be */
PLANT(avx512_256_copy_skew32, "vmovdqu %ymm0, (%rdi)\n vzeroupper\n ret")

/* clean: so is its _copy_large, where zmm is allowed; outside the kernels it would not be */
PLANT(avx512_copy_large, "vmovdqu64 %zmm0, (%rdi)\n vzeroupper\n ret")

/* EXPECT avx2_copy_large align: copy_large is an entry point too, off its 64-byte boundary */
PLANT_AT(avx2_copy_large, "nop\n", "vmovdqu %ymm0, (%rdi)\n vzeroupper\n ret")

/* EXPECT avx512_256_fill upper: ymm17 outside the 512-bit family */
/* EXPECT avx512_256_fill upper: ymm0 left dirty on the way out */
PLANT(avx512_256_fill, "vmovdqu64 %ymm17, (%rdi)\n vmovdqu64 %ymm0, (%rdi)\n ret")

/* EXPECT avx512_nt_fill align: a kernel entry point off its 64-byte boundary */
PLANT_AT(avx512_nt_fill, "nop\n", "vmovntdq %zmm16, (%rdi)\n sfence\n ret")

/* clean */
PLANT(avx512_nt_copy, "vmovntdq %zmm0, (%rdi)\n sfence\n vzeroupper\n ret")

/* EXPECT sse2_rfind_vec streaming: a stream in a temporal kernel's reverse search
 * (outside the kernels it would pass: the audit must know rfind_vec is a kernel's) */
PLANT(sse2_rfind_vec, "movntdq %xmm0, (%rdi)\n sfence\n ret")

/* clean: ymm in an AVX2 kernel's reverse search (outside the kernels: an isa violation) */
PLANT(avx2_rfind, "vmovdqu (%rdi), %ymm0\n vzeroupper\n ret")

/* clean: a string instruction and a tail jump */
PLANT(rep_stosb_fill, "mov %esi, %eax\n mov %rdx, %rcx\n rep stosb\n jmp outside_helper")

/* EXPECT outside_helper isa: AVX outside the kernels */
PLANT(outside_helper, "vpxor %xmm0, %xmm0, %xmm0\n ret")

/* EXPECT avxbuf_chain_imul probe: a memory access inside the chain's loop */
/* EXPECT avxbuf_chain_imul probe: the loop holds 15 imul, not 16 */
PLANT(avxbuf_chain_imul, "mov $4, %rcx\n1: imul (%rdi), %rax\n imul %rdx, %rax\n imul %rdx, %rax\n imul %rdx, %rax\n"
      " imul %rdx, %rax\n imul %rdx, %rax\n imul %rdx, %rax\n imul %rdx, %rax\n imul %rdx, %rax\n imul %rdx, %rax\n"
      " imul %rdx, %rax\n imul %rdx, %rax\n imul %rdx, %rax\n imul %rdx, %rax\n imul %rdx, %rax\n"
      " dec %rcx\n jnz 1b\n ret")

/* EXPECT avxbuf_chain_add probe: two chains of 8 adds read twice the clock */
PLANT(avxbuf_chain_add, "mov $4, %rcx\n1: add %rdx, %rax\n add %rdx, %rsi\n add %rdx, %rax\n add %rdx, %rsi\n"
      " add %rdx, %rax\n add %rdx, %rsi\n add %rdx, %rax\n add %rdx, %rsi\n add %rdx, %rax\n add %rdx, %rsi\n"
      " add %rdx, %rax\n add %rdx, %rsi\n add %rdx, %rax\n add %rdx, %rsi\n add %rdx, %rax\n add %rdx, %rsi\n"
      " dec %rcx\n jnz 1b\n ret")

/* EXPECT avxbuf_chain_add.cold probe: a vector register in a part split off the chain */
/* EXPECT avxbuf_chain_add.cold isa: beyond SSE2 outside the kernels */
PLANT(avxbuf_chain_add.cold, "vmovdqu %xmm0, %xmm1\n ret")
