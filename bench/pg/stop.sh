#!/usr/bin/env bash
# Stops a cluster started by bench/pg/setup.sh and, with --remove, deletes its
# data directory.
#
# usage: stop.sh --datadir D [--remove]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

datadir=
remove=0
while (($#)); do
	case $1 in
	--datadir) datadir=$2; shift 2 ;;
	--remove) remove=1; shift ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) bench_die "unknown argument '$1'" ;;
	esac
done
[[ -n $datadir ]] || bench_die "--datadir is required"
[[ -f $datadir/PG_VERSION ]] || bench_die "$datadir is not a PostgreSQL data directory"

owner=$(stat -c %U "$datadir")
if [[ -f $datadir/postmaster.pid ]]; then
	bench_as_user "$owner" /usr/lib/postgresql/15/bin/pg_ctl -D "$datadir" -m fast -w stop >&2
fi
if ((remove)); then
	rm -rf "$datadir"
fi
