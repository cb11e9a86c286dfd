# SPDX-License-Identifier: Apache-2.0
# The trainers' --distributed mode under Open MPI's mpirun (ctest label
# distributed, tests/targets/host/distributed_check.sh): one rank bit for bit
# as one process; two and four ranks (oversubscribed on 2 cores) within 1e-12
# of it and the same bits run to run; a rank that fails and a rank killed
# with SIGKILL stop the job, one line per rank, no hang; burtorch-fleet's
# federated rounds (fleet_check.sh). Runs as root with
# OMPI_ALLOW_RUN_AS_ROOT. ~40 s after 10-host (the tests alone 38 s here).
# The host and host-debug test presets leave the label out: it runs here.
# suite: fleet
# jobs: 1
# after: 10-host
set -eu
cd "$(dirname "$0")/../.."
command -v mpirun >/dev/null || { echo "FAIL: mpirun not found (tools/deps/distributed.txt)"; exit 1; }
. tools/check.d/lib/trees.sh
preset_targets host burtorch-makemore burtorch-gpt burtorch-cnn burtorch-fleet
grep -q '^BURTORCH_MPIRUN:FILEPATH=/' build/host/CMakeCache.txt || { echo "FAIL: CMake did not find mpirun"; exit 1; }
ctest --test-dir build/host -L distributed --output-on-failure
