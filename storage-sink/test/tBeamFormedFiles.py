#!/usr/bin/python3
"""LOFAR's beam-formed HDF5 files (ICD 3) as storage-sink's BeamFormedWriter writes them,
read back with h5py as a reader of COBALT's files reads them: every root, SUB_ARRAY_POINTING,
BEAM, STOKES and COORDINATES attribute COBALT writes, readable, with the values the parset
asks for (times, frequencies, channel widths, sampling, pointing, DM, Stokes); the samples
through the external .raw, equal to what was written; the WEIGHT data set beside them with
the lost subband's block at weight 0 and its samples 0. The dedispersed TAB's rows moved
earlier by the whole output samples of the beam former's delay (dedispersion latency and
filter bank), the rest of it in the time coordinate (rtcp/BeamFormedTiming.h).

Usage: tBeamFormedFiles.py BEAMFORMED_TEST_WRITER
"""

import math
import os
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

WRITER = None

START = 1795377600.0  # 2026-11-22 20:00:00 UTC
SUBBAND_WIDTH = 200e6 / 1024
BLOCK = 8192  # subband samples per block

PARSET = """
Observation.ObsID = 4242
Observation.startTime = '2026-11-22 20:00:00'
Observation.stopTime = '2026-11-22 20:00:00.2'
Observation.antennaSet = LBA_OUTER
Observation.bandFilter = LBA_30_90
Observation.VirtualInstrument.stationList = [CS001, RS106]
Observation.nrBeams = 2
Observation.Beam[0].angle1 = 5.2336866848
Observation.Beam[0].angle2 = 0.7109425145
Observation.Beam[0].subbandList = [300..302]
Observation.Beam[0].target = ['PSR B1937+21']
Observation.Beam[1].angle1 = 1.0
Observation.Beam[1].angle2 = 0.5
Observation.Beam[1].subbandList = [310, 311]
PIC.Core.CS001LBA.RSP.ports = [udp:127.0.0.1:10010]
PIC.Core.RS106LBA.RSP.ports = [udp:127.0.0.1:10020]
Observation.Campaign.name = LC0_000
Cobalt.blockSize = 8192
Observation.DataProducts.Output_Correlated.enabled = F
Observation.DataProducts.Output_CoherentStokes.enabled = T
Observation.DataProducts.Output_IncoherentStokes.enabled = T
Cobalt.BeamFormer.CoherentStokes.which = IQUV
Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband = 4
Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor = 2
Cobalt.BeamFormer.CoherentStokes.subbandsPerFile = 2
Cobalt.BeamFormer.IncoherentStokes.which = I
Observation.Beam[0].nrTiedArrayBeams = 2
Observation.Beam[0].TiedArrayBeam[0].angle1 = 5.24
Observation.Beam[0].TiedArrayBeam[0].angle2 = 0.71
Observation.Beam[0].TiedArrayBeam[0].dispersionMeasure = 71.02
Observation.Beam[0].TiedArrayBeam[1].coherent = F
Observation.Beam[1].nrTiedArrayBeams = 1
Observation.Beam[1].TiedArrayBeam[0].coherent = F
"""

NR_BLOCKS = math.floor(0.2 * SUBBAND_WIDTH / BLOCK)  # 4
DISPERSION_CONSTANT = 4.148808e15  # s Hz^2 per pc cm^-3


def delay(coherent):
    """The beam former's delay (subband samples) of SAP 0's TABs as rtcp/BeamFormedTiming.h
    defines it: for the dedispersed TAB (DM 71.02, 4 channels, 2 spectra a sample) half the
    smearing in the lowest channel of the lowest subband plus 128 samples, rounded up to an
    output sample, then the 4-channel filter bank's 15 x 4 / 2; 0 for 1 channel."""
    if not coherent:
        return 0
    width = SUBBAND_WIDTH / 4
    low = 300 * SUBBAND_WIDTH - SUBBAND_WIDTH / 2 - width / 2
    smear = DISPERSION_CONSTANT * 71.02 * (1 / low**2 - 1 / (low + width)**2)
    latency = math.ceil(smear * SUBBAND_WIDTH / 2) + 128
    return -(-latency // 8) * 8 + 30


def row_shift(coherent):
    """Rows the file moves the blocks' rows earlier by; the rest of the delay (samples)."""
    per_sample = 8 if coherent else 1
    return delay(coherent) // per_sample, delay(coherent) % per_sample
SUBBANDS = {0: [0, 1, 2], 1: [3, 4]}  # indices in the observation's list, per SAP
NUMBERS = [300, 301, 302, 310, 311]
LOST_BLOCK = 1
LOST_SUBBAND = {0: 1, 1: 4}  # the second subband of each SAP, in block 1

# What every file must carry (COBALT's MSWriterDAL and CommonLofarAttributes, via the DAL).
ROOT = """GROUPTYPE FILENAME FILEDATE FILETYPE TELESCOPE PROJECT_ID PROJECT_TITLE PROJECT_PI
PROJECT_CO_I PROJECT_CONTACT OBSERVATION_ID OBSERVATION_START_UTC OBSERVATION_START_MJD
OBSERVATION_END_UTC OBSERVATION_END_MJD OBSERVATION_NOF_STATIONS OBSERVATION_STATIONS_LIST
OBSERVATION_FREQUENCY_MIN OBSERVATION_FREQUENCY_CENTER OBSERVATION_FREQUENCY_MAX
OBSERVATION_FREQUENCY_UNIT OBSERVATION_NOF_BITS_PER_SAMPLE CLOCK_FREQUENCY CLOCK_FREQUENCY_UNIT
ANTENNA_SET FILTER_SELECTION TARGETS SYSTEM_VERSION DOC_NAME DOC_VERSION NOTES
CREATE_OFFLINE_ONLINE BF_FORMAT BF_VERSION TOTAL_INTEGRATION_TIME TOTAL_INTEGRATION_TIME_UNIT
BANDWIDTH BANDWIDTH_UNIT OBSERVATION_NOF_SUB_ARRAY_POINTINGS NOF_SUB_ARRAY_POINTINGS""".split()
SAP = """GROUPTYPE EXPTIME_START_UTC EXPTIME_START_MJD EXPTIME_END_UTC EXPTIME_END_MJD
TOTAL_INTEGRATION_TIME TOTAL_INTEGRATION_TIME_UNIT POINT_RA POINT_RA_UNIT POINT_DEC
POINT_DEC_UNIT OBSERVATION_NOF_BEAMS NOF_BEAMS""".split()
BEAM = """GROUPTYPE TARGETS NOF_STATIONS STATIONS_LIST NOF_SAMPLES SAMPLING_RATE SAMPLING_RATE_UNIT
SAMPLING_TIME SAMPLING_TIME_UNIT CHANNELS_PER_SUBBAND SUBBAND_WIDTH SUBBAND_WIDTH_UNIT
CHANNEL_WIDTH CHANNEL_WIDTH_UNIT TRACKING POINT_RA POINT_RA_UNIT POINT_DEC POINT_DEC_UNIT
POINT_OFFSET_RA POINT_OFFSET_RA_UNIT POINT_OFFSET_DEC POINT_OFFSET_DEC_UNIT BEAM_DIAMETER_RA
BEAM_DIAMETER_RA_UNIT BEAM_DIAMETER_DEC BEAM_DIAMETER_DEC_UNIT BEAM_FREQUENCY_CENTER
BEAM_FREQUENCY_CENTER_UNIT FOLDED_DATA FOLD_PERIOD FOLD_PERIOD_UNIT DEDISPERSION
DISPERSION_MEASURE DISPERSION_MEASURE_UNIT BARYCENTERED OBSERVATION_NOF_STOKES NOF_STOKES
STOKES_COMPONENTS COMPLEX_VOLTAGE SIGNAL_SUM""".split()
STOKES = "GROUPTYPE DATATYPE STOKES_COMPONENT NOF_CHANNELS NOF_SUBBANDS NOF_SAMPLES".split()
COORDINATES = """GROUPTYPE REF_LOCATION_VALUE REF_LOCATION_UNIT REF_LOCATION_FRAME REF_TIME_VALUE
REF_TIME_UNIT REF_TIME_FRAME NOF_COORDINATES NOF_AXES COORDINATE_TYPES""".split()
COORDINATE = """GROUPTYPE COORDINATE_TYPE STORAGE_TYPE NOF_AXES AXIS_NAMES AXIS_UNITS REFERENCE_VALUE
REFERENCE_PIXEL INCREMENT PC AXIS_VALUES_PIXEL AXIS_VALUES_WORLD""".split()


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def texts(values):
    return [text(v) for v in values]


class BeamFormedFilesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        parset = os.path.join(cls.dir, "bf.parset")
        with open(parset, "w") as f:
            f.write(PARSET)
        run = subprocess.run([WRITER, parset, cls.dir], capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            raise RuntimeError(run.stderr)
        cls.report = {}
        for line in run.stdout.splitlines():
            _, path, rows, lost, late = line.split()
            cls.report[os.path.basename(path)] = (int(rows), int(lost), int(late))
        os.chdir(cls.dir)  # HDF5 finds an external .raw relative to the working directory

    @classmethod
    def tearDownClass(cls):
        os.chdir("/")
        cls.tmp.cleanup()

    def files(self):
        """(name, sap, tab, component, part, coherent, subbands) of every file asked for."""
        result = []
        for tab in range(2):  # SAP 0: coherent IQUV, 2 subbands a file; incoherent I, all 3
            if tab == 0:
                for k in range(4):
                    result.append((0, 0, k, 0, True, [0, 1]))
                    result.append((0, 0, k, 1, True, [2]))
            else:
                result.append((0, 1, 0, 0, False, [0, 1, 2]))
        result.append((1, 0, 0, 0, False, [3, 4]))
        return [("L4242_SAP%03d_B%03d_S%d_P%03d_bf.h5" % (s, t, k, p), s, t, k, p, c, sb)
                for s, t, k, p, c, sb in result]

    def test_files_and_report(self):
        names = sorted(name for name, *_ in self.files())
        self.assertEqual(sorted(self.report), names)
        for name, sap, tab, k, part, coherent, subbands in self.files():
            self.assertTrue(os.path.exists(name.replace(".h5", ".raw")))
            rows, lost, late = self.report[name]
            per_block = BLOCK // (8 if coherent else 1)
            self.assertEqual(rows, NR_BLOCKS * per_block - row_shift(coherent)[0])
            self.assertEqual(lost, 1 if LOST_SUBBAND[sap] in subbands else 0, name)
            self.assertEqual(late, 0)

    def test_every_attribute_readable(self):
        for name, sap, tab, k, *_ in self.files():
            with h5py.File(name, "r") as f:
                for key in ROOT:
                    self.assertIn(key, f.attrs, key)
                    f.attrs[key]
                self.assertIn("SYS_LOG", f)
                s = f["SUB_ARRAY_POINTING_%03d" % sap]
                for key in SAP:
                    s.attrs[key]
                self.assertIn("OBSERVATION_PARSET", s["PROCESS_HISTORY"].attrs)
                b = s["BEAM_%03d" % tab]
                for key in BEAM:
                    b.attrs[key]
                for key in STOKES:
                    b["STOKES_%d" % k].attrs[key]
                c = b["COORDINATES"]
                for key in COORDINATES:
                    c.attrs[key]
                for n in range(2):
                    for key in COORDINATE:
                        c["COORDINATE_%d" % n].attrs[key]
                # Beyond the lists: every attribute of every group and data set reads.
                objects = [f]
                f.visititems(lambda _, item: objects.append(item))
                read = sum(len([item.attrs[key] for key in item.attrs]) for item in objects)
                self.assertGreater(read, len(ROOT) + len(SAP) + len(BEAM))

    def test_root_values(self):
        with h5py.File("L4242_SAP000_B000_S0_P000_bf.h5", "r") as f:
            a = f.attrs
            self.assertEqual(text(a["FILETYPE"]), "bf")
            self.assertEqual(text(a["TELESCOPE"]), "LOFAR")
            self.assertEqual(text(a["DOC_NAME"]), "ICD 3: Beam-Formed Data")
            self.assertEqual(text(a["OBSERVATION_ID"]), "4242")
            self.assertEqual(text(a["PROJECT_ID"]), "LC0_000")
            self.assertEqual(text(a["OBSERVATION_START_UTC"]), "2026-11-22T20:00:00.000000000Z")
            self.assertAlmostEqual(a["OBSERVATION_START_MJD"], 40587 + START / 86400, places=9)
            end = START + NR_BLOCKS * BLOCK / SUBBAND_WIDTH
            self.assertAlmostEqual(a["OBSERVATION_END_MJD"], 40587 + end / 86400, places=9)
            self.assertEqual(texts(a["OBSERVATION_STATIONS_LIST"]), ["CS001LBA", "RS106LBA"])
            self.assertEqual(a["OBSERVATION_NOF_STATIONS"], 2)
            self.assertEqual(a["CLOCK_FREQUENCY"], 200)
            self.assertEqual(text(a["ANTENNA_SET"]), "LBA_OUTER")
            self.assertEqual(text(a["FILTER_SELECTION"]), "LBA_30_90")
            self.assertEqual(text(a["BF_FORMAT"]), "TAB")
            self.assertEqual(a["NOF_SUB_ARRAY_POINTINGS"], 1)
            self.assertEqual(a["OBSERVATION_NOF_SUB_ARRAY_POINTINGS"], 2)
            self.assertEqual(texts(a["TARGETS"])[0], "PSR B1937+21")
            # The band of all subbands, shifted half a 4-channel channel (coherent PPF) at
            # the bottom; the incoherent 1-channel output keeps the top.
            self.assertAlmostEqual(a["OBSERVATION_FREQUENCY_MIN"] * 1e6,
                                   (299.5 - 0.125) * SUBBAND_WIDTH, delta=1e-3)
            self.assertAlmostEqual(a["OBSERVATION_FREQUENCY_MAX"] * 1e6, 311.5 * SUBBAND_WIDTH,
                                   delta=1e-3)
            self.assertAlmostEqual(a["BANDWIDTH"], 5 * SUBBAND_WIDTH / 1e6)

    def test_beam_values(self):
        for name, sap, tab, k, part, coherent, subbands in self.files():
            with h5py.File(name, "r") as f:
                s = f["SUB_ARRAY_POINTING_%03d" % sap]
                b = s["BEAM_%03d" % tab]
                channels, factor = (4, 2) if coherent else (1, 1)
                shift, rest = row_shift(coherent)
                rows = NR_BLOCKS * BLOCK // (channels * factor) - shift
                dt = channels * factor / SUBBAND_WIDTH
                self.assertEqual(b.attrs["NOF_SAMPLES"], rows)
                self.assertAlmostEqual(b.attrs["SAMPLING_TIME"], dt, delta=1e-15)
                self.assertAlmostEqual(b.attrs["SAMPLING_RATE"], 1 / dt, delta=1e-9)
                self.assertEqual(b.attrs["CHANNELS_PER_SUBBAND"], channels)
                self.assertAlmostEqual(b.attrs["CHANNEL_WIDTH"], SUBBAND_WIDTH / channels)
                self.assertAlmostEqual(b.attrs["SUBBAND_WIDTH"], SUBBAND_WIDTH)
                self.assertEqual(texts(b.attrs["STOKES_COMPONENTS"]),
                                 [["I", "Q", "U", "V"][k] if coherent else "I"])
                self.assertEqual(b.attrs["OBSERVATION_NOF_STOKES"], 4 if coherent else 1)
                self.assertEqual(text(b.attrs["SIGNAL_SUM"]), "COHERENT" if coherent else "INCOHERENT")
                self.assertFalse(b.attrs["COMPLEX_VOLTAGE"])
                self.assertEqual(text(b.attrs["DEDISPERSION"]), "COHERENT" if coherent else "NONE")
                self.assertAlmostEqual(b.attrs["DISPERSION_MEASURE"], 71.02 if coherent else 0)
                self.assertEqual(texts(b.attrs["STATIONS_LIST"]), ["CS001LBA", "RS106LBA"])
                ra = 5.24 if coherent else (5.2336866848 if sap == 0 else 1.0)
                self.assertAlmostEqual(b.attrs["POINT_RA"], math.degrees(ra), places=9)
                self.assertAlmostEqual(s.attrs["POINT_RA"], math.degrees([5.2336866848, 1.0][sap]),
                                       places=9)
                self.assertAlmostEqual(b.attrs["POINT_OFFSET_RA"],
                                       math.degrees(ra - [5.2336866848, 1.0][sap]), places=9)
                first = START - rest / SUBBAND_WIDTH  # row 0's start
                end = first + rows * dt
                self.assertAlmostEqual(s.attrs["EXPTIME_END_MJD"], 40587 + end / 86400, places=9)
                # Frequencies: the subband's centre for one channel; f - fs/2 + c fs/C for more.
                world = b["COORDINATES"]["COORDINATE_1"].attrs["AXIS_VALUES_WORLD"]
                expected = [NUMBERS[sb] * SUBBAND_WIDTH + (0 if channels == 1 else
                            -SUBBAND_WIDTH / 2 + c * SUBBAND_WIDTH / channels)
                            for sb in subbands for c in range(channels)]
                np.testing.assert_allclose(world, expected, rtol=0, atol=1e-6)
                centre = np.mean([NUMBERS[sb] * SUBBAND_WIDTH for sb in subbands])
                if channels > 1:
                    centre -= SUBBAND_WIDTH / channels / 2
                self.assertAlmostEqual(b.attrs["BEAM_FREQUENCY_CENTER"] * 1e6, centre, delta=1e-3)
                time = b["COORDINATES"]["COORDINATE_0"].attrs
                self.assertAlmostEqual(time["INCREMENT"], dt, delta=1e-15)
                self.assertAlmostEqual(time["REFERENCE_VALUE"], -rest / SUBBAND_WIDTH, delta=1e-12)
                self.assertEqual(time["REFERENCE_PIXEL"], 0)
                self.assertAlmostEqual(b["COORDINATES"].attrs["REF_TIME_VALUE"],
                                       40587 + START / 86400, places=11)
                self.assertEqual(texts(time["AXIS_UNITS"]), ["s"])
                st = b["STOKES_%d" % k].attrs
                self.assertEqual(st["NOF_SUBBANDS"], len(subbands))
                self.assertEqual(list(st["NOF_CHANNELS"]), [channels] * len(subbands))
                self.assertEqual(st["NOF_SAMPLES"], rows)

    def test_data_through_the_raw_file(self):
        for name, sap, tab, k, part, coherent, subbands in self.files():
            with h5py.File(name, "r") as f:
                b = f["SUB_ARRAY_POINTING_%03d/BEAM_%03d" % (sap, tab)]
                data, weight = b["STOKES_%d" % k], b["WEIGHT_%d" % k]
                self.assertEqual(text(data.external[0][0]), name.replace(".h5", ".raw"))
                self.assertEqual(data.dtype, np.dtype("<f4"))
                channels = 4 if coherent else 1
                per_block = BLOCK // (8 if coherent else 1)
                shift = row_shift(coherent)[0]
                rows = NR_BLOCKS * per_block - shift
                self.assertEqual(data.shape, (rows, len(subbands) * channels))
                self.assertEqual(weight.shape, data.shape)
                values, weights = data[...], weight[...]
                row = np.arange(rows)[:, None] + shift  # the blocks' rows
                for j, sb in enumerate(subbands):
                    for c in range(channels):
                        column = j * channels + c
                        expected = ((((tab * 4 + k) * 16 + sb) * 16 + c) * 8 + row[:, 0] % 8).astype(np.float32)
                        expected_weight = np.full(rows, 1 - (c % 4) / 4, np.float32)
                        if sb == LOST_SUBBAND[sap]:
                            lost = slice(max(0, LOST_BLOCK * per_block - shift),
                                         max(0, (LOST_BLOCK + 1) * per_block - shift))
                            expected[lost] = 0
                            expected_weight[lost] = 0
                        np.testing.assert_array_equal(values[:, column], expected, err_msg=name)
                        np.testing.assert_array_equal(weights[:, column], expected_weight, err_msg=name)
                self.assertEqual(os.path.getsize(name.replace(".h5", ".raw")), values.nbytes)


if __name__ == "__main__":
    WRITER = sys.argv.pop(1)
    unittest.main()
