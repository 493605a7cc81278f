#!/usr/bin/python3
"""Online flagging on the real IE613 capture (test/data/ie613-capture/, parsets/ie613.parset:
one HBA station, 5.2 ms; here 100 of its 488 subbands, chosen with beamletList) through the
real observe, with OLAP.CNProc.onlineFlagging and the pre-correlation flagger on (16
channels, blocks of 16 spectra: each block's cells are its channels, so the flagger judges
a channel against the other 14 of its subband and block).

The capture's known interference, from its own spectra (computed here from the raw
samples, 16 channels as the chain makes them, both polarisations): FM broadcast
transmitters below 108 MHz, outside the HBA 110-190 MHz filter but strong enough to leak
through it (105.66 MHz: a carrier 144 times its subband's median channel; 107.6 MHz; weaker
ones from 103.5 MHz), and inside the band narrow lines (165.6 MHz: 2.8 times its
subband's median channel; 184.4 MHz). Asserted:
- the flagged fraction per subband is what the MSs hold (FLAG, channels 1..15, blocks 1-3),
  and rtcp-inspect's overview reports each MS's;
- the line at 165.6 MHz is flagged in every block, and the strongest FM carrier (105.66 MHz)
  in two of the three;
- in the quiet band (120-160 MHz, no channel above 2 times its subband's median) at most 1 %
  of the channel-blocks are flagged (none of 1350, measured);
- the summary gives the station's pre-correlation flagged fraction.
Measured and reported, not asserted: of the channel-blocks whose raw power is 10 times their
subband's median or more (the FM carriers), 6 of 27 are flagged. An FM signal spreads over
most of its subband's channels, and a subband's robust statistics from 15 channels then
follow it (output/README.md, correlator/README.md: a view across subbands would see it).
A plot (the raw spectrum with the flagged channels marked, the flagged fraction per subband)
goes to BUILD/test-output/ie613_flagging_test/ie613_flags.png, the figures into the log.

Usage: tIe613Flagging.py BUILD_DIR
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from casacore.tables import table  # noqa: E402

BUILD = None
SOURCE = os.environ.get("RTCP_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CHANNELS = 16
BEAMLETS = 122
FIRST_SUBBAND = 12


def note(message):
    print("tIe613Flagging: " + message, file=sys.stderr)


def raw_spectra():
    """Power [subband index][channel] of the capture, X + Y, 16-point FFTs of its samples
    (channel c at (c - 8) / 16 of the subband width from its centre, as the chain's)."""
    spectra = []
    for port in range(4):
        path = os.path.join(SOURCE, "test", "data", "ie613-capture", "udp_1613%d.rsp" % port)
        raw = np.fromfile(path, dtype=np.int8)
        packet = 16 + BEAMLETS * 16 * 4
        n = len(raw) // packet
        payload = raw[: n * packet].reshape(n, packet)[:, 16:].reshape(n, BEAMLETS, 16, 4)
        samples = payload.astype(np.float64)
        x = (samples[..., 0] + 1j * samples[..., 1]).transpose(1, 0, 2).reshape(BEAMLETS, -1)
        y = (samples[..., 2] + 1j * samples[..., 3]).transpose(1, 0, 2).reshape(BEAMLETS, -1)
        power = 0
        for pol in (x, y):
            blocks = pol[:, : pol.shape[1] // CHANNELS * CHANNELS].reshape(BEAMLETS, -1, CHANNELS)
            power = power + (np.abs(np.fft.fftshift(np.fft.fft(blocks, axis=2), axes=2)) ** 2).mean(1)
        spectra.append(power)
    return np.concatenate(spectra)


class Ie613FlaggingTest(unittest.TestCase):
    def test_known_interference_flagged(self):
        work = tempfile.mkdtemp(prefix="rtcp-ie613-flagging-")
        self.addCleanup(shutil.rmtree, work, True)
        shipped = os.path.join(SOURCE, "parsets", "ie613.parset")
        with open(shipped) as f:
            text = f.read()
        text = text.replace("localhost:ie613-output/L613", "localhost:" + work + "/ms")
        text = text.replace("file:../", "file:" + os.path.abspath(SOURCE) + "/")
        # A share of the band, to keep the test short: the FM band's edge and the filter's
        # lower edge (subbands 12-71, beamlets 0-59 of port 0), a quiet stretch (150-179),
        # and the lines at 165.6 and 184.4 MHz (334-338, 430-434); beamlet g is slot
        # g % 122 of port g / 122, and carries subband 12 + g.
        chosen = list(range(12, 72)) + list(range(150, 180)) + list(range(334, 339)) + \
            list(range(430, 435))
        text = re.sub(r"Observation.Beam\[0\].subbandList = .*",
                      "Observation.Beam[0].subbandList = [%s]\n"
                      "Observation.Beam[0].beamletList = [%s]"
                      % (", ".join(map(str, chosen)), ", ".join(str(sb - 12) for sb in chosen)),
                      text)
        text += ("OLAP.CNProc.onlineFlagging = T\n"
                 "OLAP.CNProc.onlinePreCorrelationFlagging = T\n")
        parset = os.path.join(work, "ie613-flagging.parset")
        with open(parset, "w") as f:
            f.write(text)
        obs = os.path.join(work, "obs")
        with open(os.path.join(work, "observe.log"), "w") as log:
            code = subprocess.run([os.path.join(BUILD, "observe", "observe"), parset, "--dir", obs,
                                   "--keep-going-seconds", "5"], stdout=log,
                                  stderr=subprocess.STDOUT, timeout=600).returncode
        with open(os.path.join(work, "observe.log")) as log:
            self.assertEqual(code, 0, log.read()[-3000:])

        # What the MSs hold: [subband index][block][channel] flagged, blocks with data only.
        flags, subbands = [], []
        for name in sorted(os.listdir(os.path.join(work, "ms"))):
            if not name.endswith(".MS"):
                continue
            number = chosen[int(re.search(r"_SB(\d+)_", name).group(1))]  # SB: the index
            ms = table(os.path.join(work, "ms", name), ack=False)
            flag = ms.getcol("FLAG")[:, :, 0].astype(bool)  # [row][channel], one station: rows = blocks
            ms.close()
            # Block 0 is the filter's history before the capture (lost, flagged); blocks
            # 1-3 hold data (parsets/ie613.parset), whatever the flagger made of them.
            lost = np.arange(len(flag)) == 0
            flags.append(flag[:, 1:])
            subbands.append((number, lost))
        self.assertEqual(len(flags), len(chosen))
        index = np.array([number for number, _ in subbands]) - FIRST_SUBBAND
        spectra = raw_spectra()[index, 1:]  # channels 1..15
        relative = spectra / np.median(spectra, axis=1, keepdims=True)
        frequency = ((index + FIRST_SUBBAND) * 200e6 / 1024) / 1e6 + 100
        count = len(index)

        fraction = np.zeros(count)
        strong_hit = strong_total = quiet_flagged = quiet_total = 0
        for i, ((number, lost_blocks), flag) in enumerate(zip(subbands, flags)):
            data = flag[~lost_blocks]
            self.assertGreaterEqual(len(data), 2, "subband %d: no block with data" % number)
            fraction[i] = data.mean()
            strong = relative[i] >= 10
            strong_total += int(strong.sum()) * len(data)
            strong_hit += int(data[:, strong].sum())
            if strong.any() or data.any():
                note("subband %d: raw channel power / median %s; flagged blocks per channel %s"
                     % (number, np.round(relative[i], 1).tolist(), data.sum(axis=0).tolist()))
            if 120 <= frequency[i] <= 160 and relative[i].max() < 2:
                quiet_total += data.size
                quiet_flagged += int(data.sum())
        note("flagged fraction per subband: mean %.2f %%, median %.2f %%, max %.1f %% "
             "(subband %d, %.2f MHz)" % (100 * fraction.mean(), 100 * np.median(fraction),
                                        100 * fraction.max(), subbands[int(fraction.argmax())][0],
                                        frequency[fraction.argmax()]))
        worst = np.argsort(-fraction)[:12]
        note("most flagged subbands: " + ", ".join(
            "%d (%.2f MHz) %.0f %%" % (subbands[i][0], frequency[i], 100 * fraction[i])
            for i in worst))
        note("FM carriers (raw channel power >= 10 x the subband's median): %d of %d channel-blocks "
             "flagged" % (strong_hit, strong_total))
        note("quiet band 120-160 MHz: %d of %d channel-blocks flagged (%.3f %%)"
             % (quiet_flagged, quiet_total, 100.0 * quiet_flagged / max(quiet_total, 1)))

        # The plot, kept in the test's output directory.
        out = os.path.join(BUILD, "test-output", "ie613_flagging_test")
        os.makedirs(out, exist_ok=True)
        self.plot(os.path.join(out, "ie613_flags.png"), frequency, spectra, flags, subbands,
                  fraction)
        note("plot: " + os.path.join(out, "ie613_flags.png"))

        self.assertGreater(strong_total, 0)
        by_number = {number: flag[1:] for (number, _), flag in zip(subbands, flags)}
        line, carrier = by_number[336][:, 7], by_number[29][:, 3]  # channels 8 and 4
        note("165.6 MHz line (subband 336, channel 8) flagged in %d of 3 blocks; 105.66 MHz FM "
             "carrier (subband 29, channel 4) in %d of 3" % (line.sum(), carrier.sum()))
        self.assertEqual(line.sum(), 3)
        self.assertGreaterEqual(carrier.sum(), 2)
        self.assertGreater(quiet_total, 1000)
        self.assertLessEqual(quiet_flagged, 0.01 * quiet_total)

        # rtcp-inspect's overview (observe runs it) reports each MS's flagged fraction.
        path = os.path.join(obs, "plots", "overview.txt")
        if not os.path.exists(path):
            path = os.path.join(obs, "msoverview.txt")
        with open(path) as f:
            overview = f.read()
        self.assertIn("flagged", overview)
        # The summary: the station's fraction flagged before correlation.
        with open(os.path.join(obs, "summary.json")) as f:
            summary = json.load(f)
        station = summary["stations"][0]
        note("summary: %s pre-correlation flagged %.3f %%" % (station["name"],
                                                             100 * station["preCorrelationFlagged"]))
        self.assertGreater(station["preCorrelationFlagged"], 0)
        self.assertLess(station["preCorrelationFlagged"], 0.5)
        self.assertTrue(any("pre-correlation flagging" in line for line in summary["flagging"]))

    @staticmethod
    def plot(path, frequency, spectra, flags, subbands, fraction):
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(14, 8), sharex=True,
                                          gridspec_kw={"height_ratios": [2, 1]})
        width = 200e6 / 1024 / 1e6
        channel = (np.arange(1, CHANNELS) - CHANNELS // 2) / CHANNELS * width
        f = (frequency[:, None] + channel[None, :]).ravel()
        level = 10 * np.log10(spectra.ravel())
        flagged = np.array([flag[~lost].mean(axis=0) for (_, lost), flag in zip(subbands, flags)])
        top.plot(f, level, ",", color="0.3", label="channel power (raw samples, X + Y)")
        hit = flagged.ravel() > 0
        top.plot(f[hit], level[hit], ".", color="red", markersize=3,
                 label="flagged online in some block")
        top.set_ylabel("dB")
        top.legend(loc="upper right")
        top.set_title("IE613 capture (2022-06-29 01:30 UTC, HBA 110-190 MHz): pre-correlation "
                      "flags (16 channels, blocks of 16 spectra)")
        bottom.plot(frequency, 100 * fraction, drawstyle="steps-mid")
        bottom.set_ylabel("flagged per subband (%)")
        bottom.set_xlabel("frequency (MHz)")
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)


if __name__ == "__main__":
    BUILD = os.path.abspath(sys.argv.pop(1))
    unittest.main()
