#!/usr/bin/env python3
"""Checks the beam-formed files of an observation with h5py (observe_beamformed_test).

Usage: check_beamformed.py DIRECTORY NAME... : DIRECTORY holds exactly the files NAME...
(each a LOFAR beam-formed .h5, ICD 3, with its .raw beside it) and no other *_bf.h5; every
attribute of every group and data set reads; the root's FILENAME is the file's own name;
each STOKES_<n> data set has NOF_SAMPLES rows of NOF_SUBBANDS x CHANNELS_PER_SUBBAND values,
not all zero, and its WEIGHT_<n> (the fraction of valid input samples) is mostly 1.
Prints one line per file (its groups, Stokes component, signal sum, shape and the
attributes tests ask about), then "ok"; exits 1 naming the file and the problem otherwise.
"""

import os
import sys

import h5py
import numpy


def fail(message):
    print(message)
    sys.exit(1)


def read_every_attribute(h5):
    count = 0

    def visit(name, item):
        nonlocal count
        for key in item.attrs:
            item.attrs[key]  # raises when an attribute does not read
            count += 1

    for key in h5.attrs:
        h5.attrs[key]
        count += 1
    h5.visititems(visit)
    return count


def check(directory, name):
    path = os.path.join(directory, name)
    if not os.path.exists(path[: -len(".h5")] + ".raw"):
        fail(name + ": no .raw beside it")
    with h5py.File(path, "r") as h5:
        attributes = read_every_attribute(h5)
        if h5.attrs["FILENAME"] != name:
            fail(name + ": FILENAME is " + str(h5.attrs["FILENAME"]))
        saps = [k for k in h5 if k.startswith("SUB_ARRAY_POINTING_")]
        if len(saps) != 1:
            fail(name + ": SAP groups " + str(saps))
        beams = [k for k in h5[saps[0]] if k.startswith("BEAM_")]
        if len(beams) != 1:
            fail(name + ": BEAM groups " + str(beams))
        beam = h5[saps[0]][beams[0]]
        stokes = [k for k in beam if k.startswith("STOKES_")]
        if len(stokes) != 1:
            fail(name + ": STOKES data sets " + str(stokes))
        data = beam[stokes[0]]
        rows = int(data.attrs["NOF_SAMPLES"])
        subbands = int(data.attrs["NOF_SUBBANDS"])
        channels = int(beam.attrs["CHANNELS_PER_SUBBAND"])
        if data.shape != (rows, subbands * channels) or rows == 0:
            fail(name + ": data shape " + str(data.shape) + ", NOF_SAMPLES " + str(rows) +
                 ", " + str(subbands) + " subbands of " + str(channels) + " channels")
        values = numpy.asarray(data[:])
        if not numpy.any(values != 0) or not numpy.all(numpy.isfinite(values)):
            fail(name + ": data all zero or not finite")
        weights = numpy.asarray(beam["WEIGHT_" + stokes[0][len("STOKES_"):]][:])
        if weights.shape != data.shape or numpy.mean(weights) < 0.9:
            fail(name + ": weights " + str(weights.shape) + " mean " + str(numpy.mean(weights)))
        print(name, saps[0], beams[0], stokes[0], data.attrs["STOKES_COMPONENT"],
              beam.attrs["SIGNAL_SUM"], "shape=%dx%d" % data.shape,
              "OBSERVATION_ID=%s" % h5.attrs["OBSERVATION_ID"],
              "CHANNELS_PER_SUBBAND=%d" % channels, "NOF_SUBBANDS=%d" % subbands,
              "DISPERSION_MEASURE=%s" % beam.attrs["DISPERSION_MEASURE"],
              "DEDISPERSION=%s" % beam.attrs["DEDISPERSION"],
              "attributes=%d" % attributes)


def main():
    directory, names = sys.argv[1], sys.argv[2:]
    # HDF5 finds the external .raw relative to the working directory (as for COBALT's files).
    os.chdir(directory)
    present = sorted(f for f in os.listdir(directory) if f.endswith("_bf.h5"))
    if present != sorted(names):
        fail("files " + str(present) + ", expected " + str(sorted(names)))
    for name in names:
        check(directory, name)
    print("ok")


if __name__ == "__main__":
    main()
