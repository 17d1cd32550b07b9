"""An MLP and a small CNN, written as Python modules, trained on the handwritten digits Debian's python3-sklearn
ships (scripts/fetch-digits.sh extracts them to data/digits.csv): the Python twin of examples/digits.cpp.
Usage: digits.py [path to digits.csv]. Exits 1 if the MLP's test accuracy is below 95%.
"""
import sys

import numpy as np

import xlite as xl


class MLP(xl.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = xl.nn.Linear(64, 128)
        self.out = xl.nn.Linear(128, 10)

    def forward(self, x):
        return self.out(xl.relu(self.hidden(x)))


class CNN(xl.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = xl.nn.Sequential(
            xl.nn.Conv2d(1, 16, 3, padding=1), xl.nn.ReLU(), xl.nn.MaxPool2d(2),
            xl.nn.Conv2d(16, 32, 3, padding=1), xl.nn.ReLU(), xl.nn.MaxPool2d(2), xl.nn.Flatten())
        self.classifier = xl.nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        return self.classifier(self.features(x.reshape(-1, 1, 8, 8)))


def accuracy(model, x, y):
    with xl.no_grad():
        model.eval()
        correct = (xl.argmax(model(x), dim=1) == y).sum().item()
        model.train()
    return correct / len(y)


def train(name, model, train_set, test_set, steps, lr, log=print):
    optimizer = xl.optim.Adam(model.parameters(), lr=lr)
    x, y = train_set

    @xl.compile
    def step(x, y):
        optimizer.zero_grad()
        loss = xl.nn.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    for i in range(steps):
        loss = step(x, y).item()
        if i % 50 == 0 or i == steps - 1:
            log(f"{name} step {i:3d}  loss {loss:.4f}")
    acc = accuracy(model, *test_set)
    log(f"{name} test accuracy: {100 * acc:.2f}% ({len(test_set[1])} images)")
    return acc


def load(path):
    table = np.loadtxt(path, delimiter=",", dtype=np.float32)
    if table.ndim != 2 or table.shape[1] != 65:
        raise SystemExit(f"digits.py: {path} does not hold rows of 64 pixels and a label")
    order = np.random.default_rng(42).permutation(len(table))
    table = table[order]
    images, labels = table[:, :64] / 16.0, table[:, 64].astype(np.int64)  # pixels are 0..16
    cut = len(table) * 4 // 5
    return (xl.tensor(images[:cut]), xl.tensor(labels[:cut])), (xl.tensor(images[cut:]), xl.tensor(labels[cut:]))


def run(path, log=print):
    train_set, test_set = load(path)
    log(f"digits.py: {len(train_set[1]) + len(test_set[1])} images, {len(train_set[1])} for training")
    xl.manual_seed(0)
    mlp_accuracy = train("mlp", MLP(), train_set, test_set, 200, 1e-2, log)
    cnn_accuracy = train("cnn", CNN(), train_set, test_set, 150, 1e-2, log)
    return mlp_accuracy, cnn_accuracy


if __name__ == "__main__":
    mlp_accuracy, _ = run(sys.argv[1] if len(sys.argv) > 1 else "data/digits.csv")
    sys.exit(0 if mlp_accuracy >= 0.95 else 1)
