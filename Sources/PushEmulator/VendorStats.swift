import Foundation
import NIOConcurrencyHelpers

/// What one vendor side received and answered: requests, deliveries per token (tests check "every live token
/// delivered exactly once"), answers by HTTP status and by the vendor's code, the IM classification the deliveries
/// carried, and the last request. `GET /_emulator/<name>/stats` serves it as JSON.
public final class VendorStats: Sendable {
    private struct Counts {
        var requests = 0
        var delivered = 0
        var validatedOnly = 0
        var refusedTokens = 0
        var deliveredByToken: [String: Int] = [:]
        var byStatus: [Int: Int] = [:]
        var byCode: [String: Int] = [:]
        var byClassification: [String: Int] = [:]
        var tokenRequests = 0
        var tokensIssued = 0
        var lastRequest: IncomingRequest?
        /// Send requests and their tokens per second of the side's clock (a vendor counts an app's rate so).
        var requestsBySecond: [Int64: Int] = [:]
        var tokensBySecond: [Int64: Int] = [:]
        var receiptsAnswered = 0
        var receiptsFailed = 0
        var receiptTokens = 0
    }

    private let counts = NIOLockedValueBox(Counts())

    public init() {}

    /// One send answered. `delivered` are the tokens accepted (a token listed twice is delivered twice, as
    /// a vendor may document), `refused` those the answer lists as bad; `classification` is the message's IM class
    /// (its category or channel, in the vendor's field), "" when it has none.
    /// `second`: the second of the side's clock it was answered in.
    func record(_ request: IncomingRequest, status: Int, code: String, delivered: [String], refused: Int,
                validatedOnly: Bool, classification: String?, second: Int64) {
        counts.withLockedValue { counts in
            counts.requests += 1
            counts.requestsBySecond[second, default: 0] += 1
            counts.tokensBySecond[second, default: 0] += delivered.count + refused
            counts.lastRequest = request
            counts.byStatus[status, default: 0] += 1
            counts.byCode[code, default: 0] += 1
            counts.refusedTokens += refused
            guard !delivered.isEmpty else { return }
            if validatedOnly {
                counts.validatedOnly += 1
                return
            }
            counts.delivered += delivered.count
            for token in delivered { counts.deliveredByToken[token, default: 0] += 1 }
            if let classification { counts.byClassification[classification, default: 0] += delivered.count }
        }
    }

    /// A receipt callback the side made: answered 2xx (`ok`) or not, about `tokens` tokens.
    func receiptPosted(ok: Bool, tokens: Int) {
        counts.withLockedValue { counts in
            if ok { counts.receiptsAnswered += 1 } else { counts.receiptsFailed += 1 }
            if ok { counts.receiptTokens += tokens }
        }
    }

    /// Receipt callbacks answered 2xx, and the tokens they reported.
    public var receiptsAnswered: Int { counts.withLockedValue { $0.receiptsAnswered } }
    public var receiptTokens: Int { counts.withLockedValue { $0.receiptTokens } }
    /// Receipt callbacks refused or not answered.
    public var receiptsFailed: Int { counts.withLockedValue { $0.receiptsFailed } }

    func tokenRequested(issued: Bool) {
        counts.withLockedValue { counts in
            counts.tokenRequests += 1
            if issued { counts.tokensIssued += 1 }
        }
    }

    /// Send requests answered in each second of the side's clock (any status).
    public var requestsBySecond: [Int64: Int] { counts.withLockedValue { $0.requestsBySecond } }

    /// Tokens of the sends answered in each second of the side's clock (delivered or refused).
    public var tokensBySecond: [Int64: Int] { counts.withLockedValue { $0.tokensBySecond } }

    /// Send requests answered (any status; token-endpoint requests are counted apart).
    public var requests: Int { counts.withLockedValue { $0.requests } }

    /// Messages delivered, one per token (a `validate_only` request delivers nothing).
    public var delivered: Int { counts.withLockedValue { $0.delivered } }

    /// `validate_only` sends that passed.
    public var validatedOnly: Int { counts.withLockedValue { $0.validatedOnly } }

    /// Tokens the answers listed as bad (in the vendor's list of refused tokens), or all of a request refused as a
    /// whole for its tokens.
    public var refusedTokens: Int { counts.withLockedValue { $0.refusedTokens } }

    public func deliveredCount(token: String) -> Int { counts.withLockedValue { $0.deliveredByToken[token] ?? 0 } }

    public var deliveredByToken: [String: Int] { counts.withLockedValue { $0.deliveredByToken } }

    /// Tokens delivered more than once, with their counts.
    public var duplicates: [String: Int] { counts.withLockedValue { $0.deliveredByToken.filter { $0.value > 1 } } }

    public func count(status: Int) -> Int { counts.withLockedValue { $0.byStatus[status] ?? 0 } }

    /// Answers by the vendor's code, as its answers spell it ("0", "80000000", ...); "503" for a
    /// flow-control answer without a vendor code.
    public func count(code: String) -> Int { counts.withLockedValue { $0.byCode[code] ?? 0 } }

    /// Deliveries by IM classification (the vendor's category or channel field; "" for none).
    public func delivered(classification: String) -> Int { counts.withLockedValue { $0.byClassification[classification] ?? 0 } }

    /// Requests to the side's token endpoint (an OAuth one, for a vendor that has it), and the access tokens it issued.
    public var tokenEndpointRequests: Int { counts.withLockedValue { $0.tokenRequests } }
    public var accessTokensIssued: Int { counts.withLockedValue { $0.tokensIssued } }

    /// The last send request as received (header names lower-cased).
    public var lastRequest: IncomingRequest? { counts.withLockedValue { $0.lastRequest } }

    public var json: String {
        let object: [String: Any] = counts.withLockedValue { counts in
            [
                "requests": counts.requests, "delivered": counts.delivered, "validated_only": counts.validatedOnly,
                "refused_tokens": counts.refusedTokens, "distinct_tokens": counts.deliveredByToken.count,
                "duplicate_tokens": counts.deliveredByToken.values.filter { $0 > 1 }.count,
                "by_status": Dictionary(uniqueKeysWithValues: counts.byStatus.map { (String($0.key), $0.value) }),
                "by_code": counts.byCode, "by_classification": counts.byClassification,
                "token_endpoint_requests": counts.tokenRequests, "access_tokens_issued": counts.tokensIssued,
                "receipts_answered": counts.receiptsAnswered, "receipts_failed": counts.receiptsFailed,
                "receipt_tokens": counts.receiptTokens,
            ]
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
