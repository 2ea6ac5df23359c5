"""Write digits.npz and digits_test.npz, the data of ../train_digits.yaml.

The 8x8 handwritten digits (1,797 images, 10 classes, pixels 0..16) ship with
scikit-learn as `sklearn/datasets/data/digits.csv.gz`, a copy of the test set of
the UCI "Optical Recognition of Handwritten Digits" data set (E. Alpaydin,
C. Kaynak, 1998; https://archive.ics.uci.edu/dataset/80, CC BY 4.0), distributed
with scikit-learn under its BSD-3-Clause license. The arrays here are those
pixels unchanged (uint8) and their labels (int64), split once with a fixed seed:
1,437 images to train on, 360 to test.

Run with any Python that has scikit-learn (only this script needs it):

    python -m venv /tmp/skvenv && /tmp/skvenv/bin/pip install scikit-learn
    /tmp/skvenv/bin/python graphs/examples/data/make_digits.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

HERE = Path(__file__).resolve().parent
TEST_SIZE = 360
SEED = 0


def main() -> None:
    digits = load_digits()
    x = digits.data.astype(np.uint8)             # (1797, 64), values 0..16
    y = digits.target.astype(np.int64)           # (1797,)
    order = np.random.default_rng(SEED).permutation(len(x))
    test, train = order[:TEST_SIZE], order[TEST_SIZE:]
    np.savez_compressed(HERE / "digits.npz", x=x[train], y=y[train])
    np.savez_compressed(HERE / "digits_test.npz", x=x[test], y=y[test])
    print(f"train {len(train)}, test {len(test)} images -> {HERE}")


if __name__ == "__main__":
    main()
