#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""libburtorch compliance gates.

Analyses the library exactly as the CMake presets build it. For each preset
(host, aarch64-linux, armv7-linux, cortex-m0/m4/m7/m33/m55) it takes the
preset's own tree, build/<preset>, when tools/check's preset stage built it
with -DBURTORCH_ANALYSIS=ON (which adds -fstack-usage -fcallgraph-info=su to
the library target and changes nothing else: the objects are the same
bytes); otherwise it configures build/gates/<preset>/cmake with `cmake
--preset <preset> -DBURTORCH_ANALYSIS=ON`. It builds the `burtorch` target:
that archive, at the preset's own optimisation level, is one variant. The
others (-O0, -O2, -Os where the preset ships another level) recompile the
same translation units with the preset's own compile commands
(compile_commands.json) in which only -O is replaced. Then it checks:

  flags      the library's compile command in the gates' build equals the
             one in the preset's own build (build/<preset>), modulo -O and
             the analysis flags: nothing the gates check can drift from
             what ships
  symbols    no heap, exceptions, RTTI, guards, atexit, libc I/O, time or
             process control referenced or defined by libburtorch.a, and no
             writable static data (.data/.bss) defined in it
  callgraph  no cycle (recursion) in the call graph merged across all
             translation units; every indirect call site is listed and must
             carry a `// BT-DEV-NNN` comment whose ID is in the deviation
             record; no function with a dynamic (unbounded) frame
  stack      worst stack depth of every public entry point (static sum of
             frames along the deepest call path) against the budgets in
             tools/gates/stack-budget.txt
  records    every BT-DEV ID used at a site is in docs/misra/deviations.md
             and every ID in the record is used somewhere
  compdb     writes build/gates/compdb/compile_commands.json (clang-tidy:
             the host preset's library commands)

Only the Python standard library is used. Usage:
  tools/gates/gates.py [--targets a,b] [--opts=-O0,-O2] COMMAND
Outputs go to build/gates/ (reports: build/gates/*.md, *.txt).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import fnmatch
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "gates"
# No compiler cache for the gates' builds: ccache (4.7) caches a compile with
# -fcallgraph-info=su but does not restore its .ci file on a hit, and the
# gates read those files (tools/check exports a launcher for the others).
for _launcher in ("CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER"):
    os.environ.pop(_launcher, None)
GATES_DIR = ROOT / "tools" / "gates"
JOBS = 2  # the machine has 2 shared cores

# What the CMake option BURTORCH_ANALYSIS adds to the library target.
ANALYSIS_FLAGS = ["-fstack-usage", "-fcallgraph-info=su"]
OPT_RE = re.compile(r"^-O([0-3sgz]|fast)?$")

# What is built and where; `selftest` points these at tools/gates/selftest.
SRC_DIR = ROOT / "lib"
BUILD_ROOT = OUT
# The self-test compiles deliberately bad code: warnings off (-w).
SELFTEST = False
# Stage 31 (symbols, which also runs the flags check) configures every preset
# afresh; the stages after it reuse that configuration.
REUSE_CONFIGURATION = False
# Every finding that fails a gate, as (category, text): the self-test checks
# that each category of violation is caught.
FOUND: list[tuple[str, str]] = []


def found(category: str, text: str) -> None:
    FOUND.append((category, text))


@dataclass
class Target:
    """A CMake preset, as configured by `configure`."""
    name: str
    cmake_dir: Path = Path()
    # source (path relative to ROOT) -> (argv, directory, object path) of the library target
    commands: dict = field(default_factory=dict)
    shipped_opt: str = ""  # the -O level of the preset's own build
    tools: dict = field(default_factory=dict)  # ar, nm, objdump

    def tool(self, name: str) -> str:
        return self.tools[name]


# Every preset that builds the library for a target: the registry,
# targets/targets.json (tools/targets.py).
sys.path.insert(0, str(ROOT / "tools"))
from targets import TARGETS as _REGISTRY  # noqa: E402

TARGETS = [Target(t["preset"]) for t in _REGISTRY]
# Optimisation levels analysed besides the preset's own (Release: -O3, MinSizeRel: -Os).
OPTS = ["-O0", "-O2", "-Os"]


def log(*args: object) -> None:
    print(*args, flush=True)


def rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


def run(cmd: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_compdb(build: Path) -> dict:
    """The library target's entries of build/compile_commands.json:
    source relative to ROOT -> (argv, directory, object as written)."""
    out = {}
    path = build / "compile_commands.json"
    if not path.exists():
        return out
    for e in json.loads(path.read_text()):
        argv = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
        obj = argv[argv.index("-o") + 1] if "-o" in argv else ""
        if "/burtorch.dir/" not in "/" + obj:
            continue
        src = Path(e["file"]).resolve()
        if ROOT in src.parents:
            out[rel(src)] = (argv, Path(e["directory"]), obj)
    return out


def cache_value(build: Path, key: str) -> str | None:
    cache = build / "CMakeCache.txt"
    if not cache.exists():
        return None
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith(key + ":") or line.startswith(key + "="):
            return line.split("=", 1)[1]
    return None


def build_library(t: Target, jobs: int = JOBS) -> subprocess.CompletedProcess:
    """Builds the preset's library target: the shipped archive plus .su/.ci files."""
    return run(["cmake", "--build", str(t.cmake_dir), "--target", "burtorch", f"-j{jobs}"])


def configure(t: Target, build_lib: bool = True) -> bool:
    """cmake --preset <t> into build/gates/<t>/cmake with the analysis option;
    with build_lib, also builds the library target. With REUSE_CONFIGURATION
    an existing configuration newer than CMakePresets.json is kept (make
    re-runs CMake itself when a CMake file or toolchain file changed)."""
    t.cmake_dir = OUT / t.name / "cmake"
    cache = t.cmake_dir / "CMakeCache.txt"
    own = ROOT / "build" / t.name
    if not SELFTEST and cache_value(own, "BURTORCH_ANALYSIS") == "ON" and (own / "compile_commands.json").exists():
        # The preset's own tree, built by its stage with the analysis output
        # (tools/check.d/10-host.sh, 20-26): the archive that ships, analysed
        # as it is; not configured again here.
        t.cmake_dir = own
        res = subprocess.CompletedProcess([], 0, "", "")
    elif REUSE_CONFIGURATION and cache.exists() and (t.cmake_dir / "compile_commands.json").exists() and \
            cache.stat().st_mtime > (ROOT / "CMakePresets.json").stat().st_mtime:
        res = subprocess.CompletedProcess([], 0, "", "")
    else:
        res = run(["cmake", "--preset", t.name, "-B", str(t.cmake_dir), "-DBURTORCH_ANALYSIS=ON"])
    if res.returncode != 0:
        log(f"gates: cmake --preset {t.name} failed:\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
        return False
    t.commands = read_compdb(t.cmake_dir)
    if "lib/tape.cpp" not in t.commands:
        log(f"gates: {t.name}: no compile command for lib/tape.cpp in {rel(t.cmake_dir)}/compile_commands.json")
        return False
    argv = t.commands["lib/tape.cpp"][0]
    missing = [f for f in ANALYSIS_FLAGS if f not in argv]
    if missing:
        log(f"gates: {t.name}: BURTORCH_ANALYSIS=ON did not add {' '.join(missing)} to the library")
        return False
    opts = [a for a in argv if OPT_RE.match(a)]
    t.shipped_opt = opts[-1] if opts else "-O0"
    nm = cache_value(t.cmake_dir, "CMAKE_NM") or "nm"
    t.tools = {"nm": nm, "objdump": cache_value(t.cmake_dir, "CMAKE_OBJDUMP") or "objdump",
               "ar": cache_value(t.cmake_dir, "CMAKE_AR") or re.sub(r"nm$", "ar", nm)}
    if build_lib:
        res = build_library(t)
        if res.returncode != 0:
            log(f"gates: building the library of preset {t.name} failed:\n{res.stdout[-3000:]}{res.stderr[-3000:]}")
            return False
    return True


def target_opts(t: Target, opts: list[str] | None) -> list[str]:
    """The variants of a target: `opts` as given, or OPTS plus the preset's own level."""
    if opts:
        return opts
    levels = OPTS + ([t.shipped_opt] if t.shipped_opt and t.shipped_opt not in OPTS else [])
    return sorted(levels, key=lambda o: ["-O0", "-O1", "-O2", "-O3", "-Os"].index(o) if o in
                  ["-O0", "-O1", "-O2", "-O3", "-Os"] else 9)


def configs(targets: list[Target], opts: list[str] | None) -> list[tuple[Target, str]]:
    return [(t, o) for t in targets for o in target_opts(t, opts)]


def is_shipped(t: Target, opt: str) -> bool:
    """The preset's own build (cmake --build) is this variant: no recompilation."""
    return not SELFTEST and opt == t.shipped_opt


def build_dir(t: Target, opt: str) -> Path:
    """Where the variant's libburtorch.a and its objects (.o, .su, .ci) are."""
    if is_shipped(t, opt):
        return t.cmake_dir
    return BUILD_ROOT / t.name / opt.lstrip("-")


def objects_dir(t: Target, opt: str) -> Path:
    if is_shipped(t, opt):
        return t.cmake_dir / "CMakeFiles" / "burtorch.dir"
    return build_dir(t, opt) / "obj"


def lib_sources() -> list[Path]:
    return sorted(p for p in SRC_DIR.rglob("*.cpp") if p.is_file())


def obj_name(src: Path) -> str:
    return src.relative_to(SRC_DIR).as_posix().replace("/", "__")[: -len(".cpp")]


def variant_cmd(t: Target, opt: str, src: Path, obj: Path) -> tuple[list[str], Path]:
    """The preset's compile command of `src` (or, for the self-test's sources,
    of lib/tape.cpp) with only -O replaced, writing `obj`."""
    key = rel(src)
    argv, cwd, _ = t.commands.get(key) or t.commands["lib/tape.cpp"]
    out: list[str] = []
    skip = False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a == "-o":
            out += ["-o", str(obj)]
            skip = True
        elif a == "-c":
            out += ["-c", str(src)]
            skip = True
        elif OPT_RE.match(a):
            out.append(opt)
        elif SELFTEST and a.startswith("-W") and not a.startswith("-Wl,"):
            continue
        else:
            out.append(a)
    if not any(OPT_RE.match(a) for a in argv):
        out.insert(1, opt)
    if SELFTEST:
        out.insert(1, "-w")
    return out, cwd


GENERATED_INCLUDE = "/generated/include"


def generated_dir(argv: list[str]) -> Path | None:
    """The build tree's generated include directory (burtorch/build_config.hpp)."""
    for a in argv:
        if a.startswith("-I") and a.endswith(GENERATED_INCLUDE):
            return Path(a[2:])
    return None


def normalised(argv: list[str]) -> list[str]:
    """A compile command without what the gates may change: -O, the analysis
    flags, the object path, and where the build tree is (its generated include
    directory; gate_flags compares the generated headers' contents instead).
    The source stays (as an absolute path)."""
    out: list[str] = []
    skip = False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
        elif OPT_RE.match(a) or a in ANALYSIS_FLAGS:
            continue
        elif a.startswith("-I") and a.endswith(GENERATED_INCLUDE):
            out.append("-I<build tree>" + GENERATED_INCLUDE)
        else:
            out.append(a)
    return out


def generated_header(argv: list[str]) -> str:
    d = generated_dir(argv)
    f = (d / "burtorch" / "build_config.hpp") if d is not None else None
    return f.read_text() if (f is not None and f.exists()) else ""


def flags_differ(name: str, ours: list[str], theirs: list[str]) -> list[str]:
    """Differences between two compile commands modulo -O/analysis/-o, as text."""
    a, b = normalised(ours), normalised(theirs)
    if a == b:
        return []
    only_ours = [x for x in a if x not in b]
    only_theirs = [x for x in b if x not in a]
    text = [f"{name}: the gates compile lib/tape.cpp with flags that differ from the preset's build"]
    if only_ours:
        text.append("    only in the gates' command:  " + " ".join(only_ours))
    if only_theirs:
        text.append("    only in the preset's command: " + " ".join(only_theirs))
    if not only_ours and not only_theirs:
        text.append("    same flags in another order:\n      gates:  " + " ".join(a) + "\n      preset: " + " ".join(b))
    return text


def gate_flags(targets: list[Target], opts: list[str] | None) -> bool:
    """Compares, per preset, the compile command of lib/tape.cpp in the preset's
    own build directory (build/<preset>, configured here with `cmake --preset`
    unless its stage already did)
    with every command the gates run for it."""
    ok = True
    log("flags: lib/tape.cpp as the gates compile it vs. as each preset builds it (modulo -O, "
        + " ".join(ANALYSIS_FLAGS) + ")")
    for t in targets:
        if not t.commands and not configure(t, build_lib=False):
            return False
        preset_dir = ROOT / "build" / t.name
        # The preset's stage configured its tree; configure it here only if it
        # never was (other stages may be reading it).
        if (preset_dir / "compile_commands.json").exists():
            res = subprocess.CompletedProcess([], 0, "", "")
        else:
            res = run(["cmake", "--preset", t.name])
        theirs = read_compdb(preset_dir).get("lib/tape.cpp")
        if res.returncode != 0 or theirs is None:
            log(f"  {t.name}: cannot configure the preset itself ({rel(preset_dir)}): {res.stderr[-1000:]}")
            return False
        src = ROOT / "lib" / "tape.cpp"
        variants = [(o, variant_cmd(t, o, src, Path("x.o"))[0]) for o in target_opts(t, opts)]
        variants.append(("cmake", t.commands["lib/tape.cpp"][0]))
        bad = []
        for o, argv in variants:
            diff = flags_differ(f"{t.name} {o}", argv, theirs[0])
            if not diff and generated_header(argv) != generated_header(theirs[0]):
                diff = [f"{t.name} {o}: the gates' burtorch/build_config.hpp differs from the preset's build"]
            if diff:
                bad += diff
                found("flags-drift", diff[0])
        if bad:
            ok = False
            for line in bad:
                log("  " + line)
        else:
            log(f"  {t.name:<13} same as {rel(preset_dir)}: " + " ".join(normalised(theirs[0])[1:]))
    return ok


def tree_files() -> list[Path]:
    files = {p for d in (ROOT / "lib", ROOT / "include", SRC_DIR) for p in d.rglob("*") if p.is_file()}
    return sorted(files)


def stamp_of(t: Target, opt: str, sources: list[Path]) -> str:
    h = hashlib.sha256()
    for src in sources:
        h.update(" ".join(variant_cmd(t, opt, src, Path(obj_name(src) + ".o"))[0]).encode())
    h.update(Path(__file__).read_bytes())
    for p in tree_files():
        h.update(rel(p).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def build(targets: list[Target], opts: list[str] | None) -> bool:
    """Configures each preset and builds its library (the shipped variant),
    then build/gates/<preset>/<opt>/libburtorch.a for the other levels;
    skips up-to-date variants."""
    for t in targets:
        if not configure(t, build_lib=False):
            return False
    if SELFTEST:
        sources = lib_sources()
    else:
        # Exactly the translation units of the library target.
        sources = sorted({ROOT / s for t in targets for s in t.commands})
        stray = sorted(set(rel(p) for p in lib_sources()) - {rel(p) for p in sources})
        if stray:
            log("gates: lib/ sources that are not in the library target (not analysed, not shipped): "
                + " ".join(stray))
    if not sources:
        log("gates: no sources found")
        return False
    # One pool of JOBS workers runs the presets' own builds (one make job
    # each, first: they are the longest) and the variants' compilations.
    jobs: list = [] if SELFTEST else [(t, "cmake", None, None) for t in targets]
    todo = []
    for t, opt in configs(targets, opts):
        if is_shipped(t, opt):
            continue
        srcs = [s for s in sources if SELFTEST or rel(s) in t.commands]
        d = build_dir(t, opt)
        stamp = stamp_of(t, opt, srcs)
        stamp_file = d / "stamp"
        if stamp_file.exists() and stamp_file.read_text() == stamp and (d / "libburtorch.a").exists():
            continue
        if d.exists():
            shutil.rmtree(d)
        (d / "obj").mkdir(parents=True)
        todo.append((t, opt, d, stamp))
        for src in srcs:
            jobs.append((t, opt, src, variant_cmd(t, opt, src, d / "obj" / (obj_name(src) + ".o"))))
    if not jobs:
        return True
    if todo:
        log(f"gates: compiling {len(sources)} sources for {len(todo)} target/opt variants")

    def work(j):
        t, what, _src, cmd = j
        return j, (build_library(t, 1) if what == "cmake" else run(cmd[0], cwd=cmd[1]))

    ok = True
    with concurrent.futures.ThreadPoolExecutor(max_workers=JOBS) as pool:
        for (t, opt, src, _cmd), res in pool.map(work, jobs):
            if res.returncode != 0:
                ok = False
                if opt == "cmake":
                    log(f"gates: building the library of preset {t.name} failed:")
                    log((res.stdout[-3000:] + res.stderr[-3000:]).rstrip())
                else:
                    log(f"gates: FAILED to compile {rel(src)} for {t.name} {opt}:")
                    log(res.stderr.rstrip())
    if not ok:
        return False
    for t, opt, d, stamp in todo:
        objs = sorted(str(p) for p in (d / "obj").glob("*.o"))
        res = run([t.tool("ar"), "rcs", str(d / "libburtorch.a"), *objs])
        if res.returncode != 0:
            log(res.stderr)
            return False
        (d / "stamp").write_text(stamp)
    return True

# --------------------------------------------------------------------------
# Gate 1: forbidden symbols and writable static data.

# (regex on the raw symbol name, what it means). Matched against every
# undefined or defined symbol of every object in libburtorch.a.
FORBIDDEN = [
    (r"^(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|memalign|valloc|pvalloc|"
     r"reallocarray|strdup|strndup|alloca|__libc_malloc|_malloc_r|_free_r|_calloc_r|_realloc_r)$", "heap"),
    (r"^_Zn[wa]", "operator new"),
    (r"^_Zd[la]", "operator delete"),
    (r"^(__cxa_throw|__cxa_allocate_exception|__cxa_free_exception|__cxa_begin_catch|__cxa_end_catch|"
     r"__cxa_rethrow|__cxa_call_unexpected|__cxa_get_exception_ptr|__cxa_current_exception_type)$", "exceptions"),
    (r"^__gxx_personality_", "exceptions (personality routine)"),
    (r"^_Unwind_", "exceptions (unwinder)"),
    (r"^__aeabi_unwind_cpp_pr", "exceptions (ARM EHABI personality)"),
    (r"^_ZSt9terminatev$|^_ZSt(17)?__throw_", "exceptions (std::terminate / __throw_*)"),
    (r"^__cxa_guard_(acquire|release|abort)$", "guarded static initialisation"),
    (r"^(__cxa_atexit|atexit|__aeabi_atexit|__cxa_thread_atexit|__cxa_thread_atexit_impl|__dso_handle)$",
     "static destructors (atexit)"),
    (r"^_ZTI", "RTTI typeinfo"),
    (r"^_ZTS", "RTTI typeinfo name"),
    (r"^_ZTV", "vtable"),
    (r"^(__dynamic_cast|__cxa_bad_cast|__cxa_bad_typeid|__cxa_pure_virtual|__cxa_deleted_virtual)$",
     "RTTI / virtual dispatch support"),
    (r"^(__)?(v?f?s?n?printf|v?as?printf|v?dprintf|v?f?scanf|v?sscanf|puts|fputs|putchar|putc|fputc|"
     r"fwrite|fread|fopen|fopen64|freopen|fclose|fflush|fseek|fseeko|ftell|ftello|rewind|fgets|fgetc|getc|"
     r"getchar|gets|ungetc|perror|setvbuf|setbuf|tmpfile|remove|rename|iprintf|siprintf|fiprintf)(_chk)?$",
     "libc stdio"),
    (r"^_(v?f?s?n?printf|v?f?puts|fwrite|fopen|fclose|fflush|putchar|fputc)_r$", "newlib reentrant stdio"),
    (r"^(stdin|stdout|stderr|_impure_ptr|_IO_\w+|__sF)$", "libc stdio streams"),
    (r"^_ZSt(4cout|4cerr|4clog|3cin|5wcout|5wcerr)|^_ZNSt8ios_base4Init|^_ZNSo|^_ZNSi|^_ZStlsI", "iostream"),
    (r"^(open|open64|read|write|close|lseek|_open|_read|_write|_close|_lseek|_sbrk|sbrk|brk|mmap|munmap)$",
     "system calls (port/ only)"),
    (r"^(time|clock|clock_gettime|gettimeofday|_gettimeofday|times|_times)$", "time (port/ only)"),
    (r"^(abort|exit|_exit|_Exit|quick_exit|__assert_fail|__assert_func|__assert|raise|signal|system|"
     r"getenv|setjmp|longjmp|_setjmp|_longjmp|__longjmp_chk)$", "process control / assert / setjmp"),
    (r"^(rand|srand|random|srandom|strtok|localtime|gmtime|asctime|ctime|setlocale|localeconv)$",
     "hidden global state in libc"),
]
FORBIDDEN_RE = [(re.compile(p), why) for p, why in FORBIDDEN]

WRITABLE_SECTION = re.compile(r"^(\.data(?!\.rel\.ro)|\.bss|\.tdata|\.tbss|COMMON|\*COM\*|\.sdata|\.sbss)")


def demangle(names: list[str]) -> dict[str, str]:
    if not names:
        return {}
    res = subprocess.run(["c++filt"], input="\n".join(names) + "\n", stdout=subprocess.PIPE, text=True)
    out = res.stdout.split("\n")
    return {n: (out[i] if i < len(out) and out[i] else n) for i, n in enumerate(names)}


def gate_symbols(targets: list[Target], opts: list[str] | None) -> bool:
    if not build(targets, opts):
        return False
    findings = []
    summary = []
    for t, opt in configs(targets, opts):
        d = build_dir(t, opt)
        lib = d / "libburtorch.a"
        res = run([t.tool("nm"), "-A", "-P", str(lib)])
        if res.returncode != 0:
            log(res.stderr)
            return False
        n_undef = 0
        n_def = 0
        for line in res.stdout.splitlines():
            # "lib.a[obj.o]: name type [value size]"
            m = re.match(r"^(.*?): (\S+) (\S)", line)
            if not m:
                continue
            member, name, kind = m.group(1), m.group(2), m.group(3)
            if kind == "U":
                n_undef += 1
            else:
                n_def += 1
            for rx, why in FORBIDDEN_RE:
                if rx.search(name):
                    findings.append((t.name, opt, member, name, "undefined" if kind == "U" else "defined", why))
                    found("symbol:" + why, f"{t.name} {opt} {member} {name}")
        # Writable static data: any defined object in .data*/.bss* (not .data.rel.ro).
        res = run([t.tool("objdump"), "-t", str(lib)])
        member = "?"
        n_writable = 0
        for line in res.stdout.splitlines():
            mm = re.match(r"^(\S+\.o):\s+file format", line)
            if mm:
                member = mm.group(1)
                continue
            parts = line.split()
            # "addr flags... section size name"; object symbols have flag 'O'.
            if len(parts) < 5 or " O " not in f" {line} ":
                continue
            fields = re.match(r"^[0-9a-fA-F]+\s+(.{7})\s+(\S+)\s+[0-9a-fA-F]+\s+(.*)$", line)
            if not fields:
                continue
            section, name = fields.group(2), fields.group(3).split()[-1]
            if WRITABLE_SECTION.match(section):
                n_writable += 1
                findings.append((t.name, opt, f"{lib.name}[{member}]", name, f"in {section}",
                                 "mutable global or static state"))
                found("writable", f"{t.name} {opt} {member} {name} {section}")
        summary.append(f"  {t.name:<13} {opt}{' (preset)' if opt == t.shipped_opt else '         '}: {n_def:4d} defined, {n_undef:4d} undefined symbols checked, "
                       f"{n_writable} writable objects")
    log("forbidden-symbol gate: libburtorch.a per target and optimisation level")
    for s in summary:
        log(s)
    names = demangle(sorted({f[3] for f in findings}))
    lines = [f"{t} {o}: {m}: {kind} {names.get(n, n)} ({n}) -- {why}" for t, o, m, n, kind, why in findings]
    report = BUILD_ROOT / "symbols.txt"
    report.write_text("\n".join(summary + ["", f"forbidden symbols found: {len(findings)}"] + lines) + "\n")
    log(f"forbidden symbols found: {len(findings)}")
    for line in lines[:200]:
        log("  " + line)
    return not findings


# --------------------------------------------------------------------------
# Gates 2 and 3: the call graph from GCC's .ci files.

NODE_RE = re.compile(r'^node: \{ title: "([^"]*)" label: "((?:[^"\\]|\\.)*)"(.*)\}\s*$')
EDGE_RE = re.compile(r'^edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"(?: label: "([^"]*)")? \}\s*$')
STACK_RE = re.compile(r"\\n(\d+) bytes \(([a-z,]+)\)")
INDIRECT = "__indirect_call"


@dataclass
class Node:
    title: str
    label: str
    frame: int | None = None  # bytes; None: not defined in the library (external)
    qualifier: str = ""  # static | dynamic | dynamic,bounded
    where: str = ""  # file:line:col of the definition
    callees: set = field(default_factory=set)
    indirect_sites: set = field(default_factory=set)
    external: bool = False  # external linkage


def ci_files(t: Target, opt: str) -> list[Path]:
    """The call-graph files (-fcallgraph-info) of a variant's objects."""
    if is_shipped(t, opt):
        # GCC names them after the object: CMakeFiles/burtorch.dir/lib/tape.cpp.o -> tape.cpp.ci
        return sorted((cwd / obj).with_suffix(".ci") for _argv, cwd, obj in t.commands.values())
    return sorted(objects_dir(t, opt).glob("*.ci"))


def external_symbols(t: Target, d: Path) -> set[str]:
    """Symbols with external linkage (global or weak) defined in the library."""
    res = run([t.tool("nm"), "-P", "--defined-only", str(d / "libburtorch.a")])
    out = set()
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1] in "TWVDRBiu" and not parts[0].endswith(":"):
            out.add(parts[0])
    return out


def load_graph(t: Target, opt: str) -> dict[str, Node]:
    """Merges every .ci of a build. GCC titles functions it defines as
    "file:symbol"; those with external linkage (inline, template, ordinary)
    are the same function in every translation unit, so they are renamed to
    the bare symbol that calls from other units use. Internal-linkage
    functions (static, anonymous namespace, clones) keep their file prefix."""
    external = external_symbols(t, build_dir(t, opt))

    def canon(title: str) -> str:
        if ":" in title:
            sym = title.rsplit(":", 1)[1]
            if sym in external:
                return sym
        return title

    files = ci_files(t, opt)
    for ci in files:
        if not ci.exists():
            raise SystemExit(f"gates: {ci} is missing (was the library built with -fcallgraph-info?)")
    return read_graph(files, canon)


def read_graph(files: list[Path], canon) -> dict[str, Node]:
    """The call graph of .ci files, each title mapped through canon()."""
    root_prefix = str(ROOT) + "/"
    nodes: dict[str, Node] = {}
    for ci in files:
        # CMake passes absolute source paths; sites are reported relative to the repository.
        for line in ci.read_text(errors="replace").replace(root_prefix, "").splitlines():
            m = NODE_RE.match(line)
            if m:
                title, label = canon(m.group(1)), m.group(2)
                node = nodes.setdefault(title, Node(title, label))
                s = STACK_RE.search(label)
                if s:
                    frame = int(s.group(1))
                    node.frame = frame if node.frame is None else max(node.frame, frame)
                    node.qualifier = s.group(2)
                    node.label = label
                    parts = label.split("\\n")
                    node.where = parts[1] if len(parts) > 1 else ""
                    node.external = ":" not in title
                continue
            m = EDGE_RE.match(line)
            if m:
                src, dst, site = canon(m.group(1)), canon(m.group(2)), m.group(3) or ""
                node = nodes.setdefault(src, Node(src, src))
                if dst == INDIRECT:
                    node.indirect_sites.add(site)
                else:
                    node.callees.add(dst)
                    nodes.setdefault(dst, Node(dst, dst))
    return nodes


def display_name(node: Node) -> str:
    """The source-level signature from GCC's label, without the return type."""
    head = node.label.split("\\n", 1)[0]
    depth = 0
    start = 0
    for i, ch in enumerate(head):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == " " and depth == 0 and "(" not in head[start:i] and not head[start:i].endswith("operator"):
            start = i + 1
        elif ch == "(" and depth == 0:
            break
    return head[start:]


def symbol_of(title: str) -> str:
    # Internal-linkage functions are titled "file:symbol".
    return title.rsplit(":", 1)[-1]


def strongly_connected(nodes: dict[str, Node]) -> list[list[str]]:
    """Tarjan's algorithm, iterative. Returns SCCs that are cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles = []
    counter = 0
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(nodes[start].callees)))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(nodes[w].callees))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in nodes[v].callees:
                    cycles.append(sorted(comp))
    return cycles


def deviation_ids() -> set[str]:
    path = ROOT / "docs" / "misra" / "deviations.md"
    if not path.exists():
        return set()
    ids = set()
    for line in path.read_text().splitlines():
        m = re.match(r"^\|\s*(BT-DEV-\d{3})\s*\|", line)
        if m:
            ids.add(m.group(1))
    return ids


def site_source(site: str):
    """The lines of the file a report's `site` (file:line:col) names, the
    line and the column; None if the site is not one or its file is gone."""
    m = re.match(r"^(.*?):(\d+):(\d+)", site)
    if not m:
        return None
    path = ROOT / m.group(1)
    if not path.exists():
        return None
    return path.read_text(errors="replace").splitlines(), int(m.group(2)), int(m.group(3))


def site_deviation(site: str) -> str | None:
    """The BT-DEV ID commented on the source line of `site` (file:line:col)."""
    at = site_source(site)
    if at is None:
        return None
    lines, n, _ = at
    for k in (n - 1, n - 2):  # the call's line, or a one-line comment just above it
        if 0 <= k < len(lines):
            found = re.search(r"//.*\b(BT-DEV-\d{3})\b", lines[k])
            if found and (k == n - 1 or lines[k].strip().startswith("//")):
                return found.group(1)
    return None


def gate_callgraph(targets: list[Target], opts: list[str] | None) -> bool:
    if not build(targets, opts):
        return False
    ok = True
    documented = deviation_ids()
    sites: dict[str, dict] = {}
    total_cycles = 0
    dynamic = []
    log("recursion gate: call graph merged across translation units (-fcallgraph-info=su)")
    for t, opt in configs(targets, opts):
        nodes = load_graph(t, opt)
        defined = [n for n in nodes.values() if n.frame is not None]
        edges = sum(len(n.callees) for n in nodes.values())
        cycles = strongly_connected(nodes)
        n_ind = sum(len(n.indirect_sites) for n in nodes.values())
        log(f"  {t.name:<13} {opt}: {len(defined):4d} functions, {edges:4d} direct call edges, "
            f"{len(cycles)} cycles, {n_ind} indirect call edges")
        total_cycles += len(cycles)
        for comp in cycles:
            ok = False
            found("cycle", " ".join(comp))
            names = demangle([symbol_of(c) for c in comp])
            log(f"    CYCLE: " + " -> ".join(names[symbol_of(c)] for c in comp))
        for n in defined:
            if n.qualifier.startswith("dynamic") and n.qualifier != "dynamic,bounded":
                dynamic.append((t.name, opt, n.title))
            for s in n.indirect_sites:
                entry = sites.setdefault(s or "(no location)", {"callers": set(), "configs": set()})
                entry["callers"].add(symbol_of(n.title))
                entry["configs"].add(f"{t.name}{opt}")
    log(f"cycles: {total_cycles}")
    for tname, opt, title in dynamic:
        ok = False
        found("dynamic-frame", f"{tname} {opt} {title}")
        log(f"  UNBOUNDED dynamic stack frame: {tname} {opt}: {demangle([symbol_of(title)])[symbol_of(title)]}")
    report = ["indirect call sites in lib/ and include/ (each needs a BT-DEV justification):"]
    log(f"indirect call sites: {len(sites)}")
    for s in sorted(sites):
        dev = site_deviation(s)
        callers = sorted({re.sub(r" \[clone [^]]*\]", "", c)
                          for c in demangle(sorted(sites[s]["callers"])).values()})
        status = "ok"
        if dev is None:
            status = "NOT JUSTIFIED (no // BT-DEV-NNN comment on the line)"
            ok = False
            found("indirect-unjustified", s)
        elif dev not in documented:
            status = f"{dev} is not in docs/misra/deviations.md"
            ok = False
            found("indirect-undocumented", s)
        line = f"  {s}  [{dev or '-'}] {status}; in {len(sites[s]['configs'])} target/opt builds; reached from: " \
               + "; ".join(callers[:4]) + (" ..." if len(callers) > 4 else "")
        report.append(line)
        log(line)
    (BUILD_ROOT / "indirect-calls.txt").write_text("\n".join(report) + "\n")
    return ok


# --------------------------------------------------------------------------
# Gate 3: stack depth per public entry point.

@dataclass
class Budget:
    target: str
    opt: str
    entry: re.Pattern
    bytes: int


def load_budget() -> tuple[list[Budget], list[tuple[re.Pattern, int]], int]:
    budgets: list[Budget] = []
    externals: list[tuple[re.Pattern, int]] = []
    default_external = 0
    for raw in (GATES_DIR / "stack-budget.txt").read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if parts[0] == "external":
            if parts[1] == "*":
                default_external = int(parts[2])
            else:
                externals.append((re.compile(parts[1]), int(parts[2])))
        elif parts[0] == "budget":
            budgets.append(Budget(parts[1], parts[2], re.compile(parts[3]), int(parts[4])))
        else:
            raise SystemExit(f"stack-budget.txt: cannot parse: {raw}")
    return budgets, externals, default_external


def is_entry_point(node: Node, name: str) -> bool:
    if node.frame is None or not node.external:  # not in the library, or internal linkage
        return False
    if not name.startswith("burtorch::") or "::detail::" in name or "(anonymous namespace)" in name:
        return False
    return True


def gate_stack(targets: list[Target], opts: list[str] | None) -> bool:
    if not build(targets, opts):
        return False
    budgets, externals, default_external = load_budget()
    ok = True
    table: dict[str, dict[str, tuple[int, str]]] = {}  # entry -> config -> (bytes, note)
    over = []
    for t, opt in configs(targets, opts):
        nodes = load_graph(t, opt)
        if strongly_connected(nodes):
            log(f"stack gate: {t.name} {opt} has call cycles; depth is unbounded (see the recursion gate)")
            found("stack-unbounded", f"{t.name} {opt}")
            ok = False
            continue
        names = demangle(sorted({symbol_of(k) for k in nodes}))
        memo: dict[str, tuple[int, list[str], bool, bool]] = {}

        def ext_cost(title: str) -> int:
            sym = symbol_of(title)
            for rx, b in externals:
                if rx.search(sym):
                    return b
            return default_external

        def depth(title: str) -> tuple[int, list[str], bool, bool]:
            # Iterative post-order: (bytes, path, reaches a callback, includes an allowance).
            stack = [(title, False)]
            while stack:
                cur, expanded = stack.pop()
                if cur in memo:
                    continue
                node = nodes[cur]
                if node.frame is None:
                    memo[cur] = (ext_cost(cur), [cur + " (outside the library)"], False, True)
                    continue
                if not expanded:
                    stack.append((cur, True))
                    stack.extend((c, False) for c in node.callees if c not in memo)
                    continue
                best = (0, [], False, False)
                callback = bool(node.indirect_sites)
                for c in sorted(node.callees):
                    sub = memo[c]
                    callback = callback or sub[2]
                    if sub[0] > best[0]:
                        best = sub
                memo[cur] = (node.frame + best[0], [cur] + best[1], callback, best[3])
            return memo[title]

        config = f"{t.name} {opt}"
        for title, node in nodes.items():
            if not is_entry_point(node, names.get(symbol_of(title), title)):
                continue
            name = display_name(node)
            total, path, callback, allowance = depth(title)
            budget = next((b for b in budgets if fnmatch.fnmatch(t.name, b.target)
                           and fnmatch.fnmatch(opt, b.opt) and b.entry.search(name)), None)
            note = ("*" if allowance else "") + (" +cb" if callback else "")
            table.setdefault(name, {})[config] = (total, note)
            if budget is None:
                over.append(f"{config}: {name}: {total} B, no budget rule matches")
            elif total > budget.bytes:
                chain = " -> ".join(names.get(symbol_of(p.split(' ')[0]), p) for p in path)
                over.append(f"{config}: {name}: {total} B > budget {budget.bytes} B; path: {chain}")
                found("over-budget", over[-1])
    levels = sorted({o for _t, o in configs(targets, opts)}, key=lambda o: ["-O0", "-O1", "-O2", "-O3", "-Os"].index(o)
                    if o in ["-O0", "-O1", "-O2", "-O3", "-Os"] else 9)
    all_configs = [f"{t.name} {o}" for o in levels for t in targets if o in target_opts(t, opts)]
    # Markdown report: one table per optimisation level.
    md = ["# Worst stack depth per public entry point (bytes)", "",
          "Static sum of -fstack-usage frames along the deepest call path, merged across translation",
          "units. `*`: the deepest path leaves the library (libgcc, libm, libc) and includes the",
          "allowance for that call from tools/gates/stack-budget.txt. `+cb`: the entry point can call a",
          "user callback (byte stream or fault hook, BT-DEV-003) whose own stack is the caller's to",
          "budget. Generated by `python3 tools/gates/gates.py stack`.", ""]
    for opt in levels:
        cols = [f"{t.name} {opt}" for t in targets]
        md.append(f"## {opt}")
        md.append("")
        md.append("| entry point | " + " | ".join(t.name for t in targets) + " |")
        md.append("|---|" + "---:|" * len(targets))
        for name in sorted(table):
            if not any(c in table[name] for c in cols):
                continue
            cells = []
            for c in cols:
                v = table[name].get(c)
                cells.append("-" if v is None else f"{v[0]}{v[1]}")
            md.append(f"| `{name}` | " + " | ".join(cells) + " |")
        md.append("")
    (BUILD_ROOT / "stack-report.md").write_text("\n".join(md) + "\n")
    # Console: worst entry point per config, then the full table for the first opt level.
    log("stack gate: worst stack depth per public entry point (bytes; full table: build/gates/stack-report.md)")
    for c in all_configs:
        worst = max(((v[c][0], n) for n, v in table.items() if c in v), default=(0, "-"))
        log(f"  {c:<18} worst {worst[0]:5d} B  {worst[1]}")
    log("")
    log("\n".join(md))
    if over:
        ok = False
        log(f"OVER BUDGET ({len(over)}):")
        for o in over:
            log("  " + o)
    else:
        log(f"all {sum(len(v) for v in table.values())} entry-point/config depths are within budget")
    return ok


# --------------------------------------------------------------------------
# Records: deviation IDs at sites vs. docs/misra/deviations.md.

def library_lines():
    """Every line of lib/ and include/ as (site, line, code before any // comment)."""
    for d in (ROOT / "lib", ROOT / "include"):
        for p in sorted(d.rglob("*")):
            if p.is_file():
                for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
                    yield f"{rel(p)}:{i}", line, line.split("//", 1)[0]


def gate_records() -> bool:
    documented = deviation_ids()
    if not documented:
        log("records: docs/misra/deviations.md has no BT-DEV rows")
        return False
    used: dict[str, list[str]] = {}
    scan = [ROOT / "lib", ROOT / "include", ROOT / "port", ROOT / "targets", GATES_DIR]
    files = [p for d in scan if d.exists() for p in d.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    files.append(ROOT / ".clang-tidy")
    for p in files:
        if not p.exists() or p == Path(__file__).resolve():
            continue
        for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            for m in re.finditer(r"\bBT-DEV-\d{3}\b", line):
                used.setdefault(m.group(0), []).append(f"{rel(p)}:{i}")
    ok = True
    # Rows: exactly one per ID.
    rows = [m.group(1) for line in (ROOT / "docs" / "misra" / "deviations.md").read_text().splitlines()
            for m in [re.match(r"^\|\s*(BT-DEV-\d{3})\s*\|", line)] if m]
    for dev in sorted({r for r in rows if rows.count(r) > 1}):
        ok = False
        log(f"  {dev}: {rows.count(dev)} rows in docs/misra/deviations.md (one per ID)")
    # BT-DEV-010: each use of memcpy/memcmp/memmove (MISRA C++:2023 Rule 24.5.2) carries the ID.
    unmarked = [site for site, line, code in library_lines()
                if re.search(r"\bmem(cpy|cmp|move)\s*\(", code) and "BT-DEV-010" not in line]
    if unmarked:
        ok = False
        log(f"  memcpy/memcmp/memmove without '// BT-DEV-010' on the line: {', '.join(unmarked)}")
    # BT-DEV-015: each #pragma / _Pragma (MISRA C++:2023 Rule 19.6.1, advisory) carries the ID.
    pragmas = [(site, line) for site, line, code in library_lines()
               if re.match(r"\s*#\s*pragma\b", code) or re.search(r"\b_Pragma\s*\(", code)]
    unmarked = [site for site, line in pragmas if "BT-DEV-015" not in line]
    log(f"#pragma / _Pragma in lib/ and include/: {len(pragmas)}, without BT-DEV-015: {len(unmarked)}")
    if unmarked:
        ok = False
        log(f"  missing '// BT-DEV-015' at: {', '.join(unmarked)}")
    # BT-DEV-004: every exact floating-point comparison GCC's -Wfloat-equal finds in the
    # library (templates as instantiated for float and double) carries the ID.
    float_sites = set()
    for src in lib_sources():
        res = run(["g++", "-fsyntax-only", "-std=c++17", "-Wfloat-equal", "-I", "include", "-I", "lib", rel(src)])
        for m in re.finditer(r"^([^:\s]+):(\d+):\d+: warning: comparing floating-point", res.stderr, re.M):
            float_sites.add((m.group(1), int(m.group(2))))
    bad_float = []
    for path, line in sorted(float_sites):
        text = (ROOT / path).read_text(errors="replace").splitlines() if (ROOT / path).exists() else []
        if not (0 < line <= len(text) and "BT-DEV-004" in text[line - 1]):
            bad_float.append(f"{path}:{line}")
    log(f"exact floating-point comparisons (-Wfloat-equal) in lib/ and include/: {len(float_sites)}, "
        f"without BT-DEV-004: {len(bad_float)}")
    if bad_float:
        ok = False
        log("  missing '// BT-DEV-004' at: " + ", ".join(bad_float))
    log(f"deviation record: {len(documented)} IDs documented, {len(used)} IDs used at "
        f"{sum(len(v) for v in used.values())} sites")
    for dev in sorted(documented | set(used)):
        where = used.get(dev, [])
        if dev not in documented:
            ok = False
            log(f"  {dev}: used at {', '.join(where)} but has no row in docs/misra/deviations.md")
        elif not where:
            ok = False
            log(f"  {dev}: documented but no site carries the ID")
        else:
            log(f"  {dev}: {len(where)} sites ({', '.join(where[:6])}{' ...' if len(where) > 6 else ''})")
    return ok


def preset(name: str) -> Target | None:
    """A configured (not built) preset, for the analysers that read compile commands."""
    t = Target(name)
    return t if configure(t, build_lib=False) else None


def write_compdb(extra_sources: list[Path], t: Target) -> Path:
    """The library's compile commands of preset `t` (without the analysis
    flags, which clang does not know), plus `extra_sources` compiled like
    lib/tape.cpp: for clang-tidy."""
    d = OUT / "compdb"
    d.mkdir(parents=True, exist_ok=True)
    entries = []
    items = [(ROOT / src, argv, cwd) for src, (argv, cwd, _obj) in sorted(t.commands.items())]
    tape_argv, tape_cwd, _ = t.commands["lib/tape.cpp"]
    for src in extra_sources:
        argv = [str(src) if a == str(ROOT / "lib" / "tape.cpp") else a for a in tape_argv]
        items.append((src, argv, tape_cwd))
    for src, argv, cwd in items:
        entries.append({"directory": str(cwd), "file": str(src),
                        "arguments": [a for a in argv if a not in ANALYSIS_FLAGS]})
    (d / "compile_commands.json").write_text(json.dumps(entries, indent=1) + "\n")
    return d


def write_all_headers_tu() -> Path:
    """A translation unit including every public header (header-only code)."""
    d = OUT / "compdb"
    d.mkdir(parents=True, exist_ok=True)
    headers = sorted(p for p in (ROOT / "include").rglob("*.hpp") if p.is_file())
    tu = d / "all_headers.cpp"
    text = "// Generated by tools/gates/gates.py: every public header, for static analysis.\n" + \
        "".join(f'#include "{p.relative_to(ROOT / "include").as_posix()}"\n' for p in headers)
    if not tu.exists() or tu.read_text() != text:
        tu.write_text(text)
    return tu


def selftest() -> bool:
    """Builds tools/gates/selftest/*.cpp (code that breaks every rule) with
    the presets' compile commands and checks that each gate reports each kind
    of violation: the gates can fail. Also plants a drifted compile command."""
    global SRC_DIR, BUILD_ROOT, SELFTEST
    SRC_DIR = GATES_DIR / "selftest"
    BUILD_ROOT = OUT / "selftest"
    # The bad code is not warning-clean on purpose: -W flags dropped, -w added.
    SELFTEST = True
    targets = [Target("host"), Target("cortex-m4")]
    opts = ["-O0", "-O2"]
    FOUND.clear()
    results = {
        "symbols": gate_symbols(targets, opts),
        "callgraph": gate_callgraph(targets, opts),
        "stack": gate_stack(targets, opts),
    }
    # The flags check: the preset's own command modulo -O and the analysis
    # flags must pass; the drift the gates once had (-mfpu=auto, no -mthumb) must not.
    argv = targets[1].commands["lib/tape.cpp"][0]
    same = ["-O0" if OPT_RE.match(a) else a for a in argv if a not in ANALYSIS_FLAGS]
    if flags_differ("self-test", same, argv):
        results["flags (false alarm)"] = True
        log("  the flags check reported a difference in -O / analysis flags only")
    drifted = ["-mfpu=auto" if a.startswith("-mfpu=") else a for a in argv if a != "-mthumb"]
    diff = flags_differ("cortex-m4 with -mfpu=auto and without -mthumb", drifted, argv)
    for line in diff:
        log(line)
    if diff:
        found("flags-drift", diff[0])
    else:
        results["flags"] = True
    cats = {c for c, _ in FOUND}
    expected = [
        "symbol:heap", "symbol:operator new", "symbol:operator delete", "symbol:libc stdio",
        "symbol:guarded static initialisation", "symbol:process control / assert / setjmp",
        "symbol:vtable", "symbol:RTTI typeinfo", "symbol:time (port/ only)",
        "writable", "cycle", "indirect-unjustified", "dynamic-frame", "stack-unbounded", "over-budget",
        "flags-drift",
    ]
    log("")
    log("gates self-test: each violation planted in tools/gates/selftest/ must be reported")
    ok = True
    for e in expected:
        hit = e in cats
        ok = ok and hit
        log(f"  {'caught ' if hit else 'MISSED '} {e}")
    for gate, passed in results.items():
        if passed:
            ok = False
            log(f"  MISSED  gate '{gate}' passed on the planted violations")
    log("gates self-test: " + ("ok" if ok else "FAILED"))
    return ok


# --------------------------------------------------------------------------
# Gate 4: cppcheck (with the MISRA addon) and clang-tidy.

# cppcheck configurations: two presets' own preprocessor flags (-D, -U, -I
# and -std of their compile command of lib/tape.cpp) plus a platform and the
# fault hook switch (no CMake option sets it: both values are analysed). With
# -D given, cppcheck analyses exactly that configuration.
CPPCHECK_CONFIGS = [
    ("host preset, 64-bit, fault hook on", "host", ["--platform=unix64", "-DBURTORCH_CONFIG_FAULT_HOOK=1"]),
    ("cortex-m4 preset (parameter names off), 32-bit, fault hook off", "cortex-m4",
     ["--platform=unix32", "-DBURTORCH_CONFIG_FAULT_HOOK=0"]),
]


def preprocessor_flags(argv: list[str]) -> list[str]:
    """-D/-U/-I/-std of a compile command, in cppcheck's spelling; include
    directories inside the repository relative to it (cppcheck runs there,
    so reports and suppressions keep their relative paths)."""
    out = []
    it = iter(argv[1:])
    for a in it:
        if a in ("-D", "-U", "-I"):
            a += next(it, "")
        if a.startswith("-I"):
            p = Path(a[2:])
            out.append("-I" + (rel(p) if p.is_absolute() and (p == ROOT or ROOT in p.parents) else a[2:]))
        elif a.startswith(("-D", "-U")):
            out.append(a)
        elif a.startswith("-std="):
            out.append("-" + a)
    return out


def is_template_head(site: str) -> bool:
    """misra.py 12.3 (comma operator) fires on template parameter lists."""
    m = re.match(r"^(.*?):(\d+):", site)
    if not m:
        return False
    path = ROOT / m.group(1)
    if not path.exists():
        return False
    lines = path.read_text(errors="replace").splitlines()
    n = int(m.group(2))
    return 0 < n <= len(lines) and re.match(r"^\s*template\s*<", lines[n - 1]) is not None


def template_comma_at(site: str) -> bool:
    """misra.py 12.3 (comma operator) also fires on the commas of template
    argument lists (`Lanes<S, N>`); the compliance kit's own test
    (tools/burtorch-compliance, template_comma) tells them from comma
    operators, so the gate and the kit set aside the same reports."""
    at = site_source(site)
    if at is None:
        return False
    lines, n, col = at
    return 0 < n <= len(lines) and kit_template_comma()(lines[n - 1], col)


_KIT_TEMPLATE_COMMA = None


def kit_template_comma():
    """template_comma of tools/burtorch-compliance (a script: loaded once by path)."""
    global _KIT_TEMPLATE_COMMA
    if _KIT_TEMPLATE_COMMA is None:
        import importlib.machinery
        import importlib.util
        loader = importlib.machinery.SourceFileLoader("burtorch_compliance", str(ROOT / "tools" / "burtorch-compliance"))
        spec = importlib.util.spec_from_loader(loader.name, loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules[loader.name] = module  # its dataclasses look their module up there
        loader.exec_module(module)
        _KIT_TEMPLATE_COMMA = module.template_comma
    return _KIT_TEMPLATE_COMMA


def gate_cppcheck() -> bool:
    if shutil.which("cppcheck") is None:
        log("cppcheck not found (tools/install-deps)")
        return False
    version = run(["cppcheck", "--version"]).stdout.strip()
    tu = write_all_headers_tu()
    findings = []
    dropped = 0
    listed = {line.strip() for line in (GATES_DIR / "cppcheck-suppressions.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    sources: list[str] = []
    for title, preset_name, flags in CPPCHECK_CONFIGS:
        t = preset(preset_name)
        if t is None:
            return False
        sources = sorted(t.commands) + [str(tu)]
        argv = t.commands["lib/tape.cpp"][0]
        flags = flags + preprocessor_flags(argv)
        # The configuration is the generated header's: analyse the fault hook
        # switch of this configuration through a copy of the preset's header
        # with that value (a -D alone would contradict the header: #error).
        hook = next((f.split("=", 1)[1] for f in flags if f.startswith("-DBURTORCH_CONFIG_FAULT_HOOK=")), None)
        gen = generated_dir(argv)
        if hook is not None and gen is not None:
            header = generated_header(argv)
            if "#define BURTORCH_BUILT_FAULT_HOOK " not in header:
                log(f"cppcheck: no BURTORCH_BUILT_FAULT_HOOK in {gen}/burtorch/build_config.hpp")
                return False
            copy = OUT / "cppcheck" / ("config-" + re.sub(r"[^a-z0-9]+", "-", title))
            (copy / "burtorch").mkdir(parents=True, exist_ok=True)
            (copy / "burtorch" / "build_config.hpp").write_text(
                re.sub(r"#define BURTORCH_BUILT_FAULT_HOOK \w+", "#define BURTORCH_BUILT_FAULT_HOOK " + hook, header))
            old_flag = [f for f in flags if f.startswith("-I") and f.endswith(GENERATED_INCLUDE)]
            flags = [f for f in flags if f not in old_flag] + ["-I" + rel(copy)]
        cache = OUT / "cppcheck" / re.sub(r"[^a-z0-9]+", "-", title)
        cache.mkdir(parents=True, exist_ok=True)
        cmd = ["cppcheck", "--enable=all", "--inconclusive", "--addon=misra", "--language=c++",
               "--library=std", *flags, "-UBURTORCH_CONFIG_USER_HEADER",
               "--inline-suppr", f"--suppressions-list={rel(GATES_DIR / 'cppcheck-suppressions.txt')}",
               f"--cppcheck-build-dir={cache}", "--quiet",
               "--template={file}:{line}:{column}: {severity}: {id}: {message}", *sources]
        res = run(cmd)
        if res.returncode != 0:
            log(res.stdout + res.stderr)
            log("cppcheck failed to run")
            return False
        for line in (res.stdout + res.stderr).splitlines():
            m = re.match(r"^(\S+?:\d+:\d+): (\w+): ([\w.-]+): (.*)$", line)
            if not m:
                if line.strip():
                    findings.append(f"[{title}] {line}")
                continue
            site, _sev, check, msg = m.groups()
            # An entry of the project-wide list that matches nothing today is not a finding.
            if check == "unmatchedSuppression" and msg.split(": ", 1)[-1].strip() in listed:
                continue
            if check == "misra-c2012-12.3" and (is_template_head(site) or template_comma_at(site)):
                dropped += 1
                continue
            findings.append(f"[{title}] {line}")
    findings = sorted(set(findings))
    log(f"{version}: --enable=all --inconclusive --addon=misra on {len(sources) - 1} sources + every public header, "
        f"{len(CPPCHECK_CONFIGS)} configurations")
    log(f"  misra-c2012-12.3 reports on template parameter and argument lists (not comma operators) set aside: {dropped}")
    log(f"cppcheck findings: {len(findings)}")
    for f in findings:
        log("  " + f)
    for f in findings:
        found("cppcheck", f)
    return not findings


def gate_clang_tidy() -> bool:
    exe = shutil.which("clang-tidy") or shutil.which("clang-tidy-14")
    if exe is None:
        log("clang-tidy not found (tools/install-deps)")
        return False
    version = run([exe, "--version"]).stdout.strip().splitlines()
    tu = write_all_headers_tu()
    host = preset("host")
    if host is None:
        return False
    compdb = write_compdb([tu], host)
    sources = [str(ROOT / s) for s in sorted(host.commands)] + [str(tu)]
    enabled = run([exe, "--list-checks", str(sources[0]), "-p", str(compdb)]).stdout
    n_checks = sum(1 for line in enabled.splitlines() if line.startswith("    "))

    def tidy(src: str) -> subprocess.CompletedProcess:
        return run([exe, "--quiet", "-p", str(compdb), src])

    findings = []
    errors = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=JOBS) as pool:
        for src, res in zip(sources, pool.map(tidy, sources)):
            for line in res.stdout.splitlines():
                # Any path: a relative one (an include found through a relative -I)
                # must not drop the finding.
                m = re.match(r"^(\S+?):(\d+):(\d+): (warning|error): (.*) \[([\w.,-]+)\]$", line)
                if m:
                    path = (ROOT / m.group(1)).resolve()
                    where = rel(path) if ROOT in path.parents else str(path)
                    findings.append(f"{where}:{m.group(2)}:{m.group(3)}: {m.group(5)} [{m.group(6)}]")
            if res.returncode != 0 and "error:" in res.stdout + res.stderr:
                errors.append(f"{src}: {res.stderr.strip()[-500:]}")
    findings = sorted(set(findings))
    version_line = next((v.strip() for v in version if "version" in v), "clang-tidy")
    log(f"clang-tidy ({version_line}): .clang-tidy profile, {n_checks} checks enabled, "
        f"{len(sources) - 1} sources + every public header")
    log(f"clang-tidy findings: {len(findings)}")
    for f in findings:
        log("  " + f)
        found("clang-tidy", f)
    for e in errors:
        log("  ERROR " + e)
    return not findings and not errors


def main() -> int:
    global REUSE_CONFIGURATION
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["build", "flags", "symbols", "callgraph", "stack", "records", "compdb",
                                        "headers-tu", "selftest", "cppcheck", "clang-tidy"])
    ap.add_argument("--targets", default=os.environ.get("GATES_TARGETS", ""),
                    help="comma-separated preset names (default: all: " + ",".join(t.name for t in TARGETS) + ")")
    ap.add_argument("--opts", default=os.environ.get("GATES_OPTS", ""),
                    help="e.g. -O0,-O2 (default: -O0,-O2,-Os and the preset's own level)")
    args = ap.parse_args()
    targets = TARGETS
    if args.targets:
        wanted = args.targets.split(",")
        unknown = sorted(set(wanted) - {t.name for t in TARGETS})
        if unknown:
            ap.error("unknown target(s): " + ", ".join(unknown))
        targets = [t for t in TARGETS if t.name in wanted]
    opts = args.opts.split(",") if args.opts else None
    OUT.mkdir(parents=True, exist_ok=True)
    if args.command == "build":
        ok = build(targets, opts)
    elif args.command == "flags":
        ok = gate_flags(targets, opts)
    elif args.command == "symbols":
        # The build the gates analyse must be the one that ships: checked first.
        ok = build(targets, opts) and gate_flags(targets, opts)
        ok = gate_symbols(targets, opts) and ok
    elif args.command == "callgraph":
        REUSE_CONFIGURATION = True
        ok = gate_callgraph(targets, opts)
    elif args.command == "stack":
        REUSE_CONFIGURATION = True
        ok = gate_stack(targets, opts)
    elif args.command == "records":
        ok = gate_records()
    elif args.command == "selftest":
        ok = selftest()
    elif args.command == "cppcheck":
        ok = gate_cppcheck()
    elif args.command == "clang-tidy":
        ok = gate_clang_tidy()
    elif args.command == "headers-tu":
        print(write_all_headers_tu())
        ok = True
    else:
        host = preset("host")
        ok = host is not None
        if ok:
            print(write_compdb([write_all_headers_tu()], host) / "compile_commands.json")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
