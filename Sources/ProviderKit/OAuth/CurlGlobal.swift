import CCurl

/// libcurl's global state, set up once for the process before the first handle (the token endpoints' and the
/// lanes' libcurl drivers).
package enum CurlGlobal {
    private static let once: Void = { curl_global_init(Int(CURL_GLOBAL_ALL)) }()
    package static func initialize() { _ = once }
}
