# The table of the performance goals, from the `name value unit` lines of bench/xlite_bench.cpp and
# bench/torch_peer.cpp. Usage (bench/run.sh does this):
#   awk -f bench/table.awk xlite.1.txt ... xlite.N.txt compile.1.txt ... torch.1.txt ... torch.N.txt
# Pass each program's files in repeat order: the i-th value of a name in the xlite files and the i-th in the
# torch files are taken as one repeat. Times shown are medians over the repeats; a ratio is the median over
# the repeats of the ratio within each repeat (same process for memcpy, oneDNN and eager mode; adjacent
# processes for libtorch). ratio > 1 is better than the reference column; rows that bound the measured
# value itself say "<=". A goal against libtorch must also hold against its fastest repeat. Lines
# starting with '#' are notes and are skipped.
# The training benchmarks (bench/train_bench.cpp, bench/torch_train_peer.cpp) also print check values,
# `<bench>.check.<what>` from xlite and `<bench>.torch_check.<what>` from libtorch, computed from the same
# initial weights and data; the "Numerics" list below compares them.
  FNR == 1 { file++ }
  /^#/ { next }
  NF >= 2 { n[$1]++; all[$1, n[$1]] = $2 }
  function median_of(k,   i, j, c, t, a) {
    c = n[k]
    for (i = 1; i <= c; i++) a[i] = all[k, i] + 0
    for (i = 2; i <= c; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
  }
  function ratio_median(num, den,   i, j, c, t, a) {  # median over repeats of num/den of the same repeat
    c = n[num] < n[den] ? n[num] : n[den]
    for (i = 1; i <= c; i++) a[i] = all[num, i] / all[den, i]
    for (i = 2; i <= c; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
  }
  function min_of(k,   i, m) {
    m = all[k, 1] + 0
    for (i = 2; i <= n[k]; i++) if (all[k, i] + 0 < m) m = all[k, i] + 0
    return m
  }
  function have(k) { return (k in v) }
  function row(goal, measured, reference, ratio, target, met) {
    printf("| %s | %s | %s | %s | %s | %s |\n", goal, measured, reference, ratio, target, met)
  }
  function ms(k) { return have(k) ? sprintf("%.2f ms", v[k]) : "n/a" }
  function ratio_row(goal, mk, rk, target, label) {  # ratio = reference time / measured time
    if (!have(mk) && !have(rk)) return  # neither program ran it (e.g. BENCH_TRAIN=only)
    if (!have(mk) || !have(rk)) { row(goal, ms(mk), ms(rk), "n/a", ">= " target, "not measured"); return }
    r = ratio_median(rk, mk)
    row(goal, ms(mk), ms(rk) label, sprintf("%.3f", r), ">= " target, verdict(r, target, rk, mk, label == " (libtorch)"))
  }
  # libtorch runs in its own process, so noise that slows only its repeats raises the ratio. A goal against
  # it counts as met only if it also holds against libtorch's fastest repeat (over xlite's median).
  function verdict(r, target, rk, mk, against_libtorch) {
    if (r < target) return "missed"
    if (against_libtorch && min_of(rk) / v[mk] < target)
      return sprintf("missed: %.3f against libtorch's fastest repeat (%.3g %s)", min_of(rk) / v[mk], min_of(rk),
                     rk ~ /_us$/ ? "us" : "ms")
    return "**met**"
  }
  END {
    for (k in n) v[k] = median_of(k)
    print "| goal | xlite | peer / limit (same run) | ratio | target | result |"
    print "|---|---|---|---|---|---|"
    ratio_row("chain of 10 elementwise ops, 16M f32, compiled vs memcpy of the same bytes", "chain10_16M.compiled_ms", "chain10_16M.memcpy_ms", 0.7, " (memcpy)")
    ratio_row("same chain: compiled vs eager mode", "chain10_16M.compiled_vs_eager_pass_ms", "chain10_16M.eager_ms", 5, " (eager)")
    ratio_row("(diagnostic) arithmetic-only chain of 10, compiled vs memcpy", "chain10arith_16M.compiled_ms", "chain10arith_16M.memcpy_ms", 0.7, " (memcpy)")
    ratio_row("row softmax [8192,1024] vs memcpy of input+output bytes", "softmax_8192x1024.xlite_ms", "softmax_8192x1024.memcpy_ms", 0.5, " (memcpy)")
    ratio_row("row softmax [8192,1024] vs libtorch", "softmax_8192x1024.xlite_ms", "softmax_8192x1024.torch_ms", 1, " (libtorch)")
    ratio_row("layernorm [8192,1024] vs memcpy of input+output bytes", "layernorm_8192x1024.xlite_ms", "layernorm_8192x1024.memcpy_ms", 0.5, " (memcpy)")
    ratio_row("layernorm [8192,1024] vs libtorch", "layernorm_8192x1024.xlite_ms", "layernorm_8192x1024.torch_ms", 1, " (libtorch)")
    ratio_row("matmul 1024x1024x1024 vs dnnl_sgemm", "matmul_1024x1024x1024.xlite_ms", "matmul_1024x1024x1024.dnnl_ms", 0.9, " (oneDNN)")
    ratio_row("matmul 512x768x3072 vs dnnl_sgemm", "matmul_512x768x3072.xlite_ms", "matmul_512x768x3072.dnnl_ms", 0.9, " (oneDNN)")
    k = "eager_16elem.per_op_us"
    if (have(k)) row("eager, cache hit, 16 elements: host time per op", sprintf("%.2f us", v[k]), "-", "-", "<= 3 us", v[k] <= 3 ? "**met**" : "missed")
    t = "eager_16elem.torch_per_op_us"
    if (have(k) && have(t)) row("eager per op vs libtorch eager (same 10-op sequence)", sprintf("%.2f us", v[k]), sprintf("%.2f us (libtorch)", v[t]), sprintf("%.3f", ratio_median(t, k)), ">= 1", verdict(ratio_median(t, k), 1, t, k, 1))
    t = "eager_16elem.torch_inference_mode_per_op_us"
    if (have(k) && have(t)) row("(info) eager per op vs libtorch under InferenceMode", sprintf("%.2f us", v[k]), sprintf("%.2f us (libtorch)", v[t]), sprintf("%.3f", ratio_median(t, k)), "-", "-")
    ratio_row("MLP 784-1024-1024-10 training step (batch 256, SGD), compile(step) vs libtorch", "mlp_train.compiled_ms", "mlp_train.torch_ms", 1.3, " (libtorch)")
    # No f32 implementation takes less than the step's matmul FLOPs at the FMA peak (bench/fma_peak.h), so
    # libtorch's time over that bound is the highest ratio the MLP goal can reach in this run.
    b = "mlp_train.peak_bound_ms"
    if (have(b) && have("mlp_train.torch_ms"))
      row("(limit) MLP step: libtorch vs its matmul FLOPs at this run's FMA peak, the ceiling of the ratio above", sprintf("%.2f ms (bound)", v[b]), ms("mlp_train.torch_ms") " (libtorch)", sprintf("%.3f", ratio_median("mlp_train.torch_ms", b)), "-", "-")
    g = "mlp_train.gemms_only_ms"
    if (have(g) && have("mlp_train.torch_ms"))
      row("(limit) MLP step: libtorch vs the step's 8 GEMMs alone in xlite (same shapes, one program), the ceiling with this GEMM library", sprintf("%.2f ms (GEMMs)", v[g]), ms("mlp_train.torch_ms") " (libtorch)", sprintf("%.3f", ratio_median("mlp_train.torch_ms", g)), "-", "-")
    if (have(b) && have("mlp_train.compiled_ms"))
      row("(limit) MLP step: xlite's time at the FMA-peak bound (share of the peak)", ms("mlp_train.compiled_ms"), sprintf("%.2f ms (%.0f GFLOP/s FMA peak)", v[b], v["mlp_train.fma_peak_GFLOPs"]), sprintf("%.3f", ratio_median(b, "mlp_train.compiled_ms")), "-", "-")
    ratio_row("transformer block fwd+bwd (d 512, 8 heads, seq 256, batch 8), compile(step) vs libtorch", "transformer_train.compiled_ms", "transformer_train.torch_ms", 1.2, " (libtorch)")
    ratio_row("MLP training step, eager mode vs libtorch", "mlp_train.eager_ms", "mlp_train.torch_ms", 0.8, " (libtorch)")
    ratio_row("transformer block fwd+bwd, eager mode vs libtorch", "transformer_train.eager_ms", "transformer_train.torch_ms", 0.8, " (libtorch)")
    k = "overhead_1000.per_step_us"
    if (have(k)) row(sprintf("compiled step of %d IR nodes on 4-element tensors: host time per call", v["overhead_1000.nodes"]), sprintf("%.1f us", v[k]), "-", "-", "<= 50 us", v[k] <= 50 ? "**met**" : "missed")
    k = "compile_100.first_in_process_ms"
    if (have(k)) row("compile ~100-node graph, cold: first compile in a fresh process", sprintf("%.1f ms", v[k]), "-", "-", "<= 300 ms", v[k] <= 300 ? "**met**" : "missed")
    k = "compile_100.uncached_ms"
    if (have(k)) row("compile ~100-node graph, cold: new graph, JIT already up", sprintf("%.1f ms", v[k]), "-", "-", "<= 300 ms", v[k] <= 300 ? "**met**" : "missed")
    k = "compile_100.regions_cached_ms"
    if (have(k)) row("second compile of the graph (program evicted, every region cached)", sprintf("%.2f ms", v[k]), "-", "-", "~0 (<= 1 ms)", v[k] <= 1 ? "**met**" : "missed")
    k = "compile_200_joined.regions_cached_ms"
    if (have(k)) row("new graph joining two compiled ones (every region cached)", sprintf("%.2f ms", v[k]), "-", "-", "~0 (<= 1 ms)", v[k] <= 1 ? "**met**" : "missed")
    print ""
    print "Context (not goals):"
    if (have("chain10_16M.torch_ms")) printf("- libtorch eager chain of 10: %.2f ms (xlite compiled %.2f ms, xlite eager %.2f ms)\n", v["chain10_16M.torch_ms"], v["chain10_16M.compiled_ms"], v["chain10_16M.eager_ms"])
    split("1024x1024x1024 512x768x3072", shapes, " ")
    for (i = 1; i <= 2; i++) {
      s = "matmul_" shapes[i]
      if (have(s ".torch_ms")) printf("- %s: libtorch %.2f ms, xlite %.2f ms, dnnl_sgemm %.2f ms (%.0f / %.0f GFLOP/s xlite / dnnl)\n", s, v[s ".torch_ms"], v[s ".xlite_ms"], v[s ".dnnl_ms"], v[s ".xlite_GFLOPs"], v[s ".dnnl_GFLOPs"])
    }
    if (have("softmax_8192x1024.torch_memcpy_ms")) printf("- memcpy of 32 MiB: %.2f ms in the xlite run, %.2f ms in the libtorch run (machine state of the two runs)\n", v["softmax_8192x1024.memcpy_ms"], v["softmax_8192x1024.torch_memcpy_ms"])
    if (have("chain10_16M.memcpy_GBps")) printf("- memcpy bandwidth (read + write): %.1f GB/s on 64 MiB, %.1f GB/s on 32 MiB\n", v["chain10_16M.memcpy_GBps"], v["softmax_8192x1024.memcpy_GBps"])
    split("sum_all_16M sum_rows_4096x4096 sum_columns_4096x4096 sum_columns_8Mx2", sums, " ")
    for (i = 1; i <= 4; i++) {
      s = sums[i]
      if (have(s ".xlite_ms")) printf("- %s (reads 64 MiB): %.2f ms (%.1f GB/s), memcpy of the same bytes moved %.2f ms, ratio %.3f\n", s, v[s ".xlite_ms"], v[s ".xlite_GBps"], v[s ".memcpy_ms"], ratio_median(s ".memcpy_ms", s ".xlite_ms"))
    }
    if (have("sum_all_64K_x256.xlite_ms")) printf("- 256 sums of 64K floats from L2: %.2f ms (%.1f GB/s)\n", v["sum_all_64K_x256.xlite_ms"], v["sum_all_64K_x256.xlite_GBps"])
    if (have("eager_16elem.execute_part_us")) printf("- eager: of the time per op, running the one-op program takes %.2f us (median EagerOpExecuteTime)\n", v["eager_16elem.execute_part_us"])
    split("mlp_train transformer_train", benches, " ")
    for (i = 1; i <= 2; i++) {
      s = benches[i]
      if (have(s ".compiled_ms")) printf("- %s: compiled %.2f ms (%.0f GFLOP/s of matmul), eager %.2f ms (compiled %.2fx faster than eager, same process)\n", s, v[s ".compiled_ms"], v[s ".compiled_GFLOPs"], v[s ".eager_ms"], ratio_median(s ".eager_ms", s ".compiled_ms"))
    }
    if (have("overhead_1000.tracing_us")) printf("- compiled step of %d nodes: of %.1f us per call, the runtime's TracingTime is %.1f us and ExecuteTime %.1f us (means per call)\n", v["overhead_1000.nodes"], v["overhead_1000.per_step_us"], v["overhead_1000.tracing_us"], v["overhead_1000.execute_us"])
    numerics()
  }
  # Compares each `<bench>.check.<what>` with `<bench>.torch_check.<what>`: losses and squared gradient
  # norms by relative difference, projections on a fixed probe vector (order 1) by absolute difference.
  function numerics(   k, t, bench, what, a, b, d, tol, worst, worst_what, count, bad, order, nb, i) {
    nb = 0
    for (k in v) {
      if (!index(k, ".check.")) continue
      bench = substr(k, 1, index(k, ".check.") - 1)
      if (!(bench in seen)) { seen[bench] = 1; order[++nb] = bench }
    }
    if (nb == 0) return
    print ""
    print "Numerics (xlite vs libtorch from identical weights and data; checks, not timings):"
    for (i = 1; i <= nb; i++) {
      bench = order[i]
      worst_loss = 0; worst_sq = 0; worst_probe = 0; count = 0; bad = 0; missing = 0; losses = ""
      for (k in v) {
        if (index(k, bench ".check.") != 1) continue
        what = substr(k, length(bench ".check.") + 1)
        t = bench ".torch_check." what
        if (!have(t)) { missing++; continue }
        a = v[k]; b = v[t]; count++
        if (what ~ /^probe\./) { d = a > b ? a - b : b - a; tol = 1e-3; if (d > worst_probe) worst_probe = d }
        else {
          d = (a > b ? a - b : b - a) / ((b > 0 ? b : -b) + 1e-30)
          if (what ~ /^loss/) {
            # relative to max(|loss|, 0.01): a loss near 0 (the transformer's mean output) is compared absolutely
            d = (a > b ? a - b : b - a) / ((b > 0 ? b : -b) > 1e-2 ? (b > 0 ? b : -b) : 1e-2)
            tol = 1e-4; if (d > worst_loss) worst_loss = d; losses = losses sprintf(" %s %.7g/%.7g", what, a, b)
          } else { tol = 1e-3; if (d > worst_sq) worst_sq = d }
        }
        if (d > tol) bad++
      }
      if (count == 0) { printf("- %s: no libtorch check values to compare\n", bench); continue }
      printf("- %s: %d values compared, %s. Losses xlite/libtorch:%s (max rel diff %.1e); gradients: max rel diff of squared norms %.1e, max |probe diff| %.1e (tolerances 1e-4 of max(|loss|, 0.01), 1e-3, 1e-3)%s\n",
             bench, count, bad ? bad " OUTSIDE TOLERANCE" : "all within tolerance", losses, worst_loss, worst_sq, worst_probe, missing ? sprintf("; %d without a libtorch value", missing) : "")
    }
  }
