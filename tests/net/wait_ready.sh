# shellcheck shell=bash
# Sourced by the network and fault tests and the benchmarks: waiting for a tool started in the background
# to be ready.
#   wait_ready_file FILE PID: for svkit's tools, started with --ready-file FILE (sv_ready.h: the file appears,
#   atomically, once the tool is ready: svsub's sockets bound and XDP attached, svtrace's programs attached,
#   svpub's first deadline armed). Waits up to 30 s; 0 then, 1 when PID died first or the time ran out.
#   Remove FILE before starting the tool (rm -f FILE): one left by a killed run must not answer for this one.
#   wait_ready FILE PATTERN PID [N]: for other tools (dumpcap, the tests' own receivers), which only say it
#   on stderr: waits up to 30 s until FILE holds N (default 1) lines matching PATTERN (grep's basic regex).
#   Empty FILE before starting the tool (: >FILE): its own 2>FILE empties it only once the background
#   child runs, so a FILE left by an earlier run can answer for a tool that is still starting.
wait_ready_file() {
	local file=$1 pid=$2 i
	for ((i = 0; i < 300; i++)); do
		[ -e "$file" ] && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	[ -e "$file" ]
}
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
