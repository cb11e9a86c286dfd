# SPDX-License-Identifier: Apache-2.0
# The Linux cross installs (aarch64, armv7) consumed as docs/porting.md says:
# each install carries its toolchain file (share/burtorch/toolchains/), a
# project configured with that file and -DCMAKE_PREFIX_PATH=<prefix> finds
# the package (find_package(burtorch 0.3)), builds examples/line_fit and
# examples/xor_nn, and runs them under qemu-user (the toolchain's emulator),
# checked as stage 42 checks them on the host: line_fit's slope and
# intercept are the least-squares fit of its points (to 1e-6), xor_nn's
# final loss is below 1e-3. Also: the CTest of a consumer project runs
# through the emulator; a package for another processor is refused with a
# message naming both; and the toolchain file stripped of the lines that
# make each -DCMAKE_PREFIX_PATH entry a find root does not find the package
# (the failure those lines fix). Then MPI on AArch64 boards: the aarch64
# install's `mpi` component (stage 20 configures it with Debian's arm64 Open
# MPI, tools/mpi-sysroot) and examples/cluster_mlp built with the installed
# toolchain file and -DBURTORCH_MPI_SYSROOT, run as ranks of the host's
# mpirun under qemu-aarch64: 1 and 2 ranks data-parallel, every parameter
# within 1e-12 of each other and of the x86-64 build's one-process run (the
# host install's), and federated over mpirun (2 clients) bit for bit the
# in-process link's. On the presets' installs (build/prefix/, made by stages
# 10, 20 and 21): ~30 s on 2 cores, ~20 s more for the MPI part.
# suite: compliance
# jobs: 1
# after: 10-host 20-aarch64-linux 21-armv7-linux
# trees: cross-install
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work="$root/build/cross-install"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
. "$root/tools/check.d/lib/trees.sh"

fit_check() {  # output of line_fit
  python3 - "$1" <<'PY'
import sys
xs, ys, got = [], [], {}
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "point":
        xs.append(float(f[1])); ys.append(float(f[2]))
    elif f and f[0] in ("slope", "intercept"):
        got[f[0]] = float(f[1])
n = len(xs)
assert n >= 2, "no points printed"
mx, my = sum(xs) / n, sum(ys) / n
slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
intercept = my - slope * mx
for name, want in (("slope", slope), ("intercept", intercept)):
    if abs(got[name] - want) > 1e-6:
        sys.exit(f"FAIL: {name} {got[name]} != least squares {want}")
print(f"  line_fit: slope {got['slope']:.9g} intercept {got['intercept']:.9g} (least squares {slope:.9g}, {intercept:.9g})")
PY
}

for target in aarch64:aarch64-linux-gnu.cmake:qemu-aarch64:aarch64-linux-gnu armv7:arm-linux-gnueabihf.cmake:qemu-arm:arm-linux-gnueabihf; do
  IFS=: read -r name toolchain emulator triple <<< "$target"
  echo "== $name: the $name-linux preset's install (build/prefix/$name-linux)"
  prefix=$(preset_prefix "$name-linux") || fail "$name: no install"
  tc="$prefix/share/burtorch/toolchains/$toolchain"
  [ -f "$tc" ] || fail "$name install lacks share/burtorch/toolchains/$toolchain"
  grep -q "set(BURTORCH_TOOLCHAIN_FILE\|BURTORCH_TOOLCHAIN_FILE" "$prefix/lib/cmake/burtorch/burtorchConfig.cmake" ||
    fail "$name package does not name its toolchain file"
  file -L "$prefix/lib/libburtorch.a" >/dev/null

  for example in line_fit xor_nn; do
    echo "== $name: examples/$example with the installed toolchain file and -DCMAKE_PREFIX_PATH"
    b="$work/$name-$example"
    rm -rf "$b"
    cmake -S "$root/examples/$example" -B "$b" -DCMAKE_TOOLCHAIN_FILE="$tc" -DCMAKE_PREFIX_PATH="$prefix" \
          -DCMAKE_BUILD_TYPE=Release > "$b.configure.log" 2>&1 || { cat "$b.configure.log"; fail "$name: $example does not configure"; }
    grep -q "burtorch_DIR:PATH=$prefix/lib/cmake/burtorch" "$b/CMakeCache.txt" || fail "$name: $example found another package"
    cmake --build "$b" >/dev/null
    file "$b/$example" | grep -q "$( [ "$name" = aarch64 ] && echo 'ARM aarch64' || echo 'ARM, EABI5')" ||
      fail "$name: $example is not a $name program: $(file "$b/$example")"
    "$emulator" -L "/usr/$triple" "$b/$example" > "$b.out" || { cat "$b.out"; fail "$name: $example exited non-zero"; }
  done
  fit_check "$work/$name-line_fit.out"
  python3 - "$work/$name-xor_nn.out" <<'PY'
import sys
final = [float(l.split()[2]) for l in open(sys.argv[1]) if l.startswith("final loss")]
assert final and final[0] < 1e-3, f"FAIL: xor_nn final loss {final}"
print(f"  xor_nn: final loss {final[0]:.3g}")
PY

  echo "== $name: a consumer's CTest runs its program through the toolchain's emulator"
  c="$work/$name-consumer"
  rm -rf "$c"
  mkdir -p "$c/src"
  cat > "$c/src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(consumer LANGUAGES CXX)
find_package(burtorch 0.3 REQUIRED)
add_executable(line_fit "$root/examples/line_fit/main.cpp")
target_link_libraries(line_fit PRIVATE burtorch::burtorch burtorch::port)
enable_testing()
add_test(NAME line_fit COMMAND line_fit)
set_tests_properties(line_fit PROPERTIES PASS_REGULAR_EXPRESSION "slope")
CMAKE
  cmake -S "$c/src" -B "$c/build" -DCMAKE_TOOLCHAIN_FILE="$tc" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$c/build" >/dev/null
  ctest --test-dir "$c/build" --no-tests=error > "$c.ctest.log" 2>&1 || { cat "$c.ctest.log"; fail "$name: consumer CTest"; }
  grep -q "100% tests passed" "$c.ctest.log" || fail "$name: consumer CTest did not pass"
  echo "  ctest under $emulator: 1 test passed"
done

echo "== an install for another processor is refused by name, not at link time"
b="$work/aarch64-wrong-package"
rm -rf "$b"
if cmake -S "$root/examples/line_fit" -B "$b" -DCMAKE_TOOLCHAIN_FILE="$root/build/prefix/aarch64-linux/share/burtorch/toolchains/aarch64-linux-gnu.cmake" \
     -DCMAKE_PREFIX_PATH="$root/build/prefix/armv7-linux" > "$b.log" 2>&1; then
  fail "an aarch64 build accepted the armv7 package"
fi
want="was built for Linux on armv7-a; this project builds for Linux on aarch64"
tr -s ' \n' ' ' < "$b.log" | grep -qF "$want" || { cat "$b.log"; fail "no message naming both processors"; }
echo "  ... $want"

echo "== the toolchain file without its prefix roots finds nothing (what the roots fix)"
sed '/^foreach(_burtorch_prefix IN LISTS CMAKE_PREFIX_PATH)/,/^endforeach()/d' \
    "$root/toolchains/aarch64-linux-gnu.cmake" > "$work/unrooted.cmake"
! grep -q _burtorch_prefix "$work/unrooted.cmake" || fail "could not strip the prefix roots"
b="$work/aarch64-unrooted"
rm -rf "$b"
if cmake -S "$root/examples/line_fit" -B "$b" -DCMAKE_TOOLCHAIN_FILE="$work/unrooted.cmake" \
     -DCMAKE_PREFIX_PATH="$root/build/prefix/aarch64-linux" > "$b.log" 2>&1; then
  fail "the package was found without the prefix roots: this check shows nothing"
fi
echo "  without them: $(grep -m1 -o 'Could not find a package configuration file provided by "burtorch"' "$b.log")"
echo "== aarch64: a user's cluster program (examples/cluster_mlp) over MPI, ranks under qemu-aarch64"
sysroot="$root/build/mpi-sysroot-arm64"
a64=$(preset_prefix aarch64-linux) || fail "aarch64: no install"
[ -f "$a64/lib/libburtorch_port_mpi.a" ] && [ -f "$a64/lib/pkgconfig/burtorch-mpi.pc" ] ||
  fail "the aarch64 install has no burtorch::port_mpi (stage 20 configures it with tools/mpi-sysroot's $sysroot)"
b="$work/aarch64-cluster_mlp"
rm -rf "$b"
cmake -S "$root/examples/cluster_mlp" -B "$b" -DCMAKE_TOOLCHAIN_FILE="$a64/share/burtorch/toolchains/aarch64-linux-gnu.cmake" \
      -DCMAKE_PREFIX_PATH="$a64" -DBURTORCH_MPI_SYSROOT="$sysroot" -DCMAKE_BUILD_TYPE=Release > "$b.configure.log" 2>&1 ||
  { cat "$b.configure.log"; fail "aarch64: cluster_mlp does not configure with the mpi component"; }
cmake --build "$b" >/dev/null
file "$b/cluster_mlp" | grep -q 'ARM aarch64' || fail "cluster_mlp is not an aarch64 program"
host=$(preset_prefix host) || fail "no host install"
[ -f "$host/lib/libburtorch_port_mpi.a" ] || fail "the host install has no burtorch::port_mpi (MPI, tools/deps/distributed.txt)"
x="$work/x86-cluster_mlp"
rm -rf "$x"
cmake -S "$root/examples/cluster_mlp" -B "$x" -DCMAKE_PREFIX_PATH="$host" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$x" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
"$x/cluster_mlp" > "$b.x86.out" 2>&1 || { cat "$b.x86.out"; fail "x86-64 cluster_mlp"; }
for np in 1 2; do
  timeout 300 mpirun --quiet --oversubscribe -np "$np" qemu-aarch64 -L "$sysroot" "$b/cluster_mlp" > "$b.np$np.out" 2>&1 ||
    { cat "$b.np$np.out"; fail "aarch64 cluster_mlp on $np ranks"; }
done
timeout 300 mpirun --quiet --oversubscribe -np 3 qemu-aarch64 -L "$sysroot" "$b/cluster_mlp" --federated > "$b.fed.out" 2>&1 ||
  { cat "$b.fed.out"; fail "aarch64 cluster_mlp --federated"; }
qemu-aarch64 -L "$sysroot" "$b/cluster_mlp" --federated --clients 2 > "$b.loop.out" 2>&1 || { cat "$b.loop.out"; fail "aarch64 loopback"; }
cmp -s "$b.fed.out" "$b.loop.out" || fail "aarch64: federated over mpirun differs from the in-process link"
python3 "$root/tools/check.d/lib/cluster-params.py" 1e-12 "x86-64" "$b.x86.out" "$b.np1.out" "$b.np2.out" ||
  fail "aarch64 cluster_mlp is not within 1e-12 of x86-64"
echo "  aarch64 cluster_mlp --federated: 2 clients over mpirun, bit for bit the in-process link's"
echo "43-cross-install: both Linux cross installs consumed through their own toolchain files"
