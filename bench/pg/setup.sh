#!/usr/bin/env bash
# Starts a private PostgreSQL 15 cluster for the TPC-H comparison: a fresh
# data directory, listening on 127.0.0.1 at a free port, trust
# authentication, settings for a read-mostly analytic benchmark (durability
# off, since the data is reloaded from .tbl files anyway).
#
# PostgreSQL refuses to run as root. Run as root, the server runs as the
# `postgres` system user (created by the Debian package) and the data
# directory is handed to it; run as anyone else, the server runs as that user.
#
# usage: setup.sh [--port P] [--datadir D] [--shared-buffers 1GB]
#                 [--work-mem 256MB] [--install]
#   --port            TCP port (default: first free from 54320)
#   --datadir         data directory to create (default: a new /tmp/rackdb-pg.XXXXXX)
#   --shared-buffers  PostgreSQL shared_buffers (default 1GB)
#   --work-mem        PostgreSQL work_mem (default 256MB)
#   --install         apt-get install postgresql-15 if its binaries are missing
#
# Prints "port=P datadir=D" on its last line; stop the server with
# `bench/pg/stop.sh --datadir D`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

port=
datadir=
shared_buffers=1GB
work_mem=256MB
install=0
while (($#)); do
	case $1 in
	--port) port=$2; shift 2 ;;
	--datadir) datadir=$2; shift 2 ;;
	--shared-buffers) shared_buffers=$2; shift 2 ;;
	--work-mem) work_mem=$2; shift 2 ;;
	--install) install=1; shift ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) bench_die "unknown argument '$1'" ;;
	esac
done

bindir=/usr/lib/postgresql/15/bin
if [[ ! -x $bindir/initdb ]]; then
	((install)) || bench_die "PostgreSQL 15 not found in $bindir (run with --install, or apt-get install -y postgresql-15)"
	[[ $(id -u) -eq 0 ]] || bench_die "--install needs root"
	apt-get install -y postgresql-15 >&2
fi

user=$(id -un)
if [[ $(id -u) -eq 0 ]]; then
	user=postgres
	id -u "$user" >/dev/null 2>&1 || bench_die "running as root needs the '$user' system user (apt-get install -y postgresql-15 creates it)"
fi

if [[ -z $port ]]; then
	port=$(bench_free_port 54320)
elif ! bench_port_free "$port"; then
	bench_die "port $port is in use"
fi

if [[ -z $datadir ]]; then
	datadir=$(mktemp -d /tmp/rackdb-pg.XXXXXX)
else
	[[ ! -e $datadir || -z $(ls -A "$datadir") ]] || bench_die "$datadir exists and is not empty"
	mkdir -p "$datadir"
fi
if [[ $(id -u) -eq 0 ]]; then
	chown "$user" "$datadir"
	chmod 700 "$datadir"
fi

bench_as_user "$user" "$bindir/initdb" -D "$datadir" -U postgres --auth=trust --encoding=UTF8 --locale=C >"$datadir.initdb.log" 2>&1 ||
	bench_die "initdb failed, see $datadir.initdb.log"
rm -f "$datadir.initdb.log"

# The socket goes into the data directory, so that clusters of several runs
# never collide in /var/run/postgresql (which needs root to create anyway).
cat >>"$datadir/postgresql.conf" <<EOF

# rackdb bench/pg/setup.sh
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$datadir'
shared_buffers = '$shared_buffers'
work_mem = '$work_mem'
maintenance_work_mem = '1GB'
effective_cache_size = '4GB'
max_parallel_workers_per_gather = 2
max_wal_size = '8GB'
fsync = off
synchronous_commit = off
full_page_writes = off
EOF

bench_as_user "$user" "$bindir/pg_ctl" -D "$datadir" -l "$datadir/server.log" -w -t 60 start >&2 ||
	bench_die "the server did not start, see $datadir/server.log"
version=$("$bindir/psql" -X -h 127.0.0.1 -p "$port" -U postgres -d postgres -Atc 'show server_version')
echo "PostgreSQL $version running as $user on 127.0.0.1:$port, data in $datadir" >&2
echo "port=$port datadir=$datadir"
