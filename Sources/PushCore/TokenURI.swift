import Foundation

/// Where an OAuth token endpoint (a service account's `token_uri`, a provider block's `token_uri`) may be: https, or plain http
/// to this machine only.
///
/// The worker posts a signed assertion there and gets back an access token that sends to every device of the
/// project; over plain http anyone on the path could read or replace both. A service account file is not
/// checked by anyone else before the worker reads it, so its `token_uri` is held to the same rule as the
/// configuration's. Loopback (127.0.0.0/8, ::1, localhost) stays allowed: tests and a local emulator never
/// leave the machine.
public enum TokenURI {
    /// Why `uri` is refused, or nil when it is acceptable.
    public static func problem(_ uri: String) -> String? {
        let shown = Printable.clipped(uri, to: 80)
        guard let url = URLComponents(string: uri), let scheme = url.scheme?.lowercased(),
              let host = url.host, !host.isEmpty else {
            return "'\(shown)' is not an https URL"
        }
        switch scheme {
        case "https": return nil
        case "http" where isLoopback(host): return nil
        case "http": return "'\(shown)' is plain http: use https (http only to this machine: 127.0.0.0/8, ::1, localhost)"
        default: return "'\(shown)' is not an https URL"
        }
    }

    /// Loopback by its address (any form `inet_pton` reads, so `127.1.2.3` and `0:0:0:0:0:0:0:1` too) or by the
    /// name `localhost`. Another name that resolves to loopback is not trusted: what it resolves to may change.
    static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, name, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { $0.elementsEqual([UInt8](repeating: 0, count: 15) + [1]) }
        }
        return false
    }
}
