#!/usr/bin/env python3
"""Checks what the project's Markdown files name against the project itself.

  scripts/check-doc-references.py --build-dir BUILD [--source-dir SRC] [--warn-only FILE]...

Reads every *.md file git tracks in the source tree (a tree without git: every *.md outside
build directories) and reports, as FILE:LINE: what, every reference that does not hold:

  path    a repository path in backticks (`correlator/SpectrumNoise.h`, `scripts/setup.sh`,
          `test/` in a part's README) that names no tracked file or directory. A path is
          taken relative to the repository's root, to the Markdown file's own directory, or
          (`rtcp/...`) to common/, the include directory of rtcp_common; a path without an
          extension may name the .h/.cc pair of a class (`observe/MemoryPlan`). Only paths
          whose first component is a tracked directory there count (`DIR/summary.json`,
          `build/tools/` and other programs' paths are not the project's); a bare file name
          with a source extension (`ConsoleServer.h`) must be some tracked file's name.
          Relative Markdown links ([text](path)) are checked the same way.
  test    a test's name (in backticks or not: NAME_test, or PART_tFile as
          `correlator_tSubbandProcessor`) that `ctest -N` of BUILD does not list (the
          project's CMake functions, `rtcp_add_python_test`, aside).
  option  an `--option` in backticks that follows one of the project's executables (in
          the same backticks, `observe PARSET --now`, or right before them, observe's
          `--now`) and that the executable's --help does not list; rtcp-bench's options
          belong to its benchmark (`rtcp-bench capacity --beamformed`). Backticks that
          name two executables or hold a shell separator are not attributed.
  section a section of another Markdown file that it does not have: `DESIGN §2.4b` and
          `docs/PERFORMANCE.md §5` name a numbered heading, `observe/README.md, "The
          console"` and `DESIGN §2.4, "Connection handshake"` a heading or a bold paragraph
          title that holds the quoted words.

Fenced code blocks are skipped but for their command lines (a line that starts with one of
the executables: its options are checked). Findings in a
--warn-only file are printed but do not fail the check. Exit status: 0 when every
reference holds, 1 otherwise, 2 when the check itself cannot run (no build directory, an
executable missing or without --help).
"""

import argparse
import os
import re
import subprocess
import sys

# The project's executables, by the name the docs use, and where the build puts them.
EXECUTABLES = {
    'observe': 'observe/observe',
    'nightly': 'nightly/nightly',
    'ionproc': 'ionproc/ionproc',
    'rtcp-trigger': 'ionproc/rtcp-trigger',
    'station-sim': 'station-sim/station-sim',
    'storage-sink': 'storage-sink/storage-sink',
    'correlator': 'correlator/program/correlator',
    'correlator-local': 'correlator/program/test/correlator-local',
    'rtcp-bench': 'tools/rtcp-bench',
    'rtcp-inspect': 'tools/rtcp-inspect',
    'rtcp-msoverview': 'tools/rtcp-msoverview',
}

# File name extensions of the project's own sources: a bare file name with one of these
# (`ConsoleServer.h`) must be a tracked file's name. Outputs (.json, .txt, .parset, .html),
# tables and scripts of other projects are named bare too and are not checked.
SOURCE_EXTENSIONS = ('.h', '.cc', '.cpp', '.py', '.cmake', '.supp')

# A bare file name shortly after one of these is another project's file (COBALT's
# `BandPass.cc`), not the project's.
OTHER_PROJECTS = re.compile(r'LOFAR|COBALT|BG/P|Blue Gene|casacore|lofarantpos|DP3|AOFlagger|'
                            r'WSClean|EveryBeam|DAL\b|LCS/|RTCP/|CNProc|OutputProc|LofarStMan')

# Characters that make backticked text a pattern, a placeholder or code, not a path.
NOT_A_PATH = set(' <>*{}$%|=,;()[]\'"@?!\\…')

SHELL_SEPARATORS = ('|', ';', '&&', '||', '>', '<')

HELP_TIMEOUT_SECONDS = 20


class Findings:
    def __init__(self, warn_only, verbose=False):
        self.warn_only = warn_only
        self.verbose = verbose
        self.errors = []
        self.warnings = []
        self.checked = {'path': 0, 'test': 0, 'option': 0, 'section': 0}

    def check(self, kind, md, line, what):
        self.checked[kind] += 1
        if self.verbose:
            print('checked %s %s:%d: %s' % (kind, md, line, what))

    def add(self, md, line, text):
        entry = '%s:%d: %s' % (md, line, text)
        (self.warnings if md in self.warn_only else self.errors).append(entry)


def tracked_files(source):
    """Paths (relative to SOURCE) of the files git tracks, or of every file outside build
    directories when SOURCE is no git work tree."""
    try:
        out = subprocess.run(['git', '-C', source, 'ls-files', '-z'], check=True,
                             capture_output=True, timeout=30).stdout
        return [p for p in out.decode().split('\0') if p]
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        files = []
        for top, dirs, names in os.walk(source):
            dirs[:] = [d for d in dirs if not d.startswith(('build', '.git'))]
            files += [os.path.relpath(os.path.join(top, n), source) for n in names]
        return files


def directories_of(files):
    dirs = set()
    for f in files:
        parts = f.split('/')[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add('/'.join(parts[:i]))
    return dirs


def fenced_lines(text):
    """(line number, line) of every line inside a fenced code block."""
    fenced = False
    for number, line in enumerate(text.split('\n'), 1):
        if line.lstrip().startswith('```'):
            fenced = not fenced
        elif fenced:
            yield number, line


def without_fenced_blocks(text):
    """TEXT with the lines of fenced code blocks emptied (line numbers kept)."""
    lines = text.split('\n')
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith('```'):
            fenced = not fenced
            lines[i] = ''
        elif fenced:
            lines[i] = ''
    return '\n'.join(lines)


# Inline code: one backtick each side, within a paragraph (no blank line inside).
CODE_SPAN = re.compile(r'`([^`\n]+(?:\n(?![ \t]*\n)[^`\n]*)*)`')
LINK = re.compile(r'\]\(([^)\s]+)\)')
# A test's name: NAME_test, or PART_tFile for the tests named after their source file
# (correlator_tSubbandProcessor).
TEST_NAME = re.compile(r'(?<![A-Za-z0-9_${}*])([A-Za-z][A-Za-z0-9_]*_test|[a-z]+_t[A-Z][A-Za-z0-9]*)'
                       r'(?![A-Za-z0-9_*])')


def line_of(text, offset):
    return text.count('\n', 0, offset) + 1


class PathChecker:
    def __init__(self, files):
        self.files = set(files)
        self.dirs = directories_of(files)
        self.names = {os.path.basename(f) for f in files}
        # Files the build generates from a tracked NAME.in (console's ConsolePages.cc).
        self.names |= {n[:-3] for n in self.names if n.endswith('.in')}

    def exists(self, path):
        path = os.path.normpath(path)
        if path in self.files or path in self.dirs:
            return True
        return any(path + ext in self.files for ext in ('.h', '.cc', '.py'))

    def bases(self, md):
        md_dir = os.path.dirname(md)
        return [md_dir, '', 'common'] if md_dir else ['', 'common']

    def is_candidate(self, token, md, before):
        if '/' not in token:
            return (token.endswith(SOURCE_EXTENSIONS) and not token.startswith('.') and
                    not OTHER_PROJECTS.search(before))
        first = token.split('/')[0]
        if first in ('', '.', '..'):
            return False
        return any(os.path.normpath(os.path.join(base, first)) in self.dirs
                   for base in self.bases(md)) or first == 'rtcp'

    def resolves(self, token, md):
        if '/' not in token:
            return token in self.names
        return any(self.exists(os.path.join(base, token)) for base in self.bases(md))


def path_token(code):
    """The backticked text as a path to check, or None."""
    token = code.strip()
    if not token or any(c in NOT_A_PATH for c in token) or '\n' in token:
        return None
    if token.startswith(('-', '/', '~', '#')) or '://' in token or '...' in token:
        return None
    token = re.sub(r':\d+(-\d+)?$', '', token)  # file.cc:123
    if ':' in token:
        return None  # udp:HOST:PORT, tcp:, file:, unix:
    if not re.search(r'[A-Za-z]', token) or token.upper() == token and '/' in token:
        return None
    return token


class HelpTexts:
    """Each executable's --help (rtcp-bench: each benchmark's), asked for once."""

    def __init__(self, build):
        self.build = build
        self.cache = {}
        self.failures = []

    def command(self, name, benchmark):
        path = os.path.join(self.build, EXECUTABLES[name])
        if not os.access(path, os.X_OK):
            raise RuntimeError('%s: no executable %s (build the project first)' % (name, path))
        command = [path]
        with open(path, 'rb') as f:
            head = f.read(100)
        if head.startswith(b'#!') and b'python' in head.split(b'\n')[0]:
            command = [sys.executable, path]
        return command + ([benchmark] if benchmark else []) + ['--help']

    def options(self, name, benchmark=None):
        key = (name, benchmark)
        if key not in self.cache:
            command = self.command(name, benchmark)
            try:
                run = subprocess.run(command, capture_output=True, timeout=HELP_TIMEOUT_SECONDS,
                                     stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                raise RuntimeError('%s --help did not end within %d s' %
                                   (' '.join(command[:-1]), HELP_TIMEOUT_SECONDS))
            text = (run.stdout + run.stderr).decode(errors='replace')
            if run.returncode != 0 or not text.strip():
                raise RuntimeError('%s exits %d without its help:\n%s' %
                                   (' '.join(command), run.returncode, text))
            self.cache[key] = set(re.findall(r'--[A-Za-z0-9][A-Za-z0-9-]*', text))
        return self.cache[key]


EXECUTABLE_NAME = '|'.join(re.escape(n) for n in sorted(EXECUTABLES, key=len, reverse=True))
SPAN_COMMAND = re.compile(r'^\s*(?:mpirun\s+-np\s+\S+\s+|mpiexec\s+-n\s+\S+\s+)?(%s)(?=\s|$)'
                          % EXECUTABLE_NAME)
NAMED_BEFORE = re.compile(r'(?<![A-Za-z0-9_./-])(%s)(?:\'s|’s)?\s+$' % EXECUTABLE_NAME)
OPTION = re.compile(r'(?<![A-Za-z0-9-])(--[A-Za-z0-9][A-Za-z0-9-]*)')


def attributed_options(code, before):
    """(executable, benchmark, [options]) the backticked CODE gives, or None."""
    if any(s in code for s in SHELL_SEPARATORS):
        return None
    words = code.split()
    match = SPAN_COMMAND.match(code)
    if match:
        name = match.group(1)
        rest = code[match.end():]
        if re.search(r'(?<![A-Za-z0-9_./-])(%s)(?![A-Za-z0-9_-])' % EXECUTABLE_NAME, rest):
            return None
    else:
        named = NAMED_BEFORE.search(before)
        if not named or not words or not words[0].startswith('--'):
            return None
        # `nightly launches observe `--lead``: two executables before it, not attributed.
        if len(re.findall(r'(?<![A-Za-z0-9_./-])(%s)(?![A-Za-z0-9_-])' % EXECUTABLE_NAME,
                          before[-40:])) > 1:
            return None
        name, rest = named.group(1), code
    benchmark = None
    if name == 'rtcp-bench':
        first = rest.split()
        if not first or not re.fullmatch(r'[a-z][a-z0-9-]*', first[0]):
            return None
        benchmark = first[0]
    options = [o for o in OPTION.findall(rest)]
    return (name, benchmark, options) if options else None


def check_file(md, text, paths, tests, cmake_functions, helps, sections, findings):
    # A command line in a fenced block (`observe demo.parset --now`, `$ rtcp-bench storage
    # --dir /tmp`) as a backticked command.
    if helps is not None:
        for line, code in fenced_lines(text):
            code = re.sub(r'^\s*\$\s+', '', code.split('#')[0])
            if SPAN_COMMAND.match(code):
                check_options(md, line, code, '', helps, findings)
    text = without_fenced_blocks(text)
    check_sections(md, text, paths, sections, findings)
    for match in LINK.finditer(text):
        target = match.group(1).split('#')[0]
        if not target or '://' in target or target.startswith('mailto:'):
            continue
        findings.check('path', md, line_of(text, match.start()), target)
        if not paths.resolves(target, md) and not paths.exists(target):
            findings.add(md, line_of(text, match.start()), 'link to %s: no such file' % target)
    for match in TEST_NAME.finditer(text):
        name, line = match.group(1), line_of(text, match.start())
        if name in cmake_functions:
            continue
        findings.check('test', md, line, name)
        if name not in tests:
            findings.add(md, line, '%s: ctest lists no such test' % name)
    for match in CODE_SPAN.finditer(text):
        code = match.group(1)
        line = line_of(text, match.start())
        token = path_token(code)
        before = text[max(0, match.start() - 80):match.start()]
        if token and paths.is_candidate(token, md, before):
            findings.check('path', md, line, token)
        if token and paths.is_candidate(token, md, before) and not paths.resolves(token, md):
            what = ('no tracked file of that name' if '/' not in token else
                    'no such file or directory')
            findings.add(md, line, '`%s`: %s' % (token, what))
        if helps is not None:
            check_options(md, line, code, before, helps, findings)


def check_options(md, line, code, before, helps, findings):
    attributed = attributed_options(code, before)
    if attributed:
        name, benchmark, options = attributed
        known = helps.options(name, benchmark)
        for option in options:
            findings.check('option', md, line, '%s %s %s' % (name, benchmark or '', option))
            if option not in known:
                command = name + (' ' + benchmark if benchmark else '')
                findings.add(md, line, '`%s`: %s --help lists no %s' %
                             (code.replace('\n', ' ').strip(), command, option))


# `DESIGN §2.4b`, `docs/PERFORMANCE.md §5, "the serialisation pool"`,
# `observe/README.md, "The console"`.
SECTION_REF = re.compile(r'(?<![A-Za-z0-9_./-])(?P<file>[A-Za-z0-9_./-]+\.md|DESIGN|PERFORMANCE)'
                         r'(?:\s*§\s*(?P<number>\d+(?:\.\d+)?[a-z]?))?'
                         r'(?:,?\s*"(?P<title>[^"\n]+)")?')
SHORT_NAMES = {'DESIGN': 'docs/DESIGN.md', 'PERFORMANCE': 'docs/PERFORMANCE.md'}


class Sections:
    """The numbered headings and the titles (headings, bold paragraph leads) of each
    Markdown file, read once."""

    def __init__(self, source):
        self.source = source
        self.cache = {}

    def of(self, md):
        if md not in self.cache:
            text = without_fenced_blocks(open(os.path.join(self.source, md), encoding='utf-8').read())
            headings = re.findall(r'^#+\s+(.*)$', text, re.M)
            numbers = {m.group(1) for h in headings for m in [re.match(r'(\d+(?:\.\d+)?[a-z]?)[. ]', h)]
                       if m}
            titles = [h.lower() for h in headings]
            titles += [b.lower() for b in re.findall(r'\*\*([^*]+)\*\*', text)]
            self.cache[md] = (numbers, titles)
        return self.cache[md]


def check_sections(md, text, paths, sections, findings):
    for match in SECTION_REF.finditer(text):
        number, title = match.group('number'), match.group('title')
        if not number and not title:
            continue
        name = match.group('file')
        target = SHORT_NAMES.get(name)
        if not target:
            candidates = [os.path.normpath(os.path.join(base, name)) for base in paths.bases(md)]
            target = next((c for c in candidates if c in paths.files), None)
            if not target:
                continue  # a file the path check reports, or another project's
        numbers, titles = sections.of(target)
        line = line_of(text, match.start())
        findings.check('section', md, line, match.group(0))
        if number and number not in numbers:
            findings.add(md, line, '%s: %s has no section %s' % (match.group(0), target, number))
        if title and not any(title.lower().rstrip('.') in t for t in titles):
            findings.add(md, line, '%s: %s has no heading or bold title "%s"' %
                         (match.group(0).replace('\n', ' '), target, title))


def ctest_names(build):
    run = subprocess.run(['ctest', '-N'], cwd=build, capture_output=True, timeout=60)
    if run.returncode != 0:
        raise RuntimeError('ctest -N in %s failed:\n%s' % (build, run.stderr.decode()))
    return set(re.findall(r'Test\s+#\d+: (\S+)', run.stdout.decode()))


def cmake_function_names(source, files):
    names = set()
    for f in files:
        if f.endswith('.cmake') or os.path.basename(f) == 'CMakeLists.txt':
            with open(os.path.join(source, f), encoding='utf-8', errors='replace') as fh:
                names |= set(re.findall(r'^\s*function\(\s*([A-Za-z0-9_]+)', fh.read(), re.M))
    return names


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n')[0],
        epilog='Checks backticked paths, test names and executables\' options in every '
        'tracked Markdown file against the tree, ctest -N and --help.')
    parser.add_argument('--build-dir', required=True,
                        help='build directory whose ctest -N and executables are asked')
    parser.add_argument('--source-dir', default=os.path.dirname(here),
                        help='source tree (default: this script\'s repository)')
    parser.add_argument('--warn-only', action='append', default=[], metavar='FILE',
                        help='Markdown file (relative to the source tree) whose findings are '
                        'printed without failing the check')
    parser.add_argument('--verbose', action='store_true',
                        help='list every reference checked')
    parser.add_argument('files', nargs='*',
                        help='Markdown files to check (default: every tracked one)')
    args = parser.parse_args()

    source = os.path.abspath(args.source_dir)
    files = tracked_files(source)
    markdown = args.files or sorted(f for f in files if f.endswith('.md'))
    findings = Findings(set(args.warn_only), args.verbose)
    try:
        paths = PathChecker(files)
        tests = ctest_names(args.build_dir)
        functions = cmake_function_names(source, files)
        helps = HelpTexts(args.build_dir)
        sections = Sections(source)
        for md in markdown:
            with open(os.path.join(source, md), encoding='utf-8') as fh:
                check_file(md, fh.read(), paths, tests, functions, helps, sections, findings)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        print('check-doc-references: %s' % e, file=sys.stderr)
        return 2

    for entry in findings.warnings:
        print('warning (not failing): ' + entry)
    for entry in findings.errors:
        print(entry)
    print('%d Markdown files, %d paths, %d test names, %d options, %d sections checked: '
          '%d wrong%s' %
          (len(markdown), findings.checked['path'], findings.checked['test'],
           findings.checked['option'], findings.checked['section'], len(findings.errors),
           ', %d in files checked as warnings' % len(findings.warnings)
           if findings.warnings else ''))
    return 1 if findings.errors else 0


if __name__ == '__main__':
    sys.exit(main())
