#!/usr/bin/python3
"""The LOFAR tables and columns of MeasurementSets that the real storage-sink wrote, read
with python-casacore as LOFAR's pipelines read them: every LOFAR table and column with
LOFAR's types, units and measure keywords (LOFAR's LCS/MSLofar), element positions against
the shipped element table, orthonormal axes, the elements each antenna set uses, UVW in
J2000 equal to TaQL's mscal.uvwj2000, and the OBSERVATION/FIELD/SPECTRAL_WINDOW values
from the parset.

Usage: tLofarTables.py STORAGE_SINK DATA_DIR (DATA_DIR: the shipped parsets/ directory).
"""

import csv
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
from casacore import tables

STORAGE_SINK = DATA_DIR = None

POSITION = (["m", "m", "m"], {"type": "position", "Ref": "ITRF"})
EPOCH = (["s"], {"type": "epoch", "Ref": "UTC"})
PLAIN = (None, None)

# table -> column -> (valueType, fixed shape or None, (QuantumUnits, MEASINFO)), as
# LOFAR's MSLofar classes define them.
LOFAR_COLUMNS = {
    "LOFAR_ANTENNA_FIELD": {
        "ANTENNA_ID": ("int", None, PLAIN),
        "NAME": ("string", None, PLAIN),
        "POSITION": ("double", [3], POSITION),
        "COORDINATE_AXES": ("double", [3, 3], POSITION),
        "ELEMENT_OFFSET": ("double", None, POSITION),
        "ELEMENT_RCU": ("int", None, PLAIN),
        "ELEMENT_FLAG": ("boolean", None, PLAIN),
        "TILE_ROTATION": ("double", None, (["rad"], None)),
        "TILE_ELEMENT_OFFSET": ("double", None, POSITION),
    },
    "LOFAR_STATION": {
        "NAME": ("string", None, PLAIN),
        "CLOCK_ID": ("int", None, PLAIN),
        "FLAG_ROW": ("boolean", None, PLAIN),
    },
    "LOFAR_ELEMENT_FAILURE": {
        "ANTENNA_FIELD_ID": ("int", None, PLAIN),
        "ELEMENT_INDEX": ("int", None, PLAIN),
        "TIME": ("double", None, EPOCH),
    },
    "ANTENNA": {
        "LOFAR_STATION_ID": ("int", None, PLAIN),
        "LOFAR_PHASE_REFERENCE": ("double", [3], POSITION),
    },
    "FIELD": {
        "LOFAR_TILE_BEAM_DIR": ("double", None, (["rad", "rad"], {"type": "direction", "Ref": "J2000"})),
    },
    "OBSERVATION": {
        "LOFAR_PROJECT_TITLE": ("string", None, PLAIN),
        "LOFAR_PROJECT_PI": ("string", None, PLAIN),
        "LOFAR_PROJECT_CO_I": ("string", None, PLAIN),
        "LOFAR_PROJECT_CONTACT": ("string", None, PLAIN),
        "LOFAR_OBSERVATION_ID": ("string", None, PLAIN),
        "LOFAR_OBSERVATION_START": ("double", None, EPOCH),
        "LOFAR_OBSERVATION_END": ("double", None, EPOCH),
        "LOFAR_OBSERVATION_FREQUENCY_MAX": ("double", None, (["MHz"], None)),
        "LOFAR_OBSERVATION_FREQUENCY_MIN": ("double", None, (["MHz"], None)),
        "LOFAR_OBSERVATION_FREQUENCY_CENTER": ("double", None, (["MHz"], None)),
        "LOFAR_SUB_ARRAY_POINTING": ("int", None, PLAIN),
        "LOFAR_NOF_BITS_PER_SAMPLE": ("int", None, PLAIN),
        "LOFAR_ANTENNA_SET": ("string", None, PLAIN),
        "LOFAR_FILTER_SELECTION": ("string", None, PLAIN),
        "LOFAR_CLOCK_FREQUENCY": ("double", None, (["MHz"], None)),
        "LOFAR_TARGET": ("string", None, PLAIN),
        "LOFAR_SYSTEM_VERSION": ("string", None, PLAIN),
        "LOFAR_PIPELINE_NAME": ("string", None, PLAIN),
        "LOFAR_PIPELINE_VERSION": ("string", None, PLAIN),
        "LOFAR_FILENAME": ("string", None, PLAIN),
        "LOFAR_FILETYPE": ("string", None, PLAIN),
        "LOFAR_FILEDATE": ("double", None, EPOCH),
    },
}
ARRAY_COLUMNS = {"POSITION", "COORDINATE_AXES", "ELEMENT_OFFSET", "ELEMENT_RCU", "ELEMENT_FLAG",
                 "TILE_ELEMENT_OFFSET", "LOFAR_PHASE_REFERENCE", "LOFAR_TILE_BEAM_DIR",
                 "LOFAR_PROJECT_CO_I", "LOFAR_TARGET"}

PARSET = """Observation.ObsID = {obsid}
Observation.startTime = '2025-06-01 12:00:00'
Observation.stopTime = '2025-06-01 12:00:03'
Observation.antennaSet = {antenna_set}
Observation.bandFilter = {band_filter}
Observation.VirtualInstrument.stationList = [{stations}]
Observation.channelsPerSubband = 8
Observation.nrBeams = 1
Observation.Beam[0].directionType = J2000
Observation.Beam[0].angle1 = 5.2336866848
Observation.Beam[0].angle2 = 0.7109425145
Observation.Beam[0].subbandList = [300, 302]
Observation.Campaign.name = LC4_001
Observation.Campaign.title = 'A test of rtcp'
Observation.Campaign.PI = 'A. Astronomer'
Observation.Campaign.CO_I = [B. One, C. Two]
Observation.Campaign.contact = 'A. Astronomer'
{extra}{ports}OLAP.CNProc.integrationSteps = 24414
Observation.DataProducts.Output_Correlated.locations = [localhost:{out}]
"""


def write_observation(directory, name, antenna_set, band_filter, stations, extra=""):
    """Runs storage-sink on a parset; it writes flagged integrations of a past observation."""
    field = antenna_set[:3]
    ports = "".join("PIC.Core.%s%s.RSP.ports = [udp:127.0.0.1:%d]\n" % (s, field, 10010 + i)
                    for i, s in enumerate(stations))
    out = os.path.join(directory, name)
    parset = os.path.join(directory, name + ".parset")
    with open(parset, "w") as f:
        f.write(PARSET.format(obsid=len(name), antenna_set=antenna_set, band_filter=band_filter,
                              stations=", ".join(stations), extra=extra, ports=ports, out=out))
    # The observation's secret (README, --secret-file): 32 random bytes, mode 0600.
    secret = os.path.join(directory, name + ".secret")
    with open(os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
        f.write("rtcp-secret %s\n" % os.urandom(32).hex())
    with open(os.path.join(directory, name + ".log"), "w") as log:
        subprocess.run([STORAGE_SINK, parset, "--secret-file", secret, "--port", "0",
                        "--stop-after-seconds", "0.5"],
                       stdout=log, stderr=subprocess.STDOUT, check=True)
    # LOFAR's default names: SB is the subband's index in the observation (300 -> 0, 302 -> 1).
    return [os.path.join(out, "L%d_SAP000_SB%03d_uv.MS" % (len(name), sb)) for sb in (0, 1)]


def shipped_elements():
    """parsets/AntennaElements.csv: {(station, type): [element][xyz]}."""
    elements = {}
    with open(os.path.join(DATA_DIR, "AntennaElements.csv")) as f:
        rows = csv.reader(line for line in f if not line.startswith("#"))
        next(rows)
        for station, field, element, x, y, z in rows:
            elements.setdefault((station, field), []).append((float(x), float(y), float(z)))
    return {key: np.array(value) for key, value in elements.items()}


def lofar_antenna_fields():
    """{station: {field: (centre, elements)}} of LOFAR's AntennaField.conf files in the test
    data (ITRF2005, 2015.5), read with parsets/make-station-tables.py's reader."""
    source = os.path.dirname(os.path.abspath(DATA_DIR))
    spec = importlib.util.spec_from_file_location(
        "make_station_tables", os.path.join(DATA_DIR, "make-station-tables.py"))
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    paths = glob.glob(os.path.join(source, "test/data/lofar-antenna-fields/*-AntennaField.conf"))
    return {os.path.basename(p)[:5]: generator.read_conf(p) for p in paths}


def sub(ms, name):
    return tables.table(ms + "::" + name, ack=False)


class LofarTablesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="rtcp-lofar-tables-")
        cls.hba = write_observation(
            cls.dir, "hba", "HBA_JOINED", "HBA_110_190", ["CS001", "CS002", "RS106", "DE601"],
            "Observation.Beam[0].target = 'Cyg A'\n"
            "Observation.nrAnaBeams = 1\nObservation.AnaBeam[0].directionType = J2000\n"
            "Observation.AnaBeam[0].angle1 = 5.24\nObservation.AnaBeam[0].angle2 = 0.72\n")
        cls.lba = write_observation(cls.dir, "lbainner", "LBA_INNER", "LBA_30_90",
                                    ["CS003", "RS205", "UK608"])
        cls.elements = shipped_elements()

    @classmethod
    def tearDownClass(cls):
        if not os.environ.get("RTCP_KEEP_TEST_DIRS"):
            shutil.rmtree(cls.dir, ignore_errors=True)

    def test_every_lofar_table_and_column(self):
        for ms in self.hba + self.lba:
            main = tables.table(ms, ack=False)
            for name in ("LOFAR_ANTENNA_FIELD", "LOFAR_STATION", "LOFAR_ELEMENT_FAILURE"):
                self.assertIn(name, main.getkeywords(), ms)  # registered as subtables
            for table_name, columns in LOFAR_COLUMNS.items():
                table = sub(ms, table_name)
                for column, (value_type, shape, (units, measure)) in columns.items():
                    where = "%s %s.%s" % (os.path.basename(ms), table_name, column)
                    self.assertIn(column, table.colnames(), where)
                    desc = table.getcoldesc(column)
                    self.assertEqual(value_type, desc["valueType"], where)
                    if shape:
                        self.assertEqual(shape, list(desc["shape"]), where)
                    keywords = table.getcolkeywords(column)
                    self.assertEqual(units, keywords.get("QuantumUnits"), where)
                    self.assertEqual(measure, keywords.get("MEASINFO"), where)
                    for row in range(table.nrows()):  # every cell reads
                        if column in ARRAY_COLUMNS and not table.iscelldefined(column, row):
                            self.assertEqual("TILE_ELEMENT_OFFSET", column, where)
                            continue
                        table.getcell(column, row)
            self.assertEqual(0, sub(ms, "LOFAR_ELEMENT_FAILURE").nrows())

    def test_element_positions_and_axes(self):
        for ms in (self.hba[0], self.lba[0]):
            fields = sub(ms, "LOFAR_ANTENNA_FIELD")
            stations = sub(ms, "LOFAR_STATION").getcol("NAME")
            station_of = sub(ms, "ANTENNA").getcol("LOFAR_STATION_ID")
            for row in range(fields.nrows()):
                station = stations[station_of[fields.getcell("ANTENNA_ID", row)]]
                name = fields.getcell("NAME", row)
                absolute = fields.getcell("POSITION", row) + fields.getcell("ELEMENT_OFFSET", row)
                expected = self.elements[(station, name[:3])]
                self.assertEqual(expected.shape, absolute.shape, station + name)
                self.assertLess(np.abs(absolute - expected).max(), 1e-3, station + name)
                axes = fields.getcell("COORDINATE_AXES", row)  # [p, q, r][xyz]
                self.assertLess(np.abs(axes @ axes.T - np.eye(3)).max(), 1e-9, station + name)
                self.assertAlmostEqual(1.0, float(np.cross(axes[0], axes[1]) @ axes[2]), 9)
                if name.startswith("HBA"):
                    tile = fields.getcell("TILE_ELEMENT_OFFSET", row)
                    self.assertEqual((16, 3), tile.shape)
                    self.assertLess(np.abs(tile @ axes[2]).max(), 1e-9)  # in the tile plane
                    spacing = np.linalg.norm(tile[1] - tile[0])
                    self.assertAlmostEqual(1.25, spacing, 9)
                    self.assertEqual(0.0, fields.getcell("TILE_ROTATION", row))

    def test_positions_are_lofars_itrf(self):
        """ANTENNA and LOFAR_ANTENNA_FIELD positions, and every element, within 2 cm of
        LOFAR's AntennaField.conf values (ITRF2005 at 2015.5), as LOFAR's own MSs carry them."""
        lofar = lofar_antenna_fields()
        checked = set()
        for ms in (self.hba[0], self.lba[0]):
            antenna = sub(ms, "ANTENNA")
            for row, name in enumerate(antenna.getcol("NAME")):
                station, field = name[:5], name[5:]
                if station in lofar:
                    distance = np.linalg.norm(antenna.getcell("POSITION", row) - lofar[station][field][0])
                    self.assertLess(distance, 0.02, "ANTENNA %s: %.3f m" % (name, distance))
                    checked.add(name)
            fields = sub(ms, "LOFAR_ANTENNA_FIELD")
            stations = sub(ms, "LOFAR_STATION").getcol("NAME")
            station_of = antenna.getcol("LOFAR_STATION_ID")
            for row in range(fields.nrows()):
                station = stations[station_of[fields.getcell("ANTENNA_ID", row)]]
                name = fields.getcell("NAME", row)
                if station not in lofar:
                    continue
                centre = fields.getcell("POSITION", row)
                distance = np.linalg.norm(centre - lofar[station][name][0])
                self.assertLess(distance, 0.02, "LOFAR_ANTENNA_FIELD %s%s: %.3f m" % (station, name, distance))
                elements = centre + fields.getcell("ELEMENT_OFFSET", row)
                expected = np.array(lofar[station][name[:3]][1])
                self.assertEqual(expected.shape, elements.shape, station + name)
                worst = np.linalg.norm(elements - expected, axis=1).max()
                self.assertLess(worst, 0.02, "%s%s elements: %.3f m" % (station, name, worst))
                checked.add(station + name + " elements")
        self.assertEqual({"CS001HBA", "RS106HBA", "DE601HBA", "UK608LBA", "CS001HBA0 elements",
                          "CS001HBA1 elements", "RS106HBA elements", "DE601HBA elements",
                          "UK608LBA elements"}, checked)

    def test_element_flags_follow_the_antenna_set(self):
        fields = sub(self.hba[0], "LOFAR_ANTENNA_FIELD")  # HBA_JOINED
        used = [np.nonzero(~fields.getcell("ELEMENT_FLAG", r).all(axis=1))[0].tolist()
                for r in range(fields.nrows())]
        self.assertEqual(["HBA0", "HBA1", "HBA0", "HBA1", "HBA", "HBA"], list(fields.getcol("NAME")))
        self.assertEqual([0, 0, 1, 1, 2, 3], list(fields.getcol("ANTENNA_ID")))
        self.assertEqual(list(range(24)), used[0])
        self.assertEqual(list(range(24, 48)), used[1])
        self.assertEqual(list(range(48)), used[4])  # RS106: every tile
        self.assertEqual(list(range(96)), used[5])  # DE601: 96 tiles
        fields = sub(self.lba[0], "LOFAR_ANTENNA_FIELD")  # LBA_INNER
        used = [np.nonzero(~fields.getcell("ELEMENT_FLAG", r).all(axis=1))[0].tolist()
                for r in range(fields.nrows())]
        self.assertEqual(list(range(46)), used[0])  # core: LOFAR's 46 inner dipoles
        self.assertEqual(list(range(46)), used[1])  # remote
        self.assertEqual(list(range(96)), used[2])  # international: all
        rcus = fields.getcell("ELEMENT_RCU", 0)  # [element][X, Y]
        self.assertEqual([0, 1], rcus[0].tolist())
        self.assertEqual([-1, -1], rcus[47].tolist())

    def test_uvw_is_j2000(self):
        for ms in (self.hba[0], self.lba[0]):
            main = tables.table(ms, ack=False)
            self.assertEqual({"type": "uvw", "Ref": "J2000"}, main.getcolkeywords("UVW")["MEASINFO"])
            self.assertGreater(main.nrows(), 0)
            result = tables.taql("select gmax(abs(UVW - mscal.uvwj2000())) as D from $main")
            self.assertLess(float(result.getcol("D")[0]), 1e-3, ms)
            self.assertGreater(np.abs(main.getcol("UVW")).max(), 100)  # real baselines

    def test_observation_field_and_names(self):
        ms = self.hba[1]  # the second subband
        obs = sub(ms, "OBSERVATION")
        self.assertEqual("LC4_001", obs.getcell("PROJECT", 0))
        self.assertEqual("A test of rtcp", obs.getcell("LOFAR_PROJECT_TITLE", 0))
        self.assertEqual("A. Astronomer", obs.getcell("LOFAR_PROJECT_PI", 0))
        self.assertEqual(["B. One", "C. Two"], list(obs.getcell("LOFAR_PROJECT_CO_I", 0)))
        self.assertEqual(["Cyg A"], list(obs.getcell("LOFAR_TARGET", 0)))
        # A parset without Observation.Beam[0].target: the beam's name, never empty (LINC's
        # getTargetName.py takes LOFAR_TARGET[0]).
        self.assertEqual(["BEAM_0"], list(sub(self.lba[0], "OBSERVATION").getcell("LOFAR_TARGET", 0)))
        self.assertEqual("3", obs.getcell("LOFAR_OBSERVATION_ID", 0))
        self.assertEqual("HBA_JOINED", obs.getcell("LOFAR_ANTENNA_SET", 0))
        self.assertEqual("HBA_110_190", obs.getcell("LOFAR_FILTER_SELECTION", 0))
        self.assertEqual(200.0, obs.getcell("LOFAR_CLOCK_FREQUENCY", 0))
        self.assertEqual(16, obs.getcell("LOFAR_NOF_BITS_PER_SAMPLE", 0))
        self.assertEqual(0, obs.getcell("LOFAR_SUB_ARRAY_POINTING", 0))
        self.assertEqual("L3_SAP000_SB001_uv.MS", obs.getcell("LOFAR_FILENAME", 0))
        self.assertEqual("uv", obs.getcell("LOFAR_FILETYPE", 0))
        start, end = obs.getcell("TIME_RANGE", 0)
        self.assertEqual(start, obs.getcell("LOFAR_OBSERVATION_START", 0))
        self.assertEqual(end, obs.getcell("LOFAR_OBSERVATION_END", 0))
        self.assertAlmostEqual(3.0, end - start, 6)
        # COBALT's frequency range: subband centres (second Nyquist zone) less half a subband.
        width = 200e6 / 1024
        self.assertAlmostEqual((812 * width - width / 2) / 1e6, obs.getcell("LOFAR_OBSERVATION_FREQUENCY_MIN", 0), 9)
        self.assertAlmostEqual((814 * width - width / 2) / 1e6, obs.getcell("LOFAR_OBSERVATION_FREQUENCY_MAX", 0), 9)
        field = sub(ms, "FIELD")
        self.assertEqual("BEAM_0", field.getcell("NAME", 0))
        self.assertEqual([5.24, 0.72], field.getcell("LOFAR_TILE_BEAM_DIR", 0).tolist())  # AnaBeam[0]
        self.assertEqual("SB-1", sub(ms, "SPECTRAL_WINDOW").getcell("NAME", 0))  # index, as LOFAR
        lba_field = sub(self.lba[0], "FIELD")  # no analog beam: the beam itself
        self.assertEqual(lba_field.getcell("PHASE_DIR", 0)[0].tolist(),
                         lba_field.getcell("LOFAR_TILE_BEAM_DIR", 0).tolist())
        antenna = sub(ms, "ANTENNA")
        self.assertEqual(["CS001HBA", "CS002HBA", "RS106HBA", "DE601HBA"], list(antenna.getcol("NAME")))
        np.testing.assert_array_equal(antenna.getcol("POSITION"), antenna.getcol("LOFAR_PHASE_REFERENCE"))
        station = sub(ms, "LOFAR_STATION")
        self.assertEqual(["CS001", "CS002", "RS106", "DE601"], list(station.getcol("NAME")))
        self.assertEqual([0, 0, 1, 2], list(station.getcol("CLOCK_ID")))
        self.assertEqual([0, 1, 2, 3], list(antenna.getcol("LOFAR_STATION_ID")))
        processor = sub(ms, "PROCESSOR")
        self.assertEqual(1, processor.nrows())
        self.assertTrue((tables.table(ms, ack=False).getcol("PROCESSOR_ID") == 0).all())


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    STORAGE_SINK, DATA_DIR = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
