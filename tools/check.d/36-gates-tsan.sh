# SPDX-License-Identifier: Apache-2.0
# Gate 5a: ThreadSanitizer. tests/targets/tsan/tsan_train.cpp trains one
# small MLP per thread, each on its own tape, concurrently; TSan must stay
# silent and every thread must match its single-threaded run bit for bit.
# Negative control: the same program with every thread on ONE tape must be
# reported by TSan. (The ASan+UBSan run of the host suite is stage
# 11-host-debug.) ~15 s.
# suite: gates
# jobs: 1
# trees: gates-tsan
set -eu
cd "$(dirname "$0")/../.."
out=build/gates/tsan
mkdir -p "$out"
mapfile -t sources < <(find lib -name '*.cpp' | sort)
g++ -std=c++17 -O1 -g -fsanitize=thread -fno-omit-frame-pointer -pthread \
  -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Werror \
  -I include -I lib tests/targets/tsan/tsan_train.cpp "${sources[@]}" -o "$out/tsan_train"
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
echo "== one tape per thread (must pass, no race)"
"$out/tsan_train"
echo "== negative control: all threads on one tape (TSan must report a race)"
set +e
"$out/tsan_train" --share-one-tape >"$out/shared.log" 2>&1
rc=$?
set -e
grep -m1 "WARNING: ThreadSanitizer: data race" "$out/shared.log" || true
if [ "$rc" -ne 66 ]; then
  echo "negative control: expected TSan's exit code 66, got $rc"
  tail -20 "$out/shared.log"
  exit 1
fi
echo "negative control: TSan reported the shared-tape race (exit 66) as it should"
