#!/usr/bin/env bash
# test_server_tls.sh — `rackdb server --tls-cert --tls-key`: psql with
# sslmode=require and verify-full against a self-signed certificate made
# here with the openssl CLI, SCRAM over TLS, a large result through TLS,
# plain connections beside TLS ones, and a server without a certificate
# answering SSLRequest with 'N'.
source "$(dirname "$0")/server_lib.sh"
need_psql
if ! command -v openssl > /dev/null 2>&1; then
    echo "skipped: openssl not installed"
    exit 0
fi

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
    -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2> /dev/null
printf 'alice:s3cret\n' > "$TMP/passwords"

# a certificate that cannot be read stops the server before it listens
status=0
"$RACKDB" server --port 1 --tls-cert "$TMP/nosuch.pem" --tls-key "$TMP/key.pem" 2> "$TMP/bad.log" || status=$?
check "bad certificate refused" "1 1" "$status $(grep -c 'cannot load the TLS certificate' "$TMP/bad.log")"
status=0
"$RACKDB" server --port 1 --tls-cert "$TMP/cert.pem" 2> /dev/null || status=$?
check "--tls-cert without --tls-key" "2" "$status"

start_server --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" --password-file "$TMP/passwords"
conn="host=127.0.0.1 port=$PORT user=alice dbname=db password=s3cret"
tls() { PGCONNECT_TIMEOUT=10 psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

out=$(tls "$conn sslmode=require" -c 'select current_user' -c '\conninfo')
check "sslmode=require" "alice" "$(echo "$out" | head -1)"
check "\\conninfo says SSL" "1" "$(echo "$out" | grep -c '^SSL connection (protocol: TLSv1\.[23]')"
# the certificate the server presents is the one it was given
check "sslmode=verify-full" "1" \
    "$(tls "host=localhost hostaddr=127.0.0.1 port=$PORT user=alice dbname=db password=s3cret sslmode=verify-full sslrootcert=$TMP/cert.pem" -c 'select 1')"
# a wrong password over TLS fails like one without
check "wrong password over TLS" "1" \
    "$(tls "host=127.0.0.1 port=$PORT user=alice dbname=db password=nope sslmode=require" -c 'select 1' 2>&1 |
        grep -c 'password authentication failed for user "alice"' || true)"
# unencrypted clients still connect to the same server
check "sslmode=disable" "1" "$(tls "$conn sslmode=disable" -c 'select 1')"

# many messages and a large result through TLS (records split across sends)
tls "$conn sslmode=require" -c 'CALL dbgen(sf = 0.01)' > /dev/null
tls "$conn sslmode=require" -c "\\copy (SELECT * FROM orders) TO '$TMP/orders.txt'"
check "large result over TLS" "15000" "$(wc -l < "$TMP/orders.txt")"
check "COPY in over TLS" "15000" \
    "$(tls "$conn sslmode=require" -c 'CREATE TABLE o2 (a INTEGER, b INTEGER, c VARCHAR(1), d DECIMAL(15,2), e DATE, f VARCHAR(15), g VARCHAR(15), h INTEGER, i VARCHAR(79))' \
    -c "\\copy o2 FROM '$TMP/orders.txt'" -c 'SELECT count(*) FROM o2' 2>&1 | grep -v '^CREATE')"
check "answers over TLS" "$(tls "$conn sslmode=disable" -c 'SELECT sum(o_totalprice) FROM orders')" \
    "$(tls "$conn sslmode=require" -c 'SELECT sum(o_totalprice) FROM orders')"
# bytes sent behind the SSLRequest, before the handshake, are refused
# (they would be read as if they had come through TLS)
check "data after SSLRequest refused" "E 08P01" "$(python3 - "$PORT" << 'PY'
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
startup = struct.pack("!i", 196608) + b"user\0x\0\0"
s.sendall(struct.pack("!ii", 8, 80877103) + struct.pack("!i", len(startup) + 4) + startup)
s.settimeout(10)
reply = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    reply += chunk
code = reply[reply.find(b"C08") + 1:][:5].decode() if b"C08" in reply else "?"
print(chr(reply[0]) if reply else "-", code)
PY
)"
check "log marks TLS" "1" "$(grep -c 'user=alice database=db (TLS)' "$SERVER_LOG" | awk '{print ($1 >= 5)}')"
stop_server
check "clean stop" "0" "$SERVER_STATUS"
cp "$SERVER_LOG" "$TMP/tls.log"

# without a certificate SSLRequest is answered 'N'
start_server
check "no TLS: prefer falls back" "1" "$(pg -At -U a -c 'select 1')"
check "no TLS: require refused" "1" \
    "$(psql -X -At "host=127.0.0.1 port=$PORT user=a sslmode=require" -c 'select 1' 2>&1 |
        grep -c 'server does not support SSL, but SSL was required' || true)"
stop_server
check "no sanitizer report" "0" "$(cat "$TMP/tls.log" "$SERVER_LOG" | grep -c -E 'Sanitizer|runtime error' || true)"
exit $FAILED
