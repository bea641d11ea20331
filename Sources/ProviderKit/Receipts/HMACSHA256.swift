import COpenSSL
import PushCore

/// HMAC-SHA256 (RFC 2104) through OpenSSL: what a service's receipt signature and a secret callback path are made
/// with. Here, beside the other credentials the provider modules share, since the modules reach OpenSSL through it.
public enum HMACSHA256 {
    /// The 32-byte MAC of `message` under `key`.
    public static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // An empty key or message still needs a valid pointer: OpenSSL reads none of it.
        let keyBytes = key.isEmpty ? [0] : key
        let messageBytes = message.isEmpty ? [0] : message
        let made = keyBytes.withUnsafeBytes { keyBuffer in
            messageBytes.withUnsafeBufferPointer { messageBuffer in
                out.withUnsafeMutableBufferPointer { outBuffer in
                    HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(key.count), messageBuffer.baseAddress, message.count,
                         outBuffer.baseAddress, &length)
                }
            }
        }
        precondition(made != nil && length == 32, "OpenSSL's HMAC-SHA256 failed")
        return Array(out.prefix(Int(length)))
    }

    public static func mac(key: String, message: String) -> [UInt8] { mac(key: Array(key.utf8), message: Array(message.utf8)) }

    /// Lower-case hex of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String { DeviceToken.hex(bytes) }
}
