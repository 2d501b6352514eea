package main

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
)

// findPortHolder looks up who listens on ip:port, or the port's wildcard
// address, in /proc/net/tcp and tcp6 (readable by anyone). Not found: not
// known.
func findPortHolder(ip net.IP, port int) portHolder {
	var found []portHolder
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		found = append(found, listenersOn(f, ip, port)...)
		f.Close()
	}
	return pickHolder(found, os.Getuid())
}

// pickHolder is one of another user than me if any, else the first.
func pickHolder(found []portHolder, me int) portHolder {
	for _, h := range found {
		if h.uid != me {
			return h
		}
	}
	if len(found) > 0 {
		return found[0]
	}
	return portHolder{}
}

// tcpListen is the state of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// listenersOn reads a /proc/net/tcp or tcp6 table and returns the
// listeners whose address takes ip:port from us.
func listenersOn(r io.Reader, ip net.IP, port int) []portHolder {
	var out []portHolder
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
		f := strings.Fields(sc.Text())
		if len(f) < 8 || f[3] != tcpListen {
			continue
		}
		hexIP, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		p, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil || int(p) != port {
			continue
		}
		lip := procIP(hexIP)
		if lip == nil || !(lip.IsUnspecified() || lip.Equal(ip)) {
			continue
		}
		uid, err := strconv.Atoi(f[7])
		if err != nil {
			continue
		}
		out = append(out, portHolder{known: true, uid: uid})
	}
	return out
}

// procIP decodes an address of /proc/net/tcp{,6}: 32-bit words in the
// machine's byte order.
func procIP(s string) net.IP {
	raw, err := hex.DecodeString(s)
	if err != nil || (len(raw) != net.IPv4len && len(raw) != net.IPv6len) {
		return nil
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	return ip
}
