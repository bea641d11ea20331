import COpenSSL

/// A P-256 certificate for localhost and 127.0.0.1 (and any extra host names, e.g. a container's
/// service name), signed by its own key: the emulator's default identity. Clients trust it by using the
/// certificate itself as their CA file.
public struct SelfSignedCertificate: Sendable {
    public let certificatePEM: String
    public let privateKeyPEM: String

    public static func generate(validDays: Int = 365, extraNames: [String] = []) throws -> SelfSignedCertificate {
        for name in extraNames where name.isEmpty || !name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) {
            throw EmulatorError.certificate("'\(name)' is not a host name (letters, digits, dots and dashes)")
        }
        let alternativeNames = (["DNS:localhost"] + extraNames.map { "DNS:\($0)" } + ["IP:127.0.0.1", "IP:0:0:0:0:0:0:0:1"])
            .joined(separator: ",")
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil) else { throw EmulatorError.certificate("no key context") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
              EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1,
              EVP_PKEY_keygen(context, &key) == 1, let key
        else { throw EmulatorError.certificate("P-256 key generation failed") }
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw EmulatorError.certificate("X509_new failed") }
        defer { X509_free(certificate) }
        X509_set_version(certificate, 2)
        ASN1_INTEGER_set(X509_get_serialNumber(certificate), Int.random(in: 1..<Int(Int32.max)))
        X509_gmtime_adj(X509_getm_notBefore(certificate), -3600)
        X509_gmtime_adj(X509_getm_notAfter(certificate), validDays * 86_400)
        X509_set_pubkey(certificate, key)
        let name = X509_get_subject_name(certificate)
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "APNs emulator", -1, -1, 0)
        X509_set_issuer_name(certificate, name)
        var v3 = X509V3_CTX()
        X509V3_set_ctx(&v3, certificate, certificate, nil, nil, 0)
        for (nid, value) in [(NID_subject_alt_name, alternativeNames),
                             (NID_basic_constraints, "critical,CA:TRUE"),
                             (NID_key_usage, "critical,digitalSignature,keyCertSign")] {
            guard let extensionValue = X509V3_EXT_conf_nid(nil, &v3, nid, value) else {
                throw EmulatorError.certificate("extension \(value) failed")
            }
            X509_add_ext(certificate, extensionValue, -1)
            X509_EXTENSION_free(extensionValue)
        }
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else { throw EmulatorError.certificate("signing failed") }
        let certificatePEM = try pem { PEM_write_bio_X509($0, certificate) }
        let keyPEM = try pem { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
        return SelfSignedCertificate(certificatePEM: certificatePEM, privateKeyPEM: keyPEM)
    }

    private static func pem(_ write: (OpaquePointer) -> Int32) throws -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw EmulatorError.certificate("BIO_new failed") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw EmulatorError.certificate("PEM encoding failed") }
        var data: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &data)
        guard length > 0, let data else { throw EmulatorError.certificate("empty PEM") }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }
}
