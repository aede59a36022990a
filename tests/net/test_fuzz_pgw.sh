#!/usr/bin/env bash
# test_fuzz_pgw.sh — builds the pgwire decoders' libFuzzer target
# (tests/net/fuzz_pgw.c) with clang-19 and ASan+UBSan and runs it for a
# bounded number of inputs, seeded with well-formed messages of each kind.
# Any crash, leak, sanitizer report or hang fails the test. Skips (exit 0)
# only when clang-19 is missing.
set -euo pipefail
. "${RACKDB_SOURCE:?RACKDB_SOURCE not set}/tests/fuzz_lib.sh"

sources=(net/pgwire/msg_read.c net/pgwire/msg_write.c net/pgwire/values.c net/pgwire/params.c
         net/pgwire/scram.c storage/status.c storage/types.c)
fuzz_build fuzz_pgw -O1 -I"$src" "${sources[@]/#/$src/}" "$src/tests/net/fuzz_pgw.c" -lcrypto -lm

corpus=$tmp/corpus
mkdir "$corpus"
# mode byte, then bytes: a startup packet; a Query; Parse+Bind+Describe+Execute+Close; SASL
printf '\x01\x00\x00\x00\x1b\x00\x03\x00\x00user\x00ann\x00database\x00db\x00\x00' > "$corpus/startup"
printf '\x01\x00\x00\x00\x10\x04\xd2\x16\x2e\x00\x00\x00\x07\x00\x00\x00\x09' > "$corpus/cancel"
printf '\x00Q\x00\x00\x00\x1aSELECT $1, $2 -- $3\n\x00' > "$corpus/query"
printf '\x00P\x00\x00\x00\x16s\x00SELECT $1\x00\x00\x01\x00\x00\x00\x17B\x00\x00\x00\x16\x00s\x00\x00\x01\x00\x01\x00\x01\x00\x00\x00\x04\x00\x00\x00\x2a\x00\x00D\x00\x00\x00\x06P\x00E\x00\x00\x00\x09\x00\x00\x00\x00\x02C\x00\x00\x00\x06S\x00' > "$corpus/extended"
printf '\x00B\x00\x00\x00\x1e\x00\x00\x00\x01\x00\x01\x00\x03\x00\x00\x00\x0c\x00\x02\x00\x00\x00\x00\x00\x02\x00\x0c\x13\x88\x00\x00' > "$corpus/numeric"
printf '\x00p\x00\x00\x00\x36SCRAM-SHA-256\x00\x00\x00\x00\x20n,,n=ann,r=rOprNGfwEbeRWgbNEkqO' > "$corpus/sasl"

fuzz_run fuzz_pgw "20000 runs, no crash, leak or hang" -runs=20000 -max_len=512 "$corpus"
