/// One answer of a vendor side, ready to write on an HTTP/2 stream or an HTTP/1.1 connection.
struct VendorResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: String
    /// How long to wait before writing it (`VendorFaults.latencyMillis`).
    var delayMillis = 0
}
