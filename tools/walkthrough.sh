#!/usr/bin/env bash
# The walkthrough of docs/walkthrough.md as a script: the end-to-end flow against a running
# `npx replix start`, with curl and jq. CI runs it (packages/cli/test/walkthrough.int.test.ts).
#   API        control-plane address (default http://127.0.0.1:4000/v1)
#   DEMO_PORT  the demo source's port (default 15432)
set -euo pipefail
API=${API:-http://127.0.0.1:4000/v1}
DEMO_PORT=${DEMO_PORT:-15432}

step() { printf '\n== %s\n' "$*"; }
fail() { echo "walkthrough: $*" >&2; exit 1; }

step 'Get a token from the built-in issuer'
TOKEN=$(npx --no-install replix token --email walkthrough@example.com)
AUTH=(-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json')
call() { # method path [json body]
  if [ $# -ge 3 ]; then curl -sS -X "$1" "$API$2" "${AUTH[@]}" -d "$3"; else curl -sS -X "$1" "$API$2" "${AUTH[@]}"; fi
}

step 'Test the source before saving it'
result=$(call POST /connections/test-connection \
  "{\"backend\":\"postgres\",\"mysqlHost\":\"127.0.0.1\",\"mysqlPort\":$DEMO_PORT,\"mysqlUser\":\"postgres\",\"mysqlPassword\":\"demo\"}")
echo "$result" | jq .
[ "$(echo "$result" | jq -r .ok)" = true ] || fail 'the connection test failed'

step 'Save the connection'
CONNECTION=$(call POST /connections \
  "{\"name\":\"demo shop\",\"backend\":\"postgres\",\"host\":\"127.0.0.1\",\"port\":$DEMO_PORT,\"user\":\"postgres\",\"password\":\"demo\"}" | jq -r .id)
echo "connection $CONNECTION"

step 'Create a database over the demo shop (poll mode: PGlite has no logical replication)'
DATABASE=$(call POST /databases \
  "{\"name\":\"shop\",\"connectionId\":\"$CONNECTION\",\"sourceSchema\":\"postgres\",\"schemaConfig\":{},\"syncMode\":\"poll\",\"syncInterval\":60}" | jq -r .id)
echo "database $DATABASE"

step 'Look at the source schema'
call GET "/databases/$DATABASE/schema" | jq -c '.tables[] | {name, columns: [.columns[].name]}'

step 'Provision: build, then deploy'
call POST "/databases/$DATABASE/provision" | jq .
wait_for() { # status
  for _ in $(seq 1 180); do
    status=$(call GET "/databases/$DATABASE/instance" | jq -r .database.status)
    [ "$status" = "$1" ] && return 0
    [ "$status" = failed ] && fail "the database failed: $(call GET "/databases/$DATABASE/instance" | jq -r .database.lastError)"
    sleep 1
  done
  fail "the database did not reach $1 (last status $status)"
}
wait_for running
call GET "/databases/$DATABASE/builds" | jq -c '.[] | {id, status, buildDurationSeconds}'
call GET "/databases/$DATABASE/infra-logs" | jq -r '.lines[].message'

step 'Create an API key and query the instance'
KEY=$(call POST "/databases/$DATABASE/api-keys" '{"name":"walkthrough"}')
API_KEY=$(echo "$KEY" | jq -r .key)
KEY_ID=$(echo "$KEY" | jq -r .keyId)
INSTANCE=$(call GET "/databases/$DATABASE/instance" | jq -r .instance.endpointUrl)
# The reconciler hands a new key to the instance within a second or two.
for _ in $(seq 1 20); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$INSTANCE/query" -H "Authorization: Bearer $API_KEY" --data-binary 'customers { id } LIMIT 1')
  [ "$code" = 200 ] && break
  sleep 0.5
done
curl -sS "$INSTANCE/query" -H "Authorization: Bearer $API_KEY" \
  --data-binary 'customers { id name } ORDER BY id LIMIT 3' | jq -c .data
rows=$(curl -sS "$INSTANCE/query" -H "Authorization: Bearer $API_KEY" --data-binary 'customers { id } LIMIT 3' | jq '.data | length')
[ "$rows" = 3 ] || fail "expected 3 rows, got $rows"

step 'Delete the key: the instance refuses it within seconds'
curl -sS -o /dev/null -X DELETE "$API/databases/$DATABASE/api-keys/$KEY_ID" -H "Authorization: Bearer $TOKEN"
code=200
for _ in $(seq 1 10); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$INSTANCE/query" -H "Authorization: Bearer $API_KEY" --data-binary 'customers { id } LIMIT 1')
  [ "$code" = 401 ] && break
  sleep 0.5
done
[ "$code" = 401 ] || fail "the deleted key still works (HTTP $code)"
echo 'deleted key: 401'

step 'Pause replication, then redeploy the latest build'
call POST "/databases/$DATABASE/pause-replication" | jq .
BUILD=$(call GET "/databases/$DATABASE/builds" | jq -r '.[0].id') # newest first
call POST "/databases/$DATABASE/redeploy" "{\"buildId\":\"$BUILD\"}" | jq .
wait_for running
[ "$(call GET "/databases/$DATABASE" | jq -r .endpointUrl)" = "$INSTANCE" ] || fail 'the redeploy moved the endpoint'
echo "endpoint after the redeploy: $INSTANCE"

step 'Terminate, provision again, then delete'
call POST "/databases/$DATABASE/terminate" | jq .
wait_for terminated
call POST "/databases/$DATABASE/provision" | jq .
wait_for running
code=$(curl -sS -o /dev/null -w '%{http_code}' -X DELETE "$API/databases/$DATABASE" -H "Authorization: Bearer $TOKEN")
[ "$code" = 202 ] || fail "delete answered $code"
for _ in $(seq 1 60); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$API/databases/$DATABASE" -H "Authorization: Bearer $TOKEN")
  [ "$code" = 404 ] && break
  sleep 1
done
[ "$code" = 404 ] || fail 'the database was not deleted'

step 'The audit log tells the story'
call GET '/account/audit-log?limit=50' | jq -r '.events[] | "\(.createdAt)  \(.eventType)"'
echo
echo 'walkthrough: done'
