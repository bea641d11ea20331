import Foundation

/// `redis.url` naming several nodes of one Redis Cluster: one URL whose host part is a comma-separated list,
/// `redis[s]://[user:password@]host:port,host:port,.../db`. The credentials, TLS and database are written once
/// and apply to every address, so the password appears (and must be redacted) in one place only. A URL with
/// one address is parsed exactly as before.
extension RedisURL {
    /// Every address of `text`, in order, each with the URL's credentials, TLS and database.
    public static func parseList(_ text: String) throws -> [RedisURL] {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.contains(",") else { return [try RedisURL(parsing: trimmed)] }
        let shown = redacted(trimmed)
        let malformed = ConfigurationError.invalid(
            key: "redis.url", reason: "'\(shown)' is not redis[s]://[user:password@]host:port,host:port,.../db")
        guard let schemeEnd = trimmed.range(of: "://") else { throw malformed }
        let afterScheme = trimmed[schemeEnd.upperBound...]
        // The user-info ends at the last '@' (a password may hold ',' or '@' itself); the hosts end at the
        // first '/' after it.
        let hostsStart = afterScheme.lastIndex(of: "@").map { afterScheme.index(after: $0) } ?? afterScheme.startIndex
        let hostsEnd = afterScheme[hostsStart...].firstIndex(of: "/") ?? afterScheme.endIndex
        let prefix = trimmed[..<hostsStart]
        let suffix = trimmed[hostsEnd...]
        let hosts = afterScheme[hostsStart..<hostsEnd].split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        // "redis://a:1,redis://b:2" (full URLs) is not this form: say so rather than read "redis" as a host.
        guard !hosts.contains(where: \.isEmpty), !afterScheme[hostsStart...].contains("://") else {
            throw malformed
        }
        var urls: [RedisURL] = []
        for host in hosts {
            let url = try RedisURL(parsing: String(prefix) + host + String(suffix))
            if !urls.contains(where: { $0.host == url.host && $0.port == url.port }) { urls.append(url) }
        }
        return urls
    }

    /// Several addresses as they may be shown: `redis://:***@10.0.0.1:6379,10.0.0.2:6379/0`.
    public static func describe(_ urls: [RedisURL]) -> String {
        guard let first = urls.first else { return "(none)" }
        guard urls.count > 1 else { return first.description }
        let user = first.username.map { "\($0):***@" } ?? (first.password != nil ? ":***@" : "")
        let hosts = urls.map { "\($0.host):\($0.port)" }.joined(separator: ",")
        return "\(first.tls ? "rediss" : "redis")://\(user)\(hosts)/\(first.database)"
    }
}
