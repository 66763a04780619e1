#!/usr/bin/env bash
# Runs one oracle program of this folder, CLASS (tests-interop/java/CLASS.java), against the
# official Apache Fluss Java client, VERSION (default 1.0.0), with ARGS; stdin and stdout are the
# program's. No cluster needed.
#
#   tests-interop/java/client_oracle.sh CLASS [VERSION] [ARGS...]
#
# On first use on a machine it downloads org.apache.fluss:fluss-client:VERSION (one shaded jar:
# the Errors enum, the exception and the protobuf message classes are inside it) from Maven
# Central into the user's cache, $FLUSS_WRITER_CACHE/java-errors/VERSION (as tests-interop/java/
# run.sh does), and compiles CLASS into the clone, $FLUSS_HOME/java-errors/VERSION (again when its
# source changes). Needs Java >= 11 (Maven and javac on first use).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
FLUSS_HOME="${FLUSS_HOME:-$REPO/.fluss}"
CLASS="${1:?usage: client_oracle.sh CLASS [VERSION] [ARGS...]}"
VERSION="${2:-1.0.0}"
shift $(( $# < 2 ? $# : 2 ))
DEP_PLUGIN="${FLUSS_DEP_PLUGIN:-org.apache.maven.plugins:maven-dependency-plugin:3.8.1}"
CACHE="${FLUSS_WRITER_CACHE:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/fluss-writer}"
DIR="$FLUSS_HOME/java-errors/$VERSION"
JARDIR="$CACHE/java-errors/$VERSION"
JAR="$JARDIR/fluss-client-$VERSION.jar"
SRC="$HERE/$CLASS.java"
CLASSES="$DIR/classes-$CLASS"
MVN="${MVN:-mvn}"
JAVA="${JAVA:-java}"
JAVAC="${JAVAC:-javac}"

die() { echo "[java-oracle] ERROR: $*" >&2; exit 1; }
[[ -f "$SRC" ]] || die "no oracle program $SRC"
mkdir -p "$DIR" "$JARDIR"
exec 8>"$JARDIR/.lock"
flock 8
if [[ ! -s "$JAR" ]]; then
  command -v "$MVN" >/dev/null || die "Maven ('$MVN') is needed once to download fluss-client $VERSION"
  echo "[java-oracle] downloading fluss-client $VERSION into $JARDIR" >&2
  if ! "$MVN" -B -ntp -Dstyle.color=never "$DEP_PLUGIN:copy" -Dartifact="org.apache.fluss:fluss-client:$VERSION" \
        -DoutputDirectory="$JARDIR" >"$JARDIR/mvn.log" 2>&1; then
    tail -n 40 "$JARDIR/mvn.log" >&2
    die "Maven could not download fluss-client $VERSION (see $JARDIR/mvn.log)"
  fi
  [[ -s "$JAR" ]] || die "fluss-client-$VERSION.jar missing after the download"
fi
flock -u 8
exec 8>&-
exec 9>"$DIR/.lock"
flock 9
if [[ ! -f "$CLASSES/$CLASS.class" || "$SRC" -nt "$CLASSES/$CLASS.class" ]]; then
  command -v "$JAVAC" >/dev/null || die "javac ('$JAVAC') is needed to compile the oracle (install a JDK 17)"
  rm -rf "$CLASSES" && mkdir -p "$CLASSES"
  "$JAVAC" -nowarn -cp "$JAR" -d "$CLASSES" "$SRC" >&2
fi
flock -u 9
command -v "$JAVA" >/dev/null || die "java ('$JAVA') not found on PATH"
# slf4j without a binding logs one warning line on stderr; stdout is the program's output only.
exec "$JAVA" -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$CLASSES:$JAR" "$CLASS" "$@"
