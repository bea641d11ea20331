import COpenSSL

/// Reads a PEM private key without ever asking a person for its password.
///
/// Given no password callback, OpenSSL's PEM readers use their default one, which prompts "Enter PEM pass phrase:"
/// on the terminal (or reads standard input): an encrypted key made a worker started from a shell wait for
/// typing that nobody expected, and one started by systemd fail with no word of why. Here the callback hands
/// OpenSSL the configured password, or refuses when none is configured, and remembers that it was asked, so
/// the caller can say the key is encrypted instead of "not a key".
public enum PEMPrivateKey {
    public enum Failure: Error, Equatable {
        /// The key is encrypted and no password is configured for it.
        case encryptedWithoutPassword
        /// The key is encrypted and the configured password does not open it.
        case wrongPassword
        /// No private key could be read: not PEM, or not a key.
        case unreadable
    }

    /// The first private key in `bio` (BIO*), read from its current position; the EVP_PKEY* is the caller's to
    /// free. An empty `password` means none is configured.
    public static func read(bio: OpaquePointer, password: String = "") -> Result<OpaquePointer, Failure> {
        let request = PasswordRequest(password: Array(password.utf8))
        let key = withExtendedLifetime(request) {
            PEM_read_bio_PrivateKey(bio, nil, { buffer, size, _, userdata in
                guard let userdata else { return -1 }
                let request = Unmanaged<PasswordRequest>.fromOpaque(userdata).takeUnretainedValue()
                request.asked = true
                // -1 is an error to OpenSSL: the read fails at once, with no prompt and no empty-password attempt.
                guard !request.password.isEmpty, request.password.count <= Int(size), let buffer else { return -1 }
                request.password.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                return Int32(request.password.count)
            }, Unmanaged.passUnretained(request).toOpaque())
        }
        if let key { return .success(key) }
        guard request.asked else { return .failure(.unreadable) }
        return .failure(password.isEmpty ? .encryptedWithoutPassword : .wrongPassword)
    }

    /// The same from PEM text in memory.
    public static func read(pem: [UInt8], password: String = "") -> Result<OpaquePointer, Failure> {
        pem.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(clamping: raw.count)) else { return .failure(.unreadable) }
            defer { BIO_free(bio) }
            return read(bio: bio, password: password)
        }
    }

    /// What the callback is given: the password, and whether OpenSSL asked for it (only an encrypted key makes it).
    private final class PasswordRequest {
        let password: [UInt8]
        var asked = false
        init(password: [UInt8]) { self.password = password }
    }
}
