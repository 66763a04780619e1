#!/usr/bin/env bash
# Start/stop a real Apache Fluss 0.9.1-incubating cluster (ZooKeeper + CoordinatorServer + TabletServer)
# on loopback, without Docker. Only Java 17 and Maven (for the first download) are needed.
#
#   scripts/fluss-cluster.sh start    # fetch jars if needed, start 3 JVMs, wait until the cluster answers;
#                                     # last stdout line: FLUSS_BOOTSTRAP_SERVERS=127.0.0.1:9123
#   scripts/fluss-cluster.sh stop     # SIGTERM the processes it started (by pid), then SIGKILL after a timeout
#   scripts/fluss-cluster.sh status   # what runs; exit 0 only if all 3 run and the cluster answers
#   scripts/fluss-cluster.sh restart-tablet   # stop only the tablet server (by pid) and start it again on the
#                                     # same data dir; ZooKeeper and the coordinator keep running
#   scripts/fluss-cluster.sh kill-tablet I [TERM|KILL]   # stop tablet server I (0-based; default SIGTERM), once
#                                     # the others run (at most one down at a time; FLUSS_KILL_WAIT)
#   scripts/fluss-cluster.sh start-tablet I   # start tablet server I again (same id, port and data dir)
#   scripts/fluss-cluster.sh restart-coordinator   # stop the coordinator and start it again
#   FLUSS_STANDBY_COORDINATOR_PORT=P scripts/fluss-cluster.sh start   # a second coordinator on port P
#                                     # (Fluss 1.0 coordinator high availability: it starts once the first
#                                     # leads, so it is the standby); the last line names both addresses
#   scripts/fluss-cluster.sh kill-coordinator I [TERM|KILL]   # stop coordinator I (0 = the first, 1 = the
#                                     # standby's); the other one takes over the leadership
#   scripts/fluss-cluster.sh start-coordinator I   # start coordinator I again (as a standby if one leads)
#   scripts/fluss-cluster.sh heal-watch  # runs until killed: restarts the coordinator when its log shows
#                                     # the Fluss 0.9.1 bug that stops it from assigning leaders (below)
#   scripts/fluss-cluster.sh leaders DB.TABLE       # which tablet server leads each bucket, and the replicas
#   FLUSS_TABLETS=3 scripts/fluss-cluster.sh start  # several tablet servers (ports FLUSS_TABLET_PORT + i)
#   FLUSS_CPUS=1 scripts/fluss-cluster.sh start      # the servers pinned to CPU 1 (taskset), e.g. for benchmarks
#   FLUSS_LAKE=paimon scripts/fluss-cluster.sh start  # with a Paimon data lake (filesystem warehouse in the run dir)
#   scripts/fluss-cluster.sh logs [zk|coordinator|tablet] [LINES]
#   scripts/fluss-cluster.sh fetch    # only download/cache the jars
#
# See scripts/README.md for the environment variables.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$SCRIPT_DIR/.." && pwd)"

FLUSS_VERSION="${FLUSS_VERSION:-0.9.1-incubating}"
FLUSS_LOG4J_VERSION="${FLUSS_LOG4J_VERSION:-2.25.4}"        # what fluss 0.9.1's poms use
FLUSS_DEP_PLUGIN="${FLUSS_DEP_PLUGIN:-org.apache.maven.plugins:maven-dependency-plugin:3.8.1}"
FLUSS_HOME="${FLUSS_HOME:-$REPO/.fluss}"
FLUSS_LIB_DIR="${FLUSS_LIB_DIR:-$FLUSS_HOME/lib/$FLUSS_VERSION}"
FLUSS_RUN_DIR="${FLUSS_RUN_DIR:-$FLUSS_HOME/run}"
FLUSS_HOST="${FLUSS_HOST:-127.0.0.1}"
FLUSS_COORDINATOR_PORT="${FLUSS_COORDINATOR_PORT:-9123}"
FLUSS_TABLET_PORT="${FLUSS_TABLET_PORT:-9124}"
FLUSS_ZK_PORT="${FLUSS_ZK_PORT:-2181}"
FLUSS_START_TIMEOUT="${FLUSS_START_TIMEOUT:-120}"
FLUSS_STOP_TIMEOUT="${FLUSS_STOP_TIMEOUT:-30}"
FLUSS_KEEP_DATA="${FLUSS_KEEP_DATA:-0}"
FLUSS_ZK_HEAP="${FLUSS_ZK_HEAP:-128m}"
FLUSS_COORDINATOR_HEAP="${FLUSS_COORDINATOR_HEAP:-512m}"
FLUSS_TABLET_HEAP="${FLUSS_TABLET_HEAP:-1g}"
FLUSS_JAVA_OPTS="${FLUSS_JAVA_OPTS:-}"
FLUSS_CPUS="${FLUSS_CPUS:-}"                  # CPU list for every JVM (taskset -c), e.g. 1 or 0-1; empty: any CPU
FLUSS_EXTRA_CONF="${FLUSS_EXTRA_CONF:-}"      # extra server.yaml lines (newline separated) for both servers
# FLUSS_LAKE=paimon: the cluster has a Paimon data lake (filesystem catalog, warehouse in the run
# dir): the lake plugin jars are fetched once into $FLUSS_HOME/lake/paimon and copied into
# $FLUSS_RUN_DIR/plugins/paimon, and the servers get datalake.format / datalake.paimon.* (tables
# with table.datalake.enabled = true can be created; the tiering service, which needs Flink, is
# not started). The jars, as fluss-dist 0.9.1 lays out plugins/paimon:
FLUSS_LAKE="${FLUSS_LAKE:-}"
FLUSS_LAKE_PAIMON_JARS=(
  "org.apache.fluss:fluss-lake-paimon:$FLUSS_VERSION"        # its parent pom is missing from Maven Central: fetched directly
  "org.apache.paimon:paimon-bundle:${FLUSS_PAIMON_VERSION:-1.3.1}"   # paimon.version of fluss-lake-paimon 0.9.1
  "org.apache.flink:flink-shaded-hadoop-2-uber:${FLUSS_HADOOP_UBER_VERSION:-2.8.3-10.0}"   # Paimon's catalog needs Hadoop's Configuration
)
FLUSS_MAVEN_REPO="${FLUSS_MAVEN_REPO:-https://repo.maven.apache.org/maven2}"
# FLUSS_SASL=1: the client listeners (the ports above) take SASL/PLAIN and the authorizer is on;
# the servers talk to each other on a PLAINTEXT internal listener at port + FLUSS_INTERNAL_PORT_OFFSET.
FLUSS_SASL="${FLUSS_SASL:-0}"
FLUSS_SASL_USERS="${FLUSS_SASL_USERS:-admin:admin-secret fluss:fluss-secret}"   # user:password ...
FLUSS_SUPER_USERS="${FLUSS_SUPER_USERS:-User:admin}"
FLUSS_INTERNAL_PORT_OFFSET="${FLUSS_INTERNAL_PORT_OFFSET:-1000}"
FLUSS_TABLETS="${FLUSS_TABLETS:-1}"              # tablet servers: ids 0..N-1, ports FLUSS_TABLET_PORT + id
FLUSS_STANDBY_COORDINATOR_PORT="${FLUSS_STANDBY_COORDINATOR_PORT:-}"   # a second coordinator (Fluss 1.0 HA)
[[ "$FLUSS_TABLETS" =~ ^[1-9][0-9]?$ ]] || { echo "[fluss-cluster] ERROR: FLUSS_TABLETS must be 1..99" >&2; exit 1; }
# Tables created without a replication factor get min(tablet servers, 3) replicas.
FLUSS_REPLICATION_FACTOR="${FLUSS_REPLICATION_FACTOR:-$(( FLUSS_TABLETS < 3 ? FLUSS_TABLETS : 3 ))}"
PYTHON="${PYTHON:-python3}"
MVN="${MVN:-mvn}"
if [[ -n "${JAVA:-}" ]]; then :
elif [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then JAVA="$JAVA_HOME/bin/java"
else JAVA=java; fi

PROBE="$SCRIPT_DIR/fluss_probe.py"
# Held while a command changes which processes run (start, stop, restarts), so that heal-watch and
# a concurrent start never act on a half-started cluster; outside the run dir, which start deletes.
LOCK_FILE="$FLUSS_RUN_DIR.lock"
# One line per coordinator restart heal-watch made, kept across restarts of the cluster.
HEALS_FILE="$FLUSS_RUN_DIR.heals"
PID_DIR="$FLUSS_RUN_DIR/pids"
LOG_DIR="$FLUSS_RUN_DIR/logs"
# Tablet server 0 keeps the role name "tablet" (and its conf/data/log names) of the one-server cluster.
tablet_role() { if (( $1 == 0 )); then echo tablet; else echo "tablet$1"; fi; }
TABLET_ROLES=(); for ((i = 0; i < FLUSS_TABLETS; i++)); do TABLET_ROLES+=("$(tablet_role "$i")"); done
COORD_ROLES=(coordinator)
if [[ -n "$FLUSS_STANDBY_COORDINATOR_PORT" ]]; then
  [[ "$FLUSS_STANDBY_COORDINATOR_PORT" =~ ^[0-9]+$ ]] || { echo "[fluss-cluster] ERROR: FLUSS_STANDBY_COORDINATOR_PORT must be a port number" >&2; exit 1; }
  COORD_ROLES+=(coordinator2)
fi
ROLES=(zk "${COORD_ROLES[@]}" "${TABLET_ROLES[@]}")
COORD_ADDR="$FLUSS_HOST:$FLUSS_COORDINATOR_PORT"
TABLET_ADDR="$FLUSS_HOST:$FLUSS_TABLET_PORT"
# What the readiness probe (plaintext) talks to, and the name of the address line printed last.
PROBE_COORD="$COORD_ADDR"; PROBE_TABLET="$TABLET_ADDR"; OUT_VAR=FLUSS_BOOTSTRAP_SERVERS
if [[ "$FLUSS_SASL" == 1 ]]; then
  PROBE_COORD="$FLUSS_HOST:$((FLUSS_COORDINATOR_PORT + FLUSS_INTERNAL_PORT_OFFSET))"
  PROBE_TABLET="$FLUSS_HOST:$((FLUSS_TABLET_PORT + FLUSS_INTERNAL_PORT_OFFSET))"
  OUT_VAR=FLUSS_SASL_BOOTSTRAP_SERVERS
fi
OUT_VAR="${FLUSS_OUT_VAR:-$OUT_VAR}"   # e.g. FLUSS_REPLICATED_BOOTSTRAP_SERVERS for a second cluster
# Coordinator I (0 or 1): its role, client port and the address the probe talks to.
coord_role() { if (( $1 == 0 )); then echo coordinator; else echo coordinator2; fi; }
coord_port() { if (( $1 == 0 )); then echo "$FLUSS_COORDINATOR_PORT"; else echo "$FLUSS_STANDBY_COORDINATOR_PORT"; fi; }
probe_coord_addr() {
  if [[ "$FLUSS_SASL" == 1 ]]; then echo "$FLUSS_HOST:$(( $(coord_port "$1") + FLUSS_INTERNAL_PORT_OFFSET ))"
  else echo "$FLUSS_HOST:$(coord_port "$1")"; fi
}
# What `start` prints: every coordinator's address (a client may list them all).
BOOTSTRAP_ADDRS="$COORD_ADDR"
[[ -n "$FLUSS_STANDBY_COORDINATOR_PORT" ]] && BOOTSTRAP_ADDRS+=",$FLUSS_HOST:$FLUSS_STANDBY_COORDINATOR_PORT"
ZK_ADDR="$FLUSS_HOST:$FLUSS_ZK_PORT"

FLUSS_JARS=(
  "org.apache.fluss:fluss-server:$FLUSS_VERSION"
  "org.apache.logging.log4j:log4j-api:$FLUSS_LOG4J_VERSION"
  "org.apache.logging.log4j:log4j-core:$FLUSS_LOG4J_VERSION"
  "org.apache.logging.log4j:log4j-slf4j-impl:$FLUSS_LOG4J_VERSION"
  "org.apache.logging.log4j:log4j-1.2-api:$FLUSS_LOG4J_VERSION"
)

elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "[fluss-cluster] $*" >&2; }
die() { echo "[fluss-cluster] ERROR: $*" >&2; exit 1; }

# ------------------------------------------------------------------ prerequisites
check_java() {
  command -v "$JAVA" >/dev/null 2>&1 || die "Java not found ('$JAVA'). Install a Java 17 runtime (Debian: apt-get install openjdk-17-jre-headless) or set JAVA/JAVA_HOME."
  local v major
  v="$("$JAVA" -version 2>&1 | awk -F'"' '/version/ {print $2; exit}')"
  major="${v%%.*}"; [[ "$major" == 1 ]] && major="$(echo "$v" | cut -d. -f2)"
  [[ "$major" =~ ^[0-9]+$ ]] || die "cannot parse the Java version from '$JAVA -version' (got '$v')"
  (( major >= 17 )) || die "Java $v found at $(command -v "$JAVA"); Fluss $FLUSS_VERSION needs Java 17 (set JAVA or JAVA_HOME)."
  (( major == 17 )) || log "warning: Java $v, this script was tested with Java 17"
}

check_python() {
  command -v "$PYTHON" >/dev/null 2>&1 || die "python3 not found ('$PYTHON'); the readiness probe needs it (stdlib only)."
}

# ------------------------------------------------------------------ jars
lib_complete() {
  [[ -f "$FLUSS_LIB_DIR/.complete" ]] || return 1
  local f
  while read -r f; do [[ -s "$FLUSS_LIB_DIR/$f" ]] || return 1; done < "$FLUSS_LIB_DIR/.complete"
}

fetch_jars() {
  if lib_complete; then return 0; fi
  command -v "$MVN" >/dev/null 2>&1 || die "Maven not found ('$MVN') and the Fluss jars are not cached in $FLUSS_LIB_DIR. Install Maven (apt-get install maven) or set MVN."
  mkdir -p "$FLUSS_LIB_DIR" "$FLUSS_HOME/fetch"
  local pom="$FLUSS_HOME/fetch/pom.xml" flog="$FLUSS_HOME/fetch/mvn.log" deps="" gav g a v
  for gav in "${FLUSS_JARS[@]}"; do
    IFS=: read -r g a v <<<"$gav"
    deps+="    <dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version></dependency>"$'\n'
  done
  cat > "$pom" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- generated by scripts/fluss-cluster.sh: only used to download the Fluss server jars -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.fluss-writer</groupId>
  <artifactId>fluss-cluster-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
$deps  </dependencies>
</project>
EOF
  log "downloading Fluss $FLUSS_VERSION + log4j $FLUSS_LOG4J_VERSION jars with Maven into $FLUSS_LIB_DIR (log: $flog)"
  local t0=$EPOCHREALTIME
  # excludeTransitive: fluss-server is a shaded, self-contained jar (its dependency-reduced pom has test deps only);
  # log4j-slf4j-impl's slf4j-api is already inside fluss-server.
  if ! "$MVN" -B -ntp -Dstyle.color=never -f "$pom" \
        "$FLUSS_DEP_PLUGIN:copy-dependencies" \
        -DoutputDirectory="$FLUSS_LIB_DIR" -DexcludeTransitive=true -DincludeScope=runtime \
        -Dmdep.overWriteReleases=true >"$flog" 2>&1; then
    tail -n 40 "$flog" >&2
    die "Maven could not download the Fluss jars (see $flog)"
  fi
  local jar="$FLUSS_LIB_DIR/fluss-server-$FLUSS_VERSION.jar" f
  [[ -s "$jar" ]] || die "Maven ran but $jar is missing (see $flog)"
  # sanity: the jar must be the shaded, self-contained server (main classes + shaded ZooKeeper + RocksDB)
  local cls
  cls="$(unzip_list "$jar")"
  for f in org/apache/fluss/server/coordinator/CoordinatorServer.class \
           org/apache/fluss/server/tablet/TabletServer.class \
           org/apache/fluss/shaded/zookeeper3/org/apache/zookeeper/server/quorum/QuorumPeerMain.class \
           org/rocksdb/RocksDB.class; do
    grep -qxF "$f" <<<"$cls" || die "$jar does not contain $f: not the self-contained shaded server jar?"
  done
  (cd "$FLUSS_LIB_DIR" && ls -1 ./*.jar | sed 's#^\./##') > "$FLUSS_LIB_DIR/.complete"
  log "jars ready in $(elapsed "$t0") s: $(cd "$FLUSS_LIB_DIR" && du -ch ./*.jar | tail -1 | cut -f1) total"
}

lake_dir() { echo "$FLUSS_HOME/lake/$FLUSS_LAKE"; }

# Fetch the jars of the lake plugin once (FLUSS_LAKE=paimon). The Fluss jar is downloaded as a
# file and checked against Maven Central's SHA-1 (Maven cannot resolve it: the parent pom
# org.apache.fluss:fluss-lake:0.9.1-incubating is not published); the others with Maven.
fetch_lake_jars() {
  [[ -z "$FLUSS_LAKE" ]] && return 0
  [[ "$FLUSS_LAKE" == paimon ]] || die "FLUSS_LAKE=$FLUSS_LAKE: only paimon is supported"
  local dir; dir="$(lake_dir)"
  [[ -f "$dir/.complete" ]] && return 0
  mkdir -p "$dir"
  local gav g a v url jar flog="$dir/mvn.log" t0=$EPOCHREALTIME
  log "downloading the $FLUSS_LAKE lake plugin jars into $dir"
  for gav in "${FLUSS_LAKE_PAIMON_JARS[@]}"; do
    IFS=: read -r g a v <<<"$gav"
    jar="$a-$v.jar"
    if [[ "$g" == org.apache.fluss ]]; then
      url="$FLUSS_MAVEN_REPO/${g//.//}/$a/$v/$jar"
      command -v curl >/dev/null 2>&1 || die "curl is needed to download $jar"
      curl -sSfL -o "$dir/$jar.part" "$url" || die "cannot download $url"
      local want got
      want="$(curl -sSfL "$url.sha1" | cut -c1-40)" || die "cannot download $url.sha1"
      got="$(sha1sum "$dir/$jar.part" | cut -c1-40)"
      [[ "$want" == "$got" ]] || die "$jar: SHA-1 $got, Maven Central says $want"
      mv "$dir/$jar.part" "$dir/$jar"
    else
      command -v "$MVN" >/dev/null 2>&1 || die "Maven ('$MVN') is needed once to download $gav"
      "$MVN" -B -ntp -Dstyle.color=never "$FLUSS_DEP_PLUGIN:copy" -Dartifact="$gav" -DoutputDirectory="$dir" >>"$flog" 2>&1 \
        || { tail -n 30 "$flog" >&2; die "Maven could not download $gav (see $flog)"; }
    fi
    [[ -s "$dir/$jar" ]] || die "$jar missing after the download"
  done
  (cd "$dir" && ls -1 ./*.jar | sed 's#^\./##') > "$dir/.complete"
  log "lake plugin jars ready in $(elapsed "$t0") s"
}

# The server.yaml lines of the lake, and its plugin jars in the run dir (after write_configs).
lake_conf() {
  [[ -z "$FLUSS_LAKE" ]] && return 0
  echo "datalake.format: paimon"
  echo "datalake.paimon.metastore: filesystem"
  echo "datalake.paimon.warehouse: $FLUSS_RUN_DIR/warehouse"
}

install_lake_plugin() {
  [[ -z "$FLUSS_LAKE" ]] && return 0
  mkdir -p "$FLUSS_RUN_DIR/plugins/$FLUSS_LAKE" "$FLUSS_RUN_DIR/warehouse"
  local f
  while read -r f; do cp -f "$(lake_dir)/$f" "$FLUSS_RUN_DIR/plugins/$FLUSS_LAKE/"; done < "$(lake_dir)/.complete"
}

unzip_list() {
  if command -v unzip >/dev/null 2>&1; then unzip -Z1 "$1"
  else "$PYTHON" -c 'import sys,zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$1"; fi
}

classpath() {
  # log4j jars first, fluss-server last (as bin/config.sh does)
  local cp="" f
  for f in "$FLUSS_LIB_DIR"/*.jar; do
    [[ "$f" == */fluss-server-* ]] && continue
    cp+="$f:"
  done
  echo "${cp}$FLUSS_LIB_DIR/fluss-server-$FLUSS_VERSION.jar"
}

# ------------------------------------------------------------------ processes
pid_of() { local p=""; [[ -r "$PID_DIR/$1.pid" ]] && read -r p < "$PID_DIR/$1.pid"; echo "$p"; }

# alive and really ours: the command line carries our role/run-dir markers (guards against pid reuse).
# Shell builtins only (heal-watch checks the coordinator with it once a second).
is_ours() {
  local role="$1" pid="$2" args
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  mapfile -t -d '' args < "/proc/$pid/cmdline" 2>/dev/null || return 1
  [[ " ${args[*]} " == *" -Dfluss.cluster.role=$role "* && " ${args[*]} " == *" -Dfluss.cluster.run=$FLUSS_RUN_DIR "* ]]
}

# Without a subshell: the pid is read here, not through pid_of.
role_running() { local p=""; [[ -r "$PID_DIR/$1.pid" ]] && read -r p < "$PID_DIR/$1.pid"; is_ours "$1" "$p"; }

port_in_use() { (exec 3<>"/dev/tcp/$FLUSS_HOST/$1") 2>/dev/null; }

tablet_port() { echo $((FLUSS_TABLET_PORT + $1)); }
probe_tablet_addr() {   # the address the plaintext probe reaches tablet server I on
  local p; p="$(tablet_port "$1")"
  [[ "$FLUSS_SASL" == 1 ]] && p=$((p + FLUSS_INTERNAL_PORT_OFFSET))
  echo "$FLUSS_HOST:$p"
}

probe_all() {   # passes when the leading coordinator (either, with a standby) answers as it should
  local t c targs=()
  for ((t = 0; t < FLUSS_TABLETS; t++)); do targs+=(--tablet "$(probe_tablet_addr "$t")"); done
  for ((c = 0; c < ${#COORD_ROLES[@]}; c++)); do
    "$PYTHON" "$PROBE" --zk "$ZK_ADDR" --bootstrap "$(probe_coord_addr "$c")" "${targs[@]}" --min-tablets "$FLUSS_TABLETS" \
      --timeout "${1:-3}" "${@:2}" && return 0
  done
  return 1
}

launch() {   # launch ROLE MAINCLASS HEAP [extra java args...] -- [program args...]
  local role="$1" main="$2" heap="$3"; shift 3
  local jopts=() args=() seen=0 a
  for a in "$@"; do
    if [[ "$a" == "--" ]]; then seen=1; continue; fi
    if (( seen )); then args+=("$a"); else jopts+=("$a"); fi
  done
  # shellcheck disable=SC2206
  local user_opts=($FLUSS_JAVA_OPTS)
  # setsid: own session, so a closing terminal (SIGHUP) or Ctrl-C in the caller's shell does not hit the JVMs.
  # Without job control the background child is no group leader, so setsid execs java in place and $! is java's pid.
  # FLUSS_CPUS: the servers run on those CPUs only (taskset), e.g. for benchmarks that pin the
  # client to the others; taskset execs java, so $! stays java's pid.
  local pin=()
  [[ -n "$FLUSS_CPUS" ]] && pin=(taskset -c "$FLUSS_CPUS")
  FLUSS_PLUGINS_DIR="$FLUSS_RUN_DIR/plugins" \
  setsid "${pin[@]}" "$JAVA" "-Dfluss.cluster.role=$role" "-Dfluss.cluster.run=$FLUSS_RUN_DIR" \
    "-Xms${heap}" "-Xmx${heap}" -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError \
    "-Djava.io.tmpdir=$FLUSS_RUN_DIR/tmp" \
    "-Dlog4j.configurationFile=file:$FLUSS_RUN_DIR/conf/log4j2.properties" \
    "-Dlog.file=$LOG_DIR/$role.log" \
    "${jopts[@]}" "${user_opts[@]}" \
    -cp "$(classpath)" "$main" "${args[@]}" \
    >> "$LOG_DIR/$role.log" 2>&1 < /dev/null 9>&- &   # 9: LOCK_FILE, which a JVM must not keep held
  local pid=$! n
  echo "$pid" > "$PID_DIR/$role.pid"
  # Until the background child has exec'd, its command line is this script's, and a check right
  # after the launch (role_running: "exited while starting") took the live child for a dead JVM
  # (seen once: start-coordinator in coordinator_ha, 2026-12-07). Wait for the exec (or the exit).
  for ((n = 0; n < 100; n++)); do
    is_ours "$role" "$pid" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  log "started $role (pid $pid), log $LOG_DIR/$role.log"
}

listeners() {   # listeners CLIENT_ADDR INTERNAL_ADDR: the server.yaml lines of one server
  if [[ "$FLUSS_SASL" != 1 ]]; then echo "bind.listeners: FLUSS://$1"; return; fi
  local jaas="org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required" u
  for u in $FLUSS_SASL_USERS; do jaas+=" user_${u%%:*}=\"${u#*:}\""; done
  echo "bind.listeners: INTERNAL://$2, CLIENT://$1"
  echo "internal.listener.name: INTERNAL"
  echo "security.protocol.map: CLIENT:SASL, INTERNAL:PLAINTEXT"
  echo "security.sasl.enabled.mechanisms: PLAIN"
  echo "security.sasl.plain.jaas.config: $jaas;"
  echo "authorizer.enabled: true"
  echo "super.users: $FLUSS_SUPER_USERS"
}

write_configs() {
  local conf="$FLUSS_RUN_DIR/conf"
  mkdir -p "$conf/coordinator" "$FLUSS_RUN_DIR"/{zk-data,remote,tmp,plugins} "$PID_DIR" "$LOG_DIR"
  cat > "$conf/zoo.cfg" <<EOF
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$FLUSS_RUN_DIR/zk-data
clientPort=$FLUSS_ZK_PORT
clientPortAddress=$FLUSS_HOST
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat
autopurge.purgeInterval=0
EOF
  local common
  common="zookeeper.address: $ZK_ADDR
remote.data.dir: $FLUSS_RUN_DIR/remote
default.replication.factor: $FLUSS_REPLICATION_FACTOR
default.bucket.number: 1
netty.server.num-network-threads: 1
netty.server.num-worker-threads: 3"
  {
    echo "# generated by scripts/fluss-cluster.sh"
    listeners "$COORD_ADDR" "$PROBE_COORD"
    echo "$common"
    lake_conf
    [[ -n "$FLUSS_EXTRA_CONF" ]] && echo "$FLUSS_EXTRA_CONF"
  } > "$conf/coordinator/server.yaml"
  if [[ -n "$FLUSS_STANDBY_COORDINATOR_PORT" ]]; then
    mkdir -p "$conf/coordinator2"
    {
      echo "# generated by scripts/fluss-cluster.sh"
      listeners "$FLUSS_HOST:$FLUSS_STANDBY_COORDINATOR_PORT" "$(probe_coord_addr 1)"
      echo "$common"
      lake_conf
      [[ -n "$FLUSS_EXTRA_CONF" ]] && echo "$FLUSS_EXTRA_CONF"
    } > "$conf/coordinator2/server.yaml"
  fi
  local t role
  for ((t = 0; t < FLUSS_TABLETS; t++)); do
    role="$(tablet_role "$t")"
    mkdir -p "$conf/$role" "$FLUSS_RUN_DIR/$role-data"
    {
      echo "# generated by scripts/fluss-cluster.sh"
      listeners "$FLUSS_HOST:$(tablet_port "$t")" "$(probe_tablet_addr "$t")"
      echo "tablet-server.id: $t"
      echo "data.dir: $FLUSS_RUN_DIR/$role-data"
      echo "$common"
      lake_conf
      [[ -n "$FLUSS_EXTRA_CONF" ]] && echo "$FLUSS_EXTRA_CONF"
    } > "$conf/$role/server.yaml"
  done
  cat > "$conf/log4j2.properties" <<'EOF'
monitorInterval = 0
shutdownHook = disable
rootLogger.level = INFO
rootLogger.appenderRef.console.ref = ConsoleAppender
appender.console.name = ConsoleAppender
appender.console.type = Console
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p [%t] %c{1} - %m%n
logger.zookeeper.name = org.apache.fluss.shaded.zookeeper3
logger.zookeeper.level = WARN
logger.curator.name = org.apache.fluss.shaded.curator5
logger.curator.level = WARN
logger.netty.name = org.apache.fluss.shaded.netty4
logger.netty.level = WARN
EOF
}

print_logs_tail() {
  local n="${1:-40}" role
  for role in "${ROLES[@]}"; do
    [[ -f "$LOG_DIR/$role.log" ]] || continue
    echo "===== $role ($LOG_DIR/$role.log), last $n lines =====" >&2
    tail -n "$n" "$LOG_DIR/$role.log" >&2
  done
}

fail_start() {
  log "ERROR: $*"
  print_logs_tail 60
  log "stopping what was started"
  do_stop >&2 || true
  exit 1
}

wait_until() {   # wait_until DEADLINE DESCRIPTION CMD...: poll CMD, fail fast if a JVM died
  local deadline="$1" what="$2"; shift 2
  while :; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    local role
    for role in "${ROLES[@]}"; do
      if [[ -f "$PID_DIR/$role.pid" ]] && ! role_running "$role"; then
        fail_start "$role (pid $(pid_of "$role")) exited while waiting for $what"
      fi
    done
    if (( SECONDS >= deadline )); then
      local why
      why="$("$@" 2>&1 >/dev/null | tail -1)" || true
      fail_start "timed out after ${FLUSS_START_TIMEOUT}s waiting for $what ($why)"
    fi
    sleep 0.5
  done
}

# ------------------------------------------------------------------ commands
do_start() {
  check_java; check_python
  local running=0 role
  for role in "${ROLES[@]}"; do role_running "$role" && running=$((running + 1)); done
  if (( running == ${#ROLES[@]} )); then
    if probe_all 5 --quiet 2>/dev/null; then
      log "already running and answering (run dir $FLUSS_RUN_DIR)"
      echo "$OUT_VAR=$BOOTSTRAP_ADDRS"
      return 0
    fi
    log "all 3 processes run but the cluster does not answer: restarting"
  fi
  if (( running > 0 )); then
    log "$running of ${#ROLES[@]} processes left over: stopping them first"
    do_stop >&2
  fi
  local p
  local ports=("$FLUSS_ZK_PORT" "$FLUSS_COORDINATOR_PORT" "${PROBE_COORD##*:}") t
  if [[ -n "$FLUSS_STANDBY_COORDINATOR_PORT" ]]; then local pc; pc="$(probe_coord_addr 1)"; ports+=("$FLUSS_STANDBY_COORDINATOR_PORT" "${pc##*:}"); fi
  for ((t = 0; t < FLUSS_TABLETS; t++)); do ports+=("$(tablet_port "$t")"); local pt; pt="$(probe_tablet_addr "$t")"; ports+=("${pt##*:}"); done
  for p in "${ports[@]}"; do
    port_in_use "$p" && die "port $FLUSS_HOST:$p is already in use by another process (not started by this script from $FLUSS_RUN_DIR); free it or set FLUSS_ZK_PORT / FLUSS_COORDINATOR_PORT / FLUSS_TABLET_PORT"
  done
  fetch_jars
  fetch_lake_jars

  local t0=$EPOCHREALTIME deadline=$((SECONDS + FLUSS_START_TIMEOUT))
  if [[ "$FLUSS_KEEP_DATA" == 1 ]]; then
    log "FLUSS_KEEP_DATA=1: keeping data in $FLUSS_RUN_DIR"
    rm -rf "$FLUSS_RUN_DIR/tmp" "$PID_DIR"
  else
    rm -rf "$FLUSS_RUN_DIR"
  fi
  write_configs
  install_lake_plugin

  launch zk org.apache.fluss.shaded.zookeeper3.org.apache.zookeeper.server.quorum.QuorumPeerMain "$FLUSS_ZK_HEAP" \
    -Dzookeeper.admin.enableServer=false -Dzookeeper.jmx.log4j.disable=true -- "$FLUSS_RUN_DIR/conf/zoo.cfg"
  wait_until "$deadline" "ZooKeeper on $ZK_ADDR" "$PYTHON" "$PROBE" --zk "$ZK_ADDR" --timeout 2 --quiet

  # same flags as fluss' bin/config.sh on JDK >= 17
  local opens="--add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED"
  launch coordinator org.apache.fluss.server.coordinator.CoordinatorServer "$FLUSS_COORDINATOR_HEAP" "$opens" \
    -- --configDir "$FLUSS_RUN_DIR/conf/coordinator"
  local role
  for role in "${TABLET_ROLES[@]}"; do
    launch "$role" org.apache.fluss.server.tablet.TabletServer "$FLUSS_TABLET_HEAP" "$opens" \
      -- --configDir "$FLUSS_RUN_DIR/conf/$role"
  done

  wait_until "$deadline" "the coordinator on $COORD_ADDR to list $FLUSS_TABLETS tablet server(s), and each to answer" \
    probe_all 3
  probe_all 5 >&2 || fail_start "final probe failed"
  if [[ -n "$FLUSS_STANDBY_COORDINATOR_PORT" ]]; then
    # Started once the first one leads, so that it is the standby.
    launch coordinator2 org.apache.fluss.server.coordinator.CoordinatorServer "$FLUSS_COORDINATOR_HEAP" "$opens" \
      -- --configDir "$FLUSS_RUN_DIR/conf/coordinator2"
    wait_until "$deadline" "the standby coordinator on port $FLUSS_STANDBY_COORDINATOR_PORT" port_in_use "$FLUSS_STANDBY_COORDINATOR_PORT"
  fi
  log "cluster ready in $(elapsed "$t0") s after the jars were in place (run dir $FLUSS_RUN_DIR)"
  echo "$OUT_VAR=$BOOTSTRAP_ADDRS"
}

stop_role() {
  local role="$1" pid
  pid="$(pid_of "$role")"
  if [[ -z "$pid" ]]; then return 0; fi
  if ! is_ours "$role" "$pid"; then
    log "$role: pid $pid is not running (or is not ours): removing stale pid file"
    rm -f "$PID_DIR/$role.pid"; return 0
  fi
  log "stopping $role (pid $pid): SIGTERM"
  kill -TERM "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < FLUSS_STOP_TIMEOUT * 10; i++)); do
    is_ours "$role" "$pid" || break
    [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" == Z ]] && break
    sleep 0.1
  done
  if is_ours "$role" "$pid" && [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]]; then
    log "$role (pid $pid) still running after ${FLUSS_STOP_TIMEOUT}s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$PID_DIR/$role.pid"
}

do_stop() {
  local role
  # tablet first (it deregisters from the coordinator/ZK), ZooKeeper last
  # Every tablet server with a pid file, also ones a start with a larger FLUSS_TABLETS left.
  local f
  for f in "$PID_DIR"/tablet*.pid; do [[ -e "$f" ]] && stop_role "$(basename "$f" .pid)"; done
  for role in coordinator2 coordinator zk; do stop_role "$role"; done
  log "stopped"
}

# Stop only the tablet server and start it again with the same configuration and data dir
# (its data is always kept, as FLUSS_KEEP_DATA=1 would keep it; ZooKeeper and the coordinator are
# not touched). FLUSS_RESTART_SIGNAL=KILL kills it (crash) instead of the graceful SIGTERM;
# FLUSS_RESTART_DOWN_SECONDS keeps it down that long before the start.
do_restart_tablet() {
  check_java; check_python
  local role
  for role in zk coordinator; do
    role_running "$role" || die "restart-tablet: $role is not running (start the cluster first: $0 start)"
  done
  [[ -f "$FLUSS_RUN_DIR/conf/tablet/server.yaml" ]] || die "restart-tablet: no tablet configuration in $FLUSS_RUN_DIR/conf"
  local t0=$EPOCHREALTIME pid
  pid="$(pid_of tablet)"
  if [[ "${FLUSS_RESTART_SIGNAL:-TERM}" == KILL ]] && is_ours tablet "$pid"; then
    log "killing tablet (pid $pid): SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 100; i++)); do is_ours tablet "$pid" || break; sleep 0.05; done
    rm -f "$PID_DIR/tablet.pid"
  else
    stop_role tablet
  fi
  log "tablet stopped after $(elapsed "$t0") s"
  if [[ -n "${FLUSS_RESTART_DOWN_SECONDS:-}" ]]; then sleep "$FLUSS_RESTART_DOWN_SECONDS"; fi
  local i
  for ((i = 0; i < 100; i++)); do port_in_use "$FLUSS_TABLET_PORT" || break; sleep 0.1; done
  port_in_use "$FLUSS_TABLET_PORT" && die "restart-tablet: port $FLUSS_TABLET_PORT is still taken after the tablet stopped"
  rm -rf "$FLUSS_RUN_DIR/tmp" && mkdir -p "$FLUSS_RUN_DIR/tmp"
  local opens="--add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED"
  launch tablet org.apache.fluss.server.tablet.TabletServer "$FLUSS_TABLET_HEAP" "$opens" \
    -- --configDir "$FLUSS_RUN_DIR/conf/tablet"
  local deadline=$((SECONDS + FLUSS_START_TIMEOUT))
  while ! probe_all 3 >/dev/null 2>&1; do
    if ! role_running tablet; then
      tail -n 60 "$LOG_DIR/tablet.log" >&2
      die "restart-tablet: the tablet server exited while starting (log $LOG_DIR/tablet.log)"
    fi
    if (( SECONDS >= deadline )); then
      tail -n 60 "$LOG_DIR/tablet.log" >&2
      die "restart-tablet: the tablet server did not answer within ${FLUSS_START_TIMEOUT}s"
    fi
    sleep 0.2
  done
  log "tablet restarted and answering in $(elapsed "$t0") s (pid $(pid_of tablet))"
  echo "$OUT_VAR=$COORD_ADDR"
}

tablet_index() {   # validate a tablet server index argument
  [[ "${1:-}" =~ ^[0-9]+$ ]] && (( $1 < FLUSS_TABLETS )) || die "expected a tablet server index 0..$((FLUSS_TABLETS - 1)) (FLUSS_TABLETS=$FLUSS_TABLETS), got '${1:-}'"
  echo "$1"
}

# kill-tablet I [TERM|KILL]: stop one tablet server; with KILL it dies at once (a crash).
do_kill_tablet() {
  local i sig role pid
  i="$(tablet_index "${1:-}")"; sig="${2:-TERM}"; role="$(tablet_role "$i")"
  [[ "$sig" == TERM || "$sig" == KILL ]] || die "kill-tablet: signal must be TERM or KILL, not '$sig'"
  # At most one tablet server of a cluster is down through kill-tablet at a time: the Python and
  # C++ suites run side by side (scripts/test-all.sh) and each kills a leader of the replicated
  # cluster; a second kill while the first server is still down would leave one replica of three.
  # Waits, the lock released, up to FLUSS_KILL_WAIT seconds (default 180) for the others to run.
  local t down deadline=$((SECONDS + ${FLUSS_KILL_WAIT:-180}))
  while :; do
    down=()
    for ((t = 0; t < FLUSS_TABLETS; t++)); do
      (( t == i )) || role_running "$(tablet_role "$t")" || down+=("$(tablet_role "$t")")
    done
    [[ ${#down[@]} -eq 0 ]] && break
    if (( SECONDS >= deadline )); then log "kill-tablet: ${down[*]} still down after ${FLUSS_KILL_WAIT:-180} s; going on"; break; fi
    (( t = SECONDS % 10 )) || log "kill-tablet: waiting until ${down[*]} runs again (at most one tablet server down at a time)"
    flock -u 9; sleep 1; flock 9
  done
  pid="$(pid_of "$role")"
  is_ours "$role" "$pid" || die "kill-tablet: $role is not running"
  signal_role "$role" "$sig"
}

# signal_role ROLE TERM|KILL: stop a running role; KILL kills it at once (a crash) and waits until
# it is gone, TERM is stop_role's graceful stop.
signal_role() {
  local role="$1" pid
  if [[ "$2" == KILL ]]; then
    pid="$(pid_of "$role")"
    log "killing $role (pid $pid): SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    local n
    for ((n = 0; n < 200; n++)); do is_ours "$role" "$pid" || break; sleep 0.05; done
    rm -f "$PID_DIR/$role.pid"
  else
    stop_role "$role"
  fi
}

# start-tablet I: start a stopped tablet server again (same id, port, data dir) and wait until
# it answers and the coordinator lists it.
do_start_tablet() {
  check_java; check_python
  local i role port t0=$EPOCHREALTIME
  i="$(tablet_index "${1:-}")"; role="$(tablet_role "$i")"; port="$(tablet_port "$i")"
  role_running "$role" && { log "$role already runs"; return 0; }
  [[ -f "$FLUSS_RUN_DIR/conf/$role/server.yaml" ]] || die "start-tablet: no configuration for $role in $FLUSS_RUN_DIR/conf"
  local n
  for ((n = 0; n < 100; n++)); do port_in_use "$port" || break; sleep 0.1; done
  port_in_use "$port" && die "start-tablet: port $port is still taken"
  local opens="--add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED"
  launch "$role" org.apache.fluss.server.tablet.TabletServer "$FLUSS_TABLET_HEAP" "$opens" \
    -- --configDir "$FLUSS_RUN_DIR/conf/$role"
  local deadline=$((SECONDS + FLUSS_START_TIMEOUT))
  until "$PYTHON" "$PROBE" --bootstrap "$PROBE_COORD" --tablet "$(probe_tablet_addr "$i")" --min-tablets 1 --timeout 2 --quiet >/dev/null 2>&1; do
    role_running "$role" || { tail -n 60 "$LOG_DIR/$role.log" >&2; die "start-tablet: $role exited while starting"; }
    (( SECONDS < deadline )) || die "start-tablet: $role did not answer within ${FLUSS_START_TIMEOUT}s"
    sleep 0.2
  done
  log "$role started and answering in $(elapsed "$t0") s (pid $(pid_of "$role"))"
}

coord_index() {   # validate a coordinator index argument
  [[ "${1:-}" =~ ^[0-9]+$ ]] && (( $1 < ${#COORD_ROLES[@]} )) || die "expected a coordinator index 0..$((${#COORD_ROLES[@]} - 1)) (FLUSS_STANDBY_COORDINATOR_PORT adds coordinator 1), got '${1:-}'"
  echo "$1"
}

# kill-coordinator I [TERM|KILL]: stop one coordinator (with a standby running, it takes over).
do_kill_coordinator() {
  local i sig role pid
  i="$(coord_index "${1:-}")"; sig="${2:-TERM}"; role="$(coord_role "$i")"
  [[ "$sig" == TERM || "$sig" == KILL ]] || die "kill-coordinator: signal must be TERM or KILL, not '$sig'"
  pid="$(pid_of "$role")"
  is_ours "$role" "$pid" || die "kill-coordinator: $role is not running"
  signal_role "$role" "$sig"
}

# start-coordinator I: start a stopped coordinator again and wait until it listens (a standby
# answers nothing but ApiVersions, so that is all there is to wait for).
do_start_coordinator() {
  check_java
  local i role port t0=$EPOCHREALTIME
  i="$(coord_index "${1:-}")"; role="$(coord_role "$i")"; port="$(coord_port "$i")"
  role_running "$role" && { log "$role already runs"; return 0; }
  local n
  for ((n = 0; n < 100; n++)); do port_in_use "$port" || break; sleep 0.1; done
  local opens="--add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED"
  launch "$role" org.apache.fluss.server.coordinator.CoordinatorServer "$FLUSS_COORDINATOR_HEAP" "$opens" \
    -- --configDir "$FLUSS_RUN_DIR/conf/$role"
  local deadline=$((SECONDS + FLUSS_START_TIMEOUT))
  until port_in_use "$port"; do
    role_running "$role" || { tail -n 60 "$LOG_DIR/$role.log" >&2; die "start-coordinator: $role exited while starting"; }
    (( SECONDS < deadline )) || die "start-coordinator: $role did not listen within ${FLUSS_START_TIMEOUT}s"
    sleep 0.2
  done
  log "$role started in $(elapsed "$t0") s (pid $(pid_of "$role"))"
}

do_restart_coordinator() {
  check_java; check_python
  local t0=$EPOCHREALTIME
  stop_role coordinator
  local n
  for ((n = 0; n < 100; n++)); do port_in_use "$FLUSS_COORDINATOR_PORT" || break; sleep 0.1; done
  local opens="--add-opens=java.base/java.nio=org.apache.arrow.memory.core,ALL-UNNAMED"
  launch coordinator org.apache.fluss.server.coordinator.CoordinatorServer "$FLUSS_COORDINATOR_HEAP" "$opens" \
    -- --configDir "$FLUSS_RUN_DIR/conf/coordinator"
  local deadline=$((SECONDS + FLUSS_START_TIMEOUT))
  until probe_all 3 --quiet >/dev/null 2>&1; do
    role_running coordinator || { tail -n 60 "$LOG_DIR/coordinator.log" >&2; die "restart-coordinator: it exited while starting"; }
    (( SECONDS < deadline )) || die "restart-coordinator: no answer within ${FLUSS_START_TIMEOUT}s"
    sleep 0.2
  done
  log "coordinator restarted in $(elapsed "$t0") s"
}

# A Fluss 0.9.1 coordinator learns of a new table from a ZooKeeper cache event. When the cache
# reads the table's node only after the server has written the table's data into it (the server
# writes the node empty, then fills it a few ms later; seen on a loaded machine, for partitioned
# tables), the cache reports a created node with data, which the coordinator ignores, and no change
# event: the table exists in ZooKeeper but not in the coordinator. The first partition created for
# it then fails in the coordinator with a NullPointerException that leaves its request batch to the
# tablet servers non-empty, and from then on every bucket state change fails ("is not empty while
# creating a new one"): no new table or partition anywhere gets a leader until the coordinator
# restarts. A restarted coordinator reads every table and partition from ZooKeeper and assigns
# their leaders. This watch makes that restart as soon as either message appears, and records it.
HEAL_SIGNS=('"this.tablePath" is null' 'is not empty while creating a new one')
# The watch costs next to nothing while nothing happens (it runs beside every suite of a
# `make test`, one per 0.9.1 cluster): the log is followed by `tail -F | grep` (inotify, no
# polling), and the liveness check once a second uses shell builtins only (role_running). (Polling the log with
# stat/tail/grep and the pid with cat/tr twice a second cost 4 % of a CPU per watch.)
do_heal_watch() {
  check_java; check_python
  local file="$LOG_DIR/coordinator.log" line sign found feed
  log "heal-watch: watching $file"
  # From the end of the log as it is now; `tail -F` follows the name, so a new cluster's log (start
  # deletes the run dir) is read from its beginning. grep passes only the lines with a sign.
  local greps=()
  for sign in "${HEAL_SIGNS[@]}"; do greps+=(-e "$sign"); done
  exec {feed}< <(tail -n 0 -F "$file" 2>/dev/null | grep --line-buffered -F "${greps[@]}")
  while true; do
    if read -r -t 1 -u "$feed" line; then
      found=""
      for sign in "${HEAL_SIGNS[@]}"; do [[ "$line" == *"$sign"* ]] && { found="$sign"; break; }; done
      log "heal-watch: the coordinator log shows '$found' (Fluss 0.9.1 lost a table): restarting the coordinator"
      echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) restart: $found" >> "$HEALS_FILE"
      ( flock 9; do_restart_coordinator ) 9>"$LOCK_FILE" || log "heal-watch: restart failed (retrying on the next sign)"
      # What the old coordinator logged until it stopped is no sign of the new one.
      while read -r -t 0.2 -u "$feed" line; do :; done
      continue
    fi
    # A coordinator that exited on its own (its pid file is left: every stop removes it), e.g. after
    # its ZooKeeper session expired on a loaded machine, is started again too.
    if [[ -s "$PID_DIR/coordinator.pid" ]] && ! role_running coordinator; then
      ( flock 9
        if [[ -n "$(pid_of coordinator)" ]] && ! role_running coordinator; then
          log "heal-watch: the coordinator exited: starting it again"
          echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) restart: the coordinator exited" >> "$HEALS_FILE"
          do_restart_coordinator
        fi ) 9>"$LOCK_FILE" || log "heal-watch: restart failed (trying again)"
    fi
  done
}

do_leaders() {
  [[ "${1:-}" == *.* ]] || die "leaders: expected DB.TABLE"
  "$PYTHON" "$PROBE" --bootstrap "$PROBE_COORD" --leaders "$1" --timeout 5
}

do_status() {
  local role pid all=1
  for role in "${ROLES[@]}"; do
    pid="$(pid_of "$role")"
    if is_ours "$role" "$pid"; then
      local rss
      rss="$(awk '/^VmRSS/ {printf "%d MiB", $2/1024}' "/proc/$pid/status" 2>/dev/null)"
      echo "$role: running (pid $pid, RSS $rss)"
    elif [[ -n "$pid" ]]; then
      echo "$role: NOT running (stale pid file, pid $pid)"; all=0
    else
      echo "$role: not running"; all=0
    fi
  done
  if (( all )); then
    if probe_all 5; then
      echo "$OUT_VAR=$BOOTSTRAP_ADDRS"
      return 0
    fi
    echo "cluster processes run but the probe failed"
    return 1
  fi
  return 3
}

do_logs() {
  local which="${1:-}" n="${2:-100}"
  case "$which" in
    ""|all) local role
            for role in "${ROLES[@]}"; do
              [[ -f "$LOG_DIR/$role.log" ]] || continue
              echo "===== $role ($LOG_DIR/$role.log) ====="; tail -n "$n" "$LOG_DIR/$role.log"
            done ;;
    zk|coordinator|coordinator2|tablet|tablet[0-9]*) tail -n "$n" "$LOG_DIR/$which.log" ;;
    cs) tail -n "$n" "$LOG_DIR/coordinator.log" ;;
    ts) tail -n "$n" "$LOG_DIR/tablet.log" ;;
    *) die "logs: unknown role '$which' (zk|coordinator|tablet)" ;;
  esac
}

usage() {
  sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

cmd="${1:-}"; shift || true
case "$cmd" in
  start|stop|restart|restart-tablet|kill-tablet|start-tablet|restart-coordinator|kill-coordinator|start-coordinator)
    mkdir -p "$(dirname "$LOCK_FILE")"; exec 9>"$LOCK_FILE"; flock 9 ;;
esac
case "$cmd" in
  start)   do_start ;;
  stop)    do_stop ;;
  restart) do_stop; do_start ;;
  restart-tablet) do_restart_tablet ;;
  kill-tablet) do_kill_tablet "$@" ;;
  start-tablet) do_start_tablet "$@" ;;
  restart-coordinator) do_restart_coordinator ;;
  kill-coordinator) do_kill_coordinator "$@" ;;
  start-coordinator) do_start_coordinator "$@" ;;
  heal-watch) do_heal_watch ;;
  leaders) do_leaders "$@" ;;
  status)  do_status ;;
  logs)    do_logs "$@" ;;
  fetch)   check_java; fetch_jars; fetch_lake_jars; ls -l "$FLUSS_LIB_DIR"/*.jar ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
