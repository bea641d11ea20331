import PushCore

/// A push service's delivery reports (receipts) as the receipts listener sees them: a provider module that offers
/// them reads one callback request (`POST /receipts/<provider>/<rest>`) and says whether it is authentic and what it
/// reports. The listener knows no service by name; it bounds the body, routes by the path's provider, counts, and
/// writes the dead tokens to the feedback list. A reader has no I/O: it checks the request against the secrets its
/// module read at start-up and parses the body.
public protocol ReceiptReader: Sendable {
    /// The provider whose path (`/receipts/<name>`) this reader serves.
    var provider: PushProvider { get }
    /// The topics of the apps whose receipts it reads (the `app` label's values, made at 0 at start).
    var apps: [String] { get }
    /// Checks `request` and reads its receipts. A receipt is trusted only for the app whose secret the request
    /// proved (a signature, a secret path): a body naming another app is not believed.
    func read(_ request: ReceiptRequest) -> ReceiptReading
}

/// One callback request as it reached the listener, its body already bounded.
public struct ReceiptRequest: Sendable {
    /// The path after `/receipts/<provider>`, without a leading slash or the query ("" for none).
    public var pathRemainder: String
    /// Header fields as sent; names compared without regard to case (`header(_:)`).
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// UNIX milliseconds when the request arrived: what a signed timestamp is compared with.
    public var nowMillis: Int64

    public init(pathRemainder: String, headers: [(name: String, value: String)], body: [UInt8], nowMillis: Int64) {
        self.pathRemainder = pathRemainder
        self.headers = headers
        self.body = body
        self.nowMillis = nowMillis
    }

    /// The first field named `name` (any case).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}

/// What a reader made of a request.
public enum ReceiptReading: Sendable {
    /// Authentic: its receipts (perhaps none), and the statuses it had to leave out (a status naming an app other
    /// than the one whose secret signed the request), counted as refused.
    case accepted([Receipt], skipped: [ReceiptRefusal] = [])
    /// Not believed, or not readable: nothing of it is used.
    case refused(ReceiptRefusal)
}
