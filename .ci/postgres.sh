#!/usr/bin/env bash
# Start a throwaway PostgreSQL on loopback for the store/postgres tests.
#
#   eval "$(.ci/postgres.sh)"        # install if missing, start, export the URL
#   .ci/postgres.sh stop             # stop it and remove its data directory
#
# Finds the server binaries under Debian's /usr/lib/postgresql/*/bin, else
# in `pg_config --bindir`, else on PATH; installs Debian's postgresql with
# apt-get when there are none and we are root (else exits 3), makes a data
# directory under /tmp owned by the postgres user (initdb refuses to run as
# root), starts the server on
# 127.0.0.1:$SCROLLBACK_PG_PORT (default 54329) with its socket in that
# directory and trust authentication for loopback, creates the database
# scrollback_test, and prints one line on standard output:
#
#   export SCROLLBACK_TEST_POSTGRES=postgres://postgres@127.0.0.1:PORT/scrollback_test?sslmode=disable
#
# Everything else goes to standard error. Running it again while the server
# is up changes nothing and prints the same line. The server is for tests
# only: fsync is off, and anyone on this machine may connect as postgres.
set -euo pipefail

port="${SCROLLBACK_PG_PORT:-54329}"
# /tmp, not $TMPDIR: the postgres user must be able to reach the directory.
dir="/tmp/scrollback-postgres-$port"
data="$dir/data"
db=scrollback_test

log() { echo "postgres.sh: $*" >&2; }

# find_bin prints the directory holding pg_ctl, initdb and postgres:
# Debian's /usr/lib/postgresql/VERSION/bin (newest first), else the one
# pg_config names (--bindir), else the one on PATH (Homebrew, Postgres.app,
# other distributions).
find_bin() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r) \
		$(pg_config --bindir 2>/dev/null) \
		$(command -v pg_ctl >/dev/null 2>&1 && dirname "$(command -v pg_ctl)"); do
		if [ -x "$d/pg_ctl" ] && [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

# as_pg runs a command as the postgres user when we are root (initdb and
# postgres refuse root), and as ourselves otherwise.
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

bin="$(find_bin || true)"

if [ "${1:-}" = stop ]; then
	if [ -n "$bin" ] && [ -f "$data/postmaster.pid" ]; then
		as_pg "$bin/pg_ctl" -D "$data" -m fast -w stop >&2 || true
	fi
	rm -rf "$dir"
	log "stopped; removed $dir"
	exit 0
fi

if [ -z "$bin" ]; then
	# Exit status 3: not installed, and we cannot install it here.
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		log "PostgreSQL is not installed (no pg_ctl, initdb and postgres under /usr/lib/postgresql/*/bin, in pg_config --bindir or on PATH), and we cannot install it without root and apt-get: install PostgreSQL 15 or later (Debian: apt-get install postgresql; macOS: brew install postgresql@15) and put its bin directory on PATH"
		exit 3
	fi
	log "installing PostgreSQL: Debian's postgresql package (apt-get)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends postgresql >&2
	bin="$(find_bin || true)"
	if [ -z "$bin" ]; then
		log "postgresql installed, but no pg_ctl/initdb/postgres under /usr/lib/postgresql/*/bin"
		exit 1
	fi
fi

if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
	log "creating the postgres system user"
	useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
fi

psql_admin() {
	"$bin/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"
}

running() {
	[ -f "$data/postmaster.pid" ] && as_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1
}

if ! running; then
	if [ -d "$dir" ] && [ ! -f "$data/PG_VERSION" ]; then
		rm -rf "$dir" # a half-made directory from an interrupted run
	fi
	if [ ! -d "$dir" ]; then
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			log "port $port is taken by another program: set SCROLLBACK_PG_PORT to a free port"
			exit 1
		fi
		mkdir -p "$dir/socket"
		if [ "$(id -u)" = 0 ]; then
			chown -R postgres: "$dir"
		fi
		chmod 700 "$dir"
		log "initdb $data ($("$bin/postgres" --version))"
		as_pg "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1 || {
			cat "$dir/initdb.log" >&2
			exit 1
		}
	fi
	log "starting on 127.0.0.1:$port"
	opts="-c listen_addresses=127.0.0.1 -p $port -k $dir/socket -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
	as_pg "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -o "$opts" -w -t 60 start >&2 || {
		tail -n 30 "$dir/server.log" >&2 || true
		exit 1
	}
fi

if [ "$(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" != 1 ]; then
	psql_admin -c "CREATE DATABASE $db"
fi

echo "export SCROLLBACK_TEST_POSTGRES='postgres://postgres@127.0.0.1:$port/$db?sslmode=disable'"
