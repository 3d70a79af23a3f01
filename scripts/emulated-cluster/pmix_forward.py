#!/usr/bin/env python3
"""Lets a process inside a network namespace reach mpirun's PMIx server, which listens on the loopback
of the host's namespace only (127.0.0.1 inside the namespace is another interface).

Usage: pmix_forward.py NETNS PORT
Run from the host's namespace. It opens a listening socket on 127.0.0.1 INSIDE namespace NETNS (a
socket stays in the namespace it was created in, so the process enters it, binds, and comes back),
prints the chosen port on stdout, then relays every connection made to it to 127.0.0.1:PORT of the
host. The rank wrapper (rank.sh) points the PMIx server URI of the rank at the printed port. Only
PMIx's control traffic uses it; the run's data goes over the rail interfaces.
"""
import ctypes
import os
import socket
import sys
import threading

CLONE_NEWNET = 0x40000000
libc = ctypes.CDLL(None, use_errno=True)


def enter(fd, what):
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        sys.exit(f"pmix_forward: setns({what}) failed: {os.strerror(err)}")


def pipe(src, dst):
    try:
        while data := src.recv(1 << 16):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            try:
                s.shutdown(how)
            except OSError:
                pass


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    netns, port = sys.argv[1], int(sys.argv[2])
    host = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open(f"/var/run/netns/{netns}", os.O_RDONLY)
    enter(target, netns)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    enter(host, "host")
    print(listener.getsockname()[1], flush=True)
    while True:
        inside, _ = listener.accept()
        outside = socket.create_connection(("127.0.0.1", port))
        threading.Thread(target=pipe, args=(inside, outside), daemon=True).start()
        threading.Thread(target=pipe, args=(outside, inside), daemon=True).start()


if __name__ == "__main__":
    main()
