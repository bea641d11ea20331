/// One request as the emulator received it (header names lower-cased, as HTTP/2 has them).
public struct IncomingRequest: Sendable {
    public var method: String
    public var path: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}
