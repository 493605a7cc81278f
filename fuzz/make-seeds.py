#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/) from the project's
test data; fuzz_link_calls writes its own (RTCP_FUZZ_WRITE_SEEDS, fuzz/README.md).

    fuzz/make-seeds.py        # from the top of the source tree
"""
import os
import shutil
import struct

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(TOP, "fuzz", "corpus")


def target(name):
    path = os.path.join(CORPUS, name)
    os.makedirs(path, exist_ok=True)
    return path


def save(directory, name, data):
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def parset_seeds():
    d = target("fuzz_parset")
    for name in ("parsets/demo.parset", "parsets/ie613.parset"):
        shutil.copy(os.path.join(TOP, name), d)
    # A production SAS specification, cut to the libFuzzer input size (16 KiB).
    with open(os.path.join(TOP, "test/data/lofar-parsets/task_spec_78958.parset"), "rb") as f:
        save(d, "task_spec_78958-head.parset", f.read(16384))
    with open(os.path.join(TOP, "parsets/demo.parset"), "rb") as f:
        demo = f.read()
    # Parset faults found before (fuzz/README.md, "Faults found"), each on the demo parset.
    faults = {
        "huge-repeat": b"Observation.Beam[0].subbandList = [1000000*1000000*300]\n",
        "year-4000": b"Observation.stopTime = '4000-01-01 00:00:00'\n",
        "year-1600": b"Observation.startTime = '1600-01-01 00:00:00'\n",
        "buffer-1e9": b"OLAP.nrSecondsOfBuffer = 1e9\n",
        "bits-clock": b"Observation.nrBitsPerSample = 12\nObservation.sampleClock = 100\n",
        "range-overflow": b"Observation.Beam[0].subbandList = [-9000000000000000000..9000000000000000000]\n",
    }
    for name, extra in faults.items():
        save(d, name + ".parset", demo + extra)


def rsp_seeds():
    """IE613's first 32 packets of port 0, cut to the 4 beamlets the target observes."""
    d = target("fuzz_station_input")
    with open(os.path.join(TOP, "test/data/ie613-capture/udp_16130.rsp"), "rb") as f:
        capture = f.read()
    size = 16 + 122 * 16 * 4  # 8-bit, 122 beamlets
    packets = []
    for i in range(32):
        p = bytearray(capture[i * size:(i + 1) * size])
        p[6] = 4  # nrBeamlets
        packets.append(bytes(p[:16 + 4 * 16 * 4]))
    save(d, "ie613-in-order", b"".join(packets))
    reordered = packets[:]
    reordered[3], reordered[4] = reordered[4], reordered[3]
    save(d, "ie613-reordered-duplicate-gap", b"".join(reordered[:10] + reordered[9:12] + reordered[20:]))
    # Ten packets 10^6 s ahead first (the far-future case of input_faults_test), then the real ones.
    future = []
    for p in packets[:10]:
        q = bytearray(p)
        struct.pack_into("<I", q, 8, struct.unpack_from("<I", q, 8)[0] + 1000000)
        future.append(bytes(q))
    save(d, "ie613-far-future-first", b"".join(future + packets))


def crc64_xz(data):
    crc = 0xFFFFFFFFFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0xC96C5795D7870F42 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFFFFFFFFFF


def block(obs=1001, subband=0, stations=2, channels=4, integration=0, fill=1, crc=None):
    baselines = stations * (stations + 1) // 2
    cells = baselines * channels
    payload = struct.pack("<%df" % (cells * 8), *[fill * 0.5] * (cells * 8))
    payload += struct.pack("<%dI" % cells, *[3] * cells)
    header = struct.pack("<IHHQIIIIQQQQ", 0x50435452, 1, 64, obs, subband, stations, channels, 4,
                         integration, len(payload), crc64_xz(payload) if crc is None else crc, 0)
    return header + payload


def storage_seeds():
    """Blocks of the target's observation (1001; CS001, CS002; 4 channels; subbands 150, 151 as indices 0, 1)."""
    d = target("fuzz_storage_blocks")
    save(d, "two-good-blocks", block() + block(subband=1, integration=3, fill=2))
    save(d, "bad-checksum-then-good", block(crc=1) + block(integration=1))
    save(d, "wrong-shape-then-good", block(stations=3) + block(integration=2))
    save(d, "other-observation", block(obs=7))
    save(d, "truncated", block()[:300])


if __name__ == "__main__":
    parset_seeds()
    rsp_seeds()
    storage_seeds()
