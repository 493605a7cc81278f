#!/usr/bin/env python3
"""Compares a dump's replayed beam-formed files with the live ones (observe_trigger_test).

Usage: compare_beamformed.py LIVE_DIR REPLAY_DIR TOLERANCE NAME:OFFSET... : each NAME is a
beam-formed .h5 (with its .raw and .weight.raw) in both directories; the replay's rows are
the live file's rows from OFFSET on (the dump's first block times the output samples per
block). Every WEIGHT_<n> (valid fraction) of the replay must equal the live one bit for bit,
and every STOKES_<n> value the live one within TOLERANCE times the largest |value| of the
live window (0: bit for bit); the replay must hold rows, the live window values not all
zero. Prints a line per file (rows compared, values equal to the bit, the largest
difference, the window's first and mean valid fraction), then "ok"; exits 1 naming the file
and the first difference otherwise.
"""

import os
import sys

import h5py
import numpy


def fail(message):
    print(message)
    sys.exit(1)


def beam_of(h5):
    saps = [k for k in h5 if k.startswith("SUB_ARRAY_POINTING_")]
    beams = [k for k in h5[saps[0]] if k.startswith("BEAM_")]
    return h5[saps[0]][beams[0]]


def stokes_and_weights(path):
    # The samples lie in external files named relative to the .h5's directory.
    os.chdir(os.path.dirname(os.path.abspath(path)))
    with h5py.File(os.path.basename(path), "r") as h5:
        beam = beam_of(h5)
        names = sorted(k for k in beam if k.startswith("STOKES_"))
        return {
            name: (numpy.asarray(beam[name][:]),
                   numpy.asarray(beam["WEIGHT_" + name[len("STOKES_"):]][:]))
            for name in names
        }


def compare(live_dir, replay_dir, tolerance, name, offset):
    live = stokes_and_weights(os.path.join(live_dir, name))
    replay = stokes_and_weights(os.path.join(replay_dir, name))
    if sorted(live) != sorted(replay):
        fail(name + ": data sets " + str(sorted(live)) + " against " + str(sorted(replay)))
    for stokes in sorted(live):
        (a, aw), (b, bw) = live[stokes], replay[stokes]
        rows = b.shape[0]
        if rows == 0 or offset + rows > a.shape[0] or a.shape[1:] != b.shape[1:]:
            fail("%s %s: replay %s at row %d of live %s" % (name, stokes, b.shape, offset, a.shape))
        window, weights = a[offset:offset + rows], aw[offset:offset + rows]
        difference = numpy.abs(window.astype(numpy.float64) - b)
        scale = max(float(numpy.max(numpy.abs(window))), 1e-30)
        largest = float(numpy.max(difference)) / scale
        unequal = numpy.argwhere((difference > tolerance * scale) | (weights != bw))
        if len(unequal):
            r, c = unequal[0]
            fail("%s %s: %d of %d values differ, the first at row %d column %d: live %r weight %r, "
                 "replay %r weight %r (largest difference %.3g of the largest value)" %
                 (name, stokes, len(unequal), window.size, r, c, window[r, c], weights[r, c],
                  b[r, c], bw[r, c], largest))
        if not numpy.any(window != 0):
            fail(name + " " + stokes + ": the live window is all zero")
        print("%s %s: %d rows from live row %d: weights equal bit for bit, values %d of %d bit "
              "for bit, largest difference %.3g of the largest value; first row's mean weight "
              "%.4f, window's %.4f" %
              (name, stokes, rows, offset, int(numpy.sum(window == b)), window.size, largest,
               float(numpy.mean(weights[0])), float(numpy.mean(weights))))


def main():
    if len(sys.argv) < 5:
        fail(__doc__)
    for item in sys.argv[4:]:
        name, offset = item.rsplit(":", 1)
        compare(sys.argv[1], sys.argv[2], float(sys.argv[3]), name, int(offset))
    print("ok")


if __name__ == "__main__":
    main()
