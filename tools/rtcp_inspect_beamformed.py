"""Beam-formed files for rtcp-inspect: LOFAR's beam-formed HDF5 (ICD 3) as storage-sink
writes them, drawn per tied-array beam (TAB):

  bf_SAP<sap>_B<tab>.png   the dynamic spectrum (Stokes I against time and frequency, as
                           observed: a pulsar's sweep shows), the time series (summed over
                           frequency, incoherently dedispersed at the DM, times referred to
                           the band's highest channel) and, where a pulsar period is known,
                           the folded profile (two periods, phase 0 at the epoch at infinite
                           frequency)
  bf_SAP<sap>_B<tab>.npz   (with --data) the numbers behind each panel

At most MAX_VALUES values of a TAB are read (--max-values), its first rows (the plots say so): observe runs
this after every observation, and a long one's files are a quick look's many times over.
Values are divided by the files' valid fractions (WEIGHT_<component>: what was lost does
not pull the means down; cells with nothing valid are blank). Times come from the file
alone: row n of a TAB starts at COORDINATES' REF_TIME_VALUE (MJD) + COORDINATE_0's
REFERENCE_VALUE + n × INCREMENT seconds (rtcp's files fold the beam former's delays into
these, DESIGN §2.7).

The pulsar (period, epoch, dispersion measure, width) comes from, in this order: the
options (--period, --epoch, --dm); else the parset the file carries
(/SUB_ARRAY_POINTING_<sap>/PROCESS_HISTORY OBSERVATION_PARSET): station-sim's simulated
pulsar Sim.Source[i].pulsar.* nearest to the TAB's direction (its period, epoch — default
the observation's start —, dispersionMeasure and width). Without a period there is no
folded profile. The DM for dedispersion is the pulsar's, else the TAB's own
(DISPERSION_MEASURE). A pulse peaks, at frequency f, at epoch + n × period + k DM / f²
(k = 4.148808e3 s MHz² cm³/pc), as station-sim makes it: folded, it lies at phase 0.
"""

import math
import os
import re

import numpy as np

K_DM = 4.148808e15  # s Hz^2 per (pc / cm^3)
MJD_UNIX_OFFSET = 40587.0 * 86400.0
MAX_TIME_CELLS = 1024  # time cells of a dynamic spectrum at most (rows averaged)
MAX_FREQUENCY_CELLS = 1024  # frequency cells at most (neighbouring columns averaged)
MAX_PROFILE_BINS = 512
MIN_PROFILE_BINS = 8
CHUNK_VALUES = 1 << 22  # values read at a time
MAX_VALUES = 1 << 26  # values of a TAB read at most by default (its first rows): seconds a TAB


def is_beamformed(path):
    return path.endswith(".h5") and os.path.isfile(path)


def find_in_directory(directory, depth=2):
    """MeasurementSets and beam-formed .h5 files in an observation directory (and its
    subdirectories down to `depth`): (ms paths, h5 paths), sorted."""
    ms, h5 = [], []
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        if entry.is_dir():
            if os.path.isfile(os.path.join(entry.path, "table.dat")):
                ms.append(entry.path)
            elif depth > 1 and not entry.name.endswith("_inspect") and entry.name != "plots":
                more_ms, more_h5 = find_in_directory(entry.path, depth - 1)
                ms += more_ms
                h5 += more_h5
        elif entry.name.endswith(".h5"):
            h5.append(entry.path)
    return ms, h5


# --- the parset a file carries -------------------------------------------------------------

def parse_parset(text):
    """key -> value (strings, quotes removed) of a LOFAR parset's `key = value` lines."""
    values = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "=" not in line:
            continue
        key, value = line.split("=", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = value
    return values


def parse_time(value):
    """Unix seconds of an MJD (a number) or a 'YYYY-MM-DD HH:MM:SS[.f]' UTC date."""
    try:
        return float(value) * 86400.0 - MJD_UNIX_OFFSET
    except ValueError:
        pass
    match = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d(?:\.\d*)?)Z?", value.strip())
    if not match:
        raise ValueError("not an MJD nor a 'YYYY-MM-DD HH:MM:SS' date: %r" % value)
    import calendar
    y, mo, d, h, mi = (int(match.group(i)) for i in range(1, 6))
    return calendar.timegm((y, mo, d, h, mi, 0)) + float(match.group(6))


def angular_distance(ra1, dec1, ra2, dec2):
    """Radians between two directions (radians)."""
    c = (math.sin(dec1) * math.sin(dec2) +
         math.cos(dec1) * math.cos(dec2) * math.cos(ra1 - ra2))
    return math.acos(max(-1.0, min(1.0, c)))


class Pulsar:
    """What folding needs: period (s), epoch (Unix s), DM, intrinsic width (s, or None),
    and where it came from."""

    def __init__(self, period, epoch, dm, width, origin):
        self.period, self.epoch, self.dm, self.width, self.origin = period, epoch, dm, width, origin


def simulated_pulsar(parset, ra, dec):
    """station-sim's pulsar (Sim.Source[i].pulsar.*) nearest to the direction (radians),
    or None."""
    start = parset.get("Observation.startTime")
    best = None
    for i in range(int(float(parset.get("Sim.nrSources", "0")))):
        prefix = "Sim.Source[%d]." % i
        period = float(parset.get(prefix + "pulsar.period", "0"))
        if period <= 0:
            continue
        distance = 0.0
        if parset.get(prefix + "directionType", "J2000").upper() == "J2000":
            distance = angular_distance(float(parset.get(prefix + "angle1", "0")),
                                        float(parset.get(prefix + "angle2", "0")), ra, dec)
        epoch_text = parset.get(prefix + "pulsar.epoch", start)
        if epoch_text is None:
            continue
        pulsar = Pulsar(period, parse_time(epoch_text),
                        float(parset.get(prefix + "pulsar.dispersionMeasure", "0")),
                        float(parset.get(prefix + "pulsar.width", "0")) or None,
                        "Sim.Source[%d] of the parset" % i)
        if best is None or distance < best[0]:
            best = (distance, pulsar)
    return best[1] if best else None


# --- the files of one TAB ------------------------------------------------------------------

def text(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.ndarray) and value.shape == ():
        return text(value[()])
    return str(value)


class TabFile:
    """One .h5 of a TAB: a Stokes component over some subbands."""

    def __init__(self, path):
        import h5py
        self.path = path
        with h5py.File(path, "r") as f:
            sap_name = [k for k in f.keys() if k.startswith("SUB_ARRAY_POINTING_")]
            if not sap_name:
                raise ValueError("%s: no SUB_ARRAY_POINTING group (not a beam-formed file)" % path)
            sap = f[sap_name[0]]
            beam_name = [k for k in sap.keys() if k.startswith("BEAM_")][0]
            beam = sap[beam_name]
            self.sap, self.tab = int(sap_name[0][-3:]), int(beam_name[-3:])
            self.observation = text(f.attrs["OBSERVATION_ID"])
            stokes = [k for k in beam.keys() if k.startswith("STOKES_")][0]
            self.component = int(stokes.split("_")[1])
            data = beam[stokes]
            self.component_name = text(data.attrs["STOKES_COMPONENT"])
            self.rows, self.columns = data.shape
            external = data.external
            if not external:
                raise ValueError("%s: %s has no external .raw" % (path, stokes))
            self.raw = os.path.join(os.path.dirname(os.path.abspath(path)), text(external[0][0]))
            self.raw_offset = int(external[0][1])
            self.weight_name = "%s/%s/WEIGHT_%d" % (sap_name[0], beam_name, self.component)
            self.has_weights = ("WEIGHT_%d" % self.component) in beam
            # The valid fractions: external too (<name>.weight.raw), or inside the .h5.
            weight_external = beam["WEIGHT_%d" % self.component].external if self.has_weights \
                else None
            self.weight_raw = (os.path.join(os.path.dirname(os.path.abspath(path)),
                                            text(weight_external[0][0]))
                               if weight_external else None)
            self.weight_offset = int(weight_external[0][1]) if weight_external else 0
            coordinates = beam["COORDINATES"]
            time = coordinates["COORDINATE_0"].attrs
            self.start = (float(coordinates.attrs["REF_TIME_VALUE"]) * 86400.0 - MJD_UNIX_OFFSET +
                          float(time["REFERENCE_VALUE"]) -
                          float(time["REFERENCE_PIXEL"]) * float(time["INCREMENT"]))
            self.dt = float(time["INCREMENT"])
            self.frequencies = np.asarray(coordinates["COORDINATE_1"].attrs["AXIS_VALUES_WORLD"],
                                          dtype=float)
            b = beam.attrs
            self.coherent = text(b["SIGNAL_SUM"]) == "COHERENT"
            self.components = [text(c) for c in b["STOKES_COMPONENTS"]]
            self.nof_stokes = int(b["OBSERVATION_NOF_STOKES"])
            self.tab_dm = float(b["DISPERSION_MEASURE"])
            self.dedispersion = text(b["DEDISPERSION"])
            self.ra, self.dec = math.radians(float(b["POINT_RA"])), math.radians(float(b["POINT_DEC"]))
            self.stations = [text(s) for s in b["STATIONS_LIST"]]
            self.channels = int(b["CHANNELS_PER_SUBBAND"])
            history = sap.get("PROCESS_HISTORY")
            self.parset = text(history.attrs["OBSERVATION_PARSET"]) if history is not None else ""
        if len(self.frequencies) != self.columns:
            raise ValueError("%s: %d frequencies for %d columns" % (path, len(self.frequencies),
                                                                   self.columns))

    def chunks(self):
        """(first row, data[rows][columns], weights[rows][columns]) in chunks of rows."""
        import h5py
        expected = self.raw_offset + self.rows * self.columns * 4
        if not os.path.isfile(self.raw):
            raise ValueError("%s: its samples' file %s is missing" % (self.path, self.raw))
        if os.path.getsize(self.raw) < expected:
            raise ValueError("%s: %s holds %d bytes, the data set needs %d"
                             % (self.path, self.raw, os.path.getsize(self.raw), expected))
        data = np.memmap(self.raw, dtype="<f4", mode="r", offset=self.raw_offset,
                         shape=(self.rows, self.columns)) if self.rows else np.zeros((0, self.columns))
        step = max(1, CHUNK_VALUES // max(1, self.columns))
        with h5py.File(self.path, "r") as f:
            weights = f[self.weight_name] if self.has_weights else None
            if self.weight_raw is not None:
                weights = np.memmap(self.weight_raw, dtype="<f4", mode="r",
                                    offset=self.weight_offset, shape=(self.rows, self.columns)) \
                    if self.rows else np.zeros((0, self.columns))
            for first in range(0, self.rows, step):
                last = min(self.rows, first + step)
                w = (np.asarray(weights[first:last], dtype=np.float64) if weights is not None
                     else np.ones((last - first, self.columns)))
                yield first, np.asarray(data[first:last], dtype=np.float64), w


class Tab:
    """One TAB's files (every Stokes component and part), and what its plots show: Stokes I
    (from I, IQUV's I, or XXYY's voltages) over all its subbands in frequency order."""

    def __init__(self, files, max_values=MAX_VALUES):
        self.files = sorted(files, key=lambda f: (f.component, f.frequencies[0]))
        first = self.files[0]
        self.sap, self.tab, self.observation = first.sap, first.tab, first.observation
        self.coherent, self.dt, self.start = first.coherent, first.dt, first.start
        self.complex_voltage = first.components[0] == "Xr" or first.component_name == "Xr"
        wanted = [0, 1, 2, 3] if self.complex_voltage else [0]
        self.parts = {}  # component -> files in frequency order
        for f in self.files:
            if f.component in wanted:
                self.parts.setdefault(f.component, []).append(f)
        self.missing = [c for c in wanted if c not in self.parts]
        self.total_rows = min(f.rows for f in self.files)
        columns = sum(f.columns for f in self.parts.get(0, self.files))
        self.rows = min(self.total_rows, max(1, max_values // max(1, columns)))
        ref = self.parts.get(0, self.files)
        self.frequencies = np.concatenate([f.frequencies for f in ref])
        self.order = np.argsort(self.frequencies, kind="stable")
        self.frequencies = self.frequencies[self.order]

    def name(self):
        return "SAP%03d_B%03d" % (self.sap, self.tab)

    def stokes_i(self):
        """(first row, I[rows][columns], valid[rows][columns]) chunks, columns in frequency
        order; I as the files hold it (sums), valid the valid fraction."""
        if self.missing:
            raise ValueError("TAB %s: no file of component(s) %s" % (self.name(), self.missing))
        readers = {c: [f.chunks() for f in parts] for c, parts in self.parts.items()}
        while True:
            pieces = {}
            try:
                for c, chunks in readers.items():
                    pieces[c] = [next(chunk) for chunk in chunks]
            except StopIteration:
                return
            first = pieces[0][0][0]
            if first >= self.rows:
                return
            rows = min(min(p[1].shape[0] for ps in pieces.values() for p in ps), self.rows - first)
            valid = np.concatenate([p[2][:rows] for p in pieces[0]], axis=1)
            if self.complex_voltage:
                power = sum(np.concatenate([p[1][:rows] for p in pieces[c]], axis=1) ** 2
                            for c in range(4))
                for c in range(1, 4):
                    valid = np.minimum(valid, np.concatenate([p[2][:rows] for p in pieces[c]], axis=1))
            else:
                power = np.concatenate([p[1][:rows] for p in pieces[0]], axis=1)
            yield first, power[:, self.order], valid[:, self.order]


def group_tabs(paths, max_values=MAX_VALUES):
    """Tabs of the .h5 files, by (observation, SAP, TAB)."""
    groups = {}
    for path in paths:
        f = TabFile(path)
        groups.setdefault((f.observation, f.sap, f.tab), []).append(f)
    return [Tab(files, max_values) for _, files in sorted(groups.items())]


# --- what the plots show -------------------------------------------------------------------

class TabPlot:
    """The numbers behind a TAB's plots."""


def profile_bins(period, dt):
    return int(min(MAX_PROFILE_BINS, max(MIN_PROFILE_BINS, math.floor(period / dt))))


def analyse(tab, pulsar):
    """Reads a TAB once and makes its dynamic spectrum, dedispersed time series and (with a
    period) folded profile."""
    p = TabPlot()
    p.tab, p.pulsar = tab, pulsar
    p.dm = pulsar.dm if pulsar is not None else tab.files[0].tab_dm
    rows, columns = tab.rows, len(tab.frequencies)
    p.time_step = max(1, -(-rows // MAX_TIME_CELLS))  # rows per time cell
    p.frequency_step = max(1, -(-columns // MAX_FREQUENCY_CELLS))
    ntime = -(-rows // p.time_step) if rows else 0
    nfreq = -(-columns // p.frequency_step)
    cell_sum = np.zeros((ntime, nfreq))
    cell_valid = np.zeros((ntime, nfreq))
    column_cell = np.arange(columns) // p.frequency_step
    # Each column's dispersion delay (from infinite frequency, s); the time series takes out
    # its difference from the highest channel's, in whole rows.
    delays = K_DM * p.dm / tab.frequencies ** 2
    p.series_frequency = tab.frequencies.max() if columns else 0.0
    shifts = np.rint((delays - K_DM * p.dm / p.series_frequency ** 2) / tab.dt).astype(int) \
        if columns else np.zeros(0, int)
    most = int(shifts.max()) if columns else 0
    series_sum = np.zeros(rows + most)
    series_valid = np.zeros(rows + most)
    p.bins = profile_bins(pulsar.period, tab.dt) if pulsar is not None else 0
    profile_sum = np.zeros(p.bins)
    profile_valid = np.zeros(p.bins)
    valid_total = 0.0
    for first, power, valid in tab.stokes_i():
        n = power.shape[0]
        row_index = np.arange(first, first + n)
        cell = (row_index // p.time_step)[:, None] * nfreq + column_cell[None, :]
        cell_sum += np.bincount(cell.ravel(), power.ravel(), ntime * nfreq).reshape(ntime, nfreq)
        cell_valid += np.bincount(cell.ravel(), valid.ravel(), ntime * nfreq).reshape(ntime, nfreq)
        valid_total += valid.sum()
        target = row_index[:, None] - shifts[None, :] + most
        series_sum += np.bincount(target.ravel(), power.ravel(), rows + most)
        series_valid += np.bincount(target.ravel(), valid.ravel(), rows + most)
        if pulsar is not None:
            # Each value at its row's middle, less its frequency's dispersion delay.
            times = tab.start + (row_index[:, None] + 0.5) * tab.dt - delays[None, :]
            phase = np.mod((times - pulsar.epoch) / pulsar.period, 1.0)
            index = np.minimum((phase * p.bins).astype(int), p.bins - 1).ravel()
            profile_sum += np.bincount(index, power.ravel(), p.bins)
            profile_valid += np.bincount(index, valid.ravel(), p.bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        p.dynamic_spectrum = np.where(cell_valid > 0, cell_sum / cell_valid, np.nan)  # [time][frequency]
        series = np.where(series_valid > 0, series_sum / series_valid * columns, np.nan)
        p.profile = np.where(profile_valid > 0, profile_sum / profile_valid * columns, np.nan)
    p.valid_fraction = valid_total / (rows * columns) if rows * columns else 0.0
    p.cell_times = tab.start + (np.arange(ntime) * p.time_step + p.time_step / 2) * tab.dt
    p.cell_frequencies = np.array([tab.frequencies[i:i + p.frequency_step].mean()
                                   for i in range(0, columns, p.frequency_step)])
    # The series' sample j: rows' middles, at the highest channel's frequency.
    p.series_times = tab.start + (np.arange(rows + most) - most + 0.5) * tab.dt
    p.series = series
    p.phases = (np.arange(p.bins) + 0.5) / p.bins if p.bins else np.zeros(0)
    p.peak_phase, p.width = profile_shape(p.profile, pulsar.period) if pulsar is not None \
        else (float("nan"), float("nan"))
    return p


def profile_shape(profile, period):
    """The folded pulse's peak phase (-0.5..0.5; the centroid of the bins above half its
    height over the median, around the highest) and its full width at half maximum (s,
    from the half-height crossings, linearly interpolated)."""
    bins = len(profile)
    if bins == 0 or not np.isfinite(profile).any():
        return float("nan"), float("nan")
    values = np.where(np.isfinite(profile), profile, np.nanmedian(profile))
    base = np.median(values)
    peak = int(np.argmax(values))
    height = values[peak] - base
    if height <= 0:
        return float("nan"), float("nan")
    half = base + height / 2
    left = 0
    while left < bins // 2 and values[(peak - left - 1) % bins] > half:
        left += 1
    right = 0
    while right < bins // 2 and values[(peak + right + 1) % bins] > half:
        right += 1
    offsets = np.arange(-left, right + 1)
    weights = values[(peak + offsets) % bins] - half
    centre = peak + float((offsets * weights).sum() / weights.sum())
    phase = ((centre + 0.5) / bins + 0.5) % 1.0 - 0.5

    def crossing(step, count):  # bins from the peak to where the profile falls to half
        inner = values[(peak + step * count) % bins]
        outer = values[(peak + step * (count + 1)) % bins]
        return count + (inner - half) / (inner - outer) if inner != outer else count + 0.5

    width = (crossing(-1, left) + crossing(1, right)) * period / bins
    return phase, width


# --- the plots -----------------------------------------------------------------------------

def plot(p, out, plt, utc):
    """The TAB's PNG; returns its path."""
    tab = p.tab
    panels = 3 if p.pulsar is not None else 2
    fig, axes = plt.subplots(panels, 1, figsize=(11, 3.4 * panels + 1),
                             gridspec_kw={"height_ratios": [2] + [1] * (panels - 1)})
    start = tab.start
    ax = axes[0]
    finite = p.dynamic_spectrum[np.isfinite(p.dynamic_spectrum)]
    vmin, vmax = np.percentile(finite, [1, 99.5]) if finite.size else (0, 1)
    t_edges = edges(p.cell_times - start)
    f_edges = edges(p.cell_frequencies / 1e6)
    if len(t_edges) > 1 and len(f_edges) > 1:
        mesh = ax.pcolormesh(t_edges, f_edges, p.dynamic_spectrum.T, cmap="viridis",
                             vmin=vmin, vmax=vmax, shading="flat")
        fig.colorbar(mesh, ax=ax, label="Stokes I / valid fraction")
    ax.set_xlabel("time since %s (s)" % utc(start))
    ax.set_ylabel("frequency (MHz)")
    ax.set_title("dynamic spectrum (%d row%s a cell, %d channel%s a cell; blank: nothing valid)"
                 % (p.time_step, "" if p.time_step == 1 else "s",
                    p.frequency_step, "" if p.frequency_step == 1 else "s"), fontsize="medium")
    ax = axes[1]
    ax.plot(p.series_times - start, p.series, lw=0.7)
    ax.set_xlabel("time since %s (s)" % utc(start))
    ax.set_ylabel("Stokes I, summed over frequency")
    ax.set_title("time series, dedispersed at DM %.4g pc/cm^3 to %.3f MHz"
                 % (p.dm, p.series_frequency / 1e6) if p.dm else
                 "time series (not dedispersed)", fontsize="medium")
    ax.grid(alpha=0.3)
    if p.pulsar is not None:
        ax = axes[2]
        phases = np.concatenate([p.phases - 1, p.phases, p.phases + 1])
        ax.step(phases, np.concatenate([p.profile] * 3), where="mid")
        ax.set_xlim(-0.5, 1.5)
        ax.set_xlabel("pulse phase (period %.9g s, epoch %s; %d bins)"
                      % (p.pulsar.period, utc(p.pulsar.epoch), p.bins))
        ax.set_ylabel("Stokes I, summed over frequency")
        ax.set_title("folded profile (%s): peak at phase %.4f, FWHM %.3g ms"
                     % (p.pulsar.origin, p.peak_phase, 1e3 * p.width), fontsize="medium")
        ax.grid(alpha=0.3)
    first = tab.files[0]
    read = "" if tab.rows == tab.total_rows else " (the first %d of %d read)" % (
        tab.rows, tab.total_rows)
    fig.suptitle("L%s %s: %s %s%s, %d station%s,\n%d channels from %.3f to %.3f MHz, %d samples "
                 "of %.4g ms%s, %.1f %% valid" % (
                     tab.observation, tab.name(), "coherent" if tab.coherent else "incoherent",
                     "XXYY" if tab.complex_voltage else ("IQUV" if first.nof_stokes == 4 else "I"),
                     ", coherently dedispersed at DM %.4g" % first.tab_dm
                     if first.dedispersion == "COHERENT" else "",
                     len(first.stations), "" if len(first.stations) == 1 else "s",
                     len(tab.frequencies), tab.frequencies.min() / 1e6, tab.frequencies.max() / 1e6,
                     tab.total_rows, 1e3 * tab.dt, read, 100 * p.valid_fraction),
                 fontsize="medium")
    fig.tight_layout()
    path = os.path.join(out, "bf_%s.png" % tab.name())
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def edges(centres):
    """Cell edges around sorted cell centres (half-way between neighbours)."""
    if len(centres) == 0:
        return np.zeros(0)
    if len(centres) == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    middle = (centres[1:] + centres[:-1]) / 2
    return np.concatenate([[2 * centres[0] - middle[0]], middle, [2 * centres[-1] - middle[-1]]])


def save(p, out):
    """The numbers behind the plot, as .npz; returns its path."""
    path = os.path.join(out, "bf_%s.npz" % p.tab.name())
    pulsar = p.pulsar
    np.savez(path, dynamic_spectrum=p.dynamic_spectrum, cell_times=p.cell_times,
             cell_frequencies=p.cell_frequencies, series=p.series, series_times=p.series_times,
             series_frequency=p.series_frequency,
             profile=p.profile, phases=p.phases, peak_phase=p.peak_phase, width=p.width,
             dm=p.dm, start=p.tab.start, dt=p.tab.dt, rows=p.tab.total_rows,
             rows_read=p.tab.rows,
             frequencies=p.tab.frequencies,
             valid_fraction=p.valid_fraction,
             period=pulsar.period if pulsar else np.nan, epoch=pulsar.epoch if pulsar else np.nan)
    return path


def summary_line(p):
    tab, first = p.tab, p.tab.files[0]
    line = "  %-12s %-10s %-5s %4d ch %9.3f-%9.3f MHz %9d x %8.4g ms %6.1f %%  DM %-8.4g %s" % (
        tab.name(), "coherent" if tab.coherent else "incoherent",
        "XXYY" if tab.complex_voltage else ("IQUV" if first.nof_stokes == 4 else "I"),
        len(tab.frequencies), tab.frequencies.min() / 1e6, tab.frequencies.max() / 1e6,
        tab.total_rows, 1e3 * tab.dt, 100 * p.valid_fraction, first.tab_dm,
        "coherent" if first.dedispersion == "COHERENT" else "-")
    if tab.rows < tab.total_rows:
        line += "  (first %d samples read)" % tab.rows
    if p.pulsar is not None:
        line += "  folded: period %.9g s (%s), peak at phase %+.4f, FWHM %.3f ms" % (
            p.pulsar.period, p.pulsar.origin, p.peak_phase, 1e3 * p.width)
    return line


def pulsar_of(tab, options):
    """The pulsar to fold a TAB at (see the module's text), or None."""
    first = tab.files[0]
    simulated = simulated_pulsar(parse_parset(first.parset), first.ra, first.dec) \
        if first.parset else None
    period = options.period if options.period else (simulated.period if simulated else None)
    if not period:
        return None
    origin = "--period" if options.period else simulated.origin
    if options.epoch is not None:
        epoch = parse_time(options.epoch)
    elif simulated is not None:
        epoch = simulated.epoch
    else:
        epoch = tab.start
    dm = options.dm if options.dm is not None else (simulated.dm if simulated else first.tab_dm)
    return Pulsar(period, epoch, dm, simulated.width if simulated else None, origin)


def inspect(paths, out, options, plt, utc, log):
    """Plots of every TAB of the .h5 files; returns (paths written, overview lines)."""
    tabs = group_tabs(paths, options.max_values or MAX_VALUES)
    written, lines = [], ["Beam-formed TABs (%d, %d files): per TAB its signal, Stokes, channels "
                          "and band, samples, valid data, DM and dedispersion"
                          % (len(tabs), len(paths))]
    for tab in tabs:
        pulsar = pulsar_of(tab, options)
        p = analyse(tab, pulsar)
        written.append(plot(p, out, plt, utc))
        if options.data:
            written.append(save(p, out))
        lines.append(summary_line(p))
        if p.valid_fraction == 0:
            log("TAB %s: nothing valid" % tab.name())
    return written, lines
