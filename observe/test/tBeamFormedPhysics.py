#!/usr/bin/python3
"""Beam-formed physics through the real executables: station-sim records a simulated sky,
observe replays the recordings through ionproc, the correlator ranks and storage-sink (not
in real time, so that nothing is lost to a loaded machine), and the ICD-3 files are read
back with h5py (and rtcp-inspect, as an astronomer would):

- a coherent TAB on a steady source gives n S + N against the incoherent sum's S + N per
  station (n stations, S the source's and N the noise's power per polarisation), within a
  few per cent; a TAB 2 degrees off the source does not;
- a pulsar, incoherently dedispersed and folded (rtcp-inspect), peaks at the phase its
  epoch and DM predict within an output sample, from the file's own start time and
  sampling time; coherently dedispersed its width is the intrinsic width, not
  dedispersed the intra-channel smearing the DM predicts;
- circularly and linearly polarised sources give V/I, Q/I, U/I in COBALT's convention
  (DESIGN §2.2), diluted by the noise as n S / (n S + N); XXYY of the same recordings
  gives the same Stokes sample by sample;
- fly's eye: one file per station, each with that station's power (one station's samples
  doubled in its recording: four times the power);
- lost packets (cut out of one station's recording): the valid fractions are (n - 1) / n
  over the gap and 1 elsewhere, and the means divided by them hold;
- interference at one station (Sim.rfi.*: a tone and broadband bursts) with online
  pre-correlation flagging: the incoherent Stokes equal the interference-free run's within
  the noise, the coherent ones less the source's share the flagged station's samples held,
  and the valid fractions drop by what the ranks' log says was flagged.

Usage: tBeamFormedPhysics.py BUILD_DIR
"""

import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

BUILD = None
K_DM = 4.148808e15  # s Hz^2 per pc cm^-3
FS = 200e6 / 1024  # subband width
START = "2026-01-01 00:00:00"
START_UNIX = 1767225600.0
CENTRE = (5.2336866848, 0.7109425145)  # the SAP centre (J2000, radians)
CORE = ["CS001", "CS002", "CS003", "CS004", "CS005", "CS006"]
SPREAD = ["CS001", "CS002", "CS011", "CS017", "CS021", "CS032"]  # up to ~1.5 km apart
REFERENCE = np.array([3826577.066, 461022.948, 5064892.786])  # referencePhaseCenter, ITRF m
SPEED_OF_LIGHT = 299792458.0


def lba_positions(stations):
    """ITRF positions (m) of the stations' LBA fields, from the table the project ships."""
    table = os.path.join(os.environ["RTCP_SOURCE_DIR"], "parsets", "StationPositions.csv")
    positions = {}
    with open(table) as f:
        for line in f:
            fields = line.strip().split(",")
            if len(fields) == 6 and fields[2] == "LBA":
                positions[fields[0]] = np.array([float(v) for v in fields[3:]])
    return np.array([positions[s] for s in stations])


def itrf_direction(ra, dec, unix):
    """A J2000 direction's unit vector in ITRF at a Unix time, turned by the Greenwich mean
    sidereal time only (precession since J2000, 0.36 degrees, turns two nearby directions
    alike: it changes their difference's phases by well under a per cent)."""
    days = (unix - 946728000.0) / 86400.0  # since J2000.0 (2000-01-01 12:00 UTC)
    gmst = math.radians(15 * (18.697374558 + 24.06570982441908 * days))
    return np.array([math.cos(dec) * math.cos(ra - gmst), math.cos(dec) * math.sin(ra - gmst),
                     math.sin(dec)])


def array_factor_power(stations, towards, pointed, frequencies, unix):
    """|(1/n) sum_s exp(-2 pi i f (tau_towards,s - tau_pointed,s))|^2, mean over the
    frequencies: the fraction of a source's coherent power a TAB pointed at `towards`
    keeps of a source at `pointed` (both J2000 (ra, dec))."""
    offsets = lba_positions(stations) - REFERENCE
    difference = itrf_direction(*towards, unix) - itrf_direction(*pointed, unix)
    delays = offsets @ difference / SPEED_OF_LIGHT
    return float(np.mean([abs(np.mean(np.exp(-2j * math.pi * f * delays))) ** 2
                          for f in frequencies]))


def text_of(path):
    with open(path) as f:
        return f.read()


def note(message):
    """A measured figure, into the test's log."""
    print("tBeamFormedPhysics: " + message, file=sys.stderr)


def run(command, log):
    with open(log, "w") as out:
        return subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, timeout=600).returncode


def parset(obs_id, stations, subbands, seconds, extra, inputs=None, block=8192,
           directory="out"):
    """A small observation of the stations (LBA), one SAP at CENTRE unless `extra` says
    more, blocks of `block` samples, correlated output off unless `extra` turns it on."""
    lines = [
        "Observation.ObsID = %d" % obs_id,
        "Observation.startTime = '%s'" % START,
        "Observation.stopTime = '2026-01-01 00:00:%02d'" % seconds,
        "Observation.antennaSet = LBA_OUTER", "Observation.bandFilter = LBA_30_90",
        "Observation.VirtualInstrument.stationList = [%s]" % ", ".join(stations),
        "Observation.nrBeams = 1",
        "Observation.Beam[0].angle1 = %r" % CENTRE[0], "Observation.Beam[0].angle2 = %r" % CENTRE[1],
        "Observation.Beam[0].subbandList = %s" % subbands,
        "Observation.referencePhaseCenter = [3826577.066, 461022.948, 5064892.786]",
        "Cobalt.blockSize = %d" % block, "Cobalt.Correlator.nrChannelsPerSubband = 16",
        "Cobalt.Correlator.nrBlocksPerIntegration = 1",
        "OLAP.realTime = F",
        "Observation.DataProducts.Output_Correlated.enabled = F",
        "Observation.DataProducts.Output_Correlated.locations = [localhost:%s]" % directory,
        "Observation.DataProducts.Output_CoherentStokes.locations = [localhost:%s]" % directory,
        "Observation.DataProducts.Output_IncoherentStokes.locations = [localhost:%s]" % directory,
        "Sim.noisePower = 1.0", "Sim.seed = 7",
    ]
    for i, station in enumerate(stations):
        port = inputs[i] if inputs else "udp:127.0.0.1:%d" % (23000 + 10 * i)
        lines.append("PIC.Core.%sLBA.RSP.ports = [%s]" % (station, port))
    return "\n".join(lines) + "\n" + extra


class Recording:
    """A station's recording: RSP packets one after another (DESIGN §2.1)."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.bytes = bytearray(f.read())
        header = self.bytes[:16]
        bits = {0: 16, 1: 8, 2: 4}[header[2] & 3]
        assert bits == 16, "16-bit recordings only"
        self.beamlets, self.samples = header[6], header[7]
        self.size = 16 + self.beamlets * self.samples * 8
        assert len(self.bytes) % self.size == 0

    def packets(self):
        return len(self.bytes) // self.size

    def first_sample(self, packet):
        """The absolute sample number of a packet's first sample (200 MHz clock)."""
        header = self.bytes[packet * self.size:packet * self.size + 16]
        timestamp = int.from_bytes(header[8:12], "little")
        sequence = int.from_bytes(header[12:16], "little")
        return (timestamp * 200000000 + 512) // 1024 + sequence

    def scale(self, factor):
        """Every sample times factor (int16, clipped)."""
        packets = np.frombuffer(bytes(self.bytes), dtype=np.uint8).reshape(self.packets(), self.size)
        payload = packets[:, 16:].copy().view("<i2").astype(np.int32) * factor
        payload = np.clip(payload, -32768, 32767).astype("<i2")
        out = packets.copy()
        out[:, 16:] = payload.view(np.uint8)
        self.bytes = bytearray(out.tobytes())

    def cut(self, first, count):
        """Leaves out packets first .. first + count - 1."""
        del self.bytes[first * self.size:(first + count) * self.size]

    def save(self):
        with open(self.path, "wb") as f:
            f.write(self.bytes)


class Observation:
    """Records a parset's stations with station-sim, lets `edit` change the recordings,
    replays them through observe; the beam-formed files' directory."""

    def __init__(self, tmp, name, obs_id, stations, subbands, seconds, extra, edit=None,
                 recordings=None, block=8192):
        self.dir = os.path.join(tmp, name)
        os.makedirs(self.dir)
        self.out = os.path.join(self.dir, "out")
        self.recordings = recordings or os.path.join(self.dir, "recordings")
        if recordings is None:
            record = os.path.join(self.dir, "record.parset")
            with open(record, "w") as f:
                f.write(parset(obs_id, stations, subbands, seconds, extra, block=block,
                               directory=self.out))
            code = run([os.path.join(BUILD, "station-sim/station-sim"), record, "--record",
                        self.recordings], os.path.join(self.dir, "record.log"))
            assert code == 0, text_of(os.path.join(self.dir, "record.log"))
            if edit:
                edit({s: Recording(os.path.join(self.recordings, s + "LBA.rsp")) for s in stations})
        inputs = ["file:" + os.path.join(self.recordings, s + "LBA.rsp") for s in stations]
        self.parset = os.path.join(self.dir, "observation.parset")
        with open(self.parset, "w") as f:
            f.write(parset(obs_id, stations, subbands, seconds, extra, inputs, block=block,
                           directory=self.out))
        self.obs = os.path.join(self.dir, "obs")
        log = os.path.join(self.dir, "observe.log")
        code = run([os.path.join(BUILD, "observe/observe"), self.parset, "--dir", self.obs], log)
        assert code == 0, text_of(log)[-5000:]

    def file(self, sap, tab, component=0, part=0):
        return h5py.File(os.path.join(self.out, "L%d_SAP%03d_B%03d_S%d_P%03d_bf.h5"
                                      % (self.obs_id(), sap, tab, component, part)), "r")

    def obs_id(self):
        with open(self.parset) as f:
            for line in f:
                if line.startswith("Observation.ObsID"):
                    return int(line.split("=")[1])
        raise ValueError("no ObsID")


def read(obs, sap, tab, component=0, part=0):
    """(data[rows][columns], weights, frequencies, beam attributes) of one file."""
    with obs.file(sap, tab, component, part) as f:
        beam = f["SUB_ARRAY_POINTING_%03d/BEAM_%03d" % (sap, tab)]
        cwd = os.getcwd()
        os.chdir(obs.out)  # the external .raw files are found relative to the working directory
        try:
            data = beam["STOKES_%d" % component][...].astype(np.float64)
            weights = beam["WEIGHT_%d" % component][...].astype(np.float64)
        finally:
            os.chdir(cwd)
        frequencies = beam["COORDINATES/COORDINATE_1"].attrs["AXIS_VALUES_WORLD"]
        attrs = dict(beam.attrs)
    return data, weights, np.asarray(frequencies), attrs


def weighted_mean(data, weights, columns=slice(None)):
    d, w = data[:, columns], weights[:, columns]
    return d.sum() / w.sum()


def inner_channels(channels, subbands):
    """Columns of the channels away from the subband edges (2 .. C - 3 of each subband)."""
    return np.array([s * channels + c for s in range(subbands) for c in range(2, channels - 2)])


class BeamFormedPhysicsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_coherent_against_incoherent(self):
        """6 core stations up to 1.5 km apart, a steady source at the SAP centre with S = N:
        the TAB on it against the incoherent sum, (n S + N) / (S + N) = 3.5; 2 degrees off
        it the source adds out of phase, (n S A + N) / (S + N) with A the array factor's
        power there (computed from the stations' positions)."""
        n, s, noise = len(SPREAD), 1.0, 1.0
        off = CENTRE[1] + math.radians(2)
        extra = "\n".join([
            "Observation.DataProducts.Output_CoherentStokes.enabled = T",
            "Observation.DataProducts.Output_IncoherentStokes.enabled = T",
            "Cobalt.BeamFormer.CoherentStokes.which = I",
            "Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband = 16",
            "Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor = 16",
            "Cobalt.BeamFormer.IncoherentStokes.which = I",
            "Cobalt.BeamFormer.IncoherentStokes.nrChannelsPerSubband = 16",
            "Cobalt.BeamFormer.IncoherentStokes.timeIntegrationFactor = 16",
            "Observation.Beam[0].nrTiedArrayBeams = 3",
            "Observation.Beam[0].TiedArrayBeam[0].angle1 = %r" % CENTRE[0],
            "Observation.Beam[0].TiedArrayBeam[0].angle2 = %r" % CENTRE[1],
            "Observation.Beam[0].TiedArrayBeam[1].angle1 = %r" % CENTRE[0],
            "Observation.Beam[0].TiedArrayBeam[1].angle2 = %r" % off,
            "Observation.Beam[0].TiedArrayBeam[2].coherent = F",
            "Sim.nrSources = 1", "Sim.Source[0].angle1 = %r" % CENTRE[0],
            "Sim.Source[0].angle2 = %r" % CENTRE[1], "Sim.Source[0].flux = %r" % (2 * s),
        ]) + "\n"
        obs = Observation(self.tmp.name, "steady", 3101, SPREAD, "[300, 301]", 1, extra)
        columns = inner_channels(16, 2)
        on, w_on, frequencies, _ = read(obs, 0, 0)
        away, w_away, _, _ = read(obs, 0, 1)
        incoherent, w_inc, _, attrs = read(obs, 0, 2)
        self.assertEqual(attrs["SIGNAL_SUM"], b"INCOHERENT" if isinstance(attrs["SIGNAL_SUM"], bytes)
                         else "INCOHERENT")
        rows = min(len(on), len(incoherent))
        ratio = weighted_mean(on[:rows], w_on[:rows], columns) / \
            weighted_mean(incoherent[:rows], w_inc[:rows], columns)
        expected = (n * s + noise) / (s + noise)
        note("coherent / incoherent on the source %.4f (expected %.4f)" % (ratio, expected))
        self.assertAlmostEqual(ratio, expected, delta=0.03 * expected)
        away_ratio = weighted_mean(away[:rows], w_away[:rows], columns) / \
            weighted_mean(incoherent[:rows], w_inc[:rows], columns)
        factor = array_factor_power(SPREAD, (CENTRE[0], off), CENTRE, frequencies[columns],
                                    START_UNIX + 1)
        expected_away = (n * s * factor + noise) / (s + noise)
        note("2 degrees off: %.4f (expected %.4f, array factor power %.4f)"
             % (away_ratio, expected_away, factor))
        self.assertLess(factor, 0.3)
        self.assertAlmostEqual(away_ratio, expected_away, delta=0.03 * expected,
                               msg="2 degrees off: array factor power %.3f" % factor)


    def test_pulsar(self):
        """A pulsar at the SAP centre (period 40 ms, 1 ms wide, DM 10 at 50 MHz: 8.1 ms of
        smearing inside a 12 kHz channel), 2 stations, 16 channels of one spectrum a sample:
        folded by rtcp-inspect from the files alone, the coherently dedispersed TAB peaks at
        phase 0 within an output sample with the intrinsic width; the TAB not dedispersed
        and the incoherent one have the smearing's width."""
        period, width, dm = 0.04, 0.001, 10.0
        extra = "\n".join([
            "Observation.DataProducts.Output_CoherentStokes.enabled = T",
            "Observation.DataProducts.Output_IncoherentStokes.enabled = T",
            "Cobalt.BeamFormer.CoherentStokes.which = I",
            "Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband = 16",
            "Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor = 1",
            "Cobalt.BeamFormer.IncoherentStokes.which = I",
            "Cobalt.BeamFormer.IncoherentStokes.nrChannelsPerSubband = 16",
            "Cobalt.BeamFormer.IncoherentStokes.timeIntegrationFactor = 1",
            "Observation.Beam[0].nrTiedArrayBeams = 3",
            "Observation.Beam[0].TiedArrayBeam[0].angle1 = %r" % CENTRE[0],
            "Observation.Beam[0].TiedArrayBeam[0].angle2 = %r" % CENTRE[1],
            "Observation.Beam[0].TiedArrayBeam[0].dispersionMeasure = %r" % dm,
            "Observation.Beam[0].TiedArrayBeam[1].angle1 = %r" % CENTRE[0],
            "Observation.Beam[0].TiedArrayBeam[1].angle2 = %r" % CENTRE[1],
            "Observation.Beam[0].TiedArrayBeam[2].coherent = F",
            "Sim.nrSources = 1", "Sim.Source[0].angle1 = %r" % CENTRE[0],
            "Sim.Source[0].angle2 = %r" % CENTRE[1], "Sim.Source[0].flux = 40",
            "Sim.Source[0].pulsar.period = %r" % period,
            "Sim.Source[0].pulsar.width = %r" % width,
            "Sim.Source[0].pulsar.epoch = '2026-01-01 00:00:00.0123'",
            "Sim.Source[0].pulsar.dispersionMeasure = %r" % dm,
        ]) + "\n"
        obs = Observation(self.tmp.name, "pulsar", 3102, CORE[:2], "[256, 257]", 2, extra)
        # observe drew the TABs itself (its quick look, listed in the summary).
        with open(os.path.join(obs.obs, "summary.json")) as f:
            plots = json.load(f)["plots"]
        self.assertEqual(sorted(os.path.basename(p) for p in plots),
                         ["bf_SAP000_B%03d.png" % t for t in range(3)])
        with open(os.path.join(obs.obs, "msoverview.txt")) as f:
            self.assertIn("folded: period 0.04 s (Sim.Source[0] of the parset)", f.read())
        plots = os.path.join(obs.dir, "plots")
        log = os.path.join(obs.dir, "inspect.log")
        self.assertEqual(run([os.path.join(BUILD, "tools/rtcp-inspect"), "--out", plots, "--data",
                              obs.out], log), 0, text_of(log))
        dt = 16 / FS
        smear = K_DM * dm * 2 * (FS / 16) / (50.0e6 + 0.5 * FS) ** 3  # at the band's middle
        for tab, expected in ((0, width), (1, smear), (2, smear)):
            d = np.load(os.path.join(plots, "bf_SAP000_B%03d.npz" % tab))
            self.assertAlmostEqual(float(d["period"]), period)
            self.assertAlmostEqual(float(d["dm"]), dm)
            phase, fwhm = float(d["peak_phase"]), float(d["width"])
            note("pulsar TAB %d: peak at %+.1f us, FWHM %.3f ms (expected %.3f ms)"
                 % (tab, 1e6 * phase * period, 1e3 * fwhm, 1e3 * expected))
            if tab == 0:
                self.assertLess(abs(phase) * period, dt, "TAB 0 at phase %f" % phase)
            else:  # smeared about the channel centre's delay: within a tenth of the smearing
                self.assertLess(abs(phase) * period, 0.1 * smear, "TAB %d at phase %f" % (tab, phase))
            self.assertAlmostEqual(fwhm, expected, delta=0.15 * expected + period / len(d["profile"]),
                                   msg="TAB %d: FWHM %.3f ms, expected %.3f ms"
                                   % (tab, 1e3 * fwhm, 1e3 * expected))

    def polarised_extra(self, which, time_integration):
        """Two SAPs 20 degrees apart, each with a polarised source at its centre seen
        through a 1-degree station beam (so that each sees only its own) and one coherent
        TAB there: SAP 0 circular (V = 0.8), SAP 1 linear (Q = 0.5, U = -0.6)."""
        second = (CENTRE[0], CENTRE[1] - math.radians(20))
        return "\n".join([
            "Observation.nrBeams = 2",
            "Observation.Beam[1].angle1 = %r" % second[0],
            "Observation.Beam[1].angle2 = %r" % second[1],
            "Observation.Beam[1].subbandList = [301]",
            "Observation.DataProducts.Output_CoherentStokes.enabled = T",
            "Cobalt.BeamFormer.CoherentStokes.which = %s" % which,
            "Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband = 16",
            "Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor = %d" % time_integration,
            "Observation.Beam[0].nrTiedArrayBeams = 1",
            "Observation.Beam[0].TiedArrayBeam[0].angle1 = %r" % CENTRE[0],
            "Observation.Beam[0].TiedArrayBeam[0].angle2 = %r" % CENTRE[1],
            "Observation.Beam[1].nrTiedArrayBeams = 1",
            "Observation.Beam[1].TiedArrayBeam[0].angle1 = %r" % second[0],
            "Observation.Beam[1].TiedArrayBeam[0].angle2 = %r" % second[1],
            "Sim.stationBeamWidth = %r" % math.radians(1),
            "Sim.nrSources = 2",
            "Sim.Source[0].angle1 = %r" % CENTRE[0], "Sim.Source[0].angle2 = %r" % CENTRE[1],
            "Sim.Source[0].flux = 8", "Sim.Source[0].V = 0.8",
            "Sim.Source[1].angle1 = %r" % second[0], "Sim.Source[1].angle2 = %r" % second[1],
            "Sim.Source[1].flux = 8", "Sim.Source[1].Q = 0.5", "Sim.Source[1].U = -0.6",
        ]) + "\n"

    def test_polarisation(self):
        """V/I, Q/I, U/I in COBALT's convention, diluted by the unpolarised noise as
        n S / (n S + N); XXYY of the same recordings gives the same Stokes sample by sample."""
        stations = CORE[:3]
        n, s, noise = len(stations), 4.0, 1.0
        iquv = Observation(self.tmp.name, "iquv", 3103, stations, "[300]", 1,
                           self.polarised_extra("IQUV", 1))
        xxyy = Observation(self.tmp.name, "xxyy", 3104, stations, "[300]", 1,
                           self.polarised_extra("XXYY", 1), recordings=iquv.recordings)
        dilution = n * s / (n * s + noise)
        columns = inner_channels(16, 1)
        for sap, fractions in ((0, (0.0, 0.0, 0.8)), (1, (0.5, -0.6, 0.0))):
            stokes = [read(iquv, sap, 0, k) for k in range(4)]
            total = weighted_mean(stokes[0][0], stokes[0][1], columns)
            for k, name in ((1, "Q"), (2, "U"), (3, "V")):
                ratio = weighted_mean(stokes[k][0], stokes[k][1], columns) / total
                note("SAP %d %s/I %+.4f (expected %+.4f)"
                     % (sap, name, ratio, fractions[k - 1] * dilution))
                self.assertAlmostEqual(ratio, fractions[k - 1] * dilution, delta=0.03,
                                       msg="SAP %d %s/I" % (sap, name))
            voltages = [read(xxyy, sap, 0, k)[0] for k in range(4)]
            x = voltages[0] + 1j * voltages[1]
            y = voltages[2] + 1j * voltages[3]
            from_voltages = [abs(x) ** 2 + abs(y) ** 2, abs(x) ** 2 - abs(y) ** 2,
                             2 * (x * np.conj(y)).real, 2 * (x * np.conj(y)).imag]
            for k in range(4):
                np.testing.assert_allclose(from_voltages[k], stokes[k][0],
                                           rtol=0, atol=2e-4 * np.abs(stokes[0][0]).max(),
                                           err_msg="SAP %d Stokes %d" % (sap, k))

    def test_flys_eye(self):
        """One file per station, holding that station's power: CS002's samples doubled in
        its recording, its file has four times the others' power."""
        stations = CORE[:3]
        extra = "\n".join([
            "Observation.DataProducts.Output_CoherentStokes.enabled = T",
            "Cobalt.BeamFormer.flysEye = T",
            "Cobalt.BeamFormer.CoherentStokes.which = I",
            "Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband = 16",
            "Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor = 16",
            "Sim.nrSources = 1", "Sim.Source[0].angle1 = %r" % CENTRE[0],
            "Sim.Source[0].angle2 = %r" % CENTRE[1], "Sim.Source[0].flux = 2",
        ]) + "\n"

        def double_cs002(recordings):
            recordings["CS002"].scale(2)
            recordings["CS002"].save()

        obs = Observation(self.tmp.name, "flyseye", 3105, stations, "[300]", 1, extra,
                          edit=double_cs002)
        files = sorted(glob.glob(os.path.join(obs.out, "*_bf.h5")))
        self.assertEqual([os.path.basename(f) for f in files],
                         ["L3105_SAP000_B%03d_S0_P000_bf.h5" % t for t in range(3)])
        columns = inner_channels(16, 1)
        power = []
        for tab, station in enumerate(stations):
            data, weights, _, attrs = read(obs, 0, tab)
            self.assertEqual([v.decode() if isinstance(v, bytes) else str(v)
                              for v in attrs["STATIONS_LIST"]], [station + "LBA"])
            power.append(weighted_mean(data, weights, columns))
        note("fly's eye powers relative to CS001: %s" % ", ".join("%.4f" % (p / power[0])
                                                                  for p in power))
        self.assertAlmostEqual(power[2] / power[0], 1.0, delta=0.03)
        self.assertAlmostEqual(power[1] / power[0], 4.0, delta=0.12)

    def test_lost_packets(self):
        """Receiver noise only, 4 stations; 200 packets (3200 samples) cut out of CS003's
        recording: the coherent and incoherent TABs' valid fractions are 3/4 over the gap
        (whole output samples inside it) and 1 elsewhere, the values divided by them keep
        their means, and what the weights miss is the samples that were cut."""
        stations = CORE[:4]
        extra = "\n".join([
            "Observation.DataProducts.Output_CoherentStokes.enabled = T",
            "Observation.DataProducts.Output_IncoherentStokes.enabled = T",
            "Cobalt.BeamFormer.CoherentStokes.which = I",
            "Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband = 1",
            "Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor = 64",
            "Cobalt.BeamFormer.IncoherentStokes.which = I",
            "Cobalt.BeamFormer.IncoherentStokes.nrChannelsPerSubband = 1",
            "Cobalt.BeamFormer.IncoherentStokes.timeIntegrationFactor = 64",
            "Observation.Beam[0].nrTiedArrayBeams = 2",
            "Observation.Beam[0].TiedArrayBeam[0].angle1 = %r" % CENTRE[0],
            "Observation.Beam[0].TiedArrayBeam[0].angle2 = %r" % CENTRE[1],
            "Observation.Beam[0].TiedArrayBeam[1].coherent = F",
            "Sim.nrSources = 0",
        ]) + "\n"
        cut_first, cut_count = 3000, 200
        start_sample = (int(START_UNIX) * 200000000 + 512) // 1024
        cut_at = []

        def cut(recordings):
            recording = recordings["CS003"]
            self.assertEqual(recording.samples, 16)
            cut_at.append(recording.first_sample(cut_first) - start_sample)
            recording.cut(cut_first, cut_count)
            recording.save()

        obs = Observation(self.tmp.name, "lost", 3106, stations, "[300]", 1, extra, edit=cut)
        first_sample = cut_at[0]  # from the observation's first sample
        lost = cut_count * 16
        for tab in (0, 1):
            data, weights, _, _ = read(obs, 0, tab)
            w = weights[:, 0]
            rows = np.arange(len(w)) * 64  # each row's first subband sample
            inside = (rows >= first_sample) & (rows + 64 <= first_sample + lost)
            outside = (rows + 64 <= first_sample - 256) | (rows >= first_sample + lost + 256)
            np.testing.assert_allclose(w[inside], 0.75, atol=1e-6, err_msg="TAB %d" % tab)
            np.testing.assert_allclose(w[outside], 1.0, atol=1e-6, err_msg="TAB %d" % tab)
            # What the weights miss, in station-samples (a quarter of the stations over each
            # row's 64 samples): the cut samples, and at most a delay-compensation spectrum
            # (at most 256 samples) at each end of the gap.
            missing = ((1 - w) * 64).sum() * 4
            note("TAB %d: %d station-samples cut, the weights miss %.0f" % (tab, lost, missing))
            self.assertGreaterEqual(missing, lost - 1e-3)
            self.assertLessEqual(missing, lost + 2 * 256)
            ratio = (data[inside, 0] / w[inside]).mean() / (data[outside, 0] / w[outside]).mean()
            self.assertAlmostEqual(ratio, 1.0, delta=0.05, msg="TAB %d: mean over the gap" % tab)

    def test_flagged_interference(self):
        """4 core stations, a steady source at the SAP centre (S = N / 5 per station);
        CS002 also hears a tone at the centre of channel 12 and 20 ms bursts of 4 N every
        250 ms (Sim.rfi.*). Recorded with and without the interference, replayed with
        online pre-correlation flagging (and the interference also without it): the valid
        fractions drop by the flagged fraction the correlator's log gives per station
        (over the 4 stations), the
        tone's channel by a quarter of CS002's quarter (the tone fills one of the four delay
        channels in its band); the incoherent Stokes (sums over valid
        fractions) equal the clean run's within 4 sigma, the coherent ones the clean run's
        less S / (n S + N) of the values with a flag (a flagged sample is lost for its
        station: the sum goes on over the other n - 1, beam-formed/README.md); without
        flagging the incoherent Stokes are far off."""
        stations, s, noise = CORE[:4], 0.2, 1.0
        n = len(stations)
        tone_channel = 12  # of 16: centre 4 x 12207.03125 Hz above the subband's, 58.59375 MHz
        common = "\n".join([
            "Observation.DataProducts.Output_CoherentStokes.enabled = T",
            "Observation.DataProducts.Output_IncoherentStokes.enabled = T",
            "Cobalt.BeamFormer.nrDelayCompensationChannels = 64",
            "Cobalt.BeamFormer.CoherentStokes.which = I",
            "Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband = 16",
            "Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor = 16",
            "Cobalt.BeamFormer.IncoherentStokes.which = I",
            "Cobalt.BeamFormer.IncoherentStokes.nrChannelsPerSubband = 16",
            "Cobalt.BeamFormer.IncoherentStokes.timeIntegrationFactor = 16",
            "Observation.Beam[0].nrTiedArrayBeams = 2",
            "Observation.Beam[0].TiedArrayBeam[0].angle1 = %r" % CENTRE[0],
            "Observation.Beam[0].TiedArrayBeam[0].angle2 = %r" % CENTRE[1],
            "Observation.Beam[0].TiedArrayBeam[1].coherent = F",
            "Sim.nrSources = 1", "Sim.Source[0].angle1 = %r" % CENTRE[0],
            "Sim.Source[0].angle2 = %r" % CENTRE[1], "Sim.Source[0].flux = %r" % (2 * s),
        ]) + "\n"
        rfi = "\n".join([
            "Sim.rfi.tone.frequency = %r" % (300 * FS + (tone_channel - 8) * FS / 16),
            "Sim.rfi.tone.amplitude = 0.5", "Sim.rfi.tone.stations = [CS002LBA]",
            "Sim.rfi.burst.period = 0.25", "Sim.rfi.burst.duration = 0.02",
            "Sim.rfi.burst.power = 4", "Sim.rfi.burst.stations = [CS002LBA]",
        ]) + "\n"
        flagging = "OLAP.CNProc.onlineFlagging = T\nOLAP.CNProc.onlinePreCorrelationFlagging = T\n"

        def observe(name, obs_id, extra, recordings=None):
            return Observation(self.tmp.name, name, obs_id, stations, "[300]", 2, extra,
                               recordings=recordings, block=65536)

        clean = observe("rfi-clean", 3107, common + flagging)
        flagged = observe("rfi-flagged", 3108, common + rfi + flagging)
        unflagged = observe("rfi-unflagged", 3109, common + rfi, flagged.recordings)

        def flagged_fraction(obs):
            """Per station the samples the ranks' logs say were flagged over those that
            arrived ("CS001LBA 0.41 % (F of V)"), added up over the ranks."""
            with open(os.path.join(obs.obs, "summary.json")) as f:
                lines = json.load(f)["flagging"]
            counts = {}
            for line in lines:
                if "pre-correlation flagging" not in line:
                    continue
                for station, part, whole in re.findall(r"([^ ,;:]+) [0-9.]+ % \((\d+) of (\d+)\)",
                                                        line):
                    c = counts.setdefault(station, [0, 0])
                    c[0] += int(part)
                    c[1] += int(whole)
            return {station: c[0] / c[1] if c[1] else 0.0 for station, c in counts.items()}

        fractions = flagged_fraction(flagged)
        note("flagged per station: %s (clean: %s)" % (fractions, flagged_fraction(clean)))
        self.assertGreater(fractions["CS002LBA"], 0.05)
        for station in stations:
            if station != "CS002":
                self.assertLess(fractions[station + "LBA"], 0.01)
        columns = inner_channels(16, 1)
        for tab in (0, 1):
            data, w, _, _ = read(flagged, 0, tab)
            clean_data, clean_w, _, _ = read(clean, 0, tab)
            off_data, off_w, _, _ = read(unflagged, 0, tab)
            rows = slice(1, min(len(w), len(clean_w), len(off_w)))  # row 0: the fresh filter
            # The drop in valid fraction: each station's flagged fraction over the n stations.
            expected_drop = sum(fractions.values()) / n
            drop = 1 - w[rows].mean()
            note("TAB %d: valid fractions drop %.5f, flagged %.5f" % (tab, drop, expected_drop))
            self.assertAlmostEqual(drop, expected_drop, delta=0.02 * expected_drop + 1e-4)
            other = np.delete(np.arange(16), [0, tone_channel])
            tone_drop = w[rows][:, other].mean() - w[rows][:, tone_channel].mean()
            # The tone fills delay channel 48 of 64, a quarter of final channel 12's band
            # (delay channels 46 .. 50, the outer two by half): 1/4 of CS002's quarter,
            # less where the bursts flagged every channel anyway.
            note("TAB %d: the tone's channel's valid fraction %.4f below the others'"
                 % (tab, tone_drop))
            self.assertAlmostEqual(tone_drop, 1.0 / (4 * n), delta=0.01, msg="tone's channel")
            # Stokes over valid fractions, against the clean run's.
            reference = weighted_mean(clean_data[rows], clean_w[rows], columns)
            values = clean_data[rows][:, columns] / clean_w[rows][:, columns]
            sigma = values.std() / math.sqrt(values.size) * reference / values.mean()
            with_flags = weighted_mean(data[rows], w[rows], columns)
            lost = 1 - w[rows][:, columns].mean()
            predicted = reference * (1 - s / (n * s + noise) * n * lost) if tab == 0 else reference
            note("TAB %d: flagged %.2f, clean %.2f, predicted %.2f (sigma %.2f)"
                 % (tab, with_flags, reference, predicted, sigma))
            self.assertAlmostEqual(with_flags, predicted, delta=4 * sigma)
            if tab == 1:
                without = weighted_mean(off_data[rows], off_w[rows], columns)
                note("incoherent without flagging %.2f" % without)
                self.assertGreater(abs(without - reference), 10 * sigma)


if __name__ == "__main__":
    BUILD = sys.argv.pop(1)
    unittest.main()
