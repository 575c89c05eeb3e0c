#!/usr/bin/env bash
# Idempotent set-up of a sparkdedalus work tree on a fresh Debian machine. Run from anywhere:
#   bash scripts/setup.sh
# Steps (each prints one line; a second run takes a second or two):
#   1. .venv with python3.11, `pip install -e '.[dev]'` (skipped while pyproject.toml is unchanged)
#   2. Java 17 (apt-get install openjdk-17-jre-headless if there is no java)
#   3. Maven (apt-get install maven if there is no mvn)
#   4. the Delta Lake jars for the installed pyspark into ~/.m2 (mvn dependency:get), then a check
#      that Spark resolves spark.jars.packages from ~/.m2 alone, with conf/ivysettings.xml,
#      fetching any jar that Spark's Ivy picks but Maven did not (see conf/ivysettings.xml).
# Exits non-zero with a message on the first failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

VENV="$ROOT/.venv"
PY="$VENV/bin/python"
M2_REPO="${HOME}/.m2/repository"
# maven-dependency-plugin 2.8 (Maven 3.8's default) also resolves test and provided scopes:
# ~700 MB instead of ~110 MB for Delta. Pin a modern one.
MVN_GET="org.apache.maven.plugins:maven-dependency-plugin:3.8.1:get"
export DEBIAN_FRONTEND=noninteractive

step() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
    else die "need root (or sudo) to run: $*"; fi
}

APT_UPDATED=0
apt_install() {
    command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install $* by hand"
    local log
    log="$(mktemp)"
    if [ "$APT_UPDATED" -eq 0 ]; then
        as_root apt-get update -qq >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; die "apt-get update failed"; }
        APT_UPDATED=1
    fi
    as_root apt-get install -y -qq --no-install-recommends "$@" >"$log" 2>&1 \
        || { cat "$log" >&2; rm -f "$log"; die "apt-get install $* failed"; }
    rm -f "$log"
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# --- 1. virtualenv + editable install --------------------------------------------------------
if [ ! -x "$PY" ]; then
    command -v python3.11 >/dev/null 2>&1 || die "python3.11 not found (needed to create .venv)"
    python3.11 -m venv "$VENV" || die "could not create $VENV"
    step "created .venv ($("$PY" --version 2>&1))"
fi
"$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
    || die ".venv has $("$PY" --version 2>&1), expected Python 3.11; remove .venv and rerun"

STAMP="$VENV/.sparkdedalus-pyproject.sha256"
WANT="$(sha256 pyproject.toml)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ -x "$VENV/bin/sparkdedalus" ]; then
    step "python deps up to date"
else
    LOG="$(mktemp)"
    if ! "$PY" -m pip install -q -e '.[dev]' >"$LOG" 2>&1; then
        cat "$LOG" >&2; rm -f "$LOG"; die "pip install -e '.[dev]' failed"
    fi
    rm -f "$LOG"
    echo "$WANT" >"$STAMP"
    step "installed python deps (pip install -e '.[dev]')"
fi

# --- 2. Java 17 --------------------------------------------------------------------------------
java_major() {
    # `java -version` prints e.g.: openjdk version "17.0.15" 2025-04-15   (or "1.8.0_392")
    local v
    v="$(java -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n1)"
    case "$v" in 1.*) v="${v#1.}" ;; esac
    echo "${v%%[.+-]*}"
}
if ! command -v java >/dev/null 2>&1 || [ "$(java_major)" != 17 ]; then
    if [ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/java ] || ls /usr/lib/jvm/java-17-openjdk-*/bin/java >/dev/null 2>&1; then
        :
    else
        apt_install openjdk-17-jre-headless
    fi
    if ! command -v java >/dev/null 2>&1 || [ "$(java_major)" != 17 ]; then
        J17="$(ls -d /usr/lib/jvm/java-17-openjdk-*/ 2>/dev/null | head -n1)"
        [ -n "$J17" ] || die "Java 17 not found after installing openjdk-17-jre-headless"
        if command -v java >/dev/null 2>&1; then found="$(java -version 2>&1 | head -n1)"; else found="no java on PATH"; fi
        die "Java 17 is installed but java on PATH is not it ($found); run: export JAVA_HOME=${J17%/} PATH=${J17%/}/bin:\$PATH"
    fi
    step "installed Java 17 (openjdk-17-jre-headless)"
else
    step "java 17 present"
fi

# --- 3. Maven ----------------------------------------------------------------------------------
if ! command -v mvn >/dev/null 2>&1; then
    apt_install maven
    command -v mvn >/dev/null 2>&1 || die "mvn not found after installing maven"
    step "installed maven"
fi

# --- 4. Delta Lake jars in ~/.m2 + offline resolution check ------------------------------------
# Coordinates and Spark settings come from sparkdedalus/plumbing/session.py (loaded by path so a
# broken package __init__ does not matter here), same rule as delta.pip_utils.
read -r DELTA_COORDS IVY_SETTINGS SPARK_HOME_DIR < <("$PY" - <<'EOF'
import importlib.util, os, pyspark
spec = importlib.util.spec_from_file_location("_sd_session", "sparkdedalus/plumbing/session.py")
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
conf = mod.delta_package_conf()
print(conf["spark.jars.packages"], conf["spark.jars.ivySettings"], os.path.dirname(pyspark.__file__))
EOF
) || die "could not compute the Delta Maven coordinates"
[ -n "${DELTA_COORDS:-}" ] && [ -n "${SPARK_HOME_DIR:-}" ] || die "could not compute the Delta Maven coordinates"

IFS=: read -r D_GROUP D_ARTIFACT D_VERSION <<<"$DELTA_COORDS"
DELTA_JAR="$M2_REPO/${D_GROUP//.//}/$D_ARTIFACT/$D_VERSION/$D_ARTIFACT-$D_VERSION.jar"

mvn_get() {  # mvn_get COORDS [extra -D options]
    local log
    log="$(mktemp)"
    if ! mvn -B -q "$MVN_GET" -Dartifact="$1" "${@:2}" >"$log" 2>&1; then
        cat "$log" >&2; rm -f "$log"; die "mvn dependency:get $1 failed"
    fi
    rm -f "$log"
}

if [ -f "$DELTA_JAR" ]; then
    FETCHED=0
else
    mvn_get "$DELTA_COORDS"
    [ -f "$DELTA_JAR" ] || die "mvn dependency:get $DELTA_COORDS did not produce $DELTA_JAR"
    FETCHED=1
fi

# Spark resolves spark.jars.packages with Ivy, which picks the newest version in a conflict where
# Maven picks the nearest: check the exact resolution Spark will do, offline, and fetch what is
# missing. Remembered in a stamp (coordinates + ivysettings content) so it runs once.
JSTAMP="$VENV/.sparkdedalus-delta-jars"
JWANT="$DELTA_COORDS $(sha256 "$IVY_SETTINGS")"
if [ "$FETCHED" -eq 0 ] && [ -f "$JSTAMP" ] && [ "$(cat "$JSTAMP")" = "$JWANT" ]; then
    step "delta jars present ($DELTA_COORDS)"
else
    EMPTY_PY="$(mktemp --suffix=.py)"
    RLOG="$(mktemp)"
    trap 'rm -f "$EMPTY_PY" "$RLOG"' EXIT
    ok=0
    for attempt in 1 2 3 4 5; do
        if SPARK_HOME="$SPARK_HOME_DIR" PYSPARK_PYTHON="$PY" SPARK_LOCAL_IP=127.0.0.1 \
            "$SPARK_HOME_DIR/bin/spark-submit" \
            --master 'local[1]' \
            --conf spark.ui.enabled=false \
            --conf "spark.jars.packages=$DELTA_COORDS" \
            --conf "spark.jars.ivySettings=$IVY_SETTINGS" \
            --driver-java-options "-Dlog4j2.configurationFile=$ROOT/conf/log4j2.properties" \
            "$EMPTY_PY" >"$RLOG" 2>&1 </dev/null; then
            ok=1; break
        fi
        # e.g. "download failed: org.slf4j#slf4j-api;2.0.13!slf4j-api.jar"
        #      "unresolved dependency: org.foo#bar;1.0: not found"
        missing="$(grep -oE '(download failed|unresolved dependency): [^#[:space:]]+#[^;[:space:]]+;[^!:[:space:],]+' "$RLOG" \
            | sed -E 's/^(download failed|unresolved dependency): ([^#]+)#([^;]+);(.*)$/\1|\2:\3:\4/' | sort -u)" || true
        [ -n "$missing" ] || break
        while IFS='|' read -r kind coords; do
            if [ "$kind" = "download failed" ]; then
                mvn_get "$coords" -Dtransitive=false
            else
                mvn_get "$coords"
            fi
        done <<<"$missing"
    done
    if [ "$ok" -ne 1 ]; then
        cat "$RLOG" >&2
        die "Spark cannot resolve $DELTA_COORDS offline from $M2_REPO (see output above)"
    fi
    echo "$JWANT" >"$JSTAMP"
    step "delta jars ready in ~/.m2 ($DELTA_COORDS, resolves offline)"
fi
