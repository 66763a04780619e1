#!/usr/bin/env bash
# Finds a Fluss 1.0-line server for the tests and prints the FLUSS_VERSION that
# scripts/fluss-cluster.sh must start, as its last stdout line (`FLUSS_VERSION=...`):
#   1. the 1.0.0 release from Maven Central (org.apache.fluss:fluss-server:1.0.0), when it is
#      served (not on the machines this project is developed on, Dec 2026: tried every run);
#   2. otherwise a 1.0-SNAPSHOT server built from source: the folder FLUSS_1_0_SNAPSHOT_DIR
#      (default: ../shared/fluss-1.0-snapshot next to the clone) holds apache/fluss's server source
#      and a build.sh that installs org.apache.fluss:fluss-server:1.0-SNAPSHOT into the local Maven
#      repository (about 1.5 minutes the first time, seconds after);
#   3. otherwise it says plainly that no 1.0-line server is available and exits 3.
# Progress goes to stderr.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SNAPSHOT_DIR="${FLUSS_1_0_SNAPSHOT_DIR:-$REPO/../shared/fluss-1.0-snapshot}"

if FLUSS_VERSION=1.0.0 "$REPO/scripts/fluss-cluster.sh" fetch >/dev/null 2>&1; then
  echo "[fluss-1.0] org.apache.fluss:fluss-server:1.0.0 is served from Maven Central: testing the release" >&2
  echo "FLUSS_VERSION=1.0.0"
  exit 0
fi
echo "[fluss-1.0] org.apache.fluss:fluss-server:1.0.0 is not served from Maven Central here" >&2
if [ -x "$SNAPSHOT_DIR/build.sh" ]; then
  echo "[fluss-1.0] building the 1.0-SNAPSHOT server from $SNAPSHOT_DIR" >&2
  "$SNAPSHOT_DIR/build.sh" >&2
  echo "FLUSS_VERSION=1.0-SNAPSHOT"
  exit 0
fi
echo "[fluss-1.0] no 1.0-line server: neither fluss-server:1.0.0 from Maven Central nor a snapshot source in $SNAPSHOT_DIR (set FLUSS_1_0_SNAPSHOT_DIR)" >&2
exit 3
