#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Trains the mlp_digits example's model once, offline, and writes the two
files the C++ example reads: weights.txt and test_set.txt.

Data: scikit-learn's bundled digits set (sklearn.datasets.load_digits: 1797
grey-level 8x8 images, pixels 0..16, 10 classes). It ships with scikit-learn,
so nothing is downloaded.

Split: the samples are shuffled with numpy.random.default_rng(SEED); the first
1347 train, the last 450 (a quarter) are the test set. The test set is never
used for training or for choosing anything.

Model: 64-32-10, ReLU after the hidden layer, softmax cross-entropy loss,
inputs scaled to [0, 1] (pixel / 16). Trained with plain full-batch gradient
descent with momentum in float64, then stored as float32, the precision the
example runs in.

weights.txt (text, so that a diff shows what changed):
    lines starting with '#' are comments
    dense <inputs> <outputs> <relu|linear>     one line per layer, then
    <inputs> lines of <outputs> numbers        W, row-major: y = x W + b
    1 line of <outputs> numbers                b
Numbers are float32 values printed with 9 significant digits, which reads
back to the same float32 exactly.

test_set.txt:
    lines starting with '#' are comments
    samples <n> features 64
    <n> lines: <label> <64 pixels, integers 0..16>
The example's input is pixel / 16, exact in float.

Run from anywhere with Debian's python3-sklearn and python3-numpy (or pip's
scikit-learn and numpy); the output is deterministic for a given numpy.
"""

import os

import numpy as np
from sklearn.datasets import load_digits

SEED = 0
TEST_SAMPLES = 450
HIDDEN = 32
EPOCHS = 3000
LEARNING_RATE = 0.2
MOMENTUM = 0.9
WEIGHT_DECAY = 1e-4


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def forward(params, x):
    w1, b1, w2, b2 = params
    h = np.maximum(x @ w1 + b1, 0.0)
    return h, h @ w2 + b2


def train(x, y, rng):
    n, features = x.shape
    classes = 10
    # He initialisation for the ReLU layer, Glorot-like for the output.
    params = [
        rng.normal(0.0, np.sqrt(2.0 / features), (features, HIDDEN)),
        np.zeros(HIDDEN),
        rng.normal(0.0, np.sqrt(1.0 / HIDDEN), (HIDDEN, classes)),
        np.zeros(classes),
    ]
    velocity = [np.zeros_like(p) for p in params]
    onehot = np.eye(classes)[y]
    for epoch in range(EPOCHS):
        w1, _, w2, _ = params
        h, z = forward(params, x)
        p = softmax(z)
        dz = (p - onehot) / n
        dh = (dz @ w2.T) * (h > 0)
        grads = [x.T @ dh + WEIGHT_DECAY * w1, dh.sum(axis=0), h.T @ dz + WEIGHT_DECAY * w2, dz.sum(axis=0)]
        for i, g in enumerate(grads):
            velocity[i] = MOMENTUM * velocity[i] - LEARNING_RATE * g
            params[i] = params[i] + velocity[i]
        if epoch % 500 == 0 or epoch == EPOCHS - 1:
            loss = -np.log(p[np.arange(n), y] + 1e-12).mean()
            print(f"epoch {epoch:5d}  loss {loss:.4f}  train accuracy {(z.argmax(axis=1) == y).mean():.4f}")
    return [p.astype(np.float32) for p in params]


def number(v):
    return f"{float(v):.9g}"


def write_weights(path, params, test_accuracy):
    w1, b1, w2, b2 = params
    with open(path, "w") as f:
        f.write("# mlp_digits weights, written by train.py (the format is described there)\n")
        f.write(f"# 64-{HIDDEN}-10, ReLU; test accuracy {test_accuracy:.4f} (numpy, these float32 weights)\n")
        for w, b, act in ((w1, b1, "relu"), (w2, b2, "linear")):
            f.write(f"dense {w.shape[0]} {w.shape[1]} {act}\n")
            for row in w:
                f.write(" ".join(number(v) for v in row) + "\n")
            f.write(" ".join(number(v) for v in b) + "\n")


def write_test_set(path, pixels, labels):
    with open(path, "w") as f:
        f.write("# mlp_digits test set, written by train.py: the last 450 samples of scikit-learn's digits\n")
        f.write(f"# after a shuffle with numpy.random.default_rng({SEED}); input = pixel / 16\n")
        f.write(f"samples {len(labels)} features {pixels.shape[1]}\n")
        for label, row in zip(labels, pixels):
            f.write(f"{label} " + " ".join(str(int(v)) for v in row) + "\n")


def main():
    digits = load_digits()
    pixels, labels = digits.data.astype(np.int64), digits.target.astype(np.int64)
    rng = np.random.default_rng(SEED)
    order = rng.permutation(len(labels))
    train_idx, test_idx = order[:-TEST_SAMPLES], order[-TEST_SAMPLES:]

    params = train(pixels[train_idx] / 16.0, labels[train_idx], rng)

    x_test = (pixels[test_idx] / 16.0).astype(np.float32)
    _, z = forward(params, x_test)
    accuracy = (z.argmax(axis=1) == labels[test_idx]).mean()
    print(f"test accuracy {accuracy:.4f} on {TEST_SAMPLES} samples")

    here = os.path.dirname(os.path.abspath(__file__))
    write_weights(os.path.join(here, "weights.txt"), params, accuracy)
    write_test_set(os.path.join(here, "test_set.txt"), pixels[test_idx], labels[test_idx])


if __name__ == "__main__":
    main()
