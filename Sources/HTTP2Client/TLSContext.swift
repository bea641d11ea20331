import COpenSSL
import Glibc

/// The SSL_CTX shared by all connections of a client: TLS 1.2+, ALPN h2, peer verification, client
/// certificate, and the read/write modes the event loop relies on. Built once, so a bad CA file, certificate
/// or password fails `HTTP2Client.init` clearly instead of every connect.
final class TLSContext {
    let context: OpaquePointer  // SSL_CTX*

    init(endpoint: HTTP2Endpoint) throws(HTTP2ClientError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw HTTP2ClientError("TLS: cannot create a context: \(TLSContext.errorQueue())")
        }
        self.context = context
        // From here on deinit frees the context if a later step throws.
        _ = sslx_ctx_set_min_proto_version(context, TLS1_2_VERSION)
        // Partial writes: SSL_write returns after each record, so a full socket costs us no copy; moving buffer:
        // a retry after WANT_WRITE may pass the same bytes from a compacted buffer.
        _ = sslx_ctx_set_mode(context, Int(SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER))
        // Read-ahead: one read() takes many records instead of a 5-byte header read plus a body read per record;
        // a 64 KB buffer lets one read() take four full records.
        _ = sslx_ctx_set_read_ahead(context, 1)
        SSL_CTX_set_default_read_buffer_len(context, 64 * 1024)

        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if endpoint.caFile.isEmpty {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw HTTP2ClientError("TLS: cannot load the system CA paths: \(TLSContext.errorQueue())")
            }
        } else {
            guard SSL_CTX_load_verify_locations(context, endpoint.caFile, nil) == 1 else {
                throw HTTP2ClientError("TLS: cannot load CA file '\(endpoint.caFile)': \(TLSContext.errorQueue())")
            }
        }
        // ALPN wire format: length-prefixed names. Returns 0 on success (inverted, unlike most of OpenSSL).
        let alpn: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]
        guard SSL_CTX_set_alpn_protos(context, alpn, UInt32(alpn.count)) == 0 else {
            throw HTTP2ClientError("TLS: cannot set ALPN h2: \(TLSContext.errorQueue())")
        }
        if let file = endpoint.clientCertificateFile {
            try loadClientCertificate(file: file, password: endpoint.clientCertificatePassword)
        }
    }

    deinit { SSL_CTX_free(context) }

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
                // With no callback, OpenSSL uses the last argument as the passphrase of an encrypted key.
                key = password.withCString { PEM_read_bio_PrivateKey(bio, nil, nil, UnsafeMutableRawPointer(mutating: $0)) }
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

    /// A TLS session on a connected socket: SNI and hostname verification for names, IP verification for literals.
    func makeSession(fd: Int32, host: String) -> OpaquePointer? {
        guard let ssl = SSL_new(context) else { return nil }
        SSL_set_fd(ssl, fd)
        var address = in6_addr()
        let isIP = inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1
        if isIP {
            // SNI must not carry an IP literal (RFC 6066 §3); the certificate must name the address instead.
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
        } else {
            _ = sslx_set_tlsext_host_name(ssl, host)
            SSL_set1_host(ssl, host)
        }
        SSL_set_connect_state(ssl)
        return ssl
    }

    /// Drains OpenSSL's per-thread error queue into one line (it would otherwise leak into the next call's error).
    static func errorQueue() -> String {
        var parts: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            ERR_error_string_n(code, &buffer, buffer.count)
            parts.append(buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        return parts.isEmpty ? "no OpenSSL error" : parts.joined(separator: "; ")
    }
}
