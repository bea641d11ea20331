/// What the queue protocol needs of Redis: send commands, get replies. A plain connection does this, and
/// so does a connection that follows one Redis Cluster slot across nodes (`SlotConnection`).
public protocol RedisCommands: Sendable {
    /// Sends all commands in one write and reads all replies; error replies are returned in place.
    func pipeline(_ commands: [[[UInt8]]]) async throws -> [RedisReply]
    /// Closes the connection(s) and their threads.
    func close() async
    /// Ends the call in progress at once, from any thread: a read or write blocked on a silent peer (a network
    /// partition, a black-holed host) fails now instead of after the socket timeout, and so does a connect.
    /// Later calls connect again as usual. How shutdown keeps its bound whatever Redis does.
    func interrupt()
    /// Waits up to `timeoutSeconds` for the list `key` to hold something, without taking anything from it;
    /// true if it does. Never reads an element (see `RedisConnection`'s), where the connection can avoid it.
    func waitForListElement(_ key: String, timeoutSeconds: Double) async throws -> Bool
}

extension RedisCommands {
    /// BLMOVE of the list onto itself (RIGHT to RIGHT) leaves it unchanged; its reply is the element it saw.
    public func waitForListElement(_ key: String, timeoutSeconds: Double) async throws -> Bool {
        let reply = try await execute(["BLMOVE", key, key, "RIGHT", "RIGHT", String(timeoutSeconds)])
        return reply != .null
    }

    /// Runs one command; a Redis error reply is thrown as `RedisError.server`.
    @discardableResult
    public func execute(_ arguments: [String]) async throws -> RedisReply {
        try await execute(bytes: arguments.map { Array($0.utf8) })
    }

    @discardableResult
    public func execute(bytes arguments: [[UInt8]]) async throws -> RedisReply {
        let reply = try await pipeline([arguments])[0]
        if case .error(let text) = reply { throw RedisError.server(text) }
        return reply
    }
}
