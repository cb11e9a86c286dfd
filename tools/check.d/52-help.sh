# SPDX-License-Identifier: Apache-2.0
# Every command the project ships answers --help (exit 0, text on stdout)
# and refuses an unknown option (exit 2, a message on stderr). The commands
# are found, not listed: every tracked file that starts with '#!' (but the
# stages, which tools/check runs, and .ci/), every tracked Python file with a
# __main__ block (run with /usr/bin/python3), and every program the host
# preset builds except the test suites of tests/. ~1 minute after 10-host.
# suite: docs
# after: 10-host
# jobs: 1
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
. tools/check.d/lib/trees.sh
preset_targets host all >/dev/null || fail "the host build failed"

commands=()
while IFS= read -r f; do
  case "$f" in tools/check.d/*|.ci/*) continue ;; esac
  if [ "$(head -c 2 "$f" | tr -d '\000')" = '#!' ]; then
    commands+=("./$f")
  elif [[ "$f" == *.py ]] && grep -q '^if __name__ == "__main__":' "$f"; then
    commands+=("/usr/bin/python3 $f")
  fi
done < <(git ls-files)
while IFS= read -r f; do
  commands+=("$f")
done < <(find build/host -path build/host/tests -prune -o -path '*/CMakeFiles' -prune -o -type f -perm -u+x -print |
         while IFS= read -r f; do head -c 4 "$f" | grep -q 'ELF' && echo "$f"; done | sort)
[ ${#commands[@]} -ge 20 ] || fail "found only ${#commands[@]} commands: ${commands[*]}"

bad=0
for c in "${commands[@]}"; do
  read -r -a cmd <<< "$c"
  timeout 120 "${cmd[@]}" --help >"$root/build/help.out" 2>"$root/build/help.err" </dev/null
  help=$?
  timeout 120 "${cmd[@]}" --no-such-option >"$root/build/unknown.out" 2>"$root/build/unknown.err" </dev/null
  unknown=$?
  verdict=ok
  if [ "$help" != 0 ] || [ ! -s "$root/build/help.out" ]; then verdict="--help: exit $help, $(wc -l < "$root/build/help.out") lines"; fi
  if [ "$unknown" != 2 ] || [ ! -s "$root/build/unknown.err" ]; then verdict="$verdict; unknown option: exit $unknown"; fi
  printf '  %-50s %s\n' "$c" "$verdict"
  [ "$verdict" = ok ] || bad=$((bad + 1))
done
rm -f "$root"/build/help.out "$root"/build/help.err "$root"/build/unknown.out "$root"/build/unknown.err
[ "$bad" = 0 ] || fail "$bad of ${#commands[@]} commands do not answer --help with 0 and an unknown option with 2"
echo "52-help: all ${#commands[@]} commands answer --help (0) and refuse an unknown option (2)"
