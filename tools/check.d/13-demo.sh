# The README's first command.
set -e
cmake --workflow --preset demo
