#!/usr/bin/python3
"""Regenerates StationPositions.csv and AntennaElements.csv from LOFAR's own station files.

Usage: make-station-tables.py ANTENNAFIELDS_DIR [ANTENNAFIELDS_DIR ...]

Each ANTENNAFIELDS_DIR holds LOFAR's <STATION>-AntennaField.conf files (ITRF2005 positions at
epoch 2015.5, in either of their two layouts: "3 [ ... ]" or Blitz's "(0,2) [ ... ]"); for a
station in several, the first directory's file is taken. The stations and their numeric IDs
are those of the StationPositions.csv beside this script; a station without a file keeps
its rows (named in the table's header). Writes both tables beside this script and prints,
per station, how far the new field centres lie from the old ones.

parsets/README.md says which LOFAR trees and commits the shipped tables come from.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS = ("LBA", "HBA", "HBA0", "HBA1")


def blocks(text):
    """The file as (name, [numbers]) pairs: a field's centre, then its element offsets
    under the same name; NORMAL_VECTOR and ROTATION_MATRIX blocks are skipped."""
    tokens = []
    for line in text.splitlines():
        line = line.split("#")[0]
        tokens += line.replace("[", " [ ").replace("]", " ] ").split()
    result, name, i = [], None, 0
    while i < len(tokens):
        token = tokens[i]
        if token in ("NORMAL_VECTOR", "ROTATION_MATRIX"):
            name, skip = None, True
            i += 2
        elif token in FIELDS:
            name, skip = token, False
            i += 1
        else:
            skip = name is None
        # The shape ("96 x 2 x 3" or "(0,95) x (0,1) x (0,2)"), then the numbers.
        while i < len(tokens) and tokens[i] != "[":
            i += 1
        end = tokens.index("]", i)
        numbers = [float(t) for t in tokens[i + 1:end]]
        if not skip:
            result.append((name, numbers))
        i = end + 1
    return result


def read_conf(path):
    """{field: (centre [x, y, z], [element [x, y, z], ...])} of one AntennaField.conf:
    the elements absolute (centre + the X dipole's offset; Y's is the same)."""
    with open(path) as f:
        parsed = blocks(f.read())
    fields = {}
    for name, numbers in parsed:
        if len(numbers) == 3 and name not in fields:
            fields[name] = (numbers, [])
        elif len(numbers) % 6 == 0 and name in fields:
            centre = fields[name][0]
            fields[name] = (centre, [[centre[k] + numbers[6 * e + k] for k in range(3)]
                                     for e in range(len(numbers) // 6)])
        else:
            raise ValueError("%s: field %s: unexpected block of %d numbers" % (path, name, len(numbers)))
    return fields


def read_table(name):
    """(header comment lines, column line, rows) of a shipped table."""
    comments, rows, columns = [], [], None
    with open(os.path.join(HERE, name)) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                comments.append(line)
            elif columns is None:
                columns = line
            elif line:
                rows.append(line.split(","))
    return comments, columns, rows


def main(directories):
    _, _, old_positions = read_table("StationPositions.csv")
    _, _, old_elements = read_table("AntennaElements.csv")
    stations = []  # (name, id) in table order
    for station, ident, *_ in old_positions:
        if (station, ident) not in stations:
            stations.append((station, ident))
    sources, missing = {}, []
    for station, _ in stations:
        found = [d for d in directories if os.path.exists(os.path.join(d, station + "-AntennaField.conf"))]
        if found:
            sources[station] = read_conf(os.path.join(found[0], station + "-AntennaField.conf"))
        else:
            missing.append(station)
    kept = ", ".join(missing) if missing else "none"
    positions = [
        "# LOFAR antenna-field phase centres (ITRF2005 metres at epoch 2015.5, as LOFAR's own MSs",
        "# carry them) with numeric station IDs.",
        "# Origin: LOFAR's MAC/Deployment/data/StaticMetaData/AntennaFields/<STATION>-AntennaField.conf",
        "# (GPL-3.0; parsets/README.md names the trees), made by make-station-tables.py; station IDs",
        "# from lofarantpos 0.8 (Apache-2.0) stationinfo.csv.",
        "# Without an AntennaField.conf (ETRS89 from lofarantpos 0.8 etrs-phase-centres.csv, about",
        "# 0.6 m from ITRF2005 at 2015.5): %s." % kept,
        "STATION,ID,FIELD,X,Y,Z"]
    moved = {}
    for station, ident, field, *xyz in old_positions:
        if station in sources:
            if field not in sources[station]:
                raise ValueError("%s: no field %s in its AntennaField.conf" % (station, field))
            centre = sources[station][field][0]
            moved[station + field] = sum((float(a) - b) ** 2 for a, b in zip(xyz, centre)) ** 0.5
            xyz = ["%.3f" % v for v in centre]
        positions.append(",".join([station, ident, field] + xyz))
    elements = [
        "# LOFAR's antenna elements: every LBA dipole and HBA tile of every station, as absolute",
        "# ITRF2005 positions in metres at epoch 2015.5 (the field centre plus the element's offset).",
        "# ELEMENT is LOFAR's antenna number within the field. For core stations the HBA rows hold",
        "# the tiles of both sub-fields: 0-23 are HBA0, 24-47 HBA1.",
        "# Origin: LOFAR's MAC/Deployment/data/StaticMetaData/AntennaFields/<STATION>-AntennaField.conf",
        "# (GPL-3.0; parsets/README.md names the trees), made by make-station-tables.py.",
        "STATION,FIELD,ELEMENT,X,Y,Z"]
    done = set()
    for station, field, element, *xyz in old_elements:
        if station not in sources:
            elements.append(",".join([station, field, element] + xyz))
            continue
        if (station, field) in done:
            continue
        done.add((station, field))
        for e, position in enumerate(sources[station][field][1]):
            elements.append(",".join([station, field, str(e)] + ["%.3f" % v for v in position]))
    for name, lines in (("StationPositions.csv", positions), ("AntennaElements.csv", elements)):
        with open(os.path.join(HERE, name), "w") as f:
            f.write("\n".join(lines) + "\n")
    for key in sorted(moved):
        print("%-10s moved %.3f m" % (key, moved[key]))
    print("kept (no AntennaField.conf): %s" % kept)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
