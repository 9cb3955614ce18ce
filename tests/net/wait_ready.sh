# shellcheck shell=bash
# Sourced by the network tests and trace.bench: waiting for a tool started in the background to say it is ready.
#   wait_ready FILE PATTERN PID [N]: waits up to 30 s until FILE holds N (default 1) lines matching PATTERN
#   (grep's basic regex); returns 0 then, 1 when PID died first or the time ran out. Empty FILE before
#   starting the tool (: >FILE): its own 2>FILE empties it only once the background child runs, so a
#   FILE left by an earlier run can answer for a tool that is still starting.
wait_ready() {
	local file=$1 pat=$2 pid=$3 n=${4:-1} i c
	for ((i = 0; i < 300; i++)); do
		c=$(grep -c -- "$pat" "$file" 2>/dev/null)
		[ "${c:-0}" -ge "$n" ] && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	c=$(grep -c -- "$pat" "$file" 2>/dev/null)
	[ "${c:-0}" -ge "$n" ]
}
