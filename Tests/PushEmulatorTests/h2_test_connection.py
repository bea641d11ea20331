"""What the emulator tests' hand-driven HTTP/2 clients share (h2_burst_client.py, h2_late_stream_client.py;
python3-h2 4.1): one TLS connection to the emulator on loopback, and a loop that feeds what arrives to h2."""
import socket
import ssl
import time

import h2.config
import h2.connection
import h2.exceptions
import h2.settings


def connect(port, max_concurrent_streams=None):
    """A connection (no certificate check, ALPN h2) with the client preface sent: (socket, h2 connection)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    sock = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")
    sock.settimeout(0.02)
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    if max_concurrent_streams is not None:
        conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: max_concurrent_streams})
    sock.sendall(conn.data_to_send())
    return sock, conn


def pump(sock, conn, result, until, timeout, handle):
    """Reads frames until `until()` holds, the connection closes (result["closed"]) or `timeout` seconds pass;
    each event goes to `handle(event, arrival time)`, h2's protocol errors to result["errors"] (when kept), and
    what h2 has to say back is sent."""
    deadline = time.monotonic() + timeout
    while not until() and not result["closed"] and time.monotonic() < deadline:
        try:
            data = sock.recv(65536)
        except (socket.timeout, ssl.SSLWantReadError):
            continue
        except (ConnectionError, ssl.SSLError):
            data = b""
        if not data:
            result["closed"] = True
            break
        now = time.monotonic()
        try:
            events = conn.receive_data(data)
        except h2.exceptions.ProtocolError as error:
            if "errors" not in result:
                raise
            result["errors"].append(repr(error))
            events = []
        for event in events:
            handle(event, now)
        out = conn.data_to_send()
        if out:
            sock.sendall(out)
