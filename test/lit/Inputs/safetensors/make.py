#!/usr/bin/python3
"""Writes the .safetensors files the tests read, following the format's
specification (huggingface/safetensors, "Format"): a little-endian u64 N, an
N-byte JSON header (padded with spaces), then the tensors' bytes. Neither
the safetensors package nor a model hub is reachable from the machines that
run the tests, so this writer builds the files from NumPy arrays; the tests
check what nxc reads against the same arrays.

  model.safetensors   "dense.kernel" f32[3,2], "dense.bias" f32[2], with
                      __metadata__ and a padded header
  types.safetensors   BOOL, I8, U16, F16, BF16, I64, F64 tensors
  ../../../errors/cli/inputs/st-*.safetensors   hostile files, one defect each

Usage: /usr/bin/python3 test/lit/Inputs/safetensors/make.py
"""
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ERRORS = os.path.join(HERE, "..", "..", "..", "errors", "cli", "inputs")


def file_bytes(tensors, metadata=None, pad=0, header_override=None, size_delta=0):
    """tensors: [(name, dtype, shape, raw bytes)] laid out in order."""
    header, data, offset = {}, b"", 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    text = header_override if header_override is not None else json.dumps(header)
    text = text.encode() + b" " * pad
    return struct.pack("<Q", len(text) + size_delta) + text + data


def write(path, content):
    with open(path, "wb") as f:
        f.write(content)


def bf16(values):
    bits = np.asarray(values, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2").tobytes()


kernel = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "<f4")
bias = np.array([0.5, -0.5], "<f4")
write(os.path.join(HERE, "model.safetensors"),
      file_bytes([("dense.kernel", "F32", kernel.shape, kernel.tobytes()),
                  ("dense.bias", "F32", bias.shape, bias.tobytes())],
                 metadata={"format": "pt"}, pad=5))
write(os.path.join(HERE, "types.safetensors"),
      file_bytes([("mask", "BOOL", (3,), np.array([1, 0, 1], np.uint8).tobytes()),
                  ("small", "I8", (2,), np.array([-3, 7], "<i1").tobytes()),
                  ("count", "U16", (2,), np.array([1, 65535], "<u2").tobytes()),
                  ("half", "F16", (2,), np.array([0.5, -2.25], "<f2").tobytes()),
                  ("brain", "BF16", (2,), bf16([1.5, -3.0])),
                  ("step", "I64", (), np.array(12345678901, "<i8").tobytes()),
                  ("wide", "F64", (2,), np.array([0.1, 1e300], "<f8").tobytes())]))

# The 8-bit floats as their bytes: E4M3 0x00..0x7E over and over (300 of
# them: more than a graph file writes inline), E5M2 1.0, -1.5, 57344, Inf.
write(os.path.join(HERE, "f8.safetensors"),
      file_bytes([("e4m3", "F8_E4M3", (300,), bytes(i % 127 for i in range(300))),
                  ("e5m2", "F8_E5M2", (4,), bytes([0x3C, 0xBE, 0x7B, 0x7C]))]))

good = [("a", "F32", (2,), np.array([1, 2], "<f4").tobytes())]
two = good + [("b", "F32", (1,), np.array([3], "<f4").tobytes())]
hostile = {
    "st-header-beyond-end": file_bytes(good, size_delta=1000),
    "st-not-json": file_bytes(good, header_override='{"a": {"dtype": "F32",'),
    "st-duplicate-name": file_bytes(good, header_override='{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},'
                                                          ' "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}'),
    "st-c64": file_bytes([("a", "C64", (1,), b"\x00" * 8)]),
    "st-size-mismatch": file_bytes([("a", "F32", (3,), np.array([1, 2], "<f4").tobytes())]),
    "st-offsets-outside": file_bytes(good, header_override='{"a": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}'),
    "st-overlap": file_bytes(two, header_override='{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},'
                                                  ' "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}'),
    "st-hole": file_bytes(two, header_override='{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},'
                                               ' "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}}'),
    "st-bool-byte": file_bytes([("m", "BOOL", (2,), b"\x01\x07")]),
    "st-extra-field": file_bytes(good, header_override='{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8],'
                                                      ' "scale": 2}}'),
}
for name, content in hostile.items():
    write(os.path.join(ERRORS, name + ".safetensors"), content)
