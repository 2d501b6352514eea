package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
)

// The kernel's own table: a port this process listens on is held by this
// user.
func TestFindPortHolderOfThisProcess(t *testing.T) {
	for _, network := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", network)
		if err != nil {
			t.Logf("%s: %v", network, err)
			continue
		}
		ta := ln.Addr().(*net.TCPAddr)
		h := findPortHolder(ta.IP, ta.Port)
		ln.Close()
		if !h.known || h.uid != os.Getuid() || h.foreign() {
			t.Errorf("%s: holder %+v (%s), want uid %d", ta, h, h, os.Getuid())
		}
	}
	if h := findPortHolder(net.IPv4(127, 0, 0, 1), 1); h.known || !h.foreign() {
		t.Errorf("a port nobody holds: %+v, want not known (and so possibly foreign)", h)
	}
}

// procLine is a /proc/net/tcp line (procLine6: tcp6) as the kernel
// prints it: the address as 32-bit words in the machine's byte order.
func procLine(ip net.IP, port int, state string, uid int) string {
	return procLineOf(ip.To4(), port, state, uid)
}

func procLine6(ip net.IP, port int, state string, uid int) string {
	return procLineOf(ip.To16(), port, state, uid)
}

func procLineOf(ip net.IP, port int, state string, uid int) string {
	var addr strings.Builder
	for i := 0; i < len(ip); i += 4 {
		fmt.Fprintf(&addr, "%08X", binary.NativeEndian.Uint32(ip[i:i+4]))
	}
	return fmt.Sprintf("   0: %s:%04X 00000000:0000 %s 00000000:00000000 00:00000000 00000000 %5d        0 12345 1 0000000000000000 100 0 0 10 0",
		addr.String(), port, state, uid)
}

func TestListenersOn(t *testing.T) {
	lo := net.IPv4(127, 0, 0, 1)
	header := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	table := header + strings.Join([]string{
		procLine(lo, 8765, "0A", 1000),                  // ours: held
		procLine(net.IPv4(127, 0, 0, 2), 8765, "0A", 7), // another loopback address: not in our way
		procLine(lo, 8766, "0A", 8),                     // another port
		procLine(lo, 8765, "01", 9),                     // a connection, not a listener
		procLine(net.IPv4zero, 8765, "0A", 1001),        // the wildcard address: held
	}, "\n")
	got := listenersOn(strings.NewReader(table), lo, 8765)
	want := []portHolder{{known: true, uid: 1000}, {known: true, uid: 1001}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("listeners %+v, want %+v", got, want)
	}
	if h := pickHolder(got, 1000); h.uid != 1001 {
		t.Fatalf("picked %+v, want the other user's", h)
	}
	if h := pickHolder(got[:1], 1000); h.uid != 1000 {
		t.Fatalf("picked %+v, want this user's", h)
	}

	table6 := header + strings.Join([]string{
		procLine6(net.IPv6loopback, 8765, "0A", 1002),
		procLine6(net.IPv6unspecified, 8765, "0A", 1003),
		procLine6(net.ParseIP("::ffff:127.0.0.1"), 8765, "0A", 1004),
		"garbage line",
	}, "\n")
	if got := listenersOn(strings.NewReader(table6), lo, 8765); fmt.Sprint(got) != fmt.Sprint([]portHolder{{true, 1003}, {true, 1004}}) {
		t.Fatalf("tcp6 listeners on 127.0.0.1: %+v", got)
	}
	if got := listenersOn(strings.NewReader(table6), net.IPv6loopback, 8765); fmt.Sprint(got) != fmt.Sprint([]portHolder{{true, 1002}, {true, 1003}}) {
		t.Fatalf("tcp6 listeners on ::1: %+v", got)
	}
}
