/// What the receipts listener answers one request: a status and a small JSON body (no route echoes the request).
public struct ReceiptAnswer: Sendable, Equatable {
    public var status: Int
    public var body: String

    public init(status: Int, body: String) {
        self.status = status
        self.body = body
    }

    /// The services read a 200 as "received"; the body is the shape services answer with (a code of "0").
    static let accepted = ReceiptAnswer(status: 200, body: #"{"code":"0","message":"success"}"#)

    static func refused(_ status: Int, _ words: String) -> ReceiptAnswer {
        ReceiptAnswer(status: status, body: #"{"code":"\#(status)","message":"\#(words)"}"#)
    }
}
