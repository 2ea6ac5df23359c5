"""Write chars.npz and chars_eval.npz, the data of ../train_gpt_chars.yaml.

The text is the opening paragraph of Lewis Carroll's "Alice's Adventures in
Wonderland" (1865), in the public domain, lower-cased. Each character is an index
into VOCAB (its sorted characters); a sample is a window of T characters (`tokens`)
and the same window moved on by one (`targets`, the next character at each place).
The training windows start at every STRIDE-th character. The text is far too short
to learn English from, so nothing is held out: the evaluation windows (the graph's own
inputs) are EVAL_WINDOWS of the training windows spread over the text, and the
evaluation shows how well the model has learned this passage.

Run with the project's Python (needs NumPy only):

    python graphs/examples/data/make_chars.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TEXT = (
    "alice was beginning to get very tired of sitting by her sister on the bank, and of having "
    "nothing to do: once or twice she had peeped into the book her sister was reading, but it had "
    "no pictures or conversations in it, 'and what is the use of a book,' thought alice 'without "
    "pictures or conversations?' so she was considering in her own mind (as well as she could, for "
    "the hot day made her feel very sleepy and stupid), whether the pleasure of making a daisy-chain "
    "would be worth the trouble of getting up and picking the daisies, when suddenly a white rabbit "
    "with pink eyes ran close by her."
)
VOCAB = "".join(sorted(set(TEXT)))
T = 16                # characters per window: the graph's sequence length
STRIDE = 2
EVAL_WINDOWS = 8      # the graph's batch when run without training


def windows(ids: np.ndarray, starts) -> dict[str, np.ndarray]:
    index = np.asarray(starts)[:, None] + np.arange(T)
    return {"tokens": ids[index], "targets": ids[index + 1]}


def main() -> None:
    ids = np.array([VOCAB.index(c) for c in TEXT], dtype=np.int64)
    starts = np.arange(0, len(ids) - T, STRIDE)
    spread = starts[np.linspace(0, len(starts) - 1, EVAL_WINDOWS).astype(np.int64)]
    np.savez_compressed(HERE / "chars.npz", **windows(ids, starts))
    np.savez_compressed(HERE / "chars_eval.npz", **windows(ids, spread))
    print(f"vocabulary {len(VOCAB)} characters {VOCAB!r}; {len(starts)} windows of {T}, "
          f"{EVAL_WINDOWS} of them to evaluate on -> {HERE}")


if __name__ == "__main__":
    main()
