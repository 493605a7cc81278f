#!/usr/bin/env python3
"""What a beam-formed file holds, block by block, read with h5py (observe_beamformed_sink_killed_test).

Usage: check_beamformed_blocks.py DIRECTORY NAME ROWS_PER_BLOCK ROW_SHIFT BLOCKS : for each of
the BLOCKS blocks of file NAME in DIRECTORY (block b's rows lie at b x ROWS_PER_BLOCK -
ROW_SHIFT on, those before row 0 not in the file) prints one line
"block B held H mean M": H the subbands of which a value has a valid fraction (WEIGHT_<n>)
above 0, M the mean of the values over their valid fractions where these are above 0 (0
when none). First a line "rows R subbands S".
"""

import os
import sys

import h5py
import numpy


def main():
    directory, name = sys.argv[1], sys.argv[2]
    per_block, shift, blocks = (int(a) for a in sys.argv[3:6])
    # HDF5 finds the external .raw files relative to the working directory.
    os.chdir(directory)
    with h5py.File(name, "r") as h5:
        sap = [k for k in h5 if k.startswith("SUB_ARRAY_POINTING_")][0]
        beam = h5[sap][[k for k in h5[sap] if k.startswith("BEAM_")][0]]
        stokes = [k for k in beam if k.startswith("STOKES_")][0]
        data = numpy.asarray(beam[stokes][:], dtype=numpy.float64)
        weights = numpy.asarray(beam["WEIGHT_" + stokes[len("STOKES_"):]][:], dtype=numpy.float64)
        subbands = int(beam[stokes].attrs["NOF_SUBBANDS"])
    rows = data.shape[0]
    print("rows %d subbands %d" % (rows, subbands))
    for b in range(blocks):
        first, end = max(0, b * per_block - shift), max(0, (b + 1) * per_block - shift)
        w = weights[first:end].reshape(end - first, subbands, -1)
        held = int(numpy.sum(numpy.any(w > 0, axis=(0, 2)))) if end > first else subbands
        valid = weights[first:end] > 0
        mean = float(numpy.mean(data[first:end][valid] / weights[first:end][valid])) \
            if numpy.any(valid) else 0.0
        print("block %d held %d mean %.6g" % (b, held, mean))


if __name__ == "__main__":
    main()
