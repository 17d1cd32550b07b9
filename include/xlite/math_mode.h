#pragma once
// Fast math, as XLA's --xla_cpu_enable_fast_math or CUDA's approximate intrinsics: a process-wide choice
// of how compiled code computes the f32 transcendentals, for programs bound by them (a chain of
// activations over a large tensor).
//
// Off (the default): exp, log, tanh, erf and sigmoid are within 1e-6 of each result, relative, over every
// f32 input, subnormals included. On: they use shorter polynomials and the CPU's reciprocal estimates, and
// are within 4e-4, relative (about 11 bits, as CUDA's approximate tanh; below 7.5e-5 in the 16-wide loops,
// whose estimate has 14 bits, and up to 4e-4 in the remainder loops, whose estimate has 12); results and
// inputs below the smallest normal float (1.2e-38) may be read as zero. silu follows sigmoid's bound. gelu
// and gelu_tanh take 1 + erf (or 1 + tanh), which cancels for x below -2: there their error is absolute,
// up to 4e-4 * |x| / 2. The activation chains of bench/peer_workloads.cpp run 1.4x to 2x faster
// (BENCHMARKS.md); steps bound by matrix products do not change. f64, sin, cos, tan and the rest, every
// other op, and the reference backend are the same in both modes; 16-bit floats compute in f32 and follow.
//
// The mode is read when a program compiles. A change drops the compiled programs of the other mode (the
// compilation cache is cleared; kernels are cached per mode), and a compile(fn) step traces again instead of
// replaying a program of the other mode. Change it while no other thread compiles: a program that compiles
// across the change may mix the modes. XLITE_FAST_MATH=1 starts the process with fast math on.
//
// Excess precision, as XLA's --xla_allow_excess_precision (on by default there) and inductor's generated
// code: a process-wide choice of how fused kernels compute 16-bit floats (bf16, f16). Off (the default): every
// op's result is rounded to its dtype, as the reference backend rounds it, so a compiled program gives the
// values of its ops run one by one. On: inside a fused kernel the results of elementwise arithmetic (unary and
// binary ops) stay in f32. A value is rounded to its dtype where it is stored, and where its bits become
// observable: compared (so x == amax(x), a max gradient's mask, holds as for stored values), tested (isnan,
// isinf), converted, or searched for an extreme's index; constants and the results of reductions are rounded
// too. Sums and other reductions take their inputs unrounded, and other functions (floor, round, remainder,
// the transcendentals) take the f32 value. Each value is then rounded once instead of after every op, so it
// is usually closer to the exact result, but not bit for bit the reference's, and it depends on how the
// compiler fused the graph. An f16 value past 65504 may stay finite inside a kernel (an overflow the reference
// gives as inf), until it is stored or observed. A chain of bf16 arithmetic runs up to 5x faster (the fused
// GELU backward of the bf16 transformer block, BENCHMARKS.md). f32 and f64 code and the reference backend are
// the same in both modes. Eager mode runs most ops as one kernel each, whose result is stored and so rounded,
// but a backward pass and composite ops (cross, addmm with alpha or beta, norm) compile as one fused graph and
// follow the mode. Like fast math, the mode is read when a program compiles, and a change drops the compiled
// programs (kernels of 16-bit floats are cached per mode). XLITE_EXCESS_PRECISION=1 starts the process with it
// on.
namespace xlite {

void set_fast_math(bool enabled);
bool is_fast_math();

void set_excess_precision(bool enabled);
bool is_excess_precision();

}  // namespace xlite
