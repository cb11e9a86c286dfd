# SPDX-License-Identifier: Apache-2.0
# Sourced by the project's bash commands that take no options:
#   source "<path>/tools/usage.sh" "$0" "$@"
# --help (or -h) prints the script's header comment (its lines after the
# SPDX line) and exits 0; any other argument starting with '-' exits 2.
for _usage_arg in "${@:2}"; do
  case "$_usage_arg" in
    -h|--help) sed -n '3,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$1"; exit 0 ;;
    -*) echo "$(basename "$1"): unknown option $_usage_arg (see --help)" >&2; exit 2 ;;
  esac
done
unset _usage_arg
