# awbridge's launcher in its Claude Desktop bundle, run as `/bin/sh awbridge.sh stdio`.
# A bundle's manifest cannot choose a binary by CPU, and Claude Desktop on macOS unpacks
# files without their executable bit: this picks the binary for this machine, makes it
# executable and runs it in its place. It writes nothing on stdout (the MCP channel).
here=$(dirname -- "$0")
os=$(uname -s)
arch=$(uname -m)
case $os-$arch in
Darwin-*) bin=$here/server/darwin-all/awbridge ;;
Linux-x86_64 | Linux-amd64) bin=$here/server/linux-amd64/awbridge ;;
Linux-aarch64 | Linux-arm64) bin=$here/server/linux-arm64/awbridge ;;
*) bin= ;;
esac
if [ -z "$bin" ] || [ ! -f "$bin" ]; then
	echo "awbridge: this bundle has no binary for $os $arch; see https://github.com/awbridge/awbridge#install" >&2
	exit 1
fi
if [ ! -x "$bin" ] && ! chmod u+x "$bin"; then
	echo "awbridge: cannot make $bin executable" >&2
	exit 1
fi
exec "$bin" "$@"
