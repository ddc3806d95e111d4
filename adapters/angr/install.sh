#!/bin/sh
# Installs the angr adapter's virtual environment into adapters/angr/.venv (or into the
# directory given as the first argument). One command: sh adapters/angr/install.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-"$here/.venv"}
python=${PYTHON:-python3}
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet -r "$here/requirements.txt" -c "$here/constraints.txt"
"$venv/bin/python" -c 'import angr' 2>/dev/null
echo "angr adapter installed in $venv"
