"""torch.utils.data's names for data loading: Dataset, TensorDataset, Subset, random_split and DataLoader.

A DataLoader over a TensorDataset gathers each batch with one index_select per tensor; other datasets are
indexed example by example and batched by collate_fn (default_collate stacks tensors, numbers and NumPy
arrays). Shuffling uses the loader's own NumPy generator, seeded by `generator` (an int) and advanced each
epoch, so runs repeat."""
import queue
import threading

import numpy as np

from .. import _creation, _xlite


class Dataset:
    """Subclass it and define __getitem__ and __len__, as in PyTorch."""

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class TensorDataset(Dataset):
    """Example i is row i of every tensor."""

    def __init__(self, *tensors):
        if not tensors:
            raise _xlite.Error("[TensorDataset] needs at least one tensor")
        n = tensors[0].shape[0] if tensors[0].ndim else None
        if any(t.ndim == 0 or t.shape[0] != n for t in tensors):
            raise _xlite.Error("[TensorDataset] tensors need the same size of dim 0, got "
                               + ", ".join(str(tuple(t.shape)) for t in tensors))
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]

    def _batch(self, indices):
        index = _creation.tensor(np.asarray(indices, dtype=np.int64), device=self.tensors[0].device)
        return tuple(_xlite.index_select(t, 0, index) for t in self.tensors)


class Subset(Dataset):
    """The examples of another dataset at the given indices."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)

    def _batch(self, indices):
        inner = [self.indices[i] for i in indices]
        if hasattr(self.dataset, "_batch"):
            return self.dataset._batch(inner)
        return default_collate([self.dataset[i] for i in inner])


def random_split(dataset, lengths, generator=None):
    """Disjoint Subsets of the given lengths (or fractions summing to 1) over a random permutation."""
    n = len(dataset)
    if all(isinstance(x, float) for x in lengths) and abs(sum(lengths) - 1) < 1e-9:
        sizes = [int(x * n) for x in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
    else:
        sizes = list(lengths)
    if sum(sizes) != n:
        raise _xlite.Error(f"[random_split] lengths sum to {sum(sizes)}, but the dataset has {n} examples")
    order = np.random.default_rng(generator).permutation(n)
    parts, start = [], 0
    for size in sizes:
        parts.append(Subset(dataset, order[start:start + size].tolist()))
        start += size
    return parts


def default_collate(examples):
    """A batch from a list of examples: tensors stacked, numbers and arrays made tensors, tuples, lists and dicts
    collated field by field."""
    first = examples[0]
    if isinstance(first, _xlite.Tensor):
        return _xlite.stack(list(examples), 0)
    if isinstance(first, (int, float, bool, np.ndarray, np.generic)):
        return _creation.tensor(np.asarray(examples))
    if isinstance(first, dict):
        return {key: default_collate([e[key] for e in examples]) for key in first}
    if isinstance(first, (tuple, list)):
        return type(first)(default_collate(list(field)) for field in zip(*examples))
    raise _xlite.Error(f"[default_collate] cannot batch {type(first).__name__} values")


class DataLoader:
    """Batches of a dataset: in order, or shuffled anew each epoch. With prefetch > 0 (the default, 2), a
    background thread makes the next batches while the loop works on this one, computed (not pending) and on
    `device` when one is given; an error there is raised by the iteration that reaches its batch."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, collate_fn=None, generator=None,
                 prefetch=2, device=None):
        if batch_size < 1:
            raise _xlite.Error(f"[DataLoader] batch_size must be >= 1, got {batch_size}")
        if prefetch < 0:
            raise _xlite.Error(f"[DataLoader] prefetch must be >= 0, got {prefetch}")
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, shuffle, drop_last
        self.collate_fn, self.prefetch, self.device = collate_fn, prefetch, device
        self._rng = np.random.default_rng(generator)

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size

    def _batches(self, order):
        for start in range(0, len(order), self.batch_size):
            indices = order[start:start + self.batch_size].tolist()
            if self.drop_last and len(indices) < self.batch_size:
                return
            if self.collate_fn is None and hasattr(self.dataset, "_batch"):
                batch = self.dataset._batch(indices)
            else:
                batch = (self.collate_fn or default_collate)([self.dataset[i] for i in indices])
            yield _moved(batch, self.device) if self.device is not None else batch

    def __iter__(self):
        n = len(self.dataset)
        # The order is drawn here, on the caller's thread, when the epoch starts.
        batches = self._batches(self._rng.permutation(n) if self.shuffle else np.arange(n))
        if self.prefetch == 0:
            yield from batches
            return
        made = queue.Queue(maxsize=self.prefetch)
        stopping = threading.Event()

        def put(item):
            while not stopping.is_set():
                try:
                    made.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        def work():
            try:
                for batch in batches:
                    _xlite.sync(_tensors_in(batch))
                    if not put(("batch", batch)):
                        return
                put(("end", None))
            except BaseException as error:  # noqa: B036 - handed to the consumer, which raises it
                put(("error", error))

        worker = threading.Thread(target=work, name="xlite-DataLoader", daemon=True)
        worker.start()
        try:
            while True:
                kind, value = made.get()
                if kind == "end":
                    return
                if kind == "error":
                    raise value
                yield value
        finally:
            stopping.set()
            worker.join()


def _moved(batch, device):
    if isinstance(batch, _xlite.Tensor):
        return batch.to(device=device)
    if isinstance(batch, dict):
        return {key: _moved(value, device) for key, value in batch.items()}
    if isinstance(batch, (tuple, list)):
        return type(batch)(_moved(value, device) for value in batch)
    return batch


def _tensors_in(batch):
    if isinstance(batch, _xlite.Tensor):
        return [batch]
    values = batch.values() if isinstance(batch, dict) else batch if isinstance(batch, (tuple, list)) else ()
    return [t for value in values for t in _tensors_in(value)]
