import CNghttp2

/// One header field, prebuilt: lower-case name bytes, value bytes, and whether HPACK must never index it
/// (NGHTTP2_NV_FLAG_NO_INDEX: literal, kept out of both dynamic tables, for secrets and per-request values).
public final class HTTP2Header: Sendable {
    public let name: [UInt8]
    public let value: [UInt8]
    public let neverIndex: Bool

    public init(name: String, value: String, neverIndex: Bool = false) {
        // HTTP/2 requires lower-case field names (RFC 9113 §8.2.1); `authorization` is a secret: never indexed.
        let lower = name.lowercased()
        self.name = Array(lower.utf8)
        self.value = Array(value.utf8)
        self.neverIndex = neverIndex || lower == "authorization"
    }
}

/// The headers shared by many requests (one job: topic, push type, priority, authorization ...), built once
/// as an nghttp2_nv array so a request only copies the array and adds the pseudo-headers.
/// Immutable after init, so it may be shared between clients on different threads. Its entries are flagged
/// NO_COPY: nghttp2 points at these bytes instead of copying (and lower-casing) every name and value for every
/// request, so a stream keeps its block alive until its HEADERS frame has been sent (`StreamEntry.headers`).
public final class HTTP2HeaderBlock: @unchecked Sendable {
    public let headers: [HTTP2Header]
    /// nv entries pointing into `storage`, never written again: nghttp2 copies the entries at submit, and reads
    /// the names and values they point at in place when it packs the HEADERS frame.
    let nv: UnsafeMutablePointer<nghttp2_nv>
    let count: Int
    private let storage: UnsafeMutablePointer<UInt8>

    public convenience init(_ headers: [(name: String, value: String, neverIndex: Bool)]) {
        self.init(headers: headers.map { HTTP2Header(name: $0.name, value: $0.value, neverIndex: $0.neverIndex) })
    }

    public init(headers: [HTTP2Header]) {
        self.headers = headers
        count = headers.count
        let bytes = headers.reduce(0) { $0 + $1.name.count + $1.value.count }
        storage = .allocate(capacity: max(bytes, 1))
        nv = .allocate(capacity: max(count, 1))
        var offset = 0
        for (i, header) in headers.enumerated() {
            let name = storage + offset
            header.name.withUnsafeBufferPointer { if let base = $0.baseAddress { name.update(from: base, count: $0.count) } }
            offset += header.name.count
            let value = storage + offset
            header.value.withUnsafeBufferPointer { if let base = $0.baseAddress { value.update(from: base, count: $0.count) } }
            offset += header.value.count
            let noCopy = NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue
            let flags = UInt8(noCopy | (header.neverIndex ? NGHTTP2_NV_FLAG_NO_INDEX.rawValue : NGHTTP2_NV_FLAG_NONE.rawValue))
            (nv + i).initialize(to: nghttp2_nv(name: name, value: value, namelen: header.name.count,
                                                valuelen: header.value.count, flags: flags))
        }
    }

    deinit {
        nv.deallocate()
        storage.deallocate()
    }
}

/// A request body shared by many requests (one notification payload sent to many device tokens).
public final class HTTP2Body: Sendable {
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
}
