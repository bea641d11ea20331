#!/usr/bin/python3
"""HTTP/2 + TLS fake APNs server for HTTP2ClientTests (python3-h2 4.1, asyncio, one thread).

Prints its port on stdout once listening; exits by itself after --lifetime seconds (default 60) or on SIGTERM.
Records what it SAW per connection (highest concurrent streams, requests processed, limit violations) as JSON
in --record, after each change (debounced) and on exit, so tests assert the server's view, not the client's.
"""
import argparse
import asyncio
import json
import os
import signal
import ssl
import sys

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from h2.errors import ErrorCodes
from h2.settings import SettingCodes
from hyperframe.frame import GoAwayFrame, PingFrame

p = argparse.ArgumentParser()
p.add_argument("--cert", required=True)
p.add_argument("--key", required=True)
p.add_argument("--record", required=True)
p.add_argument("--max-streams", type=int, default=100)
p.add_argument("--latency-ms", type=int, default=0)
p.add_argument("--lower-streams-after", type=int, default=0)
p.add_argument("--to", type=int, default=0)
p.add_argument("--refuse-every", type=int, default=0)
p.add_argument("--goaway-after", type=int, default=0)
p.add_argument("--goaway-error", type=int, default=0, help="the error code of --goaway-after's GOAWAY (0: NO_ERROR)")
p.add_argument("--goaway-unprocessed", action="store_true",
               help="answer every connection's first request with GOAWAY(last_stream_id 0): nothing is ever processed")
p.add_argument("--no-ping-ack", action="store_true")
p.add_argument("--stall-after", type=int, default=0)
p.add_argument("--no-alpn", action="store_true", help="offer only http/1.1 in ALPN")
p.add_argument("--record-header", default="", help="record each path as PATH#VALUE of this request header")
p.add_argument("--answer-before-body", type=int, default=0,
               help="answer this many requests as soon as their HEADERS arrive; stream windows start at 0, so no "
                    "request body can arrive and every other request waits")
p.add_argument("--reset-answered-after-ms", type=int, default=500,
               help="with --answer-before-body: RST_STREAM(NO_ERROR) each early-answered stream this long after its answer")
p.add_argument("--lifetime", type=float, default=60.0)
args = p.parse_args()

if args.no_ping_ack:
    # h2 always ACKs a PING itself; drop that ACK frame so the client's PING goes unanswered.
    _orig_ping = h2.connection.H2Connection._receive_ping_frame

    def _no_ack(self, frame):
        frames, events = _orig_ping(self, frame)
        return [f for f in frames if not (isinstance(f, PingFrame) and "ACK" in f.flags)], events

    h2.connection.H2Connection._receive_ping_frame = _no_ack

record = {"connections": [], "refused_total": 0, "protocol_errors": 0}
loop = None
write_scheduled = False
stream_counter = 0  # over all connections, for --refuse-every


def write_record():
    global write_scheduled
    write_scheduled = False
    tmp = args.record + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f)
    os.replace(tmp, args.record)


def changed():
    global write_scheduled
    if not write_scheduled:
        write_scheduled = True
        loop.call_later(0.05, write_record)


class Conn(asyncio.Protocol):
    def __init__(self):
        self.rec = {"max_concurrent": 0, "max_before_first_response": 0, "answered": 0, "paths": [],
                    "violations": 0, "refused": 0, "goaway_last_stream_id": None, "pings": 0}
        record["connections"].append(self.rec)
        self.open = set()          # streams the server counts as open (accepted, not yet closed)
        self.limit = args.max_streams  # the limit in force: lowered only once the client ACKed it
        self.bodies = {}
        self.paths = {}
        self.accepted = 0
        self.lowered = False
        self.goaway_last = None
        self.stalled = False
        self.first_response_sent = False
        self.closing = False

    def connection_made(self, transport):
        self.transport = transport
        cfg = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        self.h2 = h2.connection.H2Connection(config=cfg)
        # The limit is in the very first SETTINGS: a client never sees an unlimited server.
        initial = {SettingCodes.MAX_CONCURRENT_STREAMS: args.max_streams}
        if args.answer_before_body:
            initial[SettingCodes.INITIAL_WINDOW_SIZE] = 0
        self.h2.local_settings = h2.settings.Settings(client=False, initial_values=initial)
        self.early_answered = 0
        self.h2.initiate_connection()
        # A large connection window: DATA on streams we reset is never acknowledged by the application.
        self.h2.increment_flow_control_window(1 << 30)
        self.flush()

    def flush(self):
        data = self.h2.data_to_send()
        if data and not self.transport.is_closing():
            self.transport.write(data)

    def data_received(self, data):
        if self.stalled:
            return
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError as e:
            record["protocol_errors"] += 1
            self.rec.setdefault("errors", []).append(repr(e))
            changed()
            self.flush()
            self.transport.close()
            return
        for ev in events:
            self.handle(ev)
            if self.stalled:
                break
        self.flush()

    def handle(self, ev):
        global stream_counter
        if isinstance(ev, h2.events.RequestReceived):
            sid = ev.stream_id
            if self.goaway_last is not None and sid > self.goaway_last:
                return  # above our GOAWAY's last_stream_id: never processed
            headers = dict(ev.headers)
            if args.goaway_unprocessed:
                # A server going away before it processed anything: every stream the client opened is above the
                # last_stream_id, and the client closes the connection once it has seen them refused.
                self.goaway_last = 0
                self.rec["goaway_last_stream_id"] = 0
                record["goaways_unprocessed"] = record.get("goaways_unprocessed", 0) + 1
                changed()
                frame = GoAwayFrame(stream_id=0, last_stream_id=0, error_code=0, additional_data=b'{"reason":"Shutdown"}')
                self.flush()
                self.transport.write(frame.serialize())
                return
            stream_counter += 1
            self.accepted += 1
            if args.refuse_every and stream_counter % args.refuse_every == 0:
                self.h2.reset_stream(sid, ErrorCodes.REFUSED_STREAM)
                self.rec["refused"] += 1
                record["refused_total"] += 1
                changed()
                return
            self.open.add(sid)
            if len(self.open) > self.limit:
                self.rec["violations"] += 1
            self.rec["max_concurrent"] = max(self.rec["max_concurrent"], len(self.open))
            if not self.first_response_sent:
                self.rec["max_before_first_response"] = max(self.rec["max_before_first_response"], len(self.open))
            self.paths[sid] = headers.get(":path", "")
            if args.record_header:
                self.paths[sid] += "#" + headers.get(args.record_header, "(missing)")
            self.bodies[sid] = bytearray()
            if ev.stream_ended:
                self.request_done(sid)
            elif self.early_answered < args.answer_before_body:
                # Answered with the body still to come (a server may answer before reading it all): the
                # client's stream stays open until our reset closes it.
                self.early_answered += 1
                self.respond(sid)
                loop.call_later(args.reset_answered_after_ms / 1000.0, self.reset_answered, sid)
            if args.lower_streams_after and not self.lowered and self.accepted >= args.lower_streams_after:
                self.lowered = True
                self.h2.update_settings({SettingCodes.MAX_CONCURRENT_STREAMS: args.to})
            if args.goaway_after and self.goaway_last is None and self.accepted >= args.goaway_after:
                self.goaway_last = sid
                self.rec["goaway_last_stream_id"] = sid
                # Written past h2's state machine: h2 refuses to answer streams after its own GOAWAY.
                frame = GoAwayFrame(stream_id=0, last_stream_id=sid, error_code=args.goaway_error, additional_data=b'{"reason":"Shutdown"}')
                self.flush()
                self.transport.write(frame.serialize())
            if args.stall_after and self.accepted >= args.stall_after:
                self.stalled = True
                self.transport.pause_reading()
        elif isinstance(ev, h2.events.DataReceived):
            try:
                self.h2.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            except h2.exceptions.StreamClosedError:
                pass
            if ev.stream_id in self.bodies:
                self.bodies[ev.stream_id] += ev.data
        elif isinstance(ev, h2.events.StreamEnded):
            if ev.stream_id in self.bodies:
                self.request_done(ev.stream_id)
        elif isinstance(ev, h2.events.StreamReset):
            if ev.stream_id in self.open:
                self.open.discard(ev.stream_id)
                self.bodies.pop(ev.stream_id, None)
                self.rec.setdefault("client_resets", 0)
                self.rec["client_resets"] += 1
                changed()
        elif isinstance(ev, h2.events.SettingsAcknowledged):
            if SettingCodes.MAX_CONCURRENT_STREAMS in ev.changed_settings:
                self.limit = ev.changed_settings[SettingCodes.MAX_CONCURRENT_STREAMS].new_value
        elif isinstance(ev, h2.events.PingReceived):
            self.rec["pings"] += 1
            changed()

    def request_done(self, sid):
        if args.latency_ms:
            loop.call_later(args.latency_ms / 1000.0, self.respond, sid)
        else:
            self.respond(sid)

    def respond(self, sid):
        if self.transport.is_closing() or sid not in self.open:
            return
        path = self.paths.pop(sid, "")
        self.bodies.pop(sid, None)
        try:
            if "/bad" in path:
                body = b'{"reason":"BadDeviceToken"}'
                self.h2.send_headers(sid, [(":status", "400"), ("content-type", "application/json"),
                                           ("content-length", str(len(body)))])
                self.h2.send_data(sid, body, end_stream=True)
            else:
                self.h2.send_headers(sid, [(":status", "200"), ("apns-id", "00000000-0000-0000-0000-000000000000")],
                                     end_stream=True)
        except h2.exceptions.StreamClosedError:
            self.open.discard(sid)
            return
        self.open.discard(sid)
        self.first_response_sent = True
        self.rec["answered"] += 1
        self.rec["paths"].append(path)
        changed()
        self.flush()
        if self.goaway_last is not None and not any(s <= self.goaway_last for s in self.open):
            # Everything up to last_stream_id answered: close, as a server finishing a graceful shutdown does.
            self.transport.close()

    def reset_answered(self, sid):
        if self.transport.is_closing():
            return
        try:
            self.h2.reset_stream(sid, ErrorCodes.NO_ERROR)
        except h2.exceptions.StreamClosedError:
            return
        self.flush()

    def connection_lost(self, exc):
        changed()


def main():
    global loop
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    ctx.set_alpn_protocols(["http/1.1"] if args.no_alpn else ["h2"])
    server = loop.run_until_complete(loop.create_server(Conn, "127.0.0.1", 0, ssl=ctx))
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)

    def stop(*_):
        write_record()
        loop.stop()

    # A parent that started us from a thread with SIGTERM blocked (Swift's concurrency threads) passed that mask on.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    loop.add_signal_handler(signal.SIGTERM, stop)
    loop.call_later(args.lifetime, stop)
    write_record()
    loop.run_forever()
    write_record()
    sys.stdout.flush()
    os._exit(0)


main()
