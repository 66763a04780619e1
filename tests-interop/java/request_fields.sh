#!/usr/bin/env bash
# Decode protobuf bodies with the official Apache Fluss Java client's message classes, VERSION
# (default 1.0.0), as tests-interop/java/FlussRequestFieldsOracle.java does (one JSON object a
# line). No cluster needed.
#
#   tests-interop/java/request_fields.sh [VERSION]  < messages
#
# On first use it downloads org.apache.fluss:fluss-client:VERSION (one shaded jar; the message
# classes are inside it) from Maven Central into $FLUSS_HOME/java-errors/VERSION (the directory
# error_codes.sh uses: one download serves both) and compiles the program there. Needs Java >= 11 (Maven and javac on first use).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
FLUSS_HOME="${FLUSS_HOME:-$REPO/.fluss}"
VERSION="${1:-1.0.0}"
DEP_PLUGIN="${FLUSS_DEP_PLUGIN:-org.apache.maven.plugins:maven-dependency-plugin:3.8.1}"
DIR="$FLUSS_HOME/java-errors/$VERSION"
JAR="$DIR/fluss-client-$VERSION.jar"
SRC="$HERE/FlussRequestFieldsOracle.java"
MVN="${MVN:-mvn}"
JAVA="${JAVA:-java}"
JAVAC="${JAVAC:-javac}"

die() { echo "[java-errors] ERROR: $*" >&2; exit 1; }
mkdir -p "$DIR"
exec 9>"$DIR/.lock"
flock 9
if [[ ! -s "$JAR" ]]; then
  command -v "$MVN" >/dev/null || die "Maven ('$MVN') is needed once to download fluss-client $VERSION"
  echo "[java-errors] downloading fluss-client $VERSION into $DIR" >&2
  if ! "$MVN" -B -ntp -Dstyle.color=never "$DEP_PLUGIN:copy" -Dartifact="org.apache.fluss:fluss-client:$VERSION" \
        -DoutputDirectory="$DIR" >"$DIR/mvn.log" 2>&1; then
    tail -n 40 "$DIR/mvn.log" >&2
    die "Maven could not download fluss-client $VERSION (see $DIR/mvn.log)"
  fi
  [[ -s "$JAR" ]] || die "fluss-client-$VERSION.jar missing after the download"
fi
if [[ ! -f "$DIR/classes-fields/FlussRequestFieldsOracle.class" || "$SRC" -nt "$DIR/classes-fields/FlussRequestFieldsOracle.class" ]]; then
  command -v "$JAVAC" >/dev/null || die "javac ('$JAVAC') is needed to compile the oracle (install a JDK 17)"
  rm -rf "$DIR/classes-fields" && mkdir -p "$DIR/classes-fields"
  "$JAVAC" -nowarn -cp "$JAR" -d "$DIR/classes-fields" "$SRC" >&2
fi
flock -u 9
command -v "$JAVA" >/dev/null || die "java ('$JAVA') not found on PATH"
# slf4j without a binding logs one warning line on stderr; stdout is the table only.
exec "$JAVA" -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$DIR/classes-fields:$JAR" FlussRequestFieldsOracle
