import COpenSSL
import PushCore

/// SHA-1 in lowercase hex (OpenSSL): how Redis names a script in its cache (EVALSHA).
enum SHA1 {
    static func hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                _ = COpenSSL.SHA1(input.baseAddress, input.count, output.baseAddress)
            }
        }
        return DeviceToken.hex(digest)
    }
}
