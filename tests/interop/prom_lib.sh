# SPDX-License-Identifier: Apache-2.0
# A real Prometheus for tests (sourced): Debian's `prometheus` on the loopback, a temporary storage directory and a
# generated scrape config (1 s scrapes and rule evaluations, configs/prometheus/svkit-rules.yaml loaded), queried
# through its HTTP API. Phase 2 points it at the lab's tools; tests/interop/metrics_prometheus.sh at the test server.
#   prom_start JOB TARGET...     start, scraping TARGET (host:port) as job JOB; waits until ready (exit 77 if absent)
#   prom_query EXPR [TIME]       the API's JSON answer to an instant query (TIME: unix seconds, default now)
#   prom_value EXPR [TIME]       the first sample's value, "" if the result is empty
#   prom_wait EXPR OP VALUE S    wait up to S seconds until prom_value EXPR OP VALUE (OP: == >= > <=); 0 or 1
#   prom_stop                    stop it and remove its directory (also on EXIT: call prom_cleanup from your trap)
# Needs curl and python3. PROM_URL is set once started; PROM_LOG is its log.
PROM_DIR=
PROM_PID=
PROM_URL=
PROM_LOG=

prom_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

prom_start() {
	local job=$1 src port t
	shift
	src=$(cd "${SVKIT_SRC:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd) # absolute: rule_files are globs
	command -v prometheus >/dev/null || { echo "SKIP: prometheus not installed (Debian package prometheus)"; exit 77; }
	command -v curl >/dev/null || { echo "SKIP: curl not installed"; exit 77; }
	PROM_DIR=$(mktemp -d /tmp/svkit-prom.XXXXXX)
	PROM_LOG=$PROM_DIR/prometheus.log
	{
		echo "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}"
		echo "rule_files: ['$src/configs/prometheus/svkit-rules.yaml']"
		echo "scrape_configs:"
		echo "  - job_name: '$job'"
		echo "    static_configs:"
		echo "      - targets: [$(printf "'%s'," "$@" | sed 's/,$//')]"
	} >"$PROM_DIR/prometheus.yml"
	port=$(prom_free_port)
	PROM_URL=http://127.0.0.1:$port
	prometheus --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$PROM_DIR/data" \
		--web.listen-address="127.0.0.1:$port" --log.level=warn >"$PROM_LOG" 2>&1 &
	PROM_PID=$!
	for t in $(seq 1 300); do
		if curl -sf "$PROM_URL/-/ready" >/dev/null 2>&1; then
			# rule_files are globs: a wrong path loads nothing, silently
			curl -sf "$PROM_URL/api/v1/rules" | grep -q '"name":"svkit-alerts"' && return 0
			echo "FAIL: prometheus loaded no svkit rules from $src/configs/prometheus/svkit-rules.yaml"
			return 1
		fi
		kill -0 "$PROM_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "FAIL: prometheus did not become ready on $PROM_URL"
	sed 's/^/   /' "$PROM_LOG" | tail -20
	return 1
}

prom_query() {
	local args=(--data-urlencode "query=$1")
	[ -n "${2:-}" ] && args+=(--data-urlencode "time=$2")
	curl -sf -G "$PROM_URL/api/v1/query" "${args[@]}"
}

prom_value() {
	prom_query "$@" | python3 -c '
import json, sys
d = json.load(sys.stdin)
r = d["data"]["result"] if d.get("status") == "success" else []
if d["data"]["resultType"] == "scalar":
    print(d["data"]["result"][1])
elif r:
    print(r[0]["value"][1])'
}

prom_wait() {
	local expr=$1 op=$2 want=$3 secs=$4 v end
	end=$((SECONDS + secs))
	while [ $SECONDS -le $end ]; do
		v=$(prom_value "$expr" 2>/dev/null)
		if [ -n "$v" ] && python3 -c "import sys; sys.exit(0 if float('$v') $op float('$want') else 1)"; then
			return 0
		fi
		sleep 0.5
	done
	return 1
}

prom_stop() {
	if [ -n "$PROM_PID" ]; then
		kill "$PROM_PID" 2>/dev/null
		wait "$PROM_PID" 2>/dev/null
		PROM_PID=
	fi
	[ -n "$PROM_DIR" ] && rm -rf "$PROM_DIR"
	PROM_DIR=
}

prom_cleanup() {
	prom_stop
}
