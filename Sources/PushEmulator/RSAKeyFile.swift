import COpenSSL
import Foundation

/// The RSA key a trusted service account's file holds, for checking the signatures of its JWTs (FCM's RS256
/// assertions, a vendor side's PS256 tokens): a PEM file (private or public key) or a JSON key file's
/// `private_key`. The caller owns the key (`EVP_PKEY_free`).
enum RSAKeyFile {
    /// - Parameter owner: who the file is for, in the error ("service account key file", or a vendor's kind of
    ///   key file).
    static func load(_ path: String, owner: String) throws -> OpaquePointer {
        guard let contents = FileManager.default.contents(atPath: path) else {
            throw EmulatorError.configuration("\(owner) \(path) cannot be read")
        }
        let pem = (try? JSONSerialization.jsonObject(with: contents) as? [String: Any])?["private_key"]
            .flatMap { $0 as? String }.map { Data($0.utf8) } ?? contents
        let pkey: OpaquePointer? = pem.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(clamping: raw.count)) else { return nil }
            defer { BIO_free(bio) }
            if let privateKey = PEM_read_bio_PrivateKey(bio, nil, nil, nil) { return privateKey }
            _ = BIO_ctrl(bio, BIO_CTRL_RESET, 0, nil)
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        ERR_clear_error()
        guard let pkey, EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA else {
            if let pkey { EVP_PKEY_free(pkey) }
            throw EmulatorError.configuration("\(owner) \(path) holds no PEM RSA key")
        }
        return pkey
    }
}
