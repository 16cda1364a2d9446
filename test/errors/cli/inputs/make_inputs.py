#!/usr/bin/python3
"""Writes the .npy/.npz inputs of the cli error tests (run it in this folder).

Well-formed files come from numpy; the broken ones are written byte by byte
so that each breaks exactly one rule of the formats (numpy/lib/format.py and
PKWARE's APPNOTE.TXT). add.json is `nxc aot --emit json` of
`defn add(a, b), do: a + b` at (f32[2], f32[2]); add-result-shape.json and
unknown-op.json are copies with the add node's shape made [3] and its op
made "frobnicate". dir.npy/ and dir.json/ are directories named like files.
"""
import os
import struct
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def put(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def npy(header, data=b"", major=1, minor=0):
    """A .npy file with the header dict text `header` (padded as numpy pads)."""
    h = header.encode("latin1")
    lenbytes = 2 if major == 1 else 4
    pad = 64 - (6 + 2 + lenbytes + len(h) + 1) % 64
    h = h + b" " * pad + b"\n"
    return b"\x93NUMPY" + bytes([major, minor]) + len(h).to_bytes(lenbytes, "little") + h + data


def npy_of(array):
    import io
    b = io.BytesIO()
    np.save(b, array, allow_pickle=True)
    return b.getvalue()


F32 = np.array([1, 2, 3], dtype=np.float32)
GOOD = npy_of(F32)
GOOD_HEADER = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"
DATA = F32.tobytes()

# --- well-formed ----------------------------------------------------------
put("f32-3.npy", GOOD)
np.savez(os.path.join(HERE, "two.npz"), a=F32, b=F32)
np.savez(os.path.join(HERE, "empty.npz"))

# --- .npy: preamble -------------------------------------------------------
put("empty.npy", b"")
put("bad-magic.npy", b"PK\x03\x04 this is not a .npy file")
put("truncated-magic.npy", b"\x93NUMPY\x01")
put("version-4.npy", npy(GOOD_HEADER, DATA, major=4))
put("truncated-header-length.npy", b"\x93NUMPY\x02\x00\x76\x00")
put("truncated-header.npy", GOOD[:40])

# --- .npy: header dict ----------------------------------------------------
put("header-no-brace.npy", npy("'descr': '<f4'", DATA))
put("header-unquoted-key.npy", npy("{descr: '<f4'}", DATA))
put("header-duplicate-key.npy", npy("{'descr': '<f4', 'descr': '<f4'}", DATA))
put("header-missing-colon.npy", npy("{'descr' '<f4'}", DATA))
put("header-bad-value.npy", npy("{'descr': None}", DATA))
put("header-missing-comma.npy", npy("{'descr': '<f4' 'shape': (3,)}", DATA))
put("header-trailing-text.npy", npy(GOOD_HEADER + " x", DATA))
put("header-unexpected-key.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'order': 'C'}", DATA))
put("header-missing-shape.npy", npy("{'descr': '<f4', 'fortran_order': False}", DATA))
put("header-descr-not-string.npy", npy("{'descr': 4, 'fortran_order': False, 'shape': (3,)}", DATA))
put("header-fortran-not-bool.npy", npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}", DATA))
put("header-shape-not-tuple.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': 3}", DATA))
put("structured.npy", npy_of(np.zeros(2, dtype=[("a", "<f4")])))
put("fortran-order.npy", npy_of(np.asfortranarray(np.zeros((2, 3), dtype=np.float32))))

# --- .npy: dtype ----------------------------------------------------------
def with_descr(descr, data=DATA):
    return npy("{'descr': '%s', 'fortran_order': False, 'shape': (3,), }" % descr, data)


put("dtype-empty.npy", with_descr(""))
put("dtype-malformed.npy", with_descr("<"))
put("dtype-object.npy", npy_of(np.array([1, "a", None], dtype=object)))
put("dtype-unsized.npy", with_descr("<f"))
put("dtype-float128.npy", with_descr("<f16", b"\0" * 48))
put("dtype-complex.npy", npy_of(np.zeros(3, dtype=np.complex64)))
put("dtype-string.npy", npy_of(np.array(["ab", "cd", "ef"])))
put("dtype-void.npy", npy_of(np.zeros(3, dtype="V4")))
put("dtype-datetime.npy", with_descr("<M8", b"\0" * 24))

# --- .npy: data -----------------------------------------------------------
put("shape-too-large.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }"))
put("truncated-data.npy", GOOD[:-4])
put("trailing-data.npy", GOOD + b"\0\0\0\0")


# --- .npz: zip structure --------------------------------------------------
def zipfile_bytes(members, eocd=None, central=None, local=None):
    """A zip archive of (name, payload, method, uncompressed, crc) members.

    `eocd`, `central` and `local` may override fields of those records: a
    dict of field name to value (for `central` and `local`, applied to the
    first member)."""
    out = b""
    cds = b""
    for i, (name, payload, method, uncomp, crc) in enumerate(members):
        n = name.encode()
        lf = dict(sig=0x04034B50, version=20, flags=0, method=method, time=0, date=0x21, crc=crc,
                  comp=len(payload), uncomp=uncomp, extra=b"")
        if local and i == 0:
            lf.update(local)
        cf = dict(sig=0x02014B50, made=20, version=20, flags=0, method=method, time=0, date=0x21, crc=crc,
                  comp=len(payload), uncomp=uncomp, extra=b"", disk=0, offset=len(out))
        if central and i == 0:
            cf.update(central)
        out += struct.pack("<IHHHHHIIIHH", lf["sig"], lf["version"], lf["flags"], lf["method"], lf["time"],
                           lf["date"], lf["crc"], lf["comp"], lf["uncomp"], len(n), len(lf["extra"]))
        out += n + lf["extra"] + payload
        cds += struct.pack("<IHHHHHHIIIHHHHHII", cf["sig"], cf["made"], cf["version"], cf["flags"], cf["method"],
                           cf["time"], cf["date"], cf["crc"], cf["comp"], cf["uncomp"], len(n), len(cf["extra"]), 0,
                           cf["disk"], 0, 0, cf["offset"])
        cds += n + cf["extra"]
    e = dict(disk=0, cddisk=0, here=len(members), entries=len(members), cdsize=len(cds), cdoffset=len(out),
             prefix=b"")
    if eocd:
        e.update(eocd)
    return (out + cds + e["prefix"] +
            struct.pack("<IHHHHIIH", 0x06054B50, e["disk"], e["cddisk"], e["here"], e["entries"], e["cdsize"],
                        e["cdoffset"], 0))


def stored(name="arr_0.npy", data=GOOD):
    return (name, data, 0, len(data), zlib.crc32(data))


def deflated(data=GOOD, uncomp=None):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    payload = c.compress(data) + c.flush()
    return ("arr_0.npy", payload, 8, len(data) if uncomp is None else uncomp, zlib.crc32(data))


put("not-zip.npz", b"this is not a zip archive, it is plain text\n")
put("truncated-zip.npz", zipfile_bytes([stored()])[:100])
locator = struct.pack("<IIQI", 0x07064B50, 0, 1 << 40, 1)
put("zip64-bad-locator.npz", zipfile_bytes([stored()], eocd=dict(prefix=locator)))
put("zip64-no-end-record.npz", zipfile_bytes([stored()], eocd=dict(entries=0xFFFF, here=0xFFFF)))
put("multi-disk.npz", zipfile_bytes([stored()], eocd=dict(disk=1)))
put("central-directory-beyond-end.npz", zipfile_bytes([stored()], eocd=dict(cdoffset=100000)))
put("too-many-entries.npz", zipfile_bytes([stored()], eocd=dict(entries=5, here=5)))
put("bad-central-entry.npz", zipfile_bytes([stored()], central=dict(sig=0x12345678)))
put("bad-zip64-extra.npz", zipfile_bytes([stored()], central=dict(uncomp=0xFFFFFFFF, extra=struct.pack("<HHI", 1, 4, 0))))
put("encrypted.npz", zipfile_bytes([stored()], central=dict(flags=1)))
put("member-on-other-disk.npz", zipfile_bytes([stored()], central=dict(disk=1)))
put("bad-local-header.npz", zipfile_bytes([stored()], local=dict(sig=0x12345678)))
put("entry-cut-off.npz", zipfile_bytes([stored()], central=dict(comp=100000, uncomp=100000)))
put("stored-size-mismatch.npz", zipfile_bytes([stored()], central=dict(uncomp=len(GOOD) + 1)))
put("deflate-ratio.npz", zipfile_bytes([deflated(uncomp=1 << 30)]))
d = deflated()
put("deflate-truncated.npz", zipfile_bytes([(d[0], d[1][:len(d[1]) // 2], 8, d[3], d[4])]))
put("deflate-corrupt.npz", zipfile_bytes([(d[0], b"\xff" * 16, 8, d[3], d[4])]))
put("deflate-longer.npz", zipfile_bytes([deflated(uncomp=len(GOOD) - 8)]))
put("deflate-shorter.npz", zipfile_bytes([deflated(uncomp=len(GOOD) + 8)]))
put("method-bzip2.npz", zipfile_bytes([("arr_0.npy", GOOD, 12, len(GOOD), zlib.crc32(GOOD))]))
put("crc-mismatch.npz", zipfile_bytes([("arr_0.npy", GOOD, 0, len(GOOD), zlib.crc32(GOOD) ^ 1)]))
put("not-npy-entry.npz", zipfile_bytes([stored("readme.txt", b"hello\n")]))
put("bad-member.npz", zipfile_bytes([stored("arr_0.npy", b"\x93NUMPY\x01")]))
