# SPDX-License-Identifier: Apache-2.0
# A device of the fleet: burtorch-fleet-device (Cortex-M4 under QEMU)
# fine-tunes, encodes its update with the codec and writes the frame over the
# port; the host's burtorch-fleet --decode-frame checks it, decodes it to the
# same FP32 bits the device printed and adds it to a FedAvg round. Prints the
# codec's flash (its functions in the firmware's symbol table) and RAM (the
# firmware's buffers). ~10 s after 23-cortex-m4 and 10-host.
# suite: fleet
# after: 10-host 23-cortex-m4
# jobs: 1
set -eu
cd "$(dirname "$0")/../.."
. tools/check.d/lib/trees.sh
preset_targets cortex-m4 burtorch-fleet-device
preset_targets host burtorch-fleet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ctest --test-dir build/cortex-m4 -R '^burtorch-fleet-device$' -V > "$out/device.txt" 2>&1 || {
  tail -20 "$out/device.txt"; echo "FAIL: the firmware"; exit 1; }
frame=$(sed -n 's/.*frame \([0-9a-f]*\)$/\1/p' "$out/device.txt" | head -1)
device=$(sed -n 's/.*decoded \([0-9a-f,]*\)$/\1/p' "$out/device.txt" | head -1)
[ -n "$frame" ] && [ -n "$device" ] || { tail -20 "$out/device.txt"; echo "FAIL: no frame in the output"; exit 1; }
build/host/targets/host/burtorch-fleet --decode-frame "$frame" > "$out/host.txt"
cat "$out/host.txt"
host=$(sed -n 's/^decoded \([0-9a-f,]*\)$/\1/p' "$out/host.txt")
[ "$host" = "$device" ] || { echo "device: $device"; echo "host:   $host"; echo "FAIL: the host decodes other bits"; exit 1; }
echo "the host decodes the device's ${#frame} hex digits to the device's bits: $(echo "$device" | tr ',' '\n' | wc -l) values"
# A damaged frame (one payload bit) is refused on the host.
damaged="${frame:0:80}$(printf '%x' $(( 0x${frame:80:1} ^ 1 )))${frame:81}"
if build/host/targets/host/burtorch-fleet --decode-frame "$damaged" 2> "$out/damaged.txt"; then
  echo "FAIL: a damaged frame was accepted"; exit 1
fi
cat "$out/damaged.txt"
grep 'codec buffers' "$out/device.txt" | sed 's/^[0-9]*: //'
elf=build/cortex-m4/targets/firmware/burtorch-fleet-device.elf
# The codec's code and tables: symbols of lib/fleet/ (burtorch::fleet, and
# the CRC-32 it shares with checkpoints), decimal sizes.
arm-none-eabi-nm -C -S -t d --size-sort "$elf" | awk '$3 ~ /^[tTrR]$/ && (/burtorch::fleet::/ || /crc32/)' > "$out/codec.txt"
flash=$(awk '{ s += $2 } END { print s + 0 }' "$out/codec.txt")
echo "codec flash on Cortex-M4: $flash bytes in these functions and tables:"
awk '{ printf "  %6d  %s\n", $2, substr($0, index($0, $4)) }' "$out/codec.txt"
[ "$flash" -gt 0 ]
