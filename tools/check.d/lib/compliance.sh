# SPDX-License-Identifier: Apache-2.0
# Sourced by the compliance kit's stages (40-compliance-kit, -presets):
# expect_rc runs a command with its output in a log and ends the stage
# unless it exits as expected; validate_sarif checks SARIF files against the
# SARIF 2.1.0 JSON schema with a Python that has jsonschema (Debian
# python3-jsonschema installs it for /usr/bin/python3).
expect_rc() {  # expect_rc WANT LOG CMD...
  local want=$1 log=$2
  shift 2
  set +e
  "$@" >"$log" 2>&1
  local rc=$?
  set -e
  if [ "$rc" -ne "$want" ]; then
    tail -n 40 "$log"
    echo "FAIL: expected exit $want, got $rc: $*"
    exit 1
  fi
}
sarif_python=""
for _py in python3 /usr/bin/python3; do
  if "$_py" -c 'import jsonschema' 2>/dev/null; then sarif_python=$_py; break; fi
done
if [ -z "$sarif_python" ]; then
  echo "FAIL: no python3 with jsonschema (apt-get install python3-jsonschema)"
  exit 1
fi
validate_sarif() {  # validate_sarif FILE...
  "$sarif_python" tests/compliance/validate_sarif.py tests/compliance/sarif/sarif-schema-2.1.0.json "$@"
}
