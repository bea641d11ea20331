import CCurl
import Foundation
import Logging
import PushCore
import Synchronization

/// Counts the sockets libcurl holds open for one transport (its HTTP/2 connections, plus any being
/// connected), through libcurl's open/close socket callbacks: libcurl itself has no API for the number.
/// Every open and close is logged at debug level and opens are counted in the service's series
/// (`push_provider_connections_opened_total`), so reconnect storms show.
final class ConnectionCounter: Sendable {
    let open = Atomic<Int>(0)
    let app: String
    /// The service's series and name (the lane's `PushService`): a vendor's connections are the vendor's.
    let metrics: ServiceMetrics?
    let service: String
    let logger: Logger?

    init(app: String = "", metrics: ServiceMetrics? = nil, service: String = "", logger: Logger? = nil) {
        self.app = app
        self.metrics = metrics
        self.service = service
        self.logger = logger
    }

    fileprivate func opened() {
        let now = open.add(1, ordering: .relaxed).newValue
        metrics?.connectionOpened(app: app)
        logger?.debug("\(service) connection opening", metadata: ["app": "\(app)", "open": "\(now)"])
    }

    fileprivate func closed() {
        let now = open.subtract(1, ordering: .relaxed).newValue
        logger?.debug("\(service) connection closed", metadata: ["app": "\(app)", "open": "\(now)"])
    }

    /// Installs the callbacks on an easy handle; every connection it opens is counted until it closes.
    func attach(to easy: UnsafeMutableRawPointer) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = curlx_easy_ptr(easy, CURLOPT_OPENSOCKETDATA, me)
        _ = curlx_easy_ptr(easy, CURLOPT_CLOSESOCKETDATA, me)
        _ = curlx_easy_opensocket_cb(easy) { context, _, address in
            guard let address else { return CURL_SOCKET_BAD }
            let descriptor = socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
            if descriptor >= 0, let context {
                Unmanaged<ConnectionCounter>.fromOpaque(context).takeUnretainedValue().opened()
            }
            return descriptor
        }
        _ = curlx_easy_closesocket_cb(easy) { context, descriptor in
            if let context {
                Unmanaged<ConnectionCounter>.fromOpaque(context).takeUnretainedValue().closed()
            }
            return close(descriptor)
        }
    }
}
