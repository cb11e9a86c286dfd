#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A keyword-spotting-like model trained in PyTorch and exported to ONNX, as a
team would before fine-tuning it on the device (docs/import.md).

The data: 3 channels of 16 steps; class c (of 4) is a wave of c + 1
periods per 16 steps, each channel a quarter period later than the one
before, plus uniform noise. The device sees the same classes through a
different sensor: an offset per channel and a gain (shift=True), which the
pretrained model misreads; examples/import_finetune/main.cpp makes that
data on the device and fine-tunes the head on it. Seeded, a few seconds.

  train_and_export.py OUT.onnx    prints the accuracy on clean and shifted data
"""
import argparse

import numpy as np
import torch
import torch.nn as nn

CLASSES, CHANNELS, STEPS = 4, 3, 16
OFFSET = np.array([0.4, -0.3, 0.2])  # the device's sensor: an offset per channel, then its gain
GAIN = -1.2  # wired with the opposite polarity
NOISE = 0.35


def make_data(n, rng, shift):
    labels = rng.integers(0, CLASSES, n)
    t = np.arange(STEPS)
    x = np.empty((n, CHANNELS, STEPS))
    for i, c in enumerate(labels):
        for ch in range(CHANNELS):
            x[i, ch] = np.sin(2 * np.pi * ((c + 1) * t + 4 * ch) / STEPS)
    x += rng.uniform(-NOISE, NOISE, x.shape)
    if shift:
        x = (x + OFFSET[None, :, None]) * GAIN
    return torch.tensor(x, dtype=torch.float32), torch.tensor(labels)


class Kws(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(CHANNELS, 4, 3)
        self.head = nn.Linear(4 * 7, CLASSES)

    def forward(self, x):
        x = nn.functional.max_pool1d(torch.relu(self.conv(x)), 2)
        return self.head(x.flatten(1))


def accuracy(model, x, y):
    with torch.no_grad():
        return float((model(x).argmax(1) == y).float().mean())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("output", help="the ONNX file to write")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    x, y = make_data(512, rng, False)
    model = Kws()
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(150):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    xt, yt = make_data(256, rng, False)
    xs, ys = make_data(256, rng, True)
    print("pytorch: accuracy %.3f on clean data, %.3f on the device's shifted data" % (
        accuracy(model, xt, yt), accuracy(model, xs, ys)))
    model.eval()
    torch.onnx.export(model, x[:1], args.output, input_names=["x"], output_names=["logits"], opset_version=13,
                      dynamic_axes={"x": {0: "n"}, "logits": {0: "n"}})


if __name__ == "__main__":
    main()
