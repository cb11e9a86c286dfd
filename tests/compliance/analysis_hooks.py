#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The analysers as a CMake build runs them (CMAKE_<LANG>_CLANG_TIDY and
CMAKE_<LANG>_CPPCHECK), with the settings the compliance kit uses, for
comparing the kit's wall time with a build that has analysis turned on.

  analysis_hooks.py KIT OUT COMPILER FLAG...

KIT is an installed bin/burtorch-compliance (loaded as a module, so the
compiler is asked the same way), OUT a directory for the platform and macro
files. Prints three lines, CMake lists: -DCMAKE_CXX_CLANG_TIDY=...,
-DCMAKE_CXX_CPPCHECK=..., -DCMAKE_C_CPPCHECK=....
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import threading
import types
from pathlib import Path


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if argv[:1] and argv[0].startswith("-"):
        sys.stderr.write("%s: unknown option %s (see --help)\n" % (Path(sys.argv[0]).name, argv[0]))
        return 2
    if len(argv) < 3:
        print(__doc__)
        return 2
    kit_path, out, compiler, flags = Path(argv[0]), Path(argv[1]), argv[2], tuple(argv[3:])
    loader = importlib.machinery.SourceFileLoader("kit", str(kit_path))
    spec = importlib.util.spec_from_loader("kit", loader)
    kit = importlib.util.module_from_spec(spec)
    sys.modules["kit"] = kit
    loader.exec_module(kit)
    out.mkdir(parents=True, exist_ok=True)
    share = kit_path.resolve().parent.parent / "share" / "burtorch" / "compliance"
    tidy = "clang-tidy"
    ctx = types.SimpleNamespace(work=out, lock=threading.Lock())
    cxx = kit.do_probe(Path(compiler), flags, "c++", out)
    cc = kit.do_probe(Path(compiler.replace("g++", "gcc")), flags, "c", out)
    resource = kit.tidy_resource_dir(tidy, out)
    tidy_args = [tidy, "--quiet", f"--config-file={share / '.clang-tidy'}", "--header-filter=.*",
                 f"--extra-arg=--target={cxx.target}", "--extra-arg=-nostdinc"]
    for d in cxx.system_dirs:
        tidy_args.append(f"--extra-arg=-isystem{resource if d == cxx.builtin_dir else d}")
    def cppcheck(pr) -> list[str]:
        return ["cppcheck", "--enable=all", "--inconclusive", "--addon=misra", f"--std={pr.cppcheck_std()}",
                "--library=std", "--max-configs=1", f"--suppressions-list={share / 'cppcheck-suppressions.txt'}",
                "--quiet", f"--platform={kit.platform_file(ctx, pr)}", f"--include={kit.macros_file(ctx, pr)}",
                "-UBURTORCH_CONFIG_USER_HEADER"]
    print("-DCMAKE_CXX_CLANG_TIDY=" + ";".join(tidy_args))
    print("-DCMAKE_CXX_CPPCHECK=" + ";".join(cppcheck(cxx)))
    print("-DCMAKE_C_CPPCHECK=" + ";".join(cppcheck(cc)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
