#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every output of a trainer is checked: a write, flush or close that fails is
# one line on stderr naming the file and the reason, exit status 2, and the
# other outputs stay as they were (a checkpoint written before stays valid).
#   output_check.sh PROGRAM WORK devfull "ARGS"   outputs on /dev/full
#   output_check.sh PROGRAM WORK tmpfs "ARGS"     a small tmpfs that fills up
#                                                 mid-run (needs root to mount;
#                                                 prints "SKIPPED: " if it cannot)
set -u
source "$(dirname "$0")/../../../tools/usage.sh" "$0" "${1:-}"  # --help: the comment above (ARGS may start with -)
program=$1
work=$2
mode=$3
read -r -a args <<< "${4:-}"
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

# run NAME CMD...: runs CMD with stdout in NAME.out, stderr in NAME.err; $rc.
run() {
  local name=$1
  shift
  "$@" >"$name.out" 2>"$name.err"
  rc=$?
}
# expect_error NAME PATH REASON: exit 2, exactly one line on stderr, naming
# PATH and REASON.
expect_error() {
  local name=$1 path=$2 reason=$3
  [ "$rc" = 2 ] || { cat "$name.err"; fail "$name: exit $rc, want 2"; }
  [ "$(wc -l < "$name.err")" = 1 ] || { cat "$name.err"; fail "$name: want one line on stderr"; }
  grep -qF "'$path'" "$name.err" || grep -qF "$path" "$name.err" || { cat "$name.err"; fail "$name: the message does not name $path"; }
  grep -qF "$reason" "$name.err" || { cat "$name.err"; fail "$name: the message does not say '$reason'"; }
  echo "$name: exit 2, $(cat "$name.err")"
}
# loads CKPT STEP: the checkpoint is valid: a run resumes from it at STEP.
loads() {
  run resume "$program" "${args[@]}" --resume "$1" --steps "$2" --csv none --samples 0
  [ "$rc" = 0 ] || { cat resume.err; fail "checkpoint $1 no longer loads"; }
  grep -q "resumed from $1 at step $2" resume.out || { cat resume.out; fail "checkpoint $1 not at step $2"; }
}
sum() { sha256sum "$1" | cut -d' ' -f1; }

if [ "$mode" = devfull ]; then
  run good "$program" "${args[@]}" --steps 4 --print-every 2 --csv good.csv --save ck --samples 1
  [ "$rc" = 0 ] || { cat good.err; fail "a plain run failed ($rc)"; }
  grep -q '; wrote good.csv, good.svg$' good.out || { cat good.out; fail "the summary line does not name the CSV and plot"; }
  before=$(sum ck)

  run csv "$program" "${args[@]}" --steps 4 --print-every 1 --csv /dev/full --save ck
  expect_error csv /dev/full "No space left on device"
  [ "$(sum ck)" = "$before" ] || fail "csv: the checkpoint changed"

  run stdout bash -c '"$0" "$@" >/dev/full' "$program" "${args[@]}" --steps 4 --print-every 1 --csv out.csv --save ck
  expect_error stdout "standard output" "No space left on device"
  [ "$(sum ck)" = "$before" ] || fail "stdout: the checkpoint changed"

  for flag in --plot --save; do
    run "target$flag" "$program" "${args[@]}" --steps 2 --csv x.csv "$flag" /dev/full
    expect_error "target$flag" /dev/full "character device"
  done
  if "$program" --help | grep -q -- --export-header; then
    run header "$program" "${args[@]}" --steps 2 --csv none --export-header /dev/full
    expect_error header /dev/full "character device"
  fi
  loads ck 4
  echo "devfull: every output on /dev/full fails with one line and exit 2; the checkpoint stays valid"
  exit 0
fi

[ "$mode" = tmpfs ] || fail "unknown mode $mode"
fs="$work/fs"
mkdir -p "$fs"
if ! mount -t tmpfs -o size=2m tmpfs "$fs" 2>mount.err; then
  echo "SKIPPED: cannot mount a tmpfs here ($(head -1 mount.err); needs root): the full-disk cases did not run"
  exit 0
fi
trap 'umount "$fs"' EXIT
page=$(getconf PAGESIZE)
free_bytes() { python3 -c 'import os, sys; s = os.statvfs(sys.argv[1]); print(s.f_bavail * s.f_frsize)' "$fs"; }
# leave N: fills the tmpfs so that N pages are free.
leave() {
  rm -f "$fs/filler"
  local n=$(( $(free_bytes) - $1 * page ))
  [ "$n" -ge 0 ] || fail "not enough room on the tmpfs"
  head -c "$n" /dev/zero > "$fs/filler" || fail "cannot fill the tmpfs"
  [ "$(free_bytes)" = $(( $1 * page )) ] || fail "the tmpfs has $(free_bytes) bytes free, want $(( $1 * page ))"
}
pages() { echo $(( ($(stat -c %s "$1") + page - 1) / page )); }

# A checkpoint at step 4, as an earlier run leaves it.
run first "$program" "${args[@]}" --steps 4 --print-every 2 --csv "$fs/first.csv" --save "$fs/ck" --samples 0
[ "$rc" = 0 ] || { cat first.err; fail "the first run failed ($rc)"; }
before=$(sum "$fs/ck")

# 1. The CSV fills the disk mid-run.
leave 1
run csv "$program" "${args[@]}" --resume "$fs/ck" --steps 400 --print-every 1 --csv "$fs/grow.csv" --save "$fs/ck"
expect_error csv "$fs/grow.csv" "No space left on device"
grep -q '^step 40 loss ' csv.out || fail "csv: the run did not get far before the disk filled"
if grep -q '^step 400 loss ' csv.out; then fail "csv: the run went on after the disk filled"; fi
[ "$(sum "$fs/ck")" = "$before" ] || fail "csv: the checkpoint changed"
[ ! -e "$fs/ck.tmp" ] || fail "csv: a temporary checkpoint was left"
rm -f "$fs/grow.csv"

# Sizes of a short run's CSV and plot (on the work directory's disk).
run sizes "$program" "${args[@]}" --steps 8 --print-every 2 --csv sizes.csv --samples 0
[ "$rc" = 0 ] || { cat sizes.err; fail "the sizing run failed"; }
csv_pages=$(pages sizes.csv)
svg_pages=$(pages sizes.svg)
[ "$svg_pages" -gt 1 ] || fail "the plot fits in one page; this check needs a larger one"

# 2. The plot finds the disk full: the CSV stays complete, no plot is left.
leave "$csv_pages"
run plot "$program" "${args[@]}" --steps 8 --print-every 2 --csv "$fs/p.csv" --save "$fs/ck" --samples 0
expect_error plot "$fs/p.svg" "No space left on device"
cmp -s <(cut -d, -f1 sizes.csv) <(cut -d, -f1 "$fs/p.csv") || fail "plot: the CSV is not complete"
[ ! -e "$fs/p.svg" ] && [ ! -e "$fs/p.svg.tmp" ] || fail "plot: a partial plot was left"
[ "$(sum "$fs/ck")" = "$before" ] || fail "plot: the checkpoint changed"
rm -f "$fs/p.csv"

# 3. The checkpoint finds the disk full: the CSV and plot are complete, the
# previous checkpoint is unchanged and no temporary file is left.
leave $(( csv_pages + svg_pages ))
run save "$program" "${args[@]}" --steps 8 --print-every 2 --csv "$fs/s.csv" --save "$fs/ck" --samples 0
expect_error save "$fs/ck" "No space left on device"
[ "$(sum "$fs/ck")" = "$before" ] || fail "save: the previous checkpoint changed"
[ ! -e "$fs/ck.tmp" ] || fail "save: a temporary checkpoint was left"
grep -q '</svg>' "$fs/s.svg" || fail "save: the plot is not complete"
[ "$(tail -1 "$fs/s.csv" | cut -d, -f1)" = 8 ] || fail "save: the CSV is not complete"
rm -f "$fs/filler"
loads "$fs/ck" 4
echo "tmpfs: a disk that fills mid-run stops the run with one line and exit 2 at the CSV, the plot and the checkpoint; the other outputs stay complete"
