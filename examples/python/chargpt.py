"""A character-level GPT written in Python with xlite.nn.Module subclasses, trained with AdamW through
xl.compile(step): the Python twin of examples/chargpt.cpp (same model, data and schedule).

The text is every license text a Debian machine has in /usr/share/common-licenses, one token per byte value.
Usage: chargpt.py [steps] (default 300). Exits 1 if the loss did not fall half a nat below the unigram entropy.
"""
import math
import os
import sys
import time

import numpy as np

import xlite as xl


class Corpus:
    def __init__(self, folder="/usr/share/common-licenses"):
        names = sorted(n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n)))
        self.text = b"".join(open(os.path.join(folder, n), "rb").read() for n in names)
        raw = np.frombuffer(self.text, dtype=np.uint8)
        self.chars, self.data = np.unique(raw, return_inverse=True)
        self.data = self.data.astype(np.int64)

    @property
    def vocab(self):
        return len(self.chars)

    def unigram_entropy(self):
        p = np.bincount(self.data) / len(self.data)
        p = p[p > 0]
        return float(-(p * np.log(p)).sum())

    def batch(self, rng, batch, context):
        """Random windows: inputs [batch, context] and next-character targets [batch * context]."""
        starts = rng.integers(0, len(self.data) - context - 2, size=batch)
        x = np.stack([self.data[s:s + context] for s in starts])
        y = np.stack([self.data[s + 1:s + context + 1] for s in starts]).reshape(-1)
        return xl.tensor(x), xl.tensor(y)


class Block(xl.nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.ln1 = xl.nn.LayerNorm(d_model)
        self.attention = xl.nn.CausalSelfAttention(d_model, heads)
        self.ln2 = xl.nn.LayerNorm(d_model)
        self.mlp = xl.nn.MLP(d_model, 4 * d_model)

    def forward(self, x):
        h = x + self.attention(self.ln1(x))
        return h + self.mlp(self.ln2(h))


class CharGPT(xl.nn.Module):
    def __init__(self, vocab, layers=4, heads=4, d_model=128, context=64):
        super().__init__()
        self.tokens = xl.nn.Embedding(vocab, d_model)
        self.positions = xl.nn.Embedding(context, d_model)
        self.blocks = xl.nn.ModuleList(Block(d_model, heads) for _ in range(layers))
        self.final_norm = xl.nn.LayerNorm(d_model)
        self.head = xl.nn.Linear(d_model, vocab)
        with xl.no_grad():  # small initial embeddings keep the first logits near uniform
            self.tokens.weight.mul_(0.1)
            self.positions.weight.mul_(0.1)

    def forward(self, idx):
        x = self.tokens(idx) + self.positions(xl.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.final_norm(x))


def train(steps=300, batch=16, context=64, log=print):
    """Trains for `steps` steps; returns (smoothed final loss, unigram entropy, tokens per second)."""
    corpus = Corpus()
    xl.manual_seed(1234)
    model = CharGPT(corpus.vocab, context=context)
    optimizer = xl.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.99), weight_decay=0.01)
    log(f"chargpt.py: {len(corpus.text)} characters, vocab {corpus.vocab}, {model.num_parameters()} parameters, "
        f"{steps} steps of {batch} x {context} tokens")
    unigram = corpus.unigram_entropy()
    log(f"unigram entropy: {unigram:.3f} nats per character")

    @xl.compile
    def train_step(x, y):
        optimizer.zero_grad()
        logits = model(x)
        loss = xl.nn.cross_entropy(logits.reshape(-1, corpus.vocab), y)
        loss.backward()
        xl.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss

    rng = np.random.default_rng(7)
    started = warm = time.perf_counter()
    smoothed = 0.0
    for step in range(steps):
        if step == 3:  # after two traces and the first replay
            warm = time.perf_counter()
        optimizer.lr = xl.optim.warmup_cosine_lr(step, 20, steps, 3e-3, 3e-4)
        x, y = corpus.batch(rng, batch, context)
        loss = train_step(x, y).item()
        smoothed = loss if step == 0 else 0.9 * smoothed + 0.1 * loss
        if step % 25 == 0 or step == steps - 1:
            seconds = time.perf_counter() - started
            log(f"step {step:4d}  loss {loss:.3f} (avg {smoothed:.3f})  {(step + 1) * batch * context / seconds:.0f} "
                f"tokens/s  compiles: {xl.metrics.counter_value('UncachedCompile')} new")
    # Throughput once compiled: the steps after the first three.
    tokens_per_second = (steps - 3) * batch * context / (time.perf_counter() - warm) if steps > 3 else math.nan
    return smoothed, unigram, tokens_per_second


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    smoothed, unigram, _ = train(steps)
    learned = smoothed < unigram - 0.5
    print(f"final loss {smoothed:.3f} nats vs unigram entropy {unigram:.3f}: "
          + ("learned well beyond character frequencies" if learned else "not yet below the unigram entropy"))
    return 0 if learned else 1


if __name__ == "__main__":
    sys.exit(main())
