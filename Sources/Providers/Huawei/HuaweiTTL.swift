import AndroidPushKit

/// Huawei's ttl (`VendorTTL`): at most 15 days (longer is refused with 80100001); Huawei documents no minimum, so
/// the shortest is the kit's 1 second.
enum HuaweiTTL {
    static let rule = VendorTTL(maxSeconds: 1_296_000)

    static func seconds(expiration: Int64?, nowSeconds: Int64) -> Int64? { rule.seconds(expiration: expiration, nowSeconds: nowSeconds) }
}
