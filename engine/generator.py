"""agrad.Generator, as torch.Generator: a seedable source of random numbers, and the default one.

A Generator holds NumPy's PCG64 (drawn on the host, so that a seed gives the same numbers on
every device), its seed and its state; `default_generator` is the one agrad's random functions
draw from when given none (`agrad.manual_seed` seeds it). Seeds are PyTorch's: any integer in
[-2^63, 2^64), a negative one taken modulo 2^64 (`manual_seed(-1).initial_seed()` is 2^64 - 1).
A new Generator starts from PyTorch's default seed (67280421310721); agrad's default generator
starts from 0, not a seed drawn at start-up as PyTorch's, so that a program's numbers are the
same every run. The numbers themselves are not PyTorch's (another bit generator): their
distributions are.
"""
from __future__ import annotations

import os

import numpy as np

__all__ = ["Generator", "default_generator", "numpy_rng", "seed_of", "check_seed", "seeded_rng", "draws_refused"]

_DEFAULT_SEED = 67280421310721          # c10's default_rng_seed_val
# the state as bytes (a uint8 Tensor, as PyTorch's ByteTensor): PCG64's state and increment (128
# bits each, little-endian), then its buffered 32-bit half (has_uint32, uinteger), so that a
# restored state draws exactly the numbers the saved one would have
_STATE_BYTES = 16 + 16 + 1 + 4


class Generator:
    """torch.Generator(device='cpu'): manual_seed, seed, initial_seed, get_state, set_state, device.
    A cuda Generator draws on the host too (the numbers are moved to the device)."""
    __slots__ = ("_device", "_seed", "_rng")

    def __init__(self, device="cpu", *, _seed=_DEFAULT_SEED):
        from ._device import device as Device

        dev = Device(device)
        if dev.type == "meta":
            raise RuntimeError("META device type not an accelerator.")
        if dev.type != "cpu":
            dev.backend.check_device(dev)
        self._device = dev
        self._seed = _seed
        self._rng = None            # made on first use: importing numpy.random costs a program that draws nothing

    @property
    def device(self):
        return self._device

    def manual_seed(self, seed) -> "Generator":
        """Seed this generator; returns it (PyTorch's range and messages)."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % 2 ** 64
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Seed this generator from the operating system's entropy; returns the seed (a 64-bit integer)."""
        seed = int.from_bytes(os.urandom(8), "little") & (2 ** 63 - 1)    # as c10's getNonDeterministicRandom
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self):
        """The state, a uint8 tensor, to give back to set_state."""
        from ._device import device as Device
        from ._tensor import Tensor

        state = self._numpy().bit_generator.state
        raw = (state["state"]["state"].to_bytes(16, "little") + state["state"]["inc"].to_bytes(16, "little")
               + bytes([state["has_uint32"]]) + int(state["uinteger"]).to_bytes(4, "little"))
        cpu = Device("cpu")         # (a CPU tensor, as creation.from_numpy makes: creation imports this module)
        return Tensor._make(np.frombuffer(raw, dtype=np.uint8).copy(), cpu, cpu.backend.key)

    def set_state(self, new_state) -> "Generator":
        """Put this generator back to a state get_state gave; returns it."""
        from ._tensor import Tensor
        from .dtypes import uint8

        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype != uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = bytes(np.asarray(new_state.detach().numpy(), dtype=np.uint8).reshape(-1))
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input RNG "
                               f"state size to be {len(raw)}")
        self._numpy().bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[:16], "little"), "inc": int.from_bytes(raw[16:32], "little")},
            "has_uint32": raw[32], "uinteger": int.from_bytes(raw[33:37], "little")}
        return self

    def clone_state(self) -> "Generator":
        """A new generator of the same device, seed and state."""
        twin = Generator(self._device, _seed=self._seed)
        return twin.set_state(self.get_state())

    def _numpy(self) -> np.random.Generator:
        if self._rng is None:
            self._rng = np.random.default_rng(self._seed)
        return self._rng

    def __repr__(self):
        return f"<agrad.Generator object at {hex(id(self))}>"


Generator.__module__ = "agrad"

default_generator = Generator(_seed=0)


class _RefusingDraws:
    """Stands in for the default generator's NumPy generator while draws are refused: any draw raises
    RuntimeError(message). Its bit_generator stays reachable, so that saving and restoring the state
    (get_rng_state, forward AD's replay of a primal) still works, as torch.get_rng_state does inside vmap."""

    def __init__(self, generator, message: str):
        self.bit_generator = generator.bit_generator
        self._message = message

    def __getattr__(self, name):
        raise RuntimeError(self._message)


class draws_refused:
    """`with draws_refused(message):` — the default generator refuses to draw (vmap's randomness='error',
    gradcheck's batched forward check); an explicit Generator still draws, as in PyTorch."""

    def __init__(self, message: str):
        self.message = message

    def __enter__(self):
        self.original = default_generator._numpy()
        self.guard = default_generator._rng = _RefusingDraws(self.original, self.message)
        return self

    def __exit__(self, *exc) -> None:
        # a manual_seed inside the block replaced the guard with a new generator: that one stays
        if default_generator._rng is self.guard:
            default_generator._rng = self.original


def numpy_rng(generator) -> np.random.Generator:
    """The NumPy generator a random function draws from: `generator`'s, or the default one's when None."""
    if generator is None:
        return default_generator._numpy()
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be an agrad.Generator, not {type(generator).__name__}")
    return generator._numpy()


def seed_of(generator) -> int | None:
    """The `seed` an op takes in place of `generator` (its schemas have `int? seed`, which a graph file
    can write): None for the default generator (the op draws from it), else a seed drawn from
    `generator`, so that the op's numbers follow from the generator's seed and move its state on."""
    if generator is None or generator is default_generator:
        return None
    return int(numpy_rng(generator).integers(2 ** 63))


def check_seed(op: str, seed) -> None:
    """An op's `seed` argument checked: NumPy's default_rng takes non-negative seeds only. The ops
    call it from their Meta function too, so that a graph file's negative seed is found before any
    kernel runs (seed_of never makes one)."""
    if seed is not None and seed < 0:
        raise ValueError(f"{op} seed must be a non-negative integer, but got {seed}")


def seeded_rng(op: str, seed) -> np.random.Generator:
    """The NumPy generator an op with a `seed` argument draws from: a new one seeded with `seed`, or
    the default generator's when None."""
    check_seed(op, seed)
    return np.random.default_rng(seed) if seed is not None else default_generator._numpy()
