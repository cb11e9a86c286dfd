# SPDX-License-Identifier: Apache-2.0
# Gate 5b: valgrind memcheck on the host demo built by the `demo`
# preset (build/demo/targets/host/burtorch-demo): no invalid access, no use
# of uninitialised values, no leak of any kind. ~30 s (the demo's timing loop
# runs under valgrind).
# suite: gates
# after: 13-demo
# jobs: 1
# trees: demo
set -eu
cd "$(dirname "$0")/../.."
cmake --preset demo >/dev/null
cmake --build --preset demo
mkdir -p build/gates/valgrind
valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --show-leak-kinds=all \
  --errors-for-leak-kinds=all --track-origins=yes \
  build/demo/targets/host/burtorch-demo --dot build/gates/valgrind/small_graph.dot
echo "valgrind memcheck: 0 errors, 0 leaks"
