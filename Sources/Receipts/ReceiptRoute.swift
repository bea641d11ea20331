/// `POST /receipts/<provider>[/<rest>]`, split into the provider's name and the rest (no leading slash), the query
/// dropped; nil for any other path.
struct ReceiptRoute: Equatable {
    static let prefix = "/receipts/"

    let provider: String
    let remainder: String

    init?(path: String) {
        let route = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? path
        guard route.hasPrefix(Self.prefix) else { return nil }
        let rest = route.dropFirst(Self.prefix.count)
        let parts = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let name = parts.first, !name.isEmpty else { return nil }
        provider = String(name)
        remainder = parts.count > 1 ? String(parts[1]) : ""
    }
}
