# SPDX-License-Identifier: Apache-2.0
# The trainers' --distributed mode under Open MPI's mpirun (ctest label
# distributed, tests/targets/host/distributed_check.sh): one rank bit for bit
# as one process; two and four ranks (oversubscribed on 2 cores) within 1e-12
# of it and the same bits run to run; a rank that fails and a rank killed
# with SIGKILL stop the job, one line per rank, no hang; burtorch-fleet's
# federated rounds (fleet_check.sh); the port's averages against a
# rank-order oracle on 1 to 4 ranks (mpi_reduce_np*). Then the installed
# package's `mpi` component: a user's own program (tests/install/mpi/) built
# against the install with find_package(burtorch COMPONENTS mpi) and with
# pkg-config burtorch-mpi, each run on 3 ranks; and examples/cluster_mlp,
# a user's own 8-16-1 MLP built against the install: data-parallel on 2 and
# 4 ranks within 1e-12 of one process (every parameter) and the same bits
# run to run, federated over mpirun (3 clients) bit for bit the rounds of
# its own in-process link. Runs as root with OMPI_ALLOW_RUN_AS_ROOT. ~50 s
# after 10-host (the tests alone 38 s here; cluster_mlp ~10 s).
# The host and host-debug test presets leave the label out: it runs here.
# suite: fleet
# jobs: 1
# after: 10-host
set -eu
cd "$(dirname "$0")/../.."
command -v mpirun >/dev/null || { echo "FAIL: mpirun not found (tools/deps/distributed.txt)"; exit 1; }
. tools/check.d/lib/trees.sh
preset_targets host burtorch-makemore burtorch-gpt burtorch-cnn burtorch-fleet mpi_reduce_check
grep -q '^BURTORCH_MPIRUN:FILEPATH=/' build/host/CMakeCache.txt || { echo "FAIL: CMake did not find mpirun"; exit 1; }
ctest --test-dir build/host -L distributed --output-on-failure

# The installed package: the libraries, the header and the component.
out=build/distributed-install
rm -rf "$out"
preset_targets host burtorch burtorch_port_null burtorch_port_posix burtorch_port_mpi >/dev/null
cmake --install build/host --prefix "$out/prefix" >/dev/null
test -f "$out/prefix/include/burtorch/port/mpi.hpp" || { echo "FAIL: burtorch/port/mpi.hpp not installed"; exit 1; }
test -f "$out/prefix/lib/libburtorch_port_mpi.a" || { echo "FAIL: libburtorch_port_mpi.a not installed"; exit 1; }
cmake -S tests/install/mpi -B "$out/cmake" -DCMAKE_PREFIX_PATH="$PWD/$out/prefix" >"$out/configure.log" ||
  { cat "$out/configure.log"; echo "FAIL: find_package(burtorch COMPONENTS mpi)"; exit 1; }
cmake --build "$out/cmake" -j2 >/dev/null
PKG_CONFIG_PATH="$PWD/$out/prefix/lib/pkgconfig" pkg-config --exists --print-errors burtorch-mpi
# shellcheck disable=SC2046
c++ -std=c++17 tests/install/mpi/main.cpp -o "$out/pkg_consumer" \
  $(PKG_CONFIG_PATH="$PWD/$out/prefix/lib/pkgconfig" pkg-config --cflags --libs burtorch-mpi)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
for exe in "$out/cmake/mpi_consumer" "$out/pkg_consumer"; do
  timeout 120 mpirun --quiet --oversubscribe -np 3 "$exe" > "$exe.txt" 2>&1 || { cat "$exe.txt"; echo "FAIL: $exe"; exit 1; }
  echo "installed package, $(basename "$exe"): $(grep -E '^[0-9]+ passed' "$exe.txt")"
done

# A user's own model trained both ways against the install (examples/cluster_mlp).
cmake -S examples/cluster_mlp -B "$out/cluster_mlp" -DCMAKE_PREFIX_PATH="$PWD/$out/prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$out/cluster_configure.log" || { cat "$out/cluster_configure.log"; echo "FAIL: cluster_mlp against the install"; exit 1; }
cmake --build "$out/cluster_mlp" -j2 >/dev/null
cluster=$out/cluster_mlp/cluster_mlp
for run in 1 2 4 4b; do
  timeout 120 mpirun --quiet --oversubscribe -np "${run%b}" "$cluster" > "$out/cluster_$run.txt" 2>&1 ||
    { cat "$out/cluster_$run.txt"; echo "FAIL: cluster_mlp on ${run%b} ranks"; exit 1; }
done
cmp -s "$out/cluster_4.txt" "$out/cluster_4b.txt" || { echo "FAIL: cluster_mlp on 4 ranks: other bits in a second run"; exit 1; }
timeout 120 mpirun --quiet --oversubscribe -np 4 "$cluster" --federated > "$out/cluster_fed.txt" 2>&1 ||
  { cat "$out/cluster_fed.txt"; echo "FAIL: cluster_mlp --federated"; exit 1; }
"$cluster" --federated --clients 3 > "$out/cluster_loop.txt" 2>&1 || { cat "$out/cluster_loop.txt"; echo "FAIL: cluster_mlp loopback"; exit 1; }
cmp -s "$out/cluster_fed.txt" "$out/cluster_loop.txt" ||
  { diff "$out/cluster_fed.txt" "$out/cluster_loop.txt" | head; echo "FAIL: federated over MPI differs from the loopback"; exit 1; }
python3 tools/check.d/lib/cluster-params.py 1e-12 "one process" "$out/cluster_1.txt" "$out/cluster_2.txt" \
  "$out/cluster_4.txt" || { echo "FAIL: cluster_mlp on N ranks is not within 1e-12 of one process"; exit 1; }
echo "cluster_mlp --federated: over mpirun bit for bit the in-process link's; $(grep '^round ' "$out/cluster_fed.txt" | tail -1)"
