/// `metrics.listen`, `receipts.listen`: `host:port` (IPv6 hosts in brackets: `[::1]:9464`). Port 0 lets the system choose.
public struct ListenAddress: Sendable, Equatable {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Nil for an empty text (the listener is off); throws naming what is wrong otherwise.
    public static func parse(_ text: String, key: String = "metrics.listen") throws(ConfigurationError) -> ListenAddress? {
        if text.isEmpty { return nil }
        let problem = ConfigurationError.invalid(key: key, reason: "'\(Printable.clipped(text, to: 80))' is not host:port (e.g. 127.0.0.1:9464, 0.0.0.0:9464, [::1]:9464)")
        guard let colon = text.lastIndex(of: ":") else { throw problem }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCII), let port = Int(portText), (0...65535).contains(port)
        else { throw problem }
        if host.hasPrefix("[") && host.hasSuffix("]") && host.count > 2 {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            throw problem  // a bare IPv6 address is ambiguous with the port
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { throw problem }
        return ListenAddress(host: host, port: port)
    }
}
