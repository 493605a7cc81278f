#!/usr/bin/env python3
"""nightly --console (nightly/README.md, "Console"): the schedule live in a web page.

nightly --now runs a broken parset (an unknown station) and a good 2 s one with the
console on. While the good one runs, /schedule.json shows it running with a link to its
own console, whose /status.json answers for its observation; at the end the broken one
is failed (with the reason) and the good one done; the report pages are served under
/report/, nothing outside the report directory nor the observation's secret; headless
Chromium renders the states.

Usage: tNightlyConsole.py NIGHTLY OBSERVE OUTPUT_DIR
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

NIGHTLY, OBSERVE, OUTPUT = sys.argv[1], sys.argv[2], sys.argv[3]


def free_port(kind):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def parset(stations, directory):
    ports = [free_port(socket.SOCK_DGRAM) for _ in range(2)]
    return f"""Observation.ObsID = 77
Observation.startTime = '2026-11-22 20:00:00'
Observation.stopTime = '2026-11-22 20:00:02'
Observation.antennaSet = LBA_OUTER
Observation.bandFilter = LBA_30_90
Observation.VirtualInstrument.stationList = [{stations}]
Observation.channelsPerSubband = 16
Observation.Beam[0].angle1 = 5.2336866848
Observation.Beam[0].angle2 = 0.7109425145
Observation.Beam[0].subbandList = [300]
PIC.Core.CS001LBA.RSP.ports = [udp:127.0.0.1:{ports[0]}]
PIC.Core.CS002LBA.RSP.ports = [udp:127.0.0.1:{ports[1]}]
OLAP.CNProc.integrationSteps = 6104
OLAP.realTime = T
Observation.DataProducts.Output_Correlated.locations = [localhost:{directory}]
Sim.nrSources = 1
Sim.Source[0].angle1 = 5.2336866848
Sim.Source[0].angle2 = 0.7109425145
Sim.Source[0].flux = 2
"""


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=3) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, b""


def main():
    os.makedirs(OUTPUT, exist_ok=True)
    work = tempfile.mkdtemp(prefix="rtcp-nightly-console-")
    try:
        run(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work):
    with open(os.path.join(work, "broken.parset"), "w") as f:
        f.write(parset("CS001, XX999", os.path.join(work, "broken-out")))
    with open(os.path.join(work, "good.parset"), "w") as f:
        f.write(parset("CS001, CS002", os.path.join(work, "good-out")))
    with open(os.path.join(work, "night.schedule"), "w") as f:
        f.write("broken.parset\ngood.parset\n")
    port = free_port(socket.SOCK_STREAM)
    url = f"http://127.0.0.1:{port}/"
    report = os.path.join(work, "report")
    log = open(os.path.join(OUTPUT, "nightly.log"), "w")
    nightly = subprocess.Popen(
        [NIGHTLY, os.path.join(work, "night.schedule"), "--now", "--report", report,
         "--observe", OBSERVE, "--console", str(port), "--console-linger", "6"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        check(url, report, nightly)
    finally:
        if nightly.poll() is None:
            nightly.terminate()
            nightly.wait(60)


def check(url, report, nightly):
    up = time.time() + 20
    while True:  # the console listens before the first observation is launched
        try:
            get(url + "schedule.json")
            break
        except OSError:
            assert time.time() < up and nightly.poll() is None, "the console did not answer"
            time.sleep(0.1)
    seen_running = None
    observation_status = None
    deadline = time.time() + 120
    while True:
        assert time.time() < deadline, "the night did not end"
        code, body = get(url + "schedule.json") if nightly.poll() is None else (0, b"")
        assert code == 200, f"schedule.json: {code}"
        schedule = json.loads(body)
        good = schedule["observations"][1]
        if good["state"] == "running" and good["console"]:
            seen_running = good
            try:  # the schedule names the console as observe starts and until it ends
                code, body = get(good["console"] + "status.json")
                if code == 200:
                    observation_status = json.loads(body)
            except OSError:
                pass  # not listening yet, or just gone: asked again while it runs
        if schedule["finished"]:
            break
        time.sleep(0.2)
    assert seen_running, "the good observation was never shown running with its console"
    assert observation_status and observation_status["observation"]["id"] == 77, \
        "the running observation's console did not answer"
    print(f"running: {seen_running['console']} answered, phase "
          f"{observation_status['observation']['phase']}")
    broken, good = schedule["observations"]
    assert broken["state"] == "failed" and "XX999" in broken["reason"], broken
    assert good["state"] == "done" and good["outcome"].startswith("ok"), good
    assert good["console"] is None  # its console is gone with it

    # The report pages; nothing else.
    code, html = get(url + "report/report.html")
    assert code == 200 and b"good.parset" in html, code
    assert get(url + "report/report.txt")[0] == 200
    assert get(url + "report/02_good/summary.json")[0] == 200
    for path in ["report/02_good/observation.secret", "report/../night.schedule",
                 "report/%2e%2e/night.schedule", "report/02_good/observation.parset",
                 "etc/passwd", "report/"]:
        assert get(url + path)[0] == 404, path
    os.symlink("/etc/hostname", os.path.join(report, "outside.txt"))
    assert get(url + "report/outside.txt")[0] == 404, "a symbolic link out of the report"
    request = urllib.request.Request(url + "schedule.json", data=b"{}", method="POST")
    try:
        urllib.request.urlopen(request, timeout=3)
        raise AssertionError("POST accepted")
    except urllib.error.HTTPError as e:
        assert e.code == 405, e.code

    result = subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={os.path.join(OUTPUT, 'chromium-profile')}", "--dump-dom", url],
        capture_output=True, text=True, timeout=90)
    dom = result.stdout
    assert 'data-state="failed"' in dom and 'data-state="done"' in dom, dom[-3000:]
    assert "XX999" in dom
    assert nightly.wait(60) == 1  # one observation failed


if __name__ == "__main__":
    main()
