#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# burtorch-fleet (federated averaging over MPI ranks, docs/fleet.md):
#  1. one client with raw frames follows the centralised baseline on the
#     same data and batches: the validation losses agree to 1e-6 relative
#     (the update travels in FP32: the only difference is its rounding);
#  2. a frame damaged in transit is refused (checksum mismatch), counted, and
#     the round goes on with the other client's update;
#  3. every codec's frames have the size the frame layout gives for the
#     model's parameter count (computed here), and training still lowers the
#     validation loss over the rounds;
#  4. DP-SGD with a clip no gradient reaches and no noise trains as plain SGD
#     (to 1e-9 relative: it divides the sum where SGD multiplies by 1/B), and
#     with noise it trains differently;
#  5. --decode-frame refuses what is not a frame of a model it can hold:
#     hex that strtoul would take (" 1", "-1", "+1"), a CRC-valid 49-byte
#     topk frame claiming 2^32 - 1 values (exit 2, one line, no abort);
#  6. the server's standard output on /dev/full: one line with the rank
#     prefix, the job stops (exit status 2), no hang;
#  7. a client that sends nothing in round 2, with a round deadline: the
#     round closes with the other client's frame, the missing client is
#     counted, and the next rounds take both clients' frames again.
# usage: fleet_check.sh PROGRAM WORKDIR
set -u
case "${1:-}" in
  -h|--help) sed -n '3,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "fleet_check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac
[ $# = 2 ] || { echo "usage: fleet_check.sh PROGRAM WORKDIR" >&2; exit 2; }
program=$1
work=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
mpirun=(timeout 120 mpirun --quiet --oversubscribe)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
common=(--rounds 4 --local-steps 3 --batch 8 --hidden 16 --eval-samples 400)

# 1. One client, raw, against the centralised baseline.
"$program" --centralised --clients 1 "${common[@]}" > central.txt 2>&1 || fail "centralised: $(tail -1 central.txt)"
"${mpirun[@]}" -np 2 "$program" --codec raw "${common[@]}" > one.txt 2>&1 || fail "one client: $(tail -1 one.txt)"
python3 - central.txt one.txt <<'PY' || fail "one client does not follow the centralised run"
import re, sys
a = [float(x) for x in re.findall(r"^round \d+ val (\S+)", open(sys.argv[1]).read(), re.M)]
b = [float(x) for x in re.findall(r"^round \d+ val (\S+)", open(sys.argv[2]).read(), re.M)]
assert len(a) == len(b) == 4, (a, b)
worst = max(abs(x - y) / abs(x) for x, y in zip(a, b))
print("one client vs centralised: %d rounds, largest relative difference of the validation loss %.2e" % (len(a), worst))
sys.exit(0 if worst <= 1e-6 else 1)
PY

# 2. Client 1 damages its frame in round 2.
"${mpirun[@]}" -np 3 "$program" --codec int8 --damage 2:1 "${common[@]}" > damaged.txt 2>&1 ||
  fail "damaged frame run: $(tail -1 damaged.txt)"
grep -q "^round 2: refused the frame of client 1: checksum mismatch" damaged.txt || fail "the damaged frame was not refused"
grep -q "^round 2 val .* accepted 1 refused 1$" damaged.txt || fail "round 2 did not go on with one update"
[ "$(grep -c 'accepted 2 refused 0$' damaged.txt)" = 3 ] || fail "the other rounds did not accept both frames"
grep "refused" damaged.txt | head -2

# 3. Frame sizes and learning, per codec.
for codec in raw topk randk int8; do
  "${mpirun[@]}" -np 3 "$program" --codec "$codec" --keep 10 "${common[@]}" > "$codec.txt" 2>&1 ||
    fail "$codec: $(tail -1 "$codec.txt")"
  python3 - "$codec" "$codec.txt" <<'PY' || fail "$codec: frame sizes or learning"
import math, re, sys
codec, text = sys.argv[1], open(sys.argv[2]).read()
n = int(re.search(r"(\d+) parameters", text).group(1))
rounds = [(float(v), float(b)) for v, b in re.findall(r"^round \d+ val (\S+) bytes (\S+)", text, re.M)]
k = max(1, math.ceil(n * 10 / 100))
varint = lambda v: 1 + (v.bit_length() - 1) // 7 if v else 1
size = {"raw": 40 + 4 * n, "randk": 40 + 4 * k, "int8": 40 + n + 4 * math.ceil(n / 64)}
ok = len(rounds) == 4 and rounds[-1][0] < rounds[0][0]
for _, b in rounds:
    if codec == "topk":  # k FP32 values and k index gaps of 1 to varint(n - 1) bytes
        ok = ok and 40 + 5 * k <= b <= 40 + (4 + varint(n - 1)) * k
    else:
        ok = ok and b == size[codec]
print("%s: %d parameters, bytes per client per round %s, val loss %.4f -> %.4f" %
      (codec, n, sorted({b for _, b in rounds}), rounds[0][0], rounds[-1][0]))
sys.exit(0 if ok else 1)
PY
done
# 4. DP-SGD against plain SGD (raw.txt above: the same flags without it).
"${mpirun[@]}" -np 3 "$program" --codec raw --keep 10 --dp-clip 1000000 "${common[@]}" > dp_off.txt 2>&1 || fail "dp: $(tail -1 dp_off.txt)"
"${mpirun[@]}" -np 3 "$program" --codec raw --keep 10 --dp-clip 1 --dp-noise 1 "${common[@]}" > dp_on.txt 2>&1 || fail "dp: $(tail -1 dp_on.txt)"
python3 - raw.txt dp_off.txt dp_on.txt <<'PY' || fail "DP-SGD"
import re, sys
val = lambda p: [float(x) for x in re.findall(r"^round \d+ val (\S+)", open(p).read(), re.M)]
a, b, c = val(sys.argv[1]), val(sys.argv[2]), val(sys.argv[3])
off = max(abs(x - y) / abs(x) for x, y in zip(a, b))
on = max(abs(x - y) / abs(x) for x, y in zip(a, c))
print("DP-SGD, clip 1e6 no noise vs SGD: %.2e relative; clip 1 noise 1 vs SGD: %.2e" % (off, on))
sys.exit(0 if len(a) == len(b) == len(c) == 4 and off <= 1e-9 and on > 1e-6 else 1)
PY

# 5. --decode-frame on input that is not a frame it can decode.
frame_hex() {  # codec count kept payload-hex: a CRC-valid frame, as hex
  python3 - "$@" <<'PY'
import struct, sys, zlib
codec, count, kept, payload = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), bytes.fromhex(sys.argv[4])
body = b"BTFU" + struct.pack("<BBHIIIIIII", 1, codec, 0, count, kept, 5, 1, 2, 0, len(payload)) + payload
print((body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)).hex())
PY
}
good=$(frame_hex 0 1 1 0000803f)  # one raw value, 1.0
"$program" --decode-frame "$good" > good.txt 2>&1 || fail "--decode-frame: a valid frame: $(cat good.txt)"
for spoil in " 1" "-1" "+1" "0x"; do
  bad="${spoil}${good:2}"
  "$program" --decode-frame "$bad" > spoiled.txt 2>&1
  status=$?
  [ "$status" = 2 ] || fail "--decode-frame '${spoil}...': exit status $status, want 2"
  grep -q "is not a hex byte" spoiled.txt || fail "--decode-frame '${spoil}...': $(cat spoiled.txt)"
done
huge=$(frame_hex 1 4294967295 1 feffffff0f0000803f)  # topk, one value at index 2^32 - 2
[ "${#huge}" = 98 ] || fail "the hostile topk frame is not 49 bytes"
"$program" --decode-frame "$huge" > huge.txt 2>&1
status=$?
[ "$status" = 2 ] || fail "--decode-frame, 2^32 - 1 values: exit status $status, want 2: $(cat huge.txt)"
grep -q "burtorch-fleet: --decode-frame: .*4294967295 values" huge.txt || fail "--decode-frame, 2^32 - 1 values: $(cat huge.txt)"
[ "$(grep -c '^' huge.txt)" = 1 ] || fail "--decode-frame, 2^32 - 1 values: more than one line"
cat huge.txt

# 6. The server cannot write its standard output.
# shellcheck disable=SC2016
"${mpirun[@]}" -np 1 bash -c 'exec "$@" > /dev/full' bash "$program" "${common[@]}" : -np 2 "$program" "${common[@]}" \
  > full.txt 2> full.err
status=$?
[ "$status" = 2 ] || fail "stdout on /dev/full: mpirun exit status $status, want 2 (124: a hang)"
grep -q "burtorch-fleet: rank 0 of 3: cannot write standard output" full.err || fail "stdout on /dev/full: $(cat full.err)"
cat full.err

# 7. Client 2 sends nothing in round 2; the server's deadline closes it.
"${mpirun[@]}" -np 3 "$program" --codec raw --round-deadline 15 --silent 2:2 "${common[@]}" > silent.txt 2>&1 ||
  fail "silent client run: $(tail -1 silent.txt)"
grep -q "^round 2: client 2 sent no frame before the deadline$" silent.txt || fail "the silent client was not reported"
grep -q "^round 2 val .* accepted 1 refused 0 missing 1$" silent.txt || fail "round 2 did not close with one frame"
[ "$(grep -c 'accepted 2 refused 0 missing 0$' silent.txt)" = 3 ] || fail "the other rounds did not take both frames"
grep "missing 1" silent.txt

[ $failures = 0 ] && echo "fleet_check: all passed" && exit 0
exit 1
