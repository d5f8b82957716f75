#!/usr/bin/env bash
# Runs a script under pvpython, ParaView's Python, rendering offscreen:
#
#   run_pvpython.sh tests/paraview/check_vtk_output.py --dir OUT --components 4 ...
#
# pvpython is $VOLCCL_PVPYTHON, else the one on PATH. Without a display it runs under
# `xvfb-run -a` where xvfb-run exists, else with --force-offscreen-rendering, as it does with
# a display. LD_LIBRARY_PATH and PYTHONPATH pass through, for a ParaView unpacked outside the
# system's paths.
#
# Exit status: the script's; 77 (ctest's "skipped") when there is no pvpython, or when it
# cannot start or render at all.
set -u

skip() {
  echo "SKIPPED: $*"
  exit 77
}

pvpython="${VOLCCL_PVPYTHON:-$(command -v pvpython || true)}"
if [[ -z "$pvpython" ]]; then
  skip "pvpython not found (install Debian's paraview package)"
fi
if [[ ! -x "$pvpython" ]]; then
  skip "pvpython '$pvpython' is not an executable file"
fi

if [[ -z "${DISPLAY:-}" ]] && command -v xvfb-run >/dev/null; then
  command=(xvfb-run -a "$pvpython")
else
  command=("$pvpython" --force-offscreen-rendering)
fi

# A sphere rendered: ParaView's libraries load and an OpenGL context opens. The view is closed
# before Python exits, which spares Xvfb a GLX error.
probe='from paraview import simple
view = simple.CreateView("RenderView")
simple.Show(simple.Sphere(), view)
simple.Render(view)
simple.Delete(view)'
probe_output="$("${command[@]}" -c "$probe" 2>&1)"
probe_status=$?
if [[ $probe_status -ne 0 ]]; then
  reason="$(printf '%s\n' "$probe_output" | grep -v '^[[:space:]]*$' | tail -n 3)"
  skip "pvpython cannot start or render (exit status $probe_status): $reason"
fi

exec "${command[@]}" "$@"
