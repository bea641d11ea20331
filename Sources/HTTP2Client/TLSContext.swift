import COpenSSL
import Glibc
import TLSClient

/// The SSL_CTX shared by all connections of a client: the TLS client setup shared with Redis (TLS 1.2+, peer
/// verification, host name check; `TLSClientContext`) plus HTTP/2's own: ALPN h2, the client certificate, and
/// the read/write modes the event loop relies on. Built once, so a bad CA file, certificate or password fails
/// `HTTP2Client.init` clearly instead of every connect.
final class TLSContext {
    private let base: TLSClientContext
    var context: OpaquePointer { base.context }  // SSL_CTX*

    init(endpoint: HTTP2Endpoint) throws(HTTP2ClientError) {
        do {
            base = try TLSClientContext(caFile: endpoint.caFile)
        } catch {
            throw HTTP2ClientError("TLS: \(error)")
        }
        // Partial writes: SSL_write returns after each record, so a full socket costs us no copy; moving buffer:
        // a retry after WANT_WRITE may pass the same bytes from a compacted buffer.
        _ = sslx_ctx_set_mode(context, Int(SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER))
        // Read-ahead: one read() takes many records instead of a 5-byte header read plus a body read per record;
        // a 64 KB buffer lets one read() take four full records.
        _ = sslx_ctx_set_read_ahead(context, 1)
        SSL_CTX_set_default_read_buffer_len(context, 64 * 1024)

        // ALPN wire format: length-prefixed names. Returns 0 on success (inverted, unlike most of OpenSSL).
        var alpn: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]
        if endpoint.offersHTTP1 { alpn += [8] + Array("http/1.1".utf8) }
        guard SSL_CTX_set_alpn_protos(context, alpn, UInt32(alpn.count)) == 0 else {
            throw HTTP2ClientError("TLS: cannot set ALPN h2: \(TLSContext.errorQueue())")
        }
        if let file = endpoint.clientCertificateFile {
            try loadClientCertificate(file: file, password: endpoint.clientCertificatePassword)
        }
    }

    /// PEM (certificate, optional chain, key; the key may be encrypted with `password`) or PKCS#12.
    private func loadClientCertificate(file: String, password: String) throws(HTTP2ClientError) {
        guard let fp = fopen(file, "rb") else {
            throw HTTP2ClientError("TLS: cannot read client certificate '\(file)': \(String(cString: strerror(errno)))")
        }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = fread(&chunk, 1, chunk.count, fp)
            if n <= 0 { break }
            contents.append(contentsOf: chunk[0..<n])
        }
        fclose(fp)
        let isPEM = String(decoding: contents, as: UTF8.self).contains("-----BEGIN")
        var key: OpaquePointer?
        var certificate: OpaquePointer?
        var chain: [OpaquePointer] = []
        var keyFailure: PEMPrivateKey.Failure?
        defer {
            EVP_PKEY_free(key)
            X509_free(certificate)
            chain.forEach { X509_free($0) }
        }
        let parsed: Bool = contents.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return false }
            defer { BIO_free(bio) }
            if isPEM {
                guard let leaf = PEM_read_bio_X509(bio, nil, nil, nil) else { return false }
                certificate = leaf
                while let extra = PEM_read_bio_X509(bio, nil, nil, nil) { chain.append(extra) }
                ERR_clear_error()  // the loop ends on a "no start line" error
                _ = BIO_ctrl(bio, BIO_CTRL_RESET, 0, nil)  // BIO_reset: back to the start for the key
                // The password is handed over by a callback that refuses when none is configured: OpenSSL's default
                // one would prompt on the terminal for an encrypted key.
                switch PEMPrivateKey.read(bio: bio, password: password) {
                case .success(let loaded): key = loaded
                case .failure(let failure): keyFailure = failure
                }
                return key != nil
            }
            guard let p12 = d2i_PKCS12_bio(bio, nil) else { return false }
            defer { PKCS12_free(p12) }
            var cas: OpaquePointer?  // STACK_OF(X509)*
            guard PKCS12_parse(p12, password, &key, &certificate, &cas) == 1 else { return false }
            if let cas {
                for i in 0..<OPENSSL_sk_num(cas) {
                    if let cert = OPENSSL_sk_value(cas, i) { chain.append(OpaquePointer(cert)) }
                }
                OPENSSL_sk_free(cas)  // the certificates now belong to `chain`
            }
            return key != nil && certificate != nil
        }
        if keyFailure == .encryptedWithoutPassword || keyFailure == .wrongPassword {
            ERR_clear_error()
            throw HTTP2ClientError("TLS: client certificate '\(file)': " + (keyFailure == .wrongPassword
                ? "encrypted key: the password does not open it" : "encrypted key: no password configured"))
        }
        guard parsed, let key, let certificate else {
            throw HTTP2ClientError("TLS: client certificate '\(file)': \(isPEM ? "no certificate and private key in the PEM, or the key's password is wrong" : "not a PKCS#12 file, or the password is wrong") (\(TLSContext.errorQueue()))")
        }
        guard SSL_CTX_use_certificate(context, certificate) == 1, SSL_CTX_use_PrivateKey(context, key) == 1 else {
            throw HTTP2ClientError("TLS: client certificate '\(file)' rejected: \(TLSContext.errorQueue())")
        }
        for cert in chain { _ = sslx_ctx_add1_chain_cert(context, cert) }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw HTTP2ClientError("TLS: client certificate '\(file)': the key does not match the certificate: \(TLSContext.errorQueue())")
        }
    }

    /// A TLS session on a connected socket (SNI, host name or IP check: `TLSClientContext.makeSession`).
    func makeSession(fd: Int32, host: String) -> OpaquePointer? { base.makeSession(fd: fd, host: host) }

    static func errorQueue() -> String { TLSClientContext.errorQueue() }
}
