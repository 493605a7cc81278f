#!/usr/bin/python3
"""rtcp-inspect on beam-formed files that storage-sink's BeamFormedWriter wrote, holding a
noise-free simulated pulsar placed exactly where the beam former's timing puts it
(beamformed-pulsar-writer): what the plots show, read from the numbers behind them (--data)
and checked against the pulsar's period, epoch, DM and width:
- the folded profile peaks at phase 0 (within an output sample) with the pulsar's width,
  for a coherently dedispersed TAB (its rows moved by the beam former's delay, the rest in
  the time coordinate) and an incoherent one;
- the dynamic spectrum shows each channel's pulse at the time the DM delays it to, keeps
  its mean where half the samples were lost (divided by the valid fraction), and is blank
  where a subband's block was lost;
- the dedispersed time series peaks at the pulses' times at infinite frequency;
- the period from the parset (Sim.Source[0].pulsar.*) or --period; observation
  directories and single files; the overview's line per TAB; what is not a beam-formed file.

Usage: tInspectBeamFormed.py BEAMFORMED_PULSAR_WRITER RTCP_INSPECT
"""

import math
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

WRITER = INSPECT = None

K_DM = 4.148808e15
SUBBAND_WIDTH = 200e6 / 1024
START = 1795377600.0  # 2026-11-22 20:00:00 UTC
PERIOD, WIDTH, DM = 0.05, 0.002, 3.0
EPOCH = START + 0.0123
BLOCK = 8192

PARSET = """
Observation.ObsID = 4343
Observation.startTime = '2026-11-22 20:00:00'
Observation.stopTime = '2026-11-22 20:00:01'
Observation.antennaSet = LBA_OUTER
Observation.bandFilter = LBA_30_90
Observation.VirtualInstrument.stationList = [CS001, CS002]
Observation.nrBeams = 1
Observation.Beam[0].angle1 = 5.2336866848
Observation.Beam[0].angle2 = 0.7109425145
Observation.Beam[0].subbandList = [256..259]
PIC.Core.CS001LBA.RSP.ports = [udp:127.0.0.1:10010]
PIC.Core.CS002LBA.RSP.ports = [udp:127.0.0.1:10020]
Cobalt.blockSize = 8192
Observation.DataProducts.Output_Correlated.enabled = F
Observation.DataProducts.Output_CoherentStokes.enabled = T
Observation.DataProducts.Output_IncoherentStokes.enabled = T
Cobalt.BeamFormer.CoherentStokes.which = IQUV
Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband = 16
Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor = 4
Cobalt.BeamFormer.CoherentStokes.subbandsPerFile = 2
Cobalt.BeamFormer.IncoherentStokes.which = I
Cobalt.BeamFormer.IncoherentStokes.nrChannelsPerSubband = 4
Cobalt.BeamFormer.IncoherentStokes.timeIntegrationFactor = 16
Observation.Beam[0].nrTiedArrayBeams = 2
Observation.Beam[0].TiedArrayBeam[0].angle1 = 5.2336866848
Observation.Beam[0].TiedArrayBeam[0].angle2 = 0.7109425145
Observation.Beam[0].TiedArrayBeam[0].dispersionMeasure = 3.0
Observation.Beam[0].TiedArrayBeam[1].coherent = F
Sim.nrSources = 1
Sim.Source[0].angle1 = 5.2336866848
Sim.Source[0].angle2 = 0.7109425145
Sim.Source[0].pulsar.period = 0.05
Sim.Source[0].pulsar.width = 0.002
Sim.Source[0].pulsar.epoch = '2026-11-22 20:00:00.0123'
Sim.Source[0].pulsar.dispersionMeasure = 3.0
"""

# Output sample (s) of the coherent (16 channels x 4) and incoherent (4 x 16) TABs.
DT = {0: 64 / SUBBAND_WIDTH, 1: 64 / SUBBAND_WIDTH}


def coherent_delay():
    """The dedispersed TAB's delay (subband samples) as rtcp/BeamFormedTiming.h defines it:
    half the smearing in the lowest of 16 channels of subband 256 plus 128, rounded up to an
    output sample of 64, then the filter bank's 15 x 16 / 2."""
    width = SUBBAND_WIDTH / 16
    low = 256 * SUBBAND_WIDTH - SUBBAND_WIDTH / 2 - width / 2
    smear = K_DM * DM * (1 / low ** 2 - 1 / (low + width) ** 2)
    latency = math.ceil(smear * SUBBAND_WIDTH / 2) + 128
    return -(-latency // 64) * 64 + 120


def wrapped(phase):
    return (phase + 0.5) % 1.0 - 0.5


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


class InspectBeamFormedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = os.path.join(cls.tmp.name, "L4343")
        os.makedirs(cls.dir)
        parset = os.path.join(cls.dir, "L4343.parset")
        with open(parset, "w") as f:
            f.write(PARSET)
        written = run([WRITER, parset, cls.dir])
        if written.returncode != 0:
            raise RuntimeError(written.stderr)
        cls.files = [line.split()[1] for line in written.stdout.splitlines()]
        cls.out = os.path.join(cls.tmp.name, "plots")
        cls.result = run([INSPECT, "--out", cls.out, "--data", cls.dir])
        cls.printed = cls.result.stdout.splitlines()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def data(self, tab):
        return np.load(os.path.join(self.out, "bf_SAP000_B%03d.npz" % tab))

    def test_files_written(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.assertEqual(len(self.files), 4 * 2 + 1)  # IQUV in 2 parts, and incoherent I
        names = sorted(os.path.basename(p) for p in self.printed)
        self.assertEqual(names, ["bf_SAP000_B000.npz", "bf_SAP000_B000.png",
                                 "bf_SAP000_B001.npz", "bf_SAP000_B001.png", "overview.txt"])
        for path in self.printed:
            if path.endswith(".png"):
                with open(path, "rb") as f:
                    png = f.read()
                self.assertTrue(png.startswith(b"\x89PNG\r\n\x1a\n"), path)
                self.assertGreater(len(png), 20000, path)

    def test_folded_profile(self):
        """Phase 0 within an output sample, the pulsar's width within a bin and 5 %."""
        for tab in (0, 1):
            d = self.data(tab)
            self.assertAlmostEqual(float(d["period"]), PERIOD)
            self.assertAlmostEqual(float(d["epoch"]), EPOCH, places=6)
            self.assertAlmostEqual(float(d["dm"]), DM)
            bins = len(d["profile"])
            self.assertEqual(bins, math.floor(PERIOD / DT[tab]))
            self.assertLess(abs(float(d["peak_phase"])), DT[tab] / PERIOD,
                            "TAB %d: peak at phase %f" % (tab, d["peak_phase"]))
            self.assertAlmostEqual(float(d["width"]), WIDTH,
                                   delta=0.05 * WIDTH + PERIOD / bins, msg="TAB %d" % tab)
            # Off the pulse, the baseline (1 per channel and sample, summed over frequency).
            channels = len(d["frequencies"])
            self.assertAlmostEqual(float(np.median(d["profile"])), channels, delta=0.01 * channels)

    def test_rows_moved_by_the_delay(self):
        """The files' rows moved earlier by the whole output samples of the beam former's
        delay (rtcp/BeamFormedTiming.h: the dedispersed TAB's latency and 16-channel filter
        bank, the incoherent TAB's 4-channel filter bank), the rest in the start time."""
        delays = {0: coherent_delay(), 1: 15 * 4 // 2}
        d = {tab: self.data(tab) for tab in (0, 1)}
        for tab in (0, 1):
            self.assertAlmostEqual(float(d[tab]["start"]),
                                   START - (delays[tab] % 64) / SUBBAND_WIDTH, places=7)
        self.assertEqual(int(d[1]["rows"]) - int(d[0]["rows"]), delays[0] // 64 - delays[1] // 64)
        self.assertGreater(delays[0] // 64, 5)

    def test_dynamic_spectrum(self):
        """Each frequency cell's brightest time cell holds a pulse at the time its frequency's
        dispersion delay predicts; the means hold where half the samples were lost; blank
        where a subband's block was lost."""
        for tab in (0, 1):
            d = self.data(tab)
            spectrum, times, freqs = d["dynamic_spectrum"], d["cell_times"], d["cell_frequencies"]
            cell = times[1] - times[0]
            for j, f in enumerate(freqs):
                column = spectrum[:, j]
                if not np.isfinite(column).any():
                    continue
                at = times[np.nanargmax(column)]
                arrival = (at - EPOCH - K_DM * DM / f ** 2) / PERIOD
                self.assertLess(abs(wrapped(arrival)) * PERIOD, cell,
                                "TAB %d, %.4f MHz" % (tab, f / 1e6))
            # Every channel's baseline is 1 (channel 1's half-valid samples included).
            self.assertTrue(np.allclose(np.nanmedian(spectrum, axis=0), 1.0, atol=1e-3))
            # The lost block of subband 257 (the second): blank there, nowhere else.
            blank = ~np.isfinite(spectrum)
            in_lost = (freqs > 256.45 * SUBBAND_WIDTH) & (freqs < 257.45 * SUBBAND_WIDTH)
            self.assertTrue(blank[:, in_lost].any(), "TAB %d" % tab)
            self.assertFalse(blank[:, ~in_lost].any(), "TAB %d" % tab)

    def test_time_series(self):
        """Dedispersed at the pulsar's DM to the highest channel's frequency f, the series'
        pulses lie at epoch + n period + k DM / f^2."""
        for tab in (0, 1):
            d = self.data(tab)
            series, top = d["series"], float(d["series_frequency"])
            self.assertAlmostEqual(top, float(d["frequencies"].max()))
            times = d["series_times"] - K_DM * DM / top ** 2
            finite = np.isfinite(series)
            threshold = np.nanmedian(series) + 0.5 * (np.nanmax(series) - np.nanmedian(series))
            peaks = [i for i in range(1, len(series) - 1) if finite[i] and series[i] > threshold
                     and series[i] >= series[i - 1] and series[i] >= series[i + 1]]
            self.assertGreater(len(peaks), 10, "TAB %d" % tab)
            for i in peaks:
                self.assertLess(abs(wrapped((times[i] - EPOCH) / PERIOD)) * PERIOD,
                                1.5 * DT[tab], "TAB %d, peak at %f" % (tab, times[i] - START))

    def test_overview(self):
        with open(os.path.join(self.out, "overview.txt")) as f:
            text = f.read()
        self.assertIn("Beam-formed TABs (2, 9 files)", text)
        lines = {line.split()[0]: line for line in text.splitlines()
                 if line.startswith("  SAP")}
        self.assertIn("coherent   IQUV    64 ch", lines["SAP000_B000"])
        self.assertIn("DM 3        coherent", lines["SAP000_B000"])
        self.assertIn("incoherent I       16 ch", lines["SAP000_B001"])
        for line in lines.values():
            self.assertIn("folded: period 0.05 s (Sim.Source[0] of the parset)", line)
            self.assertIn("FWHM 2.0", line)

    def test_period_option_and_single_file(self):
        """--period folds one file at twice the period: two pulses, at phases 0 and 0.5."""
        out = os.path.join(self.tmp.name, "twice")
        incoherent = [p for p in self.files if "_B001_" in p]
        result = run([INSPECT, "--out", out, "--data", "--period", str(2 * PERIOD)] + incoherent)
        self.assertEqual(result.returncode, 0, result.stderr)
        d = np.load(os.path.join(out, "bf_SAP000_B001.npz"))
        profile, phases = d["profile"], d["phases"]
        top = phases[np.argsort(profile)[-2:]]
        self.assertTrue(any(abs(wrapped(p)) < 0.02 for p in top), top)
        self.assertTrue(any(abs(p - 0.5) < 0.02 for p in top), top)
        with open(os.path.join(out, "overview.txt")) as f:
            self.assertIn("(--period)", f.read())

    def test_values_read_at_most(self):
        """--max-values: a TAB's first samples only, and the plots and overview say so."""
        out = os.path.join(self.tmp.name, "some")
        incoherent = [p for p in self.files if "_B001_" in p]
        result = run([INSPECT, "--out", out, "--data", "--max-values", str(16 * 500)] + incoherent)
        self.assertEqual(result.returncode, 0, result.stderr)
        d = np.load(os.path.join(out, "bf_SAP000_B001.npz"))
        self.assertEqual(int(d["rows_read"]), 500)
        self.assertEqual(int(d["rows"]), int(self.data(1)["rows"]))
        self.assertLess(float(d["cell_times"][-1]), float(d["start"]) + 500 * DT[1])
        with open(os.path.join(out, "overview.txt")) as f:
            self.assertIn("(first 500 samples read)", f.read())

    def test_not_beamformed(self):
        out = os.path.join(self.tmp.name, "none")
        empty = os.path.join(self.tmp.name, "empty")
        os.makedirs(empty)
        result = run([INSPECT, "--out", out, empty])
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("no MeasurementSet nor beam-formed .h5", result.stderr)
        bogus = os.path.join(empty, "bogus.h5")
        with open(bogus, "w") as f:
            f.write("not HDF5")
        result = run([INSPECT, "--out", out, bogus])
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("cannot read the beam-formed files", result.stderr)


if __name__ == "__main__":
    INSPECT = sys.argv.pop(2)
    WRITER = sys.argv.pop(1)
    unittest.main()
