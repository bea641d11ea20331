// swift-tools-version:6.0
import PackageDescription

// Stages are separate modules so each can be read and tested on its own:
// Collector -> Merger -> Filter -> Pusher, sharing PushCore (model, configuration, Redis access).
let package = Package(
    name: "push-pipeline",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "worker", targets: ["worker"]),
        .executable(name: "push-emulator", targets: ["push-emulator"]),
    ],
    // Exact versions: an image or a release built next month gets the same dependencies as the tested build
    // (issue 35). Package.resolved stays out of git, because the one a build machine writes names that
    // machine's mirror; the exact pins here do the same job. To move a dependency, change its version here
    // and run the test command.
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams", exact: "6.2.2"),
        // Metrics: the stages record through swift-metrics; the worker exports them as Prometheus text.
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        // The emulator's HTTP/2 + TLS server and the worker's small metrics and health listener.
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-http2", exact: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
    ],
    targets: [
        // Thin views of Debian's system libraries; Swift code outside the wrappers never sees a pointer.
        .systemLibrary(name: "CHiredis", pkgConfig: "hiredis", providers: [.apt(["libhiredis-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // libnghttp2 1.52 (Debian 12): the HTTP/2 framing and HPACK under HTTP2Client, driven through mem_send/mem_recv.
        .systemLibrary(name: "CNghttp2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        // ICU's variant data for the word filter (traditional/simplified Chinese, UTS #39 confusables), behind
        // plain C types: Foundation's own ICU headers would clash with Debian's in a Swift module.
        .target(name: "CICU", linkerSettings: [.linkedLibrary("icui18n"), .linkedLibrary("icuuc")]),
        // jemalloc (Debian 12's 5.3) as the worker's allocator, with the worker's settings (malloc_conf.c).
        .target(name: "CJemalloc", linkerSettings: [.linkedLibrary("jemalloc")]),

        // The message model, its validation and the configuration: no I/O, no system library.
        .target(name: "PushCore", dependencies: [
            .product(name: "Logging", package: "swift-log"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Yams", package: "Yams"),
        ]),
        // The TLS client setup (TLS 1.2+, CA file or system roots, peer and host name checks, SNI) that the
        // HTTP/2 and Redis sockets share. A target of its own: the lowest module both use is COpenSSL (a system
        // library), and PushCore stays free of system libraries.
        .target(name: "TLSClient", dependencies: ["COpenSSL"]),
        // A Redis connection on a thread of its own: plain or TLS socket, hiredis as the RESP codec.
        .target(name: "RedisClient", dependencies: [
            "PushCore", "CHiredis", "COpenSSL", "TLSClient",
            // Failovers (a slot's new primary, the primary Sentinel names) are logged where they are seen.
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The queue protocol of docs/queue-protocol.md (keys, scripts, claim, acknowledge, recover, quarantine):
        // shared by the worker and the operator tools.
        .target(name: "QueueProtocol", dependencies: ["PushCore", "RedisClient", "COpenSSL"]),
        .target(name: "Collector", dependencies: [
            "PushCore", "QueueProtocol", "RedisClient",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .target(name: "Merger", dependencies: ["PushCore"]),
        .target(name: "Filter", dependencies: ["PushCore", "CICU"]),
        // Our own HTTP/2 sessions (docs/transport.md): one thread's event loop (epoll, OpenSSL, nghttp2), many
        // small POSTs at low CPU per request, streams exact to the servers' SETTINGS, refused and lost told apart.
        // PushCore for the one Backoff every retry loop uses (PushCore has no I/O and no system library).
        .target(name: "HTTP2Client", dependencies: [
            "PushCore", "CNghttp2", "COpenSSL", "TLSClient",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The provider kit (docs/architecture.md, "Providers"): all a provider module builds on besides PushCore's
        // messages. What a push service is to the scheduler (`PushService`: a request's path, headers, body and
        // credential, what an answer means per token), how a module describes its apps' lanes (`ProviderModule`,
        // `LanePlan`, `TransportSettings`, rate limits), access tokens (OAuth endpoints through libcurl, their
        // renewal thread) and the pieces of receipts. The Pusher stage starts the lanes; no module imports it.
        .target(name: "ProviderKit", dependencies: [
            "PushCore", "CCurl", "COpenSSL", .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "Pusher", dependencies: [
            "PushCore", "ProviderKit", "CCurl", "COpenSSL", "HTTP2Client", "TLSClient",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // What China's Android vendors share, for their modules to build on: the common payload read once per job,
        // token-list bodies spliced per request, the vendor object merged last (RFC 7396), the renewal rejections
        // that pause an app, the vendor's quota day. Names no vendor.
        .target(name: "AndroidPushKit", dependencies: ["ProviderKit", "PushCore", .product(name: "Logging", package: "swift-log")]),
        // Apple's APNs (docs/transport.md), the default provider: its message rules, `POST /3/device/<token>`,
        // provider tokens (ES256 JWTs) or client certificates, Apple's answers, its `apns` block and its apps' lanes.
        .target(name: "APNsProvider", dependencies: [
            "ProviderKit", "PushCore", "COpenSSL", "TLSClient", .product(name: "Logging", package: "swift-log"),
        ], path: "Sources/Providers/APNs"),
        // Firebase Cloud Messaging HTTP v1 (docs/fcm.md): FCM's message rules, its OAuth service accounts, its answers.
        .target(name: "FCMProvider", dependencies: [
            "ProviderKit", "PushCore", "COpenSSL", "TLSClient", .product(name: "Logging", package: "swift-log"),
        ], path: "Sources/Providers/FCM"),
        // Xiaomi MiPush: regId sends of up to 1,000 tokens, its answers per token; Pusher only for a lane's settings.
        .target(name: "XiaomiProvider", dependencies: ["ProviderKit", "AndroidPushKit", "PushCore"], path: "Sources/Providers/Xiaomi"),
        // Huawei Push Kit v1 (Android, OAuth client credentials) and v3 (HarmonyOS 5+, PS256 JWT) as a PushService.
        .target(name: "HuaweiProvider", dependencies: [
            "ProviderKit", "AndroidPushKit", "PushCore", "COpenSSL", "TLSClient", .product(name: "Logging", package: "swift-log"),
        ], path: "Sources/Providers/Huawei"),
        // Honor Push (Honor phones on Magic UI 4+): OAuth client credentials, token lists of up to 1,000.
        .target(name: "HonorProvider", dependencies: [
            "ProviderKit", "AndroidPushKit", "PushCore", .product(name: "Logging", package: "swift-log"),
        ], path: "Sources/Providers/Honor"),
        // OPPO Push (OPPO, OnePlus, realme): a daily signed auth token, unicast and unicast_batch forms.
        .target(name: "OPPOProvider", dependencies: [
            "ProviderKit", "AndroidPushKit", "PushCore", "COpenSSL", .product(name: "Logging", package: "swift-log"),
        ], path: "Sources/Providers/OPPO"),
        // vivo Push (vivo, iQOO): a signed auth token, one send per regId, saved list bodies pushed to up to 1,000.
        .target(name: "VivoProvider", dependencies: [
            "ProviderKit", "AndroidPushKit", "PushCore", "COpenSSL", .product(name: "Logging", package: "swift-log"),
        ], path: "Sources/Providers/Vivo"),
        // Prometheus text at /metrics, liveness and readiness on `metrics.listen` (docs/metrics.md).
        .target(name: "Observability", dependencies: [
            "PushCore",
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The services' delivery reports on `receipts.listen` (docs/vendors.md, "Receipts"): a plain HTTP listener that
        // hands each callback to its provider module's `ReceiptReader` and writes the dead tokens to the feedback list.
        .target(name: "Receipts", dependencies: [
            "PushCore", "ProviderKit", "QueueProtocol", "RedisClient", "Observability",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .executableTarget(name: "worker", dependencies: [
            "PushCore", "ProviderKit", "RedisClient", "QueueProtocol", "Collector", "Merger", "Filter", "Pusher", "Observability", "Receipts",
            // The provider modules (Sources/worker/Providers.swift names each once).
            "APNsProvider", "FCMProvider", "HuaweiProvider", "XiaomiProvider", "HonorProvider", "OPPOProvider", "VivoProvider",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            "CJemalloc",
        ], plugins: ["GitCommit"]),
        // Before every build of the worker: the checkout's commit into a generated GitCommit.swift under .build
        // (git; nothing in the source tree). On the executable, a leaf: a new commit recompiles it alone.
        .plugin(name: "GitCommit", capability: .buildTool(), path: "Plugins/GitCommit"),

        // A stand-in for APNs, FCM, Huawei and Xiaomi (docs/emulator.md) for tests, the demo, benchmarks and users' own
        // development setups: each vendor's side in a folder of its own, with its flags (ArgumentParser), registered in
        // EmulatedServices.swift.
        .target(name: "PushEmulator", dependencies: [
            "COpenSSL",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "push-emulator", dependencies: [
            "PushEmulator",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        // Redis CPU per message of the queue protocol with 1k/20k/100k in flight (scripts/bench.sh --queue).
        .executableTarget(name: "queue-benchmark", dependencies: ["PushCore", "RedisClient", "QueueProtocol"],
                          path: "Benchmarks/QueueBenchmark"),

        // The word filter's MB/s with a 10,000-entry list on 1 KB texts (scripts/bench.sh --filter).
        .executableTarget(name: "filter-benchmark", dependencies: ["Filter"], path: "Benchmarks/FilterBenchmark"),

        // CPU per message of parsing and merging, without Redis or HTTP/2 (scripts/bench.sh --stages).
        .executableTarget(name: "stage-benchmark", dependencies: ["APNsProvider", "PushCore", "Merger"], path: "Benchmarks/StageBenchmark"),

        // A libFuzzer target for the message parser (scripts/fuzz.sh builds it with -sanitize=fuzzer); in a
        // plain build it replays corpus files through the same property checks.
        .executableTarget(name: "message-fuzzer", dependencies: ["APNsProvider", "PushCore", "FCMProvider"], path: "Fuzz/MessageFuzzer"),

        .target(name: "TestSupport", dependencies: ["PushCore", "RedisClient", "QueueProtocol", "PushEmulator", "FCMProvider", "APNsProvider",
                                                  "ProviderKit", "Pusher",
                                                  .product(name: "Logging", package: "swift-log")], path: "Tests/TestSupport",
                exclude: ["blackhole_proxy.py"]),
        // The provider modules too: the schema's examples name them (SchemaExamplesTests registers them).
        // The provider kit's testing library: the smallest provider (FakeModule) and its services, and a driver that
        // sends nothing and runs the scheduler's loop only when a test steps it (ScriptedDriver), for the core's tests.
        .target(name: "ProviderTesting", dependencies: ["ProviderKit", "Pusher", "PushCore"], path: "Tests/ProviderTesting"),
        .testTarget(name: "PushCoreTests", dependencies: ["APNsProvider", "FCMProvider", "PushCore", "TestSupport", "HuaweiProvider", "XiaomiProvider", "HonorProvider", "OPPOProvider", "VivoProvider",
                                                         .product(name: "Yams", package: "Yams")]),
        .testTarget(name: "RedisClientTests", dependencies: ["APNsProvider", "RedisClient", "PushCore", "TestSupport", "CHiredis"]),
        .testTarget(name: "QueueProtocolTests", dependencies: ["FCMProvider", "QueueProtocol", "RedisClient", "PushCore", "TestSupport"]),
        .testTarget(name: "FilterTests", dependencies: ["APNsProvider", "FCMProvider", "Filter", "PushCore", "TestSupport"]),
        .testTarget(name: "MergerTests", dependencies: ["APNsProvider", "FCMProvider", "Merger", "PushCore"]),
        .testTarget(name: "CollectorTests", dependencies: ["APNsProvider", "FCMProvider", "Collector", "QueueProtocol", "RedisClient", "PushCore", "TestSupport"]),
        .testTarget(name: "PusherTests", dependencies: ["APNsProvider", "FCMProvider", "Pusher", "ProviderKit", "ProviderTesting", "PushCore", "TestSupport", "COpenSSL"]),
        .testTarget(name: "WorkerTests", dependencies: ["APNsProvider", "FCMProvider", "PushCore", "RedisClient", "QueueProtocol", "TestSupport"]),
        .testTarget(name: "ObservabilityTests", dependencies: ["FCMProvider", "Observability", "PushCore"]),
        // Only HTTP2Client (no TestSupport, no NIO) so it builds fast; the peer is a python3-h2 script.
        .testTarget(name: "HonorProviderTests", dependencies: ["HonorProvider", "AndroidPushKit", "ProviderKit", "PushCore", "TestSupport",
                                                              "PushEmulator", "Pusher", "QueueProtocol", "RedisClient"]),
        .testTarget(name: "OPPOProviderTests", dependencies: ["OPPOProvider", "AndroidPushKit", "ProviderKit", "PushCore", "TestSupport",
                                                             "PushEmulator", "Pusher", "QueueProtocol", "RedisClient"]),
        .testTarget(name: "VivoProviderTests", dependencies: ["VivoProvider", "AndroidPushKit", "ProviderKit", "PushCore", "TestSupport",
                                                             "PushEmulator", "Pusher", "QueueProtocol", "RedisClient"]),
        .testTarget(name: "ProviderKitTests", dependencies: ["ProviderKit", "PushCore"]),
        .testTarget(name: "AndroidPushKitTests", dependencies: ["AndroidPushKit", "ProviderKit", "PushCore"]),
        .testTarget(name: "HTTP2ClientTests", dependencies: ["HTTP2Client"], exclude: ["h2_fake_server.py"]),
        .testTarget(name: "PushEmulatorTests", dependencies: ["APNsProvider", "FCMProvider", "PushEmulator", "ProviderKit", "Pusher", "PushCore", "TestSupport"]),
        // The Xiaomi provider's form bodies and answers, and a real Scheduler against the emulator's MiPush side.
        .testTarget(name: "XiaomiProviderTests", dependencies: ["FCMProvider", "XiaomiProvider", "AndroidPushKit", "ProviderKit", "Pusher", "PushCore", "TestSupport", "PushEmulator",
                                                                "Receipts", "QueueProtocol", "RedisClient"]),
        // FCM's message rules, bodies, answers, access tokens, and real Schedulers against the emulator's FCM side.
        .testTarget(name: "FCMProviderTests", dependencies: ["APNsProvider", "FCMProvider", "ProviderKit", "Pusher", "PushCore", "TestSupport", "PushEmulator", "COpenSSL"]),
        // Huawei's bodies, answers and credentials, and real Schedulers against the emulator's Huawei side.
        .testTarget(name: "HuaweiProviderTests", dependencies: ["FCMProvider", "HuaweiProvider", "ProviderKit", "Pusher", "PushCore", "TestSupport", "PushEmulator",
                                                               "Receipts", "QueueProtocol", "RedisClient"]),
    ]
)
