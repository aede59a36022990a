# Shell helpers shared by the bench/ scripts: source it, don't run it.
#   bench_die MSG...        print "error: MSG" to stderr and exit 1
#   bench_now               wall-clock seconds with microseconds (for timing)
#   bench_elapsed T0        seconds since T0 (a bench_now value), 6 decimals
#   bench_port_free P       status 0 when nothing listens on TCP port P
#   bench_free_port [FROM]  print the first free TCP port at FROM (54320) or above
#   bench_as_user U CMD...  run CMD as user U when we are root, else as ourselves
#   bench_reference_data D  unpack dbgen's SF 0.01 .tbl files from the shared
#                           reference data into directory D

bench_die() {
	echo "error: $*" >&2
	exit 1
}

bench_now() {
	# $EPOCHREALTIME (bash 5) avoids forking `date` inside timed regions.
	echo "${EPOCHREALTIME/,/.}"
}

bench_elapsed() {
	local now
	now=$(bench_now)
	awk -v a="$1" -v b="$now" 'BEGIN { printf "%.6f\n", b - a }'
}

bench_port_free() {
	[[ -z $(ss -Htln "sport = :$1" 2>/dev/null) ]]
}

bench_free_port() {
	local p=${1:-54320}
	while ! bench_port_free "$p"; do
		p=$((p + 1))
		((p < 65536)) || bench_die "no free TCP port"
	done
	echo "$p"
}

bench_as_user() {
	local user=$1
	shift
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u "$user" -- "$@"
	else
		"$@"
	fi
}

bench_reference_data() {
	local shared=${RACKDB_SHARED:-/work/shared} f
	mkdir -p "$1"
	for f in "$shared"/tpch/reference-data/sf0.01/*.tbl.gz; do
		[[ -f $f ]] || bench_die "no reference data in $shared/tpch/reference-data/sf0.01"
		gzip -dc "$f" >"$1/$(basename "$f" .gz)"
	done
}
