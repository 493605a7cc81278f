#!/usr/bin/env python3
"""observe --console in a short live observation (observe/README.md, "The console").

Four simulated stations in real time, the console on; the test plays the stations itself
(two station-sims, observe --no-station-sim) so that one of them, RS205, stops sending 3 s
into the observation. It checks:
- headless Chromium (Debian's chromium) renders the page: the station names, packet counts
  and the ranks' real-time factors are in the DOM and the counts grow from one load to the
  next; a screenshot is saved beside the test's output (observe_console_test/console.png);
- RS205 shows as losing packets in /status.json within 2 s of its last packet, and the
  other stations do not;
- hostile clients during the observation (10 000 connections opened and left idle, a
  header of up to 1 GB, garbage) leave it with nothing lost: the other stations lose no
  packet, no block or integration is dropped;
- after the end, /status.json carries summary.json's figures (--console-linger) and the
  page says the observation has ended; observe's own CPU with the console on.

Usage: tConsole.py BUILD_DIR OUTPUT_DIR
"""
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

BUILD, OUTPUT = sys.argv[1], sys.argv[2]
STATIONS = ["CS001", "CS002", "RS106", "RS205"]
STOPPING = "RS205"
SECONDS = 16
STOP_AFTER = 3  # RS205's station-sim sends this many seconds


def free_port(kind):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def utc(t):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def parset(start, ports, stations, directory):
    lines = [
        "Observation.ObsID = 4242",
        f"Observation.startTime = '{utc(start)}'",
        f"Observation.stopTime = '{utc(start + SECONDS)}'",
        "Observation.antennaSet = LBA_OUTER", "Observation.bandFilter = LBA_30_90",
        "Observation.VirtualInstrument.stationList = [" + ", ".join(stations) + "]",
        "Observation.channelsPerSubband = 16", "Observation.nrBeams = 1",
        "Observation.Beam[0].angle1 = 5.2336866848", "Observation.Beam[0].angle2 = 0.7109425145",
        "Observation.Beam[0].subbandList = [300, 301]",
        "Observation.referencePhaseCenter = [3826577.066, 461022.948, 5064892.786]",
    ]
    lines += [f"PIC.Core.{s}LBA.RSP.ports = [udp:127.0.0.1:{ports[s]}]" for s in stations]
    lines += [
        "OLAP.CNProc.integrationSteps = 3051",  # 16 x 3051 samples: 0.25 s blocks
        "OLAP.IONProc.integrationSteps = 2", "OLAP.realTime = T", "OLAP.delayCompensation = T",
        f"Observation.DataProducts.Output_Correlated.locations = [localhost:{directory}/ms]",
        "Sim.nrSources = 1", "Sim.Source[0].angle1 = 5.2336866848",
        "Sim.Source[0].angle2 = 0.7109425145", "Sim.Source[0].flux = 4",
        "Sim.noisePower = 1.0", "Sim.seed = 3",
    ]
    return "\n".join(lines) + "\n"


def get(url, timeout=3):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read().decode()


def status(url):
    try:
        return json.loads(get(url + "status.json"))
    except (OSError, ValueError):
        return None


def chromium(url, profile, screenshot=None):
    """The DOM Chromium renders of the page (and a screenshot)."""
    command = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-dev-shm-usage", f"--user-data-dir={profile}",
               "--virtual-time-budget=1500", "--window-size=1400,2000"]
    command += [f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
    result = subprocess.run(command + [url], capture_output=True, text=True, timeout=90)
    if result.returncode != 0:
        raise RuntimeError(f"chromium failed ({result.returncode}): {result.stderr[-2000:]}")
    return result.stdout


def station_row(dom, name):
    """The cells of a station's row in the rendered table: {class: text}."""
    at = dom.find(f'data-station="{name}"')
    assert at >= 0, f"{name} not in the rendered page"
    row = dom[at:dom.find("</tr>", at)]
    cells = {}
    for part in row.split("<td")[1:]:
        cls = part.split('class="', 1)[1].split('"', 1)[0].split()[0]
        cells[cls] = part.split(">", 1)[1].split("</td>", 1)[0]
    return cells


def rank_factors(dom):
    factors = []
    for part in dom.split('data-rank="')[1:]:
        row = part[:part.find("</tr>")]
        cell = row.split('class="rtf')[1].split(">", 1)[1].split("</td>", 1)[0]
        factors.append(cell)
    return factors


def console_cpu(pid):
    """CPU seconds of observe's console thread (named rtcp-console) so far."""
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                if f.read().strip() != "rtcp-console":
                    continue
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            continue
    raise AssertionError("no rtcp-console thread in observe")


def hostile(port, results):
    """10 000 idle connections, a header of up to 1 GB, garbage."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, 10400)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    idle = []
    for _ in range(min(10000, wanted - 300)):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            continue
        idle.append(s)
    results["idle"] = len(idle)
    huge = socket.create_connection(("127.0.0.1", port))
    sent = 0
    try:
        huge.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Huge: ")
        chunk = b"a" * (1 << 20)
        while sent < (1 << 30):
            huge.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass
    huge.close()
    results["hugeBytes"] = sent
    garbage = socket.create_connection(("127.0.0.1", port), timeout=3)
    garbage.sendall(bytes(range(256)) * 16 + b"\r\n\r\n")
    try:
        results["garbage"] = garbage.recv(200).split(b"\r\n")[0].decode()
    except OSError as e:
        results["garbage"] = str(e)
    garbage.close()
    time.sleep(2)
    for s in idle:
        s.close()


def main():
    os.makedirs(OUTPUT, exist_ok=True)
    work = tempfile.mkdtemp(prefix="rtcp-console-")
    try:
        run(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work):
    ports = {s: free_port(socket.SOCK_DGRAM) for s in STATIONS}
    start = int(time.time()) + 10
    start += start % 2  # an even second
    directory = os.path.join(work, "L4242")
    with open(os.path.join(work, "obs.parset"), "w") as f:
        f.write(parset(start, ports, STATIONS, directory))
    steady = [s for s in STATIONS if s != STOPPING]
    for name, stations in (("steady", steady), ("stopping", [STOPPING])):
        with open(os.path.join(work, f"{name}.parset"), "w") as f:
            f.write(parset(start, ports, stations, directory))
    console_port = free_port(socket.SOCK_STREAM)
    url = f"http://127.0.0.1:{console_port}/"
    observe_log = open(os.path.join(OUTPUT, "observe.log"), "w")
    observe = subprocess.Popen(
        [os.path.join(BUILD, "observe/observe"), os.path.join(work, "obs.parset"), "--dir",
         directory, "--no-station-sim", "--console", str(console_port), "--console-linger", "8"],
        stdout=observe_log, stderr=subprocess.STDOUT)
    sim = os.path.join(BUILD, "station-sim/station-sim")
    sims = [subprocess.Popen([sim, os.path.join(work, "steady.parset")],
                             stdout=observe_log, stderr=subprocess.STDOUT),
            subprocess.Popen([sim, os.path.join(work, "stopping.parset"), "--duration",
                              str(STOP_AFTER)], stdout=observe_log, stderr=subprocess.STDOUT)]
    try:
        check(url, console_port, start, directory, observe)
    finally:
        for p in sims + [observe]:
            if p.poll() is None:
                p.terminate()
                p.wait(30)


def check(url, port, start, directory, observe):
    # The console is up before anything starts.
    deadline = time.time() + 20
    while status(url) is None:
        assert time.time() < deadline, "the console did not answer"
        assert observe.poll() is None, "observe ended early: see observe.log"
        time.sleep(0.2)
    first = status(url)
    assert first["observation"]["id"] == 4242 and first["observation"]["phase"] == "starting"

    while time.time() < start + 1:
        time.sleep(0.1)
    attack = {}
    attacker = threading.Thread(target=hostile, args=(port, attack))
    attacker.start()
    # The rendered page, twice while the observation runs (Chromium takes about 2 s each).
    profile = os.path.join(OUTPUT, "chromium-profile")
    doms = []
    # After the hostile clients are done (not to load the machine with both at once).
    browser = threading.Thread(target=lambda: [attacker.join(), doms.append(chromium(url, profile)),
                                               time.sleep(1.5), doms.append(chromium(url, profile)),
                                               chromium(url, profile, os.path.join(OUTPUT, "console.png"))])
    browser.start()

    # RS205 sends until start + STOP_AFTER: not losing before, losing within 2 s after
    # (more than a tenth of a second of its packets lost).
    losing = 0.1 * 200e6 / 1024 / 16
    before, noticed = None, None
    while time.time() < start + STOP_AFTER + 4:
        s = status(url)
        now = time.time()
        if s and s["stations"]:
            rs = next(st for st in s["stations"] if st["name"] == STOPPING + "LBA")
            if start + 1.5 < now < start + STOP_AFTER - 0.3:
                before = rs
            if now > start + STOP_AFTER and noticed is None and rs["packetsLost"] > losing:
                noticed = now - (start + STOP_AFTER)
        time.sleep(0.1)
    assert before is not None, "no status while RS205 was sending"
    assert before["packetsLost"] < losing, f"RS205 lost packets while it sent: {before}"
    assert noticed is not None, "RS205's stop never showed as packets lost"
    assert noticed <= 2.0, f"RS205's stop showed after {noticed:.2f} s"
    print(f"RS205 stopped at start + {STOP_AFTER} s; shown losing {noticed:.2f} s later")

    # The rendered page: names, packet counts and real-time factors, counts growing.
    attacker.join()
    cpu_from, cpu_since = console_cpu(observe.pid), time.time()
    print(f"hostile: {attack}")
    assert attack["hugeBytes"] < (64 << 20), attack
    browser.join()
    assert len(doms) == 2, "Chromium did not render the page twice"
    counts = []
    for dom in doms:
        for name in STATIONS:  # antenna fields: CS001LBA
            assert f'data-station="{name}LBA"' in dom and f">{name}LBA<" in dom, name
        counts.append(int(station_row(dom, "CS001LBA")["received"]))
        factors = rank_factors(dom)
        assert len(factors) == 2, f"ranks in the page: {factors}"
        assert all(float(f) > 0 for f in factors), factors
    print(f"CS001 packets in the page: {counts[0]} then {counts[1]}; rank real-time factors "
          f"{rank_factors(doms[1])}")
    assert 0 < counts[0] < counts[1], counts
    # What serving costs: the console thread while the test polls 10 times a second and
    # Chromium loads the page (more than an operator's browser, which polls once a second).
    while time.time() < start + SECONDS - 0.5:
        status(url)
        time.sleep(0.1)
    share = (console_cpu(observe.pid) - cpu_from) / (time.time() - cpu_since)
    print(f"console thread: {100 * share:.2f} % of a core while polled 10 times a second")
    assert share < 0.01, f"the console thread used {100 * share:.2f} % of a core"

    # The end: the summary's figures in /status.json while the console lingers.
    summary_path = os.path.join(directory, "summary.json")
    deadline = time.time() + 90
    while not os.path.exists(summary_path):
        assert time.time() < deadline and observe.poll() is None, "no summary"
        time.sleep(0.2)
    time.sleep(0.5)
    with open(summary_path) as f:
        summary = json.load(f)
    final = status(url)
    assert final["observation"]["phase"] == "ended", final["observation"]
    assert final["summary"] == summary, "status.json's summary differs from summary.json"
    dom = chromium(url, profile)
    assert 'id="ended" style="display: block;"' in dom, "the page does not say it ended"
    chromium(url, profile, os.path.join(OUTPUT, "console-ended.png"))
    with open(f"/proc/{observe.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    print(f"observe's own CPU: {cpu:.2f} s over {summary['wallSeconds']:.1f} s of observation "
          f"and its console")
    assert observe.wait(30) == 0 or summary["status"] == "degraded"

    # Nothing lost to the hostile clients: the steady stations, blocks, integrations.
    for st in summary["stations"]:
        if st["name"] != STOPPING + "LBA":
            assert st["packetsLost"] == 0, st
    assert summary["blocksDropped"] == 0, summary
    assert summary["integrationsDropped"] == 0, summary
    assert summary["stations"][3]["packetsLost"] > 0
    print(f"screenshots in {OUTPUT}")


if __name__ == "__main__":
    main()
