import Foundation
import PushCore

extension APNsSettings {
    /// Reads the `apns` block (docs/configuration.md) as a provider module reads its own; a bad value is an error
    /// naming its key (`apns.connections`, `apns.apps.0.team_id`).
    public init(block: ConfigurationBlock) throws {
        self.init()
        let endpoint = block.string("endpoint", "production")
        switch endpoint {
        case "production": self.endpoint = .production
        case "sandbox", "development": self.endpoint = .sandbox
        default:
            guard endpoint.hasPrefix("https://"), URLComponents(string: endpoint)?.host != nil else {
                throw ConfigurationError.invalid(key: block.fullKey("endpoint"),
                                                 reason: "'\(Printable.clipped(endpoint, to: 80))' is not production, sandbox or https://host:port")
            }
            self.endpoint = .custom(endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint)
        }
        caFile = block.string("ca_file", "")
        connections = try block.int("connections", connections, min: 1)
        transport = block.string("transport", transport)
        guard ["nghttp2", "libcurl"].contains(transport) else {
            throw ConfigurationError.invalid(key: block.fullKey("transport"), reason: "'\(Printable.clipped(transport, to: 40))' is not nghttp2 or libcurl")
        }
        pingIntervalMillis = try block.int("ping_interval_ms", pingIntervalMillis, min: 100)
        eventLoop = block.string("event_loop", eventLoop)
        guard ["poll", "epoll"].contains(eventLoop) else {
            throw ConfigurationError.invalid(key: block.fullKey("event_loop"), reason: "'\(Printable.clipped(eventLoop, to: 40))' is not poll or epoll")
        }
        maxConnections = try block.int("max_connections", max(maxConnections, connections), min: connections)
        transportThreads = try block.int("transport_threads", transportThreads, min: 0)
        requestTimeoutMillis = try block.int("request_timeout_ms", requestTimeoutMillis, min: 1)
        credentialProbeMaxMillis = try block.int("credential_probe_max_ms", credentialProbeMaxMillis, min: 1)
        for index in block.appIndices {
            apps.append(try Self.app(index, in: block))
        }
    }

    /// One app: a topic with a .p8 key (team and key ids), or with a certificate; never both.
    private static func app(_ index: Int, in block: ConfigurationBlock) throws -> APNsApp {
        let base = "apps.\(index)"
        let topic = block.string("\(base).topic", "")
        guard !topic.isEmpty else { throw ConfigurationError.invalid(key: block.fullKey("\(base).topic"), reason: "is required") }
        let keyFile = block.string("\(base).key_file", "")
        let certFile = block.string("\(base).cert_file", "")
        switch (keyFile.isEmpty, certFile.isEmpty) {
        case (false, true):
            let team = block.string("\(base).team_id", "")
            let key = block.string("\(base).key_id", "")
            guard team.count == 10 else {
                throw ConfigurationError.invalid(key: block.fullKey("\(base).team_id"), reason: "must be the 10-character Team ID")
            }
            guard key.count == 10 else {
                throw ConfigurationError.invalid(key: block.fullKey("\(base).key_id"), reason: "must be the 10-character Key ID")
            }
            return APNsApp(topic: topic, credential: .token(teamID: team, keyID: key, keyFile: keyFile))
        case (true, false):
            return APNsApp(topic: topic, credential: .certificate(file: certFile, password: Secret(block.string("\(base).cert_password", ""))))
        case (false, false):
            throw ConfigurationError.invalid(key: block.fullKey(base), reason: "give key_file (token auth) or cert_file (certificate auth), not both")
        case (true, true):
            throw ConfigurationError.invalid(key: block.fullKey(base), reason: "needs key_file with team_id and key_id, or cert_file")
        }
    }
}
