#!/bin/bash
# test_gen_sha1.sh — `tpch gen` writes dbgen 2.14.0's files byte for byte.
#
# Checks the SHA-1 of every table at SF 0.001, 0.01 and 0.1 against the
# checksums of dbgen's own output ($RACKDB_SHARED/tpch/dbgen.sha1), written
# the default way (past the page cache where the file system allows), that
# twelve threads (more than the morsels that may wait parked) keep the order,
# that the parts of a --parts 3 run concatenate to the whole tables, that a
# missing --out directory is created, and that bad input (unwritable places
# included) fails with a message and leaves no file behind.
set -u
fail=0
note() { echo "FAIL: $*" >&2; fail=1; }

# The rackdb program when it has the tpch subcommand, else the test driver
# built from the same cli/tpch_gen.c.
if [ -n "${RACKDB:-}" ] && [ -x "$RACKDB" ] && "$RACKDB" tpch gen --help >/dev/null 2>&1; then
    GEN=("$RACKDB" tpch gen)
else
    GEN=("$RACKDB_BUILD/tests/tpch_gen_cli" gen)
fi
SUMS="$RACKDB_SHARED/tpch/dbgen.sha1"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tpch_gen_test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
TABLES="part partsupp supplier customer orders lineitem nation region"

# expected SF TABLE -> sha1 from dbgen.sha1
expected() { awk -v s="$1" -v t="$2" '$1 == s && $2 == t { print $4 }' "$SUMS"; }

# Sanitizer builds run ~10x slower: there only SF 0.01 runs (the same code
# paths); SF 0.001 and 0.1 are left to the release run.
SCALES="0.001 0.01 0.1"
NPARTS=3
if grep -q '^RACKDB_SANITIZE:BOOL=ON' "$RACKDB_BUILD/CMakeCache.txt" 2>/dev/null; then
    SCALES="0.01"
    NPARTS=2
fi
for sf in $SCALES; do
    dir="$WORK/sf$sf"
    mkdir -p "$dir"
    if ! "${GEN[@]}" --sf "$sf" --out "$dir"; then
        note "generation at SF $sf failed"
        continue
    fi
    for t in $TABLES; do
        want=$(expected "$sf" "$t")
        got=$(sha1sum "$dir/$t.tbl" 2>/dev/null | cut -d' ' -f1)
        [ -n "$want" ] || note "no checksum for SF $sf $t"
        [ "$got" = "$want" ] || note "SF $sf $t.tbl: sha1 $got, dbgen's is $want"
    done
    [ -z "$(ls "$dir" | grep -v '\.tbl$')" ] || note "SF $sf left other files: $(ls "$dir")"
done
rm -rf "$WORK/sf0.1"

# --parts N: every part on its own, concatenated in order = the whole table;
# nation and region are written whole by every part, as dbgen does.
dir="$WORK/parts"
mkdir -p "$dir"
for i in $(seq 1 $NPARTS); do
    "${GEN[@]}" --sf 0.01 --out "$dir" --parts $NPARTS --part "$i" --threads 2 || note "part $i failed"
done
for t in part partsupp supplier customer orders lineitem; do
    got=$(for i in $(seq 1 $NPARTS); do cat "$dir/$t.tbl.$i"; done | sha1sum | cut -d' ' -f1)
    [ "$got" = "$(expected 0.01 "$t")" ] || note "parts of $t do not add up to the whole table"
    [ -s "$dir/$t.tbl.1" ] && [ -s "$dir/$t.tbl.$NPARTS" ] || note "a part of $t is empty"
done
for t in nation region; do
    [ "$(sha1sum < "$dir/$t.tbl" | cut -d' ' -f1)" = "$(expected 0.01 "$t")" ] ||
        note "$t.tbl written with --parts differs"
done

# More threads than morsels may wait parked (tpch/gen_files.c, PARKED = 8):
# workers run ahead of the one whose morsel is next, and the order holds.
many_sf=0.1
[ "$SCALES" = "0.01" ] && many_sf=0.01
dir="$WORK/many"
mkdir -p "$dir"
"${GEN[@]}" --sf $many_sf --out "$dir" --tables orders,lineitem --threads 12 || note "--threads 12 failed"
for t in orders lineitem; do
    [ "$(sha1sum < "$dir/$t.tbl" | cut -d' ' -f1)" = "$(expected $many_sf $t)" ] ||
        note "$t with 12 threads differs"
done
rm -rf "$dir"

# --tables: just those files.
dir="$WORK/some"
mkdir -p "$dir"
"${GEN[@]}" --sf 0.01 --out "$dir" --tables lineitem,nation --threads 1 || note "--tables failed"
[ "$(cd "$dir" && ls | tr '\n' ' ')" = "lineitem.tbl nation.tbl " ] || note "--tables wrote: $(ls "$dir")"
[ "$(sha1sum < "$dir/lineitem.tbl" | cut -d' ' -f1)" = "$(expected 0.01 lineitem)" ] ||
    note "lineitem alone (one thread) differs"

# Bad input: non-zero exit, a message on stderr, no file.
bad() {
    local expect="$1"
    shift
    local dir="$WORK/bad"
    rm -rf "$dir" && mkdir -p "$dir"
    local err
    if err=$("${GEN[@]}" "$@" 2>&1 >/dev/null); then
        note "succeeded: $*"
    fi
    echo "$err" | grep -q -- "$expect" || note "message for '$*' lacks '$expect': $err"
    [ -z "$(ls -A "$dir")" ] || note "'$*' left files: $(ls -A "$dir")"
}
bad "missing --sf" --out "$WORK/bad"
bad "needs a value" --out "$WORK/bad" --sf
bad "greater than 0" --out "$WORK/bad" --sf 0
bad "greater than 0" --out "$WORK/bad" --sf -1
bad "needs a number" --out "$WORK/bad" --sf abc
bad "needs a number" --out "$WORK/bad" --sf 0.01x
bad "unknown table \"orderz\"" --out "$WORK/bad" --sf 0.01 --tables part,orderz
bad "outside 1..3" --out "$WORK/bad" --sf 0.01 --parts 3 --part 4
bad "at least 1" --out "$WORK/bad" --sf 0.01 --parts 3 --part 0
bad "needs --part" --out "$WORK/bad" --sf 0.01 --parts 3
bad "unknown option" --out "$WORK/bad" --sf 0.01 --frobnicate
bad "not a directory" --sf 0.01 --out "$SUMS"
bad "cannot create directory $SUMS/sub" --sf 0.01 --out "$SUMS/sub"

# A missing output directory is created, parents and all (mkdir -p).
dir="$WORK/new/a/b"
"${GEN[@]}" --sf 0.01 --out "$dir/" --tables nation,region --threads 1 || note "--out to a new directory failed"
[ "$(cd "$dir" 2>/dev/null && ls | tr '\n' ' ')" = "nation.tbl region.tbl " ] ||
    note "new directory holds: $(ls "$dir" 2>&1)"
[ "$(sha1sum < "$dir/nation.tbl" | cut -d' ' -f1)" = "$(expected 0.01 nation)" ] ||
    note "nation.tbl in a new directory differs"

# Unwritable locations fail clearly, leaving nothing: a new directory under
# a read-only one, and a read-only directory itself. Permission bits do not
# stop root, so as root this runs on a read-only tmpfs in a private mount
# namespace instead, where one can be made.
unwritable_checks() { # $1: a read-only directory
    local err
    if err=$("${GEN[@]}" --sf 0.01 --out "$1/sub" --tables nation 2>&1); then
        note "wrote under read-only $1"
    fi
    echo "$err" | grep -q "cannot create directory $1/sub" || note "new dir under read-only: $err"
    if err=$("${GEN[@]}" --sf 0.01 --out "$1" --tables nation 2>&1); then
        note "wrote into read-only $1"
    fi
    echo "$err" | grep -q "cannot write to" || note "read-only dir: $err"
    [ -z "$(ls -A "$1")" ] || note "read-only dir got files: $(ls -A "$1")"
}
ro="$WORK/ro"
mkdir -p "$ro"
if [ "$(id -u)" != 0 ]; then
    chmod 555 "$ro"
    unwritable_checks "$ro"
    chmod 755 "$ro"
elif unshare -m true 2>/dev/null; then
    out=$(unshare -m bash -c 'mount -t tmpfs -o ro,size=1m none "$1" || { echo "rc=99"; exit; }
        shift; ro=$0; GEN=("$@"); fail=0
        note() { echo "FAIL: $*"; fail=1; }
        '"$(declare -f unwritable_checks)"'
        unwritable_checks "$ro"; echo "rc=$fail"' "$ro" "$ro" "${GEN[@]}")
    case "$out" in
    *"rc=99"*) echo "note: no read-only tmpfs could be mounted; unwritable case not run" >&2 ;;
    "rc=0") ;;
    *) note "unwritable (read-only tmpfs): $out" ;;
    esac
else
    echo "note: running as root without unshare; unwritable case not run" >&2
fi

# A full disk: a 2 MiB tmpfs in a private mount namespace, where one can be
# made (root or user namespaces); the error must name the cause and no file,
# temporary or final, may remain.
full="$WORK/full"
mkdir -p "$full"
if unshare -m true 2>/dev/null; then
    out=$(unshare -m bash -c 'mount -t tmpfs -o size=2m none "$1" || exit 99
        shift; "$@" --sf 0.01 --out "$0" 2>&1; echo "rc=$?"; ls -A "$0"' \
        "$full" "$full" "${GEN[@]}")
    case "$out" in
    *"rc=99"*) echo "note: no tmpfs could be mounted; disk-full case not run" >&2 ;;
    *"No space left on device"*"rc=1") ;;
    *) note "disk full: $out" ;;
    esac
else
    echo "note: unshare not permitted; disk-full case not run" >&2
fi

[ $fail = 0 ] && echo "all tpch gen checks passed"
exit $fail
