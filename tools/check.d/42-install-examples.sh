# SPDX-License-Identifier: Apache-2.0
# The library as a user gets it: the host preset's install and the Cortex-M4
# preset's (MPS2 AN386; build/prefix/, shared with the other stages), and
# every example under
# examples/ against the installed package (find_package(burtorch 0.3), not
# the source tree), runs it and checks its output:
#   line_fit      slope and intercept equal the closed-form least-squares
#                 solution of the points it prints (to 1e-6)
#   xor_nn        final loss below 1e-3, the four predictions on the right
#                 side of 0.5, the memory plan equal to what a sample used
#   custom_op     an op family outside the library: its gradients equal
#                 central finite differences (to 1e-6)
#   xor_firmware  under QEMU: final loss below 1e-3; no printf, malloc or
#                 _sbrk in the ELF; a smaller RAM budget fails to link; the
#                 same firmware with a linker script of its own, and built
#                 from the source tree with add_subdirectory
# and also: pkg-config compiles line_fit; a tape of Lanes instantiated with
# the installed <burtorch/lanes/ops.hpp>; the package's version check
# rejects 0.2, 0.4 and 1.0; a host project that adds the tree with
# FetchContent gets the library targets only; a -D that contradicts the installed
# build_config.hpp fails to compile, and objects compiled against the
# Cortex-M4 install's headers fail to link with the host archive, both
# naming BURTORCH_CONFIG_PARAM_NAMES.
# suite: compliance
# after: 10-host 23-cortex-m4
# trees: install-examples
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work="$root/build/install-examples"
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

echo "== the host and Cortex-M4 presets' installs (build/prefix/, tools/check.d/lib/trees.sh)"
. "$root/tools/check.d/lib/trees.sh"
host=$(preset_prefix host) || fail "no host install"
m4=$(preset_prefix cortex-m4) || fail "no cortex-m4 install"
for f in include/burtorch/burtorch.hpp include/burtorch/version.hpp include/burtorch/build_config.hpp \
         include/burtorch/lanes/ops.hpp include/burtorch/port/port.hpp lib/libburtorch.a \
         lib/libburtorch_port_posix.a lib/libburtorch_port_null.a lib/cmake/burtorch/burtorchConfig.cmake \
         lib/cmake/burtorch/burtorchConfigVersion.cmake lib/pkgconfig/burtorch.pc; do
  [ -f "$host/$f" ] || fail "host install lacks $f"
done
for f in lib/libburtorch_port_cortex_m_core.a lib/libburtorch_port_semihosting.a share/burtorch/board/board.ld \
         share/burtorch/board/sections.ld share/burtorch/tools/qemu-run share/burtorch/toolchains/cortex-m4.cmake \
         lib/cmake/burtorch/BurtorchProgram.cmake; do
  [ -f "$m4/$f" ] || fail "cortex-m4 install lacks $f"
done
grep -q 'BURTORCH_BUILT_PARAM_NAMES 1' "$host/include/burtorch/build_config.hpp" || fail "host build_config"
grep -q 'BURTORCH_BUILT_PARAM_NAMES 0' "$m4/include/burtorch/build_config.hpp" || fail "cortex-m4 build_config"

echo "== line_fit (core API) against the host package"
cmake -S "$root/examples/line_fit" -B "$work/line_fit" -DCMAKE_PREFIX_PATH="$host" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/line_fit" >/dev/null
"$work/line_fit/line_fit" > "$work/line_fit.out"
cat "$work/line_fit.out"
python3 - "$work/line_fit.out" <<'PY'
import sys
xs, ys, got = [], [], {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "point":
        xs.append(float(f[1])); ys.append(float(f[2]))
    elif f[0] in ("slope", "intercept"):
        got[f[0]] = float(f[1])
n = len(xs)
assert n >= 2, "no points printed"
mx, my = sum(xs) / n, sum(ys) / n
sxx = sum((x - mx) ** 2 for x in xs)
sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
slope = sxy / sxx
intercept = my - slope * mx
print(f"least squares: slope {slope:.12g} intercept {intercept:.12g}")
for name, want in (("slope", slope), ("intercept", intercept)):
    if abs(got[name] - want) > 1e-6:
        sys.exit(f"FAIL: {name} {got[name]} != least squares {want}")
PY

echo "== custom_op (an op family of the program's own) against the host package"
cmake -S "$root/examples/custom_op" -B "$work/custom_op" -DCMAKE_PREFIX_PATH="$host" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/custom_op" >/dev/null
"$work/custom_op/custom_op" > "$work/custom_op.out" || { cat "$work/custom_op.out"; fail "custom_op"; }
cat "$work/custom_op.out"
# The gradients the example prints against its finite differences, checked here too.
python3 - "$work/custom_op.out" <<'PY'
import sys
rows = {}
lines = [l.split() for l in open(sys.argv[1])]
grads = [list(map(float, l[1:])) for l in lines if l[0] == "grad"]
fds = [list(map(float, l[1:])) for l in lines if l[0] == "fd"]
assert len(grads) == 3 and len(fds) == 3, "three points expected"
for g, f in zip(grads, fds):
    for a, b in zip(g, f):
        if abs(a - b) > 1e-6 * (1 + abs(b)):
            sys.exit(f"FAIL: gradient {a} != finite difference {b}")
PY

echo "== line_fit through pkg-config"
PKG_CONFIG_PATH="$host/lib/pkgconfig" pkg-config --modversion burtorch | grep -qx '0.3.0' || fail "pkg-config version"
# shellcheck disable=SC2046
g++ -std=c++17 "$root/examples/line_fit/main.cpp" $(PKG_CONFIG_PATH="$host/lib/pkgconfig" pkg-config --cflags --libs burtorch) \
    -o "$work/line_fit_pc"
"$work/line_fit_pc" | diff - "$work/line_fit.out" || fail "pkg-config build prints something else"

echo "== xor_nn (nn layers, constexpr plan) against the host package"
cmake -S "$root/examples/xor_nn" -B "$work/xor_nn" -DCMAKE_PREFIX_PATH="$host" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/xor_nn" >/dev/null
"$work/xor_nn/xor_nn" > "$work/xor_nn.out" || { cat "$work/xor_nn.out"; fail "xor_nn exited non-zero"; }
cat "$work/xor_nn.out"
python3 - "$work/xor_nn.out" <<'PY'
import sys
lines = [l.split() for l in open(sys.argv[1])]
final = [float(f[2]) for f in lines if f[:2] == ["final", "loss"]]
assert final and final[0] < 1e-3, f"FAIL: final loss {final}"
preds = [(float(f[1]), float(f[2]), float(f[4])) for f in lines if f and f[0] == "xor"]
assert len(preds) == 4, "FAIL: four predictions"
for a, b, p in preds:
    want = float(int(a) ^ int(b))
    assert abs(p - want) < 0.1, f"FAIL: xor {a} {b} -> {p}"
PY

echo "== xor_firmware against the cortex-m4 package, under QEMU"
tc="$m4/share/burtorch/toolchains/cortex-m4.cmake"
cmake -S "$root/examples/xor_firmware" -B "$work/xor_firmware" -DCMAKE_TOOLCHAIN_FILE="$tc" \
      -DCMAKE_PREFIX_PATH="$m4" -DCMAKE_BUILD_TYPE=MinSizeRel >/dev/null
cmake --build "$work/xor_firmware" >/dev/null
check_firmware() {  # build dir
  ctest --test-dir "$1" -V > "$1.out" 2>&1 || { cat "$1.out"; fail "firmware in $1 failed"; }
  grep -E 'epoch|loss' "$1.out"
  python3 - "$1.out" <<'PY'
import re, sys
m = re.findall(r"final loss (\S+)", open(sys.argv[1]).read())
assert m and float(m[-1]) < 1e-3, f"FAIL: final loss {m}"
PY
  if arm-none-eabi-nm "$1/xor_firmware.elf" | grep -E ' (_sbrk|_sbrk_r|malloc|printf|vfprintf|_printf_i)$'; then
    fail "the firmware links printf or a heap"
  fi
}
check_firmware "$work/xor_firmware"
grep -q 'LENGTH = __burtorch_ram_budget' "$m4/share/burtorch/board/board.ld" || fail "board.ld budget"
grep -Eq '__burtorch_ram_budget = 0x0*6000' "$work/xor_firmware/xor_firmware.elf.map" || fail "RAM budget 24576 not applied"

echo "== a RAM budget the firmware does not fit fails to link"
cmake -S "$root/examples/xor_firmware" -B "$work/xor_firmware_small" -DCMAKE_TOOLCHAIN_FILE="$tc" \
      -DCMAKE_PREFIX_PATH="$m4" -DXOR_RAM_BUDGET=6144 >/dev/null
if cmake --build "$work/xor_firmware_small" > "$work/small.out" 2>&1; then fail "6 KiB budget linked"; fi
grep -q "region \`RAM' overflowed" "$work/small.out" || { cat "$work/small.out"; fail "no RAM overflow message"; }

echo "== xor_firmware with its own linker script"
cmake -S "$root/examples/xor_firmware" -B "$work/xor_firmware_own_ld" -DCMAKE_TOOLCHAIN_FILE="$tc" \
      -DCMAKE_PREFIX_PATH="$m4" -DXOR_LINKER_SCRIPT="$root/examples/xor_firmware/my_board.ld" >/dev/null
cmake --build "$work/xor_firmware_own_ld" >/dev/null
# my_board.ld: 16 KiB of RAM, 128 KiB of flash.
grep -Eq '^RAM +0x20000000 +0x00004000' "$work/xor_firmware_own_ld/xor_firmware.elf.map" || fail "own linker script not used"
grep -Eq '^FLASH +0x00000000 +0x00020000' "$work/xor_firmware_own_ld/xor_firmware.elf.map" || fail "own linker script not used"
check_firmware "$work/xor_firmware_own_ld"

echo "== xor_firmware with the source tree added by add_subdirectory"
cmake -S "$root/examples/xor_firmware" -B "$work/xor_firmware_subdir" \
      -DCMAKE_TOOLCHAIN_FILE="$root/toolchains/cortex-m4.cmake" -DXOR_BURTORCH_SOURCE_DIR="$root" \
      -DCMAKE_BUILD_TYPE=MinSizeRel >/dev/null
cmake --build "$work/xor_firmware_subdir" -j2 >/dev/null
check_firmware "$work/xor_firmware_subdir"
if cmake --build "$work/xor_firmware_subdir" --target help | grep -Eq '\.\.\. (test_|footprint_|burtorch-)'; then
  fail "add_subdirectory builds tests, programs or probes"
fi

echo "== a host project with FetchContent gets the libraries and the aliases only"
mkdir -p "$work/subdir-host"
cat > "$work/subdir-host/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(subdir_host LANGUAGES C CXX)
include(FetchContent)
FetchContent_Declare(burtorch SOURCE_DIR "$root")
FetchContent_MakeAvailable(burtorch)
add_executable(line_fit "$root/examples/line_fit/main.cpp")
target_link_libraries(line_fit PRIVATE burtorch::burtorch burtorch::port burtorch::port_posix burtorch::port_null)
CMAKE
cmake -S "$work/subdir-host" -B "$work/subdir-host/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=$(cmake --build "$work/subdir-host/build" --target help | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p' | grep -v -E '^(all|clean|depend|edit_cache|install.*|list_install_components|rebuild_cache|test|line_fit|.*\.(o|i|s|obj))$' | sort | tr '\n' ' ')
echo "library targets: $targets"
[ "$targets" = "burtorch burtorch_port_null burtorch_port_posix " ] || fail "unexpected targets: $targets"
cmake --build "$work/subdir-host/build" -j2 >/dev/null
"$work/subdir-host/build/line_fit" | diff - "$work/line_fit.out" || fail "FetchContent build prints something else"

echo "== package version compatibility (0.3.x only)"
for want in "0.3:ok" "0.3.0:ok" "0.2:no" "0.4:no" "1.0:no"; do
  v=${want%%:*}
  mkdir -p "$work/version-$v"
  cat > "$work/version-$v/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(v LANGUAGES CXX)
find_package(burtorch $v REQUIRED)
CMAKE
  if cmake -S "$work/version-$v" -B "$work/version-$v/build" -DCMAKE_PREFIX_PATH="$host" >/dev/null 2>&1; then got=ok; else got=no; fi
  [ "$got" = "${want#*:}" ] || fail "find_package(burtorch $v): $got"
  echo "find_package(burtorch $v): $got"
done

echo "== a tape of lanes (burtorch/lanes/lanes.hpp) with the installed template definitions"
cat > "$work/lanes_user.cpp" <<'CPP'
#include <burtorch/burtorch.hpp>
#include <burtorch/lanes/ops.hpp>
#include <burtorch/lanes/lanes.hpp>
using L4 = burtorch::Lanes<double, 4>;
template class burtorch::Tape<L4>;
int main() {
  static burtorch::FixedTape<L4, 64> tape;
  const auto a = tape.leaf(L4::of({-41.0, -4.0, 1.0, 2.5}));
  const auto b = a * a;  // db/da = 2a per lane
  const bool ok = (tape.backward(b) == burtorch::Status::kOk) && (a.grad().lane[0] == -82.0) &&
                  (a.grad().lane[1] == -8.0) && (a.grad().lane[2] == 2.0) && (a.grad().lane[3] == 5.0);
  return ok ? 0 : 1;
}
CPP
g++ -std=c++17 -I"$host/include" "$work/lanes_user.cpp" -L"$host/lib" -lburtorch -o "$work/lanes_user"
"$work/lanes_user" || fail "tape of lanes: wrong gradients"

echo "== configuration mismatches against the installed packages"
if g++ -std=c++17 -I"$host/include" -DBURTORCH_CONFIG_PARAM_NAMES=0 -c "$root/examples/line_fit/main.cpp" \
     -o "$work/mismatch.o" > "$work/mismatch-compile.out" 2>&1; then
  fail "a contradicting -D compiled"
fi
grep -q '#error "BURTORCH_CONFIG_PARAM_NAMES differs' "$work/mismatch-compile.out" || { cat "$work/mismatch-compile.out"; fail "no #error naming the flag"; }
echo "compile: $(grep -m1 -o 'error: #error "BURTORCH_CONFIG_PARAM_NAMES[^:]*' "$work/mismatch-compile.out")"
# Headers of the Cortex-M4 install (names off), archive of the host install (names on).
if g++ -std=c++17 -I"$m4/include" "$root/examples/line_fit/main.cpp" -L"$host/lib" -lburtorch_port_posix -lburtorch \
     -o "$work/mismatch" > "$work/mismatch-link.out" 2>&1; then
  fail "objects built with other flags linked"
fi
grep -q 'undefined reference to .*burtorch::detail::config_PARAM_NAMES<0>' "$work/mismatch-link.out" || { cat "$work/mismatch-link.out"; fail "no undefined reference naming the flag"; }
echo "link: $(grep -m1 -o 'undefined reference to .*' "$work/mismatch-link.out" | cut -c1-200)..."
echo "all examples built against the installed packages and checked"
