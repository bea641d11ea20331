import COpenSSL
import Glibc

/// The TLS client setup the HTTP/2 sockets (Apple's push service and the provider modules') and the Redis sockets
/// (`rediss://`) share, so both check a server's certificate the same way: TLS 1.2 or later, the peer verified
/// against a CA file or the system's roots, and the certificate made to name the host (or IP address) connected to.
/// Each user adds what is its own (HTTP/2: ALPN, client certificate, non-blocking I/O modes) to `context` before
/// its first session.
public final class TLSClientContext {
    public let context: OpaquePointer  // SSL_CTX*

    /// Why a context could not be made: `what` failed (names the CA file), `detail` is OpenSSL's error queue.
    public struct SetupError: Error, CustomStringConvertible {
        public let what: String
        public let detail: String
        public var description: String { "\(what): \(detail)" }
    }

    /// - Parameter caFile: PEM file of the CAs to trust; empty trusts the system's roots.
    public init(caFile: String) throws(SetupError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw SetupError(what: "cannot create a context", detail: Self.errorQueue())
        }
        self.context = context
        // From here on deinit frees the context if a later step throws.
        _ = sslx_ctx_set_min_proto_version(context, TLS1_2_VERSION)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if caFile.isEmpty {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw SetupError(what: "cannot load the system CA paths", detail: Self.errorQueue())
            }
        } else {
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw SetupError(what: "cannot load CA file '\(caFile)'", detail: Self.errorQueue())
            }
        }
    }

    deinit { SSL_CTX_free(context) }

    /// A client session on a connected socket, ready for SSL_connect: for a name, SNI and a certificate that
    /// must name the host; for an IP literal, a certificate that must name the address (no SNI).
    public func makeSession(fd: Int32, host: String) -> OpaquePointer? {
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

    /// Why a handshake failed, when it was the certificate: OpenSSL's verification result in words, else nil.
    public static func certificateProblem(_ ssl: OpaquePointer) -> String? {
        let verify = SSL_get_verify_result(ssl)
        guard verify != X509_V_OK else { return nil }
        return String(cString: X509_verify_cert_error_string(verify))
    }

    /// Drains OpenSSL's per-thread error queue into one line (it would otherwise leak into the next call's error).
    public static func errorQueue() -> String {
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
