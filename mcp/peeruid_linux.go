package mcp

import (
	"encoding/binary"
	"net"
	"syscall"
)

// LoopbackPeerUID returns the uid owning the other end of conn, a TCP
// connection between two loopback addresses of this machine, as the
// kernel's socket table says (what ss -e shows): one exact lookup by the
// connection's addresses over NETLINK_SOCK_DIAG, a few microseconds, no
// file read. ok is false for any other connection, or when the peer's
// socket is already gone.
func LoopbackPeerUID(conn net.Conn) (uid int, ok bool) {
	local, lok := conn.LocalAddr().(*net.TCPAddr)
	remote, rok := conn.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok || !local.IP.IsLoopback() || !remote.IP.IsLoopback() {
		return 0, false
	}
	// The peer's socket: its source is our remote end, its destination us.
	return sockDiagUID(remote, local)
}

// Values of <linux/sock_diag.h> and <linux/inet_diag.h>.
const (
	sockDiagByFamily = 20
	inetDiagNoCookie = 0xffffffff
	nlmsgHdrLen      = 16
	inetDiagReqLen   = 56 // struct inet_diag_req_v2
	inetDiagMsgUID   = 64 // offset of idiag_uid in struct inet_diag_msg
)

// sockDiagUID asks the kernel for the uid of the TCP socket src -> dst.
func sockDiagUID(src, dst *net.TCPAddr) (int, bool) {
	family, size := syscall.AF_INET, 4
	if src.IP.To4() == nil || dst.IP.To4() == nil {
		family, size = syscall.AF_INET6, 16
	}
	req := make([]byte, nlmsgHdrLen+inetDiagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], sockDiagByFamily)
	ne.PutUint16(req[6:], syscall.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1) // sequence
	r := req[nlmsgHdrLen:]
	r[0], r[1] = byte(family), syscall.IPPROTO_TCP
	ne.PutUint32(r[4:], 0xffffffff) // every state
	id := r[8:]                     // struct inet_diag_sockid
	binary.BigEndian.PutUint16(id[0:], uint16(src.Port))
	binary.BigEndian.PutUint16(id[2:], uint16(dst.Port))
	if size == 4 {
		copy(id[4:], src.IP.To4())
		copy(id[20:], dst.IP.To4())
	} else {
		copy(id[4:], src.IP.To16())
		copy(id[20:], dst.IP.To16())
	}
	ne.PutUint32(id[40:], inetDiagNoCookie)
	ne.PutUint32(id[44:], inetDiagNoCookie)

	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, syscall.NETLINK_INET_DIAG)
	if err != nil {
		return 0, false
	}
	defer syscall.Close(fd)
	if syscall.Sendto(fd, req, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}) != nil {
		return 0, false
	}
	var buf [512]byte
	n, _, err := syscall.Recvfrom(fd, buf[:], 0)
	if err != nil || n < nlmsgHdrLen+inetDiagMsgUID+4 {
		return 0, false // also NLMSG_ERROR: no such socket
	}
	if ne.Uint16(buf[4:]) != sockDiagByFamily {
		return 0, false
	}
	return int(ne.Uint32(buf[nlmsgHdrLen+inetDiagMsgUID:])), true
}
