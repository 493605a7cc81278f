#!/usr/bin/python3
"""Online flagging on the real IE613 capture (test/data/ie613-capture/, parsets/ie613.parset:
one HBA station, 5.2 ms; here 100 of its 488 subbands, chosen with beamletList) through the
real observe, with OLAP.CNProc.onlineFlagging and the pre-correlation flagger on (16
channels, blocks of 16 spectra: each block's cells are its channels, so the flagger judges
a channel against the other 14 of its subband and block).

The capture's known interference, from its own spectra (raw_spectra(): the raw samples of
the whole capture, 16 channels as the chain makes them, both polarisations, 64 spectra):
FM broadcast transmitters below 108 MHz, outside the HBA 110-190 MHz filter but strong
enough to leak through it, and inside the band narrow lines (165.6 MHz: 2.8 times its
subband's median channel; 184.4 MHz). KNOWN_CARRIERS lists every channel-block of the
capture whose power in that block is 10 times its subband's median channel or more (the
test checks the list against the spectra): the FM carriers at 103.88-103.91, 105.55-105.63,
106.92 and 107.58-107.63 MHz, 26 channel-blocks in 14 channels (a carrier moves between
channels from block to block). An FM signal fills most of its subband's channels (subband
29: 8 of 15 above twice the quiet ones), so the flagger takes the noise of the integrated
spectrum from the radiometer equation, not from the channels' spread
(correlator/SpectrumNoise.h). Asserted:
- the flagged fraction per subband is what the MSs hold (FLAG, channels 1..15, blocks 1-3),
  and rtcp-inspect's overview reports each MS's;
- the known carriers: at least 95 % of them flagged;
- the line at 165.6 MHz is flagged in every block;
- in the quiet band (120-160 MHz, no channel above 2 times its subband's median) at most 1 %
  of the channel-blocks are flagged;
- the summary gives the station's pre-correlation flagged fraction.
- subband 40 (107.8 MHz) flagged whole in every block: an FM transmitter raises every one
  of its channels (the quietest 1157 times the median channel of the subbands two beyond;
  in subbands 29 and 39, 77 and 121 times), which a flagger judging a channel within its
  subband sees flat; the view across subbands in ionproc's input sees it (the capture's
  power per subband: 29, 39, 40 are 31-33 dB above the running median of their
  neighbours', input/SubbandLevelFlagger.h), and the summary counts its subband-blocks;
- no subband of the quiet band, of the HBA filter's slope (110-116 MHz, subbands 51-71) or
  at the ends of the observed band (subbands 12, 13, 433, 434) flagged whole.
Measured, not asserted: 26 of 26 known carriers flagged (6 with the noise taken from the
channels' spread), none of the quiet band's 1350 channel-blocks.
A plot (the raw spectrum with the flagged channels and the known carriers marked, the
flagged fraction per subband) goes to
BUILD/test-output/ie613_flagging_test/ie613_flags.png, the figures into the log.

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
# The capture's FM carriers, (subband, block, channel, MHz at the channel's centre): every
# channel-block of the capture whose raw power in that block (raw_block_spectra: the
# samples the chain's block holds) is 10 times its subband's median channel over the whole
# capture or more, found by that rule over all 488 subbands (the test checks it). An FM
# carrier moves between channels from block to block (its audio), so the list is per block.
# Channel c of subband s is centred at 100 + (s + (c - 8) / 16) 0.1953125 MHz.
KNOWN_CARRIERS = [
    (20, 1, 8, 103.906), (20, 2, 7, 103.894), (20, 2, 8, 103.906), (20, 3, 6, 103.882),
    (28, 1, 15, 105.554), (28, 2, 15, 105.554), (28, 3, 15, 105.554),
    (29, 1, 3, 105.603), (29, 1, 4, 105.615), (29, 1, 5, 105.627), (29, 2, 3, 105.603),
    (29, 2, 4, 105.615), (29, 2, 5, 105.627), (29, 3, 2, 105.591), (29, 3, 3, 105.603),
    (29, 3, 4, 105.615), (29, 3, 5, 105.627),
    (35, 3, 15, 106.921),
    (39, 1, 6, 107.593), (39, 1, 7, 107.605), (39, 2, 5, 107.581), (39, 2, 6, 107.593),
    (39, 2, 7, 107.605), (39, 3, 7, 107.605), (39, 3, 8, 107.617), (39, 3, 9, 107.629)]


def note(message):
    print("tIe613Flagging: " + message, file=sys.stderr)


def raw_spectra():
    """Power [subband index][channel] of the capture, X + Y, 16-point FFTs of its samples
    (channel c at (c - 8) / 16 of the subband width from its centre, as the chain's)."""
    spectra = []
    for port in range(4):
        power = 0
        for pol in port_samples(port):
            blocks = pol[:, : pol.shape[1] // CHANNELS * CHANNELS].reshape(BEAMLETS, -1, CHANNELS)
            power = power + (np.abs(np.fft.fftshift(np.fft.fft(blocks, axis=2), axes=2)) ** 2).mean(1)
        spectra.append(power)
    return np.concatenate(spectra)


def port_samples(port):
    """X and Y of one port's file: [beamlet][sample] complex."""
    path = os.path.join(SOURCE, "test", "data", "ie613-capture", "udp_1613%d.rsp" % port)
    raw = np.fromfile(path, dtype=np.int8)
    packet = 16 + BEAMLETS * 16 * 4
    n = len(raw) // packet
    payload = raw[: n * packet].reshape(n, packet)[:, 16:].reshape(n, BEAMLETS, 16, 4)
    samples = payload.astype(np.float64)
    x = (samples[..., 0] + 1j * samples[..., 1]).transpose(1, 0, 2).reshape(BEAMLETS, -1)
    y = (samples[..., 2] + 1j * samples[..., 3]).transpose(1, 0, 2).reshape(BEAMLETS, -1)
    return x, y


def raw_block_spectra():
    """Power [subband index][block 1..3][channel], X + Y, of the samples the chain's blocks
    hold: block b (256 samples from observation sample 256 b) has 16 spectra, spectrum s
    from the 16-tap filter over samples [256 b + 16 s - 240, 256 b + 16 s + 16), centred on
    the 16 samples from 256 b + 16 s - 120; the capture starts at observation sample 10
    (port 2: -6), so spectrum s is here the FFT of capture samples from 256 b + 16 s - 130
    (port 2: - 114). Correlates with the chain's own autocorrelations to 0.9-0.99."""
    spectra = []
    for port in range(4):
        x, y = port_samples(port)
        first = -130 + (16 if port == 2 else 0)
        blocks = np.zeros((BEAMLETS, 3, CHANNELS))
        for b in range(1, 4):
            start = 256 * b + first
            for pol in (x, y):
                frames = pol[:, start:start + 256].reshape(BEAMLETS, 16, CHANNELS)
                blocks[:, b - 1] += (np.abs(np.fft.fftshift(np.fft.fft(frames, axis=2), axes=2))
                                     ** 2).mean(1)
        spectra.append(blocks)
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
        quiet_flagged = quiet_total = 0
        for i, ((number, lost_blocks), flag) in enumerate(zip(subbands, flags)):
            data = flag[~lost_blocks]
            self.assertGreaterEqual(len(data), 2, "subband %d: no block with data" % number)
            fraction[i] = data.mean()
            if relative[i].max() >= 10 or data.any():
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
        note("quiet band 120-160 MHz: %d of %d channel-blocks flagged (%.3f %%)"
             % (quiet_flagged, quiet_total, 100.0 * quiet_flagged / max(quiet_total, 1)))

        # The plot, kept in the test's output directory.
        out = os.path.join(BUILD, "test-output", "ie613_flagging_test")
        os.makedirs(out, exist_ok=True)
        self.plot(os.path.join(out, "ie613_flags.png"), frequency, spectra, flags, subbands,
                  fraction)
        note("plot: " + os.path.join(out, "ie613_flags.png"))

        # The known carriers: the list is the capture's, and 95 % of them flagged.
        whole = raw_spectra()[:, 1:]
        blocks = raw_block_spectra()[:, :, 1:]
        loud = np.argwhere(blocks / np.median(whole, axis=1)[:, None, None] >= 10)
        self.assertEqual([(i + FIRST_SUBBAND, b + 1, c + 1) for i, b, c in loud],
                         [(sb, b, c) for sb, b, c, _ in KNOWN_CARRIERS])
        by_number = {number: flag for (number, _), flag in zip(subbands, flags)}
        hits = [bool(by_number[sb][b, c - 1]) for sb, b, c, _ in KNOWN_CARRIERS]
        note("known FM carriers flagged: %d of %d (missed: %s)" % (
            sum(hits), len(hits), ", ".join("%.3f MHz in block %d" % (mhz, b) for
                                            (_, b, _, mhz), hit in zip(KNOWN_CARRIERS, hits)
                                            if not hit) or "none"))
        self.assertGreaterEqual(sum(hits), 0.95 * len(hits))
        by_number = {number: flag[1:] for (number, _), flag in zip(subbands, flags)}
        line = by_number[336][:, 7]  # channel 8
        note("165.6 MHz line (subband 336, channel 8) flagged in %d of 3 blocks" % line.sum())
        self.assertEqual(line.sum(), 3)
        self.assertGreater(quiet_total, 1000)
        self.assertLessEqual(quiet_flagged, 0.01 * quiet_total)
        # Whole subbands: the FM-filled 40 in every block; none of the quiet band, the HBA
        # filter's slope or the observed band's ends.
        whole = {number for (number, lost), flag in zip(subbands, flags) if flag[~lost].all()}
        note("subbands flagged whole in every block: %s" % sorted(whole))
        self.assertIn(40, whole)
        for i, (number, _) in enumerate(subbands):
            if 120 <= frequency[i] <= 160 or 51 <= number <= 71 or number in (12, 13, 433, 434):
                self.assertNotIn(number, whole, "subband %d flagged whole" % number)

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
        note("summary: %d subband-blocks far above the bandpass (%.3f %% of the samples)"
             % (station["subbandLevelFlaggedBlocks"], 100 * station["subbandLevelFlagged"]))
        self.assertGreaterEqual(station["subbandLevelFlaggedBlocks"], 3)  # subband 40's
        self.assertLess(station["subbandLevelFlagged"], 0.1)

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
        numbers = [number for number, _ in subbands]
        known = sorted({(numbers.index(sb), c) for sb, _, c, _ in KNOWN_CARRIERS})
        top.plot([frequency[i] + channel[c - 1] for i, c in known],
                 [10 * np.log10(spectra[i, c - 1]) for i, c in known], "o", mfc="none",
                 color="blue", markersize=8,
                 label="known FM carriers (in some block 10 x the subband's median)")
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
