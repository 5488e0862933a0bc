# Shared by the scripts: find the toolchain and install missing Debian packages.
# shellcheck shell=bash

if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

# ensure_packages PKG...: apt-get installs whichever of the packages is not installed yet.
ensure_packages() {
    local missing=()
    local pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        echo "==> installing ${missing[*]}" >&2
        local sudo=""
        if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

# ensure_command CMD PKG: installs Debian package PKG when command CMD is missing (a tool such
# as node may come from elsewhere on a machine; only install it when it is not there at all).
ensure_command() {
    if ! command -v "$1" >/dev/null 2>&1; then
        ensure_packages "$2"
    fi
}

# The Debian packages every build needs: the C libraries behind the system-library targets
# (CSQLite, CMicroHTTPD, CCurl, CCrypto for OpenSSL's libcrypto, CPostgres for libpq, CJansson).
BUILD_PACKAGES=(pkg-config libsqlite3-dev libmicrohttpd-dev libcurl4-openssl-dev libssl-dev libpq-dev libjansson-dev)

# build_release: the release `cupcake` (the client) and `cupcake-server` (which `cupcake serve`
# and `cupcake backup` start in their place), with the Swift runtime and Foundation (the client:
# FoundationEssentials only) linked in statically: a one-shot command starts in a few
# milliseconds instead of 10 more.
build_release() {
    swift build -c release --static-swift-stdlib --product cupcake >/dev/null
    swift build -c release --static-swift-stdlib --product cupcake-server >/dev/null
}

# free_port: prints a TCP port that nothing on 127.0.0.1 listens on right now.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_for_health URL: waits up to 10 s for GET URL to answer 200.
wait_for_health() {
    local i
    for i in $(seq 1 100); do
        if curl -fsS "$1" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    echo "server at $1 did not become healthy" >&2
    return 1
}

# PostgreSQL's programs (Debian puts them under /usr/lib/postgresql/VERSION/bin).
pg_bin() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    echo "${dir:-/usr/lib/postgresql/15/bin}"
}

# as_postgres CMD...: runs CMD as the postgres user when we are root (PostgreSQL refuses to run
# as root), else as ourselves.
as_postgres() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# pg_start DIR PORT [SETTING...]: a private cluster in DIR (initdb if new), listening on
# 127.0.0.1:PORT, trusting local connections, with the extra `-c` settings given. Prints nothing.
pg_start() {
    local dir="$1" port="$2"; shift 2
    local bin settings=""
    bin=$(pg_bin)
    mkdir -p "$dir"
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir"; fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_postgres "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-locale -E UTF8 >"$dir/initdb.log" 2>&1
    fi
    for setting in "$@"; do settings="$settings -c $setting"; done
    as_postgres "$bin/pg_ctl" -D "$dir/data" -w -t 60 -l "$dir/log" \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300$settings" start >/dev/null
}

# pg_start_standby PRIMARY_PORT DIR PORT NAME: a streaming standby of the cluster on
# 127.0.0.1:PRIMARY_PORT in DIR (pg_basebackup -R), listening on 127.0.0.1:PORT, connecting with
# application_name NAME (what the primary's synchronous_standby_names names). Waits until it
# streams.
pg_start_standby() {
    local primary_port="$1" dir="$2" port="$3" name="$4" bin
    bin=$(pg_bin)
    mkdir -p "$dir"
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir"; fi
    as_postgres "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U postgres -D "$dir/data" -R -X stream \
        -c fast >"$dir/basebackup.log" 2>&1
    # After -R's line, so it wins: the name the primary waits for.
    echo "primary_conninfo = 'host=127.0.0.1 port=$primary_port user=postgres application_name=$name'" |
        as_postgres tee -a "$dir/data/postgresql.auto.conf" >/dev/null
    pg_start "$dir" "$port"
    local _
    for _ in $(seq 1 100); do
        [ "$(pg_sql "$primary_port" "SELECT count(*) FROM pg_stat_replication WHERE application_name = '$name' AND state = 'streaming'")" = 1 ] && return 0
        sleep 0.1
    done
    echo "the standby $name did not start streaming; see $dir/log" >&2
    return 1
}

# pg_sql PORT SQL: runs SQL on 127.0.0.1:PORT as postgres and prints the result unaligned.
pg_sql() {
    as_postgres "$(pg_bin)/psql" -h 127.0.0.1 -p "$1" -U postgres -d postgres -Atq -c "$2"
}

# pg_stop DIR [MODE]: stops the cluster in DIR (fast by default; immediate for a crash).
pg_stop() {
    as_postgres "$(pg_bin)/pg_ctl" -D "$1/data" -m "${2:-fast}" -w stop >/dev/null 2>&1 || true
}

# write_nginx_config DIR PORT UPSTREAM_PORT...: DIR/nginx.conf from Config/nginx-cluster.conf,
# nginx on 127.0.0.1:PORT in front of `cupcake serve` on each 127.0.0.1:UPSTREAM_PORT.
# Start it with: nginx -p DIR -c DIR/nginx.conf -e DIR/error.log
write_nginx_config() {
    local dir="$1" port="$2"; shift 2
    local upstreams="" p
    for p in "$@"; do upstreams+="        server 127.0.0.1:$p max_fails=1 fail_timeout=2s;"$'\n'; done
    mkdir -p "$dir"
    python3 -c '
import sys
text = open(sys.argv[1]).read()
for name, value in (("@DIR@", sys.argv[2]), ("@PORT@", sys.argv[3]), ("@UPSTREAMS@", sys.argv[4].rstrip("\n"))):
    text = text.replace(name, value)
open(sys.argv[2] + "/nginx.conf", "w").write(text)
' "$(dirname "${BASH_SOURCE[0]}")/../Config/nginx-cluster.conf" "$dir" "$port" "$upstreams"
}
