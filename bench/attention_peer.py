"""PyTorch 2.x's CPU attention on the shapes of `xlite_bench attention` and `xlite_bench paged`.

torch.nn.functional.scaled_dot_product_attention picks its own flash-attention kernel on the CPU. It is timed
forward alone and forward+backward (gradients of sum(out * w) for q, k and v), B=4, H=8, D=64, f32. The
decode case is SDPA of one query per sequence over a contiguous cache (B=8, H=32, Hkv=8, D=128, 2048
tokens), the peer of paged_attention. Prints `name value unit` lines like xlite_bench, medians of `runs`
timed runs after one warm-up; bench/attention.sh runs it with .venv-bench's pinned torch.

usage: attention_peer.py [runs] [threads]
"""

import statistics
import sys
import time

import torch
import torch.nn.functional as F


def median_seconds(fn, runs):
    fn()  # warm-up: first-call allocation and kernel selection
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def attention_case(s, causal, runs, bf16=False):
    torch.manual_seed(6)
    b, h, d = 4, 8, 64
    q, k, v, w = (torch.randn(b, h, s, d) for _ in range(4))
    if bf16:
        q, k, v = (t.to(torch.bfloat16) for t in (q, k, v))
    tag = f"attention_{'bf16_' if bf16 else ''}{'causal_' if causal else ''}S{s}"

    def forward():
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    leaves = [t.clone().requires_grad_() for t in (q, k, v)]

    def training():
        out = F.scaled_dot_product_attention(*leaves, is_causal=causal)
        torch.autograd.grad((out.float() * w).sum(), leaves)

    print(f"{tag}.torch_sdpa_ms {median_seconds(forward, runs) * 1e3:.6g} ms", flush=True)
    print(f"{tag}.torch_sdpa_train_ms {median_seconds(training, runs) * 1e3:.6g} ms", flush=True)


def decode_case(runs):
    torch.manual_seed(7)
    b, h, hkv, d, context = 8, 32, 8, 128, 2048
    q = torch.randn(b, h, 1, d)
    k, v = torch.randn(b, hkv, context, d), torch.randn(b, hkv, context, d)

    def decode():
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

    tag = "paged_decode_B8_H32_kv8_D128_S2048"
    print(f"{tag}.torch_sdpa_ms {median_seconds(decode, runs) * 1e3:.6g} ms", flush=True)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    torch.set_num_threads(threads)
    print(f"# settings: torch {torch.__version__}, {torch.get_num_threads()} threads, runs={runs}")
    decode_case(runs)
    for bf16 in (False, True):
        for s in (512, 1024, 2048, 4096):
            for causal in (False, True):
                attention_case(s, causal, runs, bf16)


if __name__ == "__main__":
    main()
