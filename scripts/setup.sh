#!/usr/bin/env bash
# Create .venv with a Python >= 3.12 and install this project with its dev extras.
#   scripts/setup.sh [--with-browser-use] [--extra NAME ...]
# --extra NAME: also an optional extra of pyproject.toml (e.g. ray, for --backend ray and its
# tests); extras once installed stay installed. Idempotent: re-running only reinstalls when
# pyproject.toml changed or an extra is asked for the first time.
# PYTHON=/path/to/python picks the interpreter; VENV=DIR puts the venv elsewhere than .venv
# (CI keeps a second one on the lowest supported Python: VENV=.venv-py312 PYTHON=python3.12).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-.venv}

with_browser_use=0
extras=(dev)
while [ $# -gt 0 ]; do
  case "$1" in
    --with-browser-use) with_browser_use=1 ;;
    --extra)
      shift
      [ -n "${1:-}" ] || { echo "setup: --extra needs a name (e.g. --extra ray)" >&2; exit 2; }
      extras+=("$1") ;;
    *) echo "setup: unknown option $1 (use --with-browser-use, --extra NAME)" >&2; exit 2 ;;
  esac
  shift
done

ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; }

find_python() {
  local c
  if [ -n "${PYTHON:-}" ]; then  # asked for: that one or none
    c=$(command -v "$PYTHON") && ok "$c" && { echo "$c"; return 0; }
    echo "setup: PYTHON=$PYTHON is not a Python >= 3.12 on PATH" >&2; return 1
  fi
  for c in python3.14 python3.13 python3.12 python3; do
    if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && ok "$(command -v "$c")"; then
      command -v "$c"; return 0
    fi
  done
  # pyenv-installed interpreters (python3 on PATH may be an older one)
  local root="${PYENV_ROOT:-$HOME/.pyenv}"
  for c in $(ls -d "$root"/versions/3.1[2-9]* 2>/dev/null | sort -Vr); do
    if ok "$c/bin/python"; then echo "$c/bin/python"; return 0; fi
  done
  for c in /usr/local/bin/python3.1[2-9] /usr/bin/python3.1[2-9]; do
    if [ -x "$c" ] && ok "$c"; then echo "$c"; return 0; fi
  done
  return 1
}

if [ ! -x "$venv/bin/python" ] || ! ok "$venv/bin/python"; then
  py=$(find_python) || {
    echo "setup: no Python >= 3.12 found (mitmproxy 12 and the openai client need it)." >&2
    echo "setup: install one (e.g. 'pyenv install 3.12' or 'uv python install 3.12')," >&2
    echo "setup: or point PYTHON=/path/to/python3.12 at it, then run scripts/setup.sh again." >&2
    exit 1
  }
  echo "setup: creating $venv with $py ($("$py" -V 2>&1))"
  rm -rf "$venv"
  "$py" -m venv "$venv"
fi

# The stamp: pyproject.toml's hash on line 1, the extras installed with it on line 2.
stamp="$venv/.clawbench-installed"
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
have=$(sed -n 1p "$stamp" 2>/dev/null || true)
installed=$(sed -n 2p "$stamp" 2>/dev/null || true)
missing=0
for extra in "${extras[@]}"; do
  [[ " $installed " == *" $extra "* ]] || missing=1
done
if [ "$have" != "$want" ] || [ "$missing" = 1 ]; then
  read -r -a kept <<< "$installed"
  extras+=("${kept[@]}")
  all=$(printf '%s\n' "${extras[@]}" | sort -u | paste -sd, -)
  echo "setup: installing clawbench-intercept with [$all] into $venv"
  "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$venv/bin/python" -m pip install -q -e ".[$all]"
  printf '%s\n%s\n' "$want" "${all//,/ }" > "$stamp"
fi

# --with-browser-use: the browser-use harness in its own venv (.venv-browser-use), for the demo's
# browser-use runs outside Docker; the same pinned version as the image's harness layer.
if [ "$with_browser_use" = 1 ]; then
  want_bu=$(cat sandbox/harnesses/browser_use/{requirements,constraints}.txt | sha256sum | cut -d' ' -f1)
  if [ "$(cat .venv-browser-use/.clawbench-installed 2>/dev/null)" != "$want_bu" ]; then
    echo "setup: installing the browser-use harness into .venv-browser-use"
    rm -rf .venv-browser-use
    "$("$venv/bin/python" -c 'import sys; print(sys._base_executable)')" -m venv .venv-browser-use
    .venv-browser-use/bin/python -m pip install -q --disable-pip-version-check \
      -r sandbox/harnesses/browser_use/requirements.txt \
      -c sandbox/harnesses/browser_use/constraints.txt
    echo "$want_bu" > .venv-browser-use/.clawbench-installed
  fi
fi

# An editable install leaves our own modules uncompiled, and with PYTHONDONTWRITEBYTECODE set
# (as on this machine) every process would compile them again (~0.1 s of each clawbench-score).
"$venv/bin/python" -m compileall -q proxy_addon scorer sandbox >/dev/null
