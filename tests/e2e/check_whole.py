"""Checks that every file in a run's output folder is whole (SPEC §4: a file
appears whole or not at all), e.g. after the run was killed with SIGKILL.

Visible files must each parse completely: .json (json), .csv (a header and
rows of the same width, ending in a newline), .pvd, .pvti and .xdmf (XML,
and every reference resolves: each file a .pvd or .pvti names exists, each
`file.h5:/path` of an .xdmf names an .h5 file beside it holding that
dataset with as many values as the DataItem's Dimensions), .vti (the XML header, then the appended
data: every zlib or lz4 block inflates to the size the header promises, or the uncompressed values
are all there), .h5 (h5py opens it
and reads every dataset; checkpoint.h5 holds u, the case and the state). Hidden files are the temporaries of writes cut
short; they must be named so (".<name>.tmp", ".fields.h5.partial",
".fields.xdmf.partial"), or be a run's lock (".gridforge.lock").

Usage: check_whole.py OUT_DIR   (prints what it checked; exit 1 on a fault)
"""
import json
import os
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

import h5py
import numpy as np

TEMP = re.compile(r"^\.(.+\.tmp|fields\.h5\.partial|fields\.xdmf\.partial|gridforge\.lock)$")


def inflate(compressor, block, size):
    """One block of a .vti's appended data, uncompressed (output.compression)."""
    if compressor == "vtkZLibDataCompressor":
        return zlib.decompress(block)
    import lz4.block  # Debian's python3-lz4
    return lz4.block.decompress(block, uncompressed_size=size)


def check_vti(path):
    data = open(path, "rb").read()
    marker = data.find(b"<AppendedData encoding=\"raw\">")
    assert marker > 0, "no raw appended data"
    head = data[:marker].decode()
    compressor = re.search(r'compressor="([^"]*)"', head)
    compressor = compressor.group(1) if compressor else None
    assert 'header_type="UInt64"' in head and compressor in (
        None, "vtkZLibDataCompressor", "vtkLZ4DataCompressor"), \
        "not the UInt64 layout, uncompressed, zlib or lz4, that gridforge writes"
    ext = [int(v) for v in re.search(r'WholeExtent="([^"]+)"', head).group(1).split()]
    points = (ext[1] - ext[0] + 1) * (ext[3] - ext[2] + 1) * (ext[5] - ext[4] + 1)
    arrays = re.findall(r'<DataArray type="(Float32|Float64)"[^>]*offset="(\d+)"', head)
    assert arrays, "no data arrays"
    start = data.index(b"_", marker) + 1
    for kind, offset in arrays:
        p = start + int(offset)
        if compressor is None:  # the byte count, then the values
            (count,) = struct.unpack_from("<Q", data, p)
            raw = data[p + 8:p + 8 + count]
        else:  # blocks: count, size, last size, compressed sizes, then the blocks
            nblocks, block, last = struct.unpack_from("<QQQ", data, p)
            sizes = struct.unpack_from(f"<{nblocks}Q", data, p + 24)
            q = p + 24 + 8 * nblocks
            raw = b"".join(
                inflate(compressor, data[q + sum(sizes[:i]):q + sum(sizes[:i + 1])],
                        last if i == nblocks - 1 and last else block)
                for i in range(nblocks))
            assert len(raw) == block * (nblocks - 1) + (last or block)
        want = points * (4 if kind == "Float32" else 8)
        assert len(raw) == want, f"{len(raw)} bytes of data, {want} expected"
        np.frombuffer(raw, dtype="<f4" if kind == "Float32" else "<f8")
    assert data.rstrip().endswith(b"</VTKFile>"), "no closing </VTKFile>"


def check_h5(path):
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                obj[...]
        f.visititems(visit)
        if os.path.basename(path) == "checkpoint.h5":
            assert f.attrs["format"] == b"gridforge checkpoint", "not a gridforge checkpoint"
            assert "fields/u" in f and "case" in f and "state" in f, "a checkpoint without u, case or state"
            return
        assert "steps" in f, "no /steps group"


def check_csv(path):
    text = open(path).read()
    assert text.endswith("\n"), "does not end with a newline"
    rows = [r.split(",") for r in text.splitlines()]
    width = len(rows[0])
    assert all(len(r) == width for r in rows), "rows of different widths"
    for r in rows[1:]:
        [float(v) for v in r]


def check_xml(path, out):
    root = ET.parse(path).getroot()
    here = os.path.dirname(path)
    if path.endswith(".pvd"):
        for ds in root.iter("DataSet"):
            assert os.path.isfile(os.path.join(here, ds.get("file"))), f"names missing {ds.get('file')}"
    elif path.endswith(".pvti"):
        for piece in root.iter("Piece"):
            assert os.path.isfile(os.path.join(here, piece.get("Source"))), \
                f"names missing piece {piece.get('Source')}"
    elif path.endswith(".xdmf"):
        for item in root.iter("DataItem"):
            if item.get("Format") != "HDF":
                continue
            file, _, dataset = item.text.strip().partition(":")
            h5 = os.path.join(here, file)
            assert os.path.isfile(h5), f"names missing {file}"
            with h5py.File(h5, "r") as f:
                assert dataset in f, f"names {file}:{dataset}, which {file} does not hold"
                want = int(np.prod([int(d) for d in item.get("Dimensions").split()]))
                assert f[dataset].size == want, \
                    f"{file}:{dataset} has {f[dataset].size} values, the index says {want}"


def main(out):
    faults, counts = [], {}
    for folder, _, files in os.walk(out):
        for name in files:
            path = os.path.join(folder, name)
            ext = os.path.splitext(name)[1]
            try:
                if name.startswith("."):
                    assert TEMP.match(name), "a hidden file not named as a temporary"
                    ext = "temporary"
                elif ext == ".json":
                    json.load(open(path))
                elif ext == ".csv":
                    check_csv(path)
                elif ext in (".pvd", ".pvti", ".xdmf"):
                    check_xml(path, out)
                elif ext == ".vti":
                    check_vti(path)
                elif ext == ".h5":
                    check_h5(path)
                else:
                    raise AssertionError("a file gridforge does not write")
                counts[ext] = counts.get(ext, 0) + 1
            except Exception as e:  # noqa: BLE001 - report every fault, whatever its kind
                faults.append(f"{path}: {type(e).__name__}: {e}")
    print("whole:", ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    for f in faults:
        print("NOT WHOLE:", f)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
