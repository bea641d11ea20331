#!/usr/bin/env python3
"""A TCP proxy a test controls, to cut one client off from a server without touching the server.

Usage: blackhole_proxy.py LISTEN_PORT TARGET_PORT

SIGUSR1 black-holes the path: nothing more is forwarded either way, connections stay open (as with packets
dropped by a partition, the client sees only silence), and new connections are accepted but never answered.
SIGUSR2 heals it: every connection from before is closed (a client reconnects, as after a partition whose
connections timed out) and new ones are forwarded again.
"""
import asyncio
import signal
import sys

listen_port, target_port = int(sys.argv[1]), int(sys.argv[2])
state = {"blackholed": False}
registry = {}  # connection -> its writers, so that healing can close them


async def pump(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if state["blackholed"]:
                continue  # dropped, like packets that never arrive
            writer.write(data)
            await writer.drain()
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
        await asyncio.gather(pump(client_reader, server_writer), pump(server_reader, client_writer))
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


async def main():
    # The test process that starts this one may block signals in the thread that spawns it, and a blocked
    # mask is inherited: unblock the ones this proxy is driven and stopped with.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM, signal.SIGINT})
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, blackhole)
    loop.add_signal_handler(signal.SIGUSR2, heal)
    server = await asyncio.start_server(serve, "127.0.0.1", listen_port)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
