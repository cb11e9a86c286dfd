#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# burtorch-<trainer> --distributed under mpirun (docs/fleet.md):
#  1. one rank trains bit for bit as the program without --distributed;
#  2. two ranks: the same bits in two runs (fixed reduction order), and
#     parameters within TOL of one process training on the whole batch
#     (the sums are grouped per rank: only rounding differs);
#  3. four ranks (oversubscribed on small machines): within TOL as well;
#  4. a rank that fails (rank 0 cannot write --save) stops every rank: one
#     line per rank, exit status 2, no hang;
#  5. a rank killed with SIGKILL mid-run: mpirun ends the job, the other rank
#     prints one line and exits, nothing is left running;
#  6. rank 0's standard output on /dev/full: rank 0 says so with its rank
#     prefix and the job stops (exit status 2), no hang.
# usage: distributed_check.sh PROGRAM WORKDIR "ARGS" TOL
set -u
case "${1:-}" in
  -h|--help) sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "distributed_check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac
[ $# = 4 ] || { echo "usage: distributed_check.sh PROGRAM WORKDIR \"ARGS\" TOL" >&2; exit 2; }
program=$1
work=$2
args=$3
tol=$4
here=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Shared memory without single-copy reads: a rank reading a dead rank's
# memory (CMA) would print a line of its own.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
mpirun=(mpirun --quiet --oversubscribe)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# shellcheck disable=SC2086
"$program" $args --samples 0 --csv none --save serial.ckpt > serial.txt 2>&1 || fail "serial run: $(tail -1 serial.txt)"
for n in 1 2 4; do
  # shellcheck disable=SC2086
  timeout 120 "${mpirun[@]}" -np $n "$program" $args --distributed --samples 0 --csv none --save d$n.ckpt \
    > d$n.txt 2>&1 || fail "$n ranks: $(tail -3 d$n.txt)"
done
cmp -s serial.ckpt d1.ckpt || fail "1 rank is not bit for bit the serial run"
# shellcheck disable=SC2086
timeout 120 "${mpirun[@]}" -np 2 "$program" $args --distributed --samples 0 --csv none --save d2b.ckpt > d2b.txt 2>&1 ||
  fail "second 2-rank run"
cmp -s d2.ckpt d2b.ckpt || fail "two 2-rank runs differ"
for n in 2 4; do
  python3 "$here/checkpoint_params.py" serial.ckpt d$n.ckpt --tolerance "$tol" || fail "$n ranks: parameters beyond $tol"
  grep -q "^distributed: $n ranks" d$n.txt || fail "$n ranks: no 'distributed:' line"
  [ "$(grep -c '^step ' d$n.txt)" = "$(grep -c '^step ' serial.txt)" ] || fail "$n ranks: step lines"
done
grep -h "^distributed:" d1.txt d2.txt d4.txt

# 4. rank 0 fails before training (its --save directory does not exist);
# rank 1 is then waiting for it in the first average.
start=$(date +%s)
# shellcheck disable=SC2086
timeout 60 "${mpirun[@]}" -np 2 "$program" $args --distributed --samples 0 --csv none \
  --save "$work/missing/x.ckpt" > failed.txt 2> failed.err
status=$?
[ "$status" = 2 ] || fail "a failing rank: mpirun exit status $status, want 2"
grep -q "rank 0 of 2: .*missing/x.ckpt" failed.err || fail "a failing rank: no line from rank 0"
[ "$(grep -c '^' failed.err)" -le 2 ] || fail "a failing rank: more than one line per rank: $(cat failed.err)"
echo "a failing rank: exit $status after $(($(date +%s) - start)) s:"; cat failed.err

# 5. kill rank 1 with SIGKILL while it trains.
# shellcheck disable=SC2086
"${mpirun[@]}" -np 2 "$program" $args --distributed --steps 1000000 --print-every 1000000 --samples 0 --csv none \
  > killed.txt 2> killed.err &
job=$!
victim=""
for _ in $(seq 1 100); do
  for pid in $(pgrep -P "$job"); do
    if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
      victim=$pid
    fi
  done
  [ -n "$victim" ] && grep -q "^  lanes\|^  parameters\|^gpt\|^cnn\|^makemore" killed.txt 2>/dev/null && break
  sleep 0.1
done
sleep 1
if [ -z "$victim" ]; then
  fail "kill: rank 1 not found"
  kill "$job"
else
  kill -KILL "$victim"
  start=$(date +%s)
  waited=0
  while kill -0 "$job" 2>/dev/null && [ $waited -lt 300 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  if kill -0 "$job" 2>/dev/null; then
    fail "kill: the job still runs 30 s after rank 1 was killed (a hang)"
    kill "$job"
  fi
  wait "$job"
  status=$?
  [ "$status" != 0 ] || fail "kill: mpirun exit status 0"
  grep -q "rank 0 of 2: stopped: another rank of the job failed" killed.err || fail "kill: no line from rank 0"
  [ "$(grep -c '^' killed.err)" = 1 ] || fail "kill: more than rank 0's line on stderr"
  echo "kill: mpirun exit status $status after $(($(date +%s) - start)) s; stderr:"; cat killed.err
  left=$(pgrep -f -- "$program .*--steps 1000000" || true)
  [ -z "$left" ] || fail "kill: processes left: $left"
fi

# 6. rank 0 cannot write its standard output (rank 1 waits for it in the
# first average).
start=$(date +%s)
# shellcheck disable=SC2086,SC2016
timeout 60 "${mpirun[@]}" -np 1 bash -c 'exec "$@" > /dev/full' bash "$program" $args --distributed --samples 0 \
  --csv none : -np 1 "$program" $args --distributed --samples 0 --csv none > full.txt 2> full.err
status=$?
[ "$status" = 2 ] || fail "stdout on /dev/full: mpirun exit status $status, want 2 (124: a hang)"
grep -q "rank 0 of 2: cannot write standard output" full.err || fail "stdout on /dev/full: no line from rank 0"
echo "stdout on /dev/full: exit $status after $(($(date +%s) - start)) s:"; cat full.err

[ $failures = 0 ] && echo "distributed_check: all passed" && exit 0
exit 1
