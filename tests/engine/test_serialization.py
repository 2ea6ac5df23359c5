"""agrad.save / agrad.load: round trips through .npz and .safetensors (tensors, state
dicts, whole checkpoints), a file written by the safetensors library itself
(tests/reference/make_serialization_reference.py), atomic writes, and hostile or damaged
files refused with a SerializationError."""
from __future__ import annotations

import json
import struct
import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

import agrad
import agrad.nn as nn
from agrad import _npy_headers as npy_headers
from agrad.serialization import SerializationError

REFERENCE = Path(__file__).resolve().parents[1] / "reference"
FORMATS = ["npz", "safetensors"]


def _all_dtypes() -> dict:
    rng = np.random.default_rng(0)
    return {"f32": agrad.tensor(rng.normal(size=(2, 3)).astype(np.float32)),
            "f64": agrad.tensor(rng.normal(size=4)),
            "f16": agrad.tensor(rng.normal(size=(3, 1)).astype(np.float16)),
            "i64": agrad.arange(6).reshape(2, 3), "i32": agrad.tensor([1, -2], dtype=agrad.int32),
            "i16": agrad.tensor([3], dtype=agrad.int16), "i8": agrad.tensor([-128, 127], dtype=agrad.int8),
            "u8": agrad.tensor([0, 255], dtype=agrad.uint8), "bool": agrad.tensor([True, False]),
            "scalar": agrad.tensor(2.5), "empty": agrad.zeros(0, 4),
            "transposed": agrad.arange(6.0).reshape(2, 3).t()}


@pytest.mark.parametrize("fmt", FORMATS)
def test_tensor_round_trip(tmp_path, fmt):
    path = tmp_path / f"x.{fmt}"
    t = agrad.randn(3, 4, requires_grad=True)
    agrad.save(t, path)
    u = agrad.load(path)
    assert type(u) is agrad.Tensor and u.dtype == agrad.float32 and not u.requires_grad
    assert agrad.equal(u, t.detach())


@pytest.mark.parametrize("fmt", FORMATS)
def test_dict_of_every_dtype_round_trips_in_order(tmp_path, fmt):
    path = tmp_path / f"d.{fmt}"
    tensors = _all_dtypes()
    agrad.save(tensors, str(path))
    loaded = agrad.load(path, map_location="cpu")
    assert list(loaded) == list(tensors)
    for name, t in tensors.items():
        assert loaded[name].dtype == t.dtype and loaded[name].shape == t.shape, name
        np.testing.assert_array_equal(loaded[name].numpy(), t.numpy())


@pytest.mark.parametrize("fmt", FORMATS)
def test_state_dict_round_trip_restores_a_model(tmp_path, fmt):
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(2 * 3 * 3, 3))
    model(agrad.randn(4, 1, 5, 5))                       # move the running statistics
    path = tmp_path / f"model.{fmt}"
    agrad.save(model.state_dict(), path)
    fresh = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(2 * 3 * 3, 3))
    assert repr(fresh.load_state_dict(agrad.load(path))) == "<All keys matched successfully>"
    for (key, a), b in zip(model.state_dict().items(), fresh.state_dict().values()):
        assert a.dtype == b.dtype and agrad.equal(a, b), key
    x = agrad.randn(2, 1, 5, 5)
    assert agrad.equal(model.eval()(x), fresh.eval()(x))


def test_reads_the_safetensors_librarys_own_file():
    want = json.loads((REFERENCE / "safetensors_from_torch.json").read_text())["tensors"]
    got = agrad.load(REFERENCE / "safetensors_from_torch.safetensors")
    assert set(got) == set(want)
    for name, spec in want.items():
        # NOTE: agrad has no bfloat16: BF16 is read as the float32 of the same value
        dtype = "float32" if spec["dtype"] == "bfloat16" else spec["dtype"]
        assert str(got[name].dtype) == f"agrad.{dtype}" and list(got[name].shape) == spec["shape"], name
        assert got[name].tolist() == spec["values"], name


def test_writes_the_safetensors_layout(tmp_path):
    """8-byte little-endian header length, a JSON header padded to 8 bytes, then the data
    in the entries' order, little-endian."""
    path = tmp_path / "w.safetensors"
    agrad.save({"a": agrad.tensor([1.0, 2.0]), "b": agrad.tensor([[3]], dtype=agrad.int16)}, path)
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    assert n % 8 == 0 and header["__metadata__"] == {"agrad": "dict"}
    assert header["a"] == {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
    assert header["b"] == {"dtype": "I16", "shape": [1, 1], "data_offsets": [8, 10]}
    assert raw[8 + n:] == np.array([1.0, 2.0], "<f4").tobytes() + np.array([3], "<i2").tobytes()


def test_foreign_npz_loads_as_a_dict(tmp_path):
    path = tmp_path / "plain.npz"
    np.savez(path, w=np.ones((2, 2), np.float32), n=np.arange(3))
    loaded = agrad.load(path)
    assert sorted(loaded) == ["n", "w"] and loaded["n"].dtype == agrad.int64


@pytest.mark.parametrize("fmt", FORMATS)
def test_nested_values_round_trip(tmp_path, fmt):
    obj = {"a": [agrad.ones(2), (1, 2.5, None, True, "x")], 0: {"inf": float("inf"), "t": agrad.tensor(3)},
           "0": agrad.zeros(1), "__metadata__": agrad.tensor([7.0]), "empty": {}, "nested": [[[]]]}
    path = tmp_path / f"n.{fmt}"
    agrad.save(obj, path)
    back = agrad.load(path)
    assert list(back) == ["a", 0, "0", "__metadata__", "empty", "nested"]
    assert back["a"][1] == (1, 2.5, None, True, "x") and isinstance(back["a"][1], tuple)
    assert back[0]["inf"] == float("inf") and back[0]["t"].dtype == agrad.int64 and back[0]["t"].item() == 3
    assert agrad.equal(back["a"][0], agrad.ones(2)) and agrad.equal(back["0"], agrad.zeros(1))
    assert back["__metadata__"].tolist() == [7.0] and back["empty"] == {} and back["nested"] == [[[]]]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_checkpoint_resumes_training_exactly(tmp_path, fmt):
    """Model, optimizer and scheduler state saved after 3 steps and loaded into fresh
    objects: 3 more steps give what 6 steps without a stop give."""
    x, y = agrad.randn(8, 3), agrad.randint(0, 2, (8,))

    def setup():
        agrad.manual_seed(7)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
        opt = agrad.optim.Adam(model.parameters(), lr=0.05, amsgrad=True)
        return model, opt, agrad.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    def steps(model, opt, sched, n):
        for _ in range(n):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
            sched.step()

    straight = setup()
    steps(*straight, 6)
    first = setup()
    steps(*first, 3)
    path = tmp_path / f"ckpt.{fmt}"
    agrad.save({"model": first[0].state_dict(), "optimizer": first[1].state_dict(),
                "scheduler": first[2].state_dict(), "epoch": 3}, path)
    ckpt = agrad.load(path)
    resumed = setup()
    resumed[0].load_state_dict(ckpt["model"])
    resumed[1].load_state_dict(ckpt["optimizer"])
    resumed[2].load_state_dict(ckpt["scheduler"])
    assert ckpt["epoch"] == 3
    steps(*resumed, 3)
    for a, b in zip(straight[0].parameters(), resumed[0].parameters()):
        assert agrad.equal(a, b)
    assert straight[2].get_last_lr() == resumed[2].get_last_lr()


def test_any_path_or_file_object_holds_an_npz_and_loads_by_its_first_bytes(tmp_path):
    import io
    import zipfile

    agrad.save({"w": agrad.ones(2), "step": 3}, tmp_path / "model.pt")
    assert zipfile.is_zipfile(tmp_path / "model.pt")          # an .npz, whatever the suffix says
    assert agrad.load(tmp_path / "model.pt")["step"] == 3
    agrad.save(agrad.arange(3.0), tmp_path / "blob")
    assert agrad.load(tmp_path / "blob").tolist() == [0.0, 1.0, 2.0]
    agrad.save({"w": agrad.ones(1)}, tmp_path / "w.safetensors")
    (tmp_path / "w.safetensors").rename(tmp_path / "w.bin")
    assert agrad.load(tmp_path / "w.bin")["w"].tolist() == [1.0]
    buffer = io.BytesIO()
    agrad.save({"x": agrad.full((2,), 7.0)}, buffer)
    buffer.seek(0)
    assert agrad.load(buffer)["x"].tolist() == [7.0, 7.0]
    buffer = io.BytesIO((tmp_path / "w.bin").read_bytes())
    assert agrad.load(buffer)["w"].tolist() == [1.0]


def test_a_pytorch_checkpoint_or_another_format_is_refused_by_name(tmp_path):
    import zipfile

    with zipfile.ZipFile(tmp_path / "torch.pt", "w") as archive:
        archive.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
        archive.writestr("archive/version", b"3\n")
    with pytest.raises(agrad.serialization.SerializationError, match="a PyTorch checkpoint .* never unpickles"):
        agrad.load(tmp_path / "torch.pt")
    (tmp_path / "notes.txt").write_text("hello world")
    with pytest.raises(agrad.serialization.SerializationError, match="neither an .npz archive nor a .safetensors"):
        agrad.load(tmp_path / "notes.txt")


def test_refusals(tmp_path):
    with pytest.raises(TypeError, match="optimizer/fn is a builtin_function_or_method; agrad saves tensors and"):
        agrad.save({"w": agrad.ones(1), "optimizer": {"fn": print}}, tmp_path / "m.npz")
    with pytest.raises(TypeError, match="the object is a set"):
        agrad.save({agrad.ones(1)}, tmp_path / "m.npz")
    with pytest.raises(TypeError, match="a key at the top is a tuple; keys must be str or int"):
        agrad.save({(1, 2): agrad.ones(1)}, tmp_path / "m.safetensors")
    assert not list(tmp_path.iterdir())
    agrad.save(agrad.ones(1), tmp_path / "m.npz")
    with pytest.raises(ValueError, match="never unpickles"):
        agrad.load(tmp_path / "m.npz", weights_only=False)
    with pytest.raises(FileNotFoundError):
        agrad.load(tmp_path / "absent.npz")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_save_failing_mid_write_leaves_the_old_file_and_no_temporary(tmp_path, fmt, monkeypatch):
    import agrad.serialization as serialization
    path = tmp_path / f"ckpt.{fmt}"
    agrad.save({"w": agrad.ones(3)}, path)
    before = path.read_bytes()

    def fails_half_way(fh, arrays, metadata):
        fh.write(b"half a header")
        raise OSError("disk full")

    monkeypatch.setattr(serialization, f"_write_{fmt}", fails_half_way)
    with pytest.raises(OSError, match="disk full"):
        agrad.save({"w": agrad.zeros(3)}, path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == [path.name]


def _safetensors(header, data: bytes = b"", length=None) -> bytes:
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + data


_F32 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
HOSTILE_SAFETENSORS = {
    "empty": (b"", "shorter than the 8-byte header length"),
    "short": (b"\x01\x02\x03", "shorter than the 8-byte header length"),
    "huge_header_length": (_safetensors({}, length=2**63), "over the format's limit"),
    "header_past_the_end": (_safetensors(b"{}", length=50), "the header says 50 bytes, the file has 2"),
    "not_json": (_safetensors(b"{not json"), "its header is not JSON"),
    "not_utf8": (_safetensors(b"\xff\xfe{}"), "its header is not JSON"),
    "json_list": (_safetensors([1, 2]), "not a JSON object"),
    "json_nested_past_the_stack": (_safetensors(b"[" * 200_000 + b"]" * 200_000), "its header is not JSON"),
    "duplicate_name": (_safetensors(b'{"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},'
                                    b'"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}'),
                       "names an entry twice"),
    "missing_field": (_safetensors({"a": {"dtype": "F32", "shape": [2]}}, bytes(8)),
                      "must have exactly dtype, shape and data_offsets"),
    "unknown_dtype": (_safetensors({"a": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 8]}}, bytes(8)),
                      "dtype 'F8_E4M3', which agrad cannot read"),
    "negative_size": (_safetensors({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, bytes(8)),
                      "not a list of sizes"),
    "bool_size": (_safetensors({"a": {"dtype": "F32", "shape": [True], "data_offsets": [0, 4]}}, bytes(4)),
                  "not a list of sizes"),
    "dtype_a_list": (_safetensors({"a": {"dtype": ["F32"], "shape": [0], "data_offsets": [0, 0]}}),
                     "has dtype \\['F32'\\], not a dtype's name"),
    "dtype_an_object": (_safetensors({"a": {"dtype": {}, "shape": [0], "data_offsets": [0, 0]}}),
                        "has dtype \\{\\}, not a dtype's name"),
    "reversed_offsets": (_safetensors({"a": {"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}}, bytes(8)),
                         "not \\[begin, end\\]"),
    "size_disagrees": (_safetensors({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, bytes(8)),
                       "needs 12 bytes; its data_offsets give 8"),
    "huge_shape": (_safetensors({"a": {"dtype": "F64", "shape": [2**40, 2**40], "data_offsets": [0, 8]}},
                                bytes(8)), "needs .* bytes; its data_offsets give 8"),
    # a zero makes the data 0 bytes whatever the other sizes: NumPy's own limits must bound them
    "size_past_int64": (_safetensors({"a": {"dtype": "F32", "shape": [2**64, 0], "data_offsets": [0, 0]}}),
                        "more than NumPy's 64 dimensions or a size past int64"),
    "65_dimensions": (_safetensors({"a": {"dtype": "F32", "shape": [1] * 64 + [0], "data_offsets": [0, 0]}}),
                      "more than NumPy's 64 dimensions"),
    "overlap": (_safetensors({"a": _F32, "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, bytes(8)),
                "overlap or leave a gap"),
    "gap": (_safetensors({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, bytes(8)),
            "starts at byte 4 of the data, expected 0"),
    "truncated_data": (_safetensors({"a": _F32}, bytes(5)), "the entries cover 8 bytes of data, the file has 5"),
    "trailing_bytes": (_safetensors({"a": _F32}, bytes(12)), "the entries cover 8 bytes of data, the file has 12"),
    "metadata_not_strings": (_safetensors({"__metadata__": {"agrad": 1}}), "must map strings to strings"),
    "says_tensor_holds_two": (_safetensors({"__metadata__": {"agrad": "tensor"}, "a": _F32,
                                            "b": {"dtype": "F32", "shape": [0], "data_offsets": [8, 8]}},
                                           bytes(8)), "says one tensor"),
    "structure_not_json": (_safetensors({"__metadata__": {"agrad": "structure", "structure": "{["}}),
                           "structure metadata is damaged"),
    "structure_missing": (_safetensors({"__metadata__": {"agrad": "structure"}}), "structure metadata is damaged"),
    "structure_unknown_kind": (_safetensors({"__metadata__": {"agrad": "structure",
                                                              "structure": '{"pickle": "os.system"}'}}),
                               "unknown kind 'pickle'"),
    "structure_names_absent_tensor": (_safetensors({"__metadata__": {"agrad": "structure",
                                                                     "structure": '{"tensor": "w"}'}}),
                                      "names a tensor 'w' the file does not hold"),
    "structure_leaves_a_tensor_out": (_safetensors({"__metadata__": {"agrad": "structure",
                                                                     "structure": '{"value": 1}'}, "a": _F32},
                                                   bytes(8)), "tensors no part of it names: \\['a'\\]"),
    "structure_too_deep": (_safetensors({"__metadata__": {"agrad": "structure",
                                                          "structure": '{"list": [' * 100 + ']}' * 100}}),
                           "nested deeper than 64 levels"),
    "structure_bad_dict": (_safetensors({"__metadata__": {"agrad": "structure", "structure": '{"dict": [[1]]}'}}),
                           "not \\[key, value\\] pairs"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_SAFETENSORS))
def test_hostile_safetensors_are_refused(tmp_path, name):
    content, message = HOSTILE_SAFETENSORS[name]
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(SerializationError, match=message):
        agrad.load(path)


def _pickled_npz(path):
    np.savez(path, w=np.array([{"evil": 1}], dtype=object))


def _truncated_npz(path):
    np.savez(path, w=np.ones(1000))
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


def _npy_named_npz(path):
    with open(path, "wb") as f:
        np.save(f, np.ones(3))


def _member_not_npy(path):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("notes.txt", "hello")


def _clongdouble_npz(path):
    np.savez(path, w=np.ones(2, np.clongdouble))


def _garbage(path):
    path.write_bytes(b"\x80\x04\x95 this is a pickle stream, not a zip")


def _unparsable_header(path):
    member = io.BytesIO()
    np.save(member, np.ones((2, 3)))
    with zipfile.ZipFile(path, "w") as z:         # NumPy's header parser: tokenize's "EOF in multi-line statement"
        z.writestr("w.npy", member.getvalue().replace(b"(2, 3)", b"(2, 3 ", 1))


def _unknown_compression(path):
    np.savez(path, w=np.ones(3))
    raw = bytearray(path.read_bytes())
    for at in (8, raw.rindex(b"PK\x01\x02") + 10):   # the method of the local header and of the directory entry
        raw[at:at + 2] = (77).to_bytes(2, "little")
    path.write_bytes(bytes(raw))


def _declares_more_than_it_holds(path):
    member = io.BytesIO()
    np.save(member, np.arange(4.0))
    with zipfile.ZipFile(path, "w") as z:         # a header for 2**40 values over the data of 4
        z.writestr("w.npy", member.getvalue().replace(b"(4,)", b"(1099511627776,)", 1))


HOSTILE_NPZ = {"object_array": (_pickled_npz, "array 'w' holds Python objects, which would need unpickling"),
               "declares_more_than_it_holds": (_declares_more_than_it_holds,
                                               "array 'w' declares 8,796,093,022,208 bytes of data but the archive "
                                               "holds"),
               "unparsable_header": (_unparsable_header, "not a readable .npz archive"),
               "unknown_compression": (_unknown_compression, "not a readable .npz archive"),
               "truncated": (_truncated_npz, "not a readable .npz archive"),
               "single_npy": (_npy_named_npz, "a single .npy array"),
               "member_not_npy": (_member_not_npy, "'notes.txt' is not an .npy array"),
               "clongdouble": (_clongdouble_npz, f"dtype {np.dtype(np.clongdouble)}, which agrad has no tensors of"),
               "pickle_stream": (_garbage, "not a readable .npz archive")}


@pytest.mark.parametrize("name", sorted(HOSTILE_NPZ))
def test_hostile_npz_are_refused(tmp_path, name):
    make, message = HOSTILE_NPZ[name]
    path = tmp_path / "bad.npz"
    make(path)
    with pytest.raises(SerializationError, match=message):
        agrad.load(path)


def test_a_compressed_npz_bomb_is_refused_from_its_headers(tmp_path, monkeypatch):
    # agrad.load checks each member as graph inputs and checkpoints do (agrad._npy_headers), before
    # NumPy allocates what a header declares: here 2 MiB of zeros in about 2 KiB, past a 1 MiB rule
    np.savez_compressed(tmp_path / "bomb.npz", w=np.zeros(2 ** 18))
    monkeypatch.setattr(npy_headers, "BOMB_BYTES", 2 ** 20)
    for source in (tmp_path / "bomb.npz", io.BytesIO((tmp_path / "bomb.npz").read_bytes())):
        with pytest.raises(SerializationError, match=r"array 'w' would inflate to 0\.0 GiB from 0\.0 MiB \(a zip bomb"):
            agrad.load(source)
    monkeypatch.setattr(npy_headers, "BOMB_BYTES", 2 ** 21)
    assert agrad.load(tmp_path / "bomb.npz")["w"].shape == (2 ** 18,)
