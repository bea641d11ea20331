import CNghttp2
import Glibc
import Synchronization

/// One address a host name resolved to, ready for `connect`.
public struct HTTP2ResolvedAddress: @unchecked Sendable {
    var family: Int32
    var address: sockaddr_storage
    var length: socklen_t
}

/// Resolves a host name and port to the addresses to try, in order. It may block (a DNS server that is slow or
/// does not answer), so HTTP2Client never calls it on its own thread.
public typealias HTTP2Resolver = @Sendable (_ host: String, _ port: Int) -> Result<[HTTP2ResolvedAddress], HTTP2ClientError>

extension HTTP2Endpoint {
    /// getaddrinfo, the resolver every client uses unless a test gives another.
    public static let systemResolver: HTTP2Resolver = { host, port in
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0 else { return .failure(HTTP2ClientError(String(cString: gai_strerror(rc)))) }
        defer { freeaddrinfo(list) }
        var addresses: [HTTP2ResolvedAddress] = []
        var node = list
        while let entry = node {
            var storage = sockaddr_storage()
            let length = min(Int(entry.pointee.ai_addrlen), MemoryLayout<sockaddr_storage>.size)
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.baseAddress!.copyMemory(from: entry.pointee.ai_addr, byteCount: length)
            }
            addresses.append(HTTP2ResolvedAddress(family: entry.pointee.ai_family, address: storage, length: socklen_t(length)))
            node = entry.pointee.ai_next
        }
        return .success(addresses)
    }
}

/// Runs the endpoint's resolver on a thread of its own and hands the result back to the client's thread through
/// the event loop's wake: getaddrinfo blocks, and on the client's thread a slow DNS server would freeze every
/// connection of the client. One lookup at a time: a connection that starts resolving while one is under way
/// takes that one's result (begun less than a connect timeout ago: fresh enough), so a DNS server that hangs
/// holds one thread, not one per connection attempt. The thread ends when its lookup returns, even if the
/// client has closed meanwhile (getaddrinfo cannot be interrupted; resolv.conf's timeouts bound it).
/// `start` and `takeResult` are for the client's thread only.
final class HostLookups {
    private let loop: EventLoop
    private let finished = LookupResult()
    private var underWay = false

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Starts a lookup of the endpoint unless one is under way; its result comes from `takeResult` after a wake.
    func start(_ endpoint: HTTP2Endpoint) {
        guard !underWay else { return }
        underWay = true
        let job = LookupJob(resolver: endpoint.resolver, host: endpoint.host, port: endpoint.port, result: finished, loop: loop)
        let context = Unmanaged.passRetained(job).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { context in
            Unmanaged<LookupJob>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        if rc == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<LookupJob>.fromOpaque(context).release()
            finished.post(.failure(HTTP2ClientError("cannot start a thread for the lookup: \(String(cString: strerror(rc)))")))
            loop.wake()
        }
    }

    /// The result of the lookup under way, once it has finished (nil before).
    func takeResult() -> Result<[HTTP2ResolvedAddress], HTTP2ClientError>? {
        guard underWay, let result = finished.take() else { return nil }
        underWay = false
        return result
    }
}

/// Where a lookup's thread leaves its result for the client's thread.
private final class LookupResult: Sendable {
    private let slot = Mutex<Result<[HTTP2ResolvedAddress], HTTP2ClientError>?>(nil)

    func post(_ result: Result<[HTTP2ResolvedAddress], HTTP2ClientError>) { slot.withLock { $0 = result } }
    func take() -> Result<[HTTP2ResolvedAddress], HTTP2ClientError>? { slot.withLock { $0.take() } }
}

/// One lookup, owned by its thread. It keeps the event loop alive, so the eventfd it wakes stays open (and is
/// never a number reused by another file) however long the lookup takes; `wake` is the loop's only thread-safe
/// member and the only one used here.
private final class LookupJob: @unchecked Sendable {
    let resolver: HTTP2Resolver
    let host: String
    let port: Int
    let result: LookupResult
    let loop: EventLoop

    init(resolver: @escaping HTTP2Resolver, host: String, port: Int, result: LookupResult, loop: EventLoop) {
        self.resolver = resolver
        self.host = host
        self.port = port
        self.result = result
        self.loop = loop
    }

    func run() {
        result.post(resolver(host, port))
        loop.wake()
    }
}
