import COpenSSL

/// SHA-1 in lowercase hex (OpenSSL): how Redis names a script in its cache (EVALSHA).
enum SHA1 {
    static func hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                _ = COpenSSL.SHA1(input.baseAddress, input.count, output.baseAddress)
            }
        }
        let hexDigits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
