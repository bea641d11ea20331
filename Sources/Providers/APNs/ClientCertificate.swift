import COpenSSL
import Foundation
import TLSClient

/// Checks an app's client certificate at startup, so a wrong file or password is a clear error then,
/// not a TLS failure on the first push. libcurl loads the file itself for each connection.
public enum ClientCertificate {
    public static func validate(file: String, password: String) throws {
        guard let contents = FileManager.default.contents(atPath: file) else {
            throw CredentialError.unreadableCertificate(path: file, reason: "file not found or not readable")
        }
        let lower = file.lowercased()
        let ok: Bool = contents.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return false }
            defer { BIO_free(bio) }
            if lower.hasSuffix(".p12") || lower.hasSuffix(".pfx") {
                guard let p12 = d2i_PKCS12_bio(bio, nil) else { return false }
                defer { PKCS12_free(p12) }
                var key: OpaquePointer?
                var certificate: OpaquePointer?
                guard PKCS12_parse(p12, password, &key, &certificate, nil) == 1 else { return false }
                EVP_PKEY_free(key)
                X509_free(certificate)
                return key != nil && certificate != nil
            }
            guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else { return false }
            X509_free(certificate)
            return true
        }
        if !ok {
            ERR_clear_error()
            let kind = lower.hasSuffix(".p12") || lower.hasSuffix(".pfx")
                ? "not a PKCS#12 file, or the password (cert_password) is wrong"
                : "not a PEM certificate"
            throw CredentialError.unreadableCertificate(path: file, reason: kind)
        }
        if !(lower.hasSuffix(".p12") || lower.hasSuffix(".pfx")) {
            let text = String(decoding: contents, as: UTF8.self)
            guard text.contains("PRIVATE KEY-----") else {
                throw CredentialError.unreadableCertificate(path: file, reason: "the PEM holds no private key (put certificate and key in one file)")
            }
            // The key is loaded here, not only by the driver: libcurl hands an encrypted key without a password to
            // OpenSSL's default callback, which prompts on the terminal when the first connection opens.
            switch PEMPrivateKey.read(pem: Array(contents), password: password) {
            case .success(let key): EVP_PKEY_free(key)
            case .failure(let failure):
                ERR_clear_error()
                let reason = switch failure {
                case .encryptedWithoutPassword: "encrypted key: no password configured (cert_password)"
                case .wrongPassword: "encrypted key: the password (cert_password) is wrong"
                case .unreadable: "the PEM's private key cannot be read"
                }
                throw CredentialError.unreadableCertificate(path: file, reason: reason)
            }
        }
    }
}
