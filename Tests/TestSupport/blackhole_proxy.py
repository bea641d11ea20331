#!/usr/bin/env python3
"""A TCP proxy a test controls, to cut one client off from a server without touching the server.

Usage: blackhole_proxy.py LISTEN_PORT TARGET_PORT [RESET_LOG]

SIGUSR1 black-holes the path: nothing more is forwarded either way, connections stay open (as with packets
dropped by a partition, the client sees only silence), and new connections are accepted but never answered.
SIGUSR2 heals it: every connection from before is closed (a client reconnects, as after a partition whose
connections timed out) and new ones are forwarded again, and ends the resetting below.
SIGHUP starts resetting, as a server that refuses and resets connections: every open connection is reset
(RST: SO_LINGER 0, the peer's next writes fail with EPIPE), and each new one is forwarded until its client has
sent RESET_AFTER bytes, then reset too. Each reset appends a line to RESET_LOG, for the test to count.
"""
import asyncio
import signal
import socket
import struct
import sys

listen_port, target_port = int(sys.argv[1]), int(sys.argv[2])
reset_log = sys.argv[3] if len(sys.argv) > 3 else None
RESET_AFTER = 4096  # past the TLS handshake and HTTP/2 preface: the client is sending requests
state = {"blackholed": False, "resetting": False}
registry = {}  # connection -> its writers, so that healing can close them


def reset(writer):
    """Closes with RST instead of FIN: the peer's connection is reset, not closed."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()
    if reset_log:
        with open(reset_log, "a") as log:
            log.write("reset\n")


async def pump(reader, writer, client_writer=None):
    """Forwards one direction; `client_writer` is given for the client-to-server direction (counted for resets)."""
    sent = 0
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if state["blackholed"]:
                continue  # dropped, like packets that never arrive
            writer.write(data)
            await writer.drain()
            sent += len(data)
            if client_writer is not None and state["resetting"] and sent >= RESET_AFTER:
                reset(client_writer)
                break
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def serve(client_reader, client_writer):
    entry = [client_writer]
    registry[id(entry)] = entry
    try:
        while state["blackholed"]:
            await asyncio.sleep(0.05)  # a connect during the partition hangs until it heals
        if client_writer.is_closing():
            return
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
        entry.append(server_writer)
        await asyncio.gather(pump(client_reader, server_writer, client_writer), pump(server_reader, client_writer))
    except (ConnectionError, OSError):
        client_writer.close()
    finally:
        registry.pop(id(entry), None)


def blackhole():
    state["blackholed"] = True


def heal():
    for entry in list(registry.values()):
        for writer in entry:
            writer.close()
    registry.clear()
    state["blackholed"] = False
    state["resetting"] = False


def start_resetting():
    state["resetting"] = True
    for entry in list(registry.values()):
        reset(entry[0])


async def main():
    # The test process that starts this one may block signals in the thread that spawns it, and a blocked
    # mask is inherited: unblock the ones this proxy is driven and stopped with.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP, signal.SIGTERM, signal.SIGINT})
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, blackhole)
    loop.add_signal_handler(signal.SIGUSR2, heal)
    loop.add_signal_handler(signal.SIGHUP, start_resetting)
    server = await asyncio.start_server(serve, "127.0.0.1", listen_port)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
