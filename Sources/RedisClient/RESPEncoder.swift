/// Writes Redis commands in RESP, the protocol's request form: `*<arguments>\r\n`, then `$<length>\r\n<bytes>\r\n`
/// for each argument. It is what hiredis's `redisFormatCommandArgv` writes, without its per-argument `sprintf`,
/// the argv arrays it needs and the copy out of its buffer: the acknowledger sends a command field per message.
enum RESPEncoder {
    /// `commands` one after the other, as one pipeline writes them. The buffer is sized once for all of them:
    /// reserving per command would reallocate it to the exact size, and copy it, for every command.
    static func encode(_ commands: [[[UInt8]]]) -> [UInt8] {
        var wire: [UInt8] = []
        wire.reserveCapacity(commands.reduce(0) { total, command in command.reduce(total + 16) { $0 + $1.count + 16 } })
        for command in commands { append(command, to: &wire) }
        return wire
    }

    /// Appends `arguments` as one command to `wire`.
    private static func append(_ arguments: [[UInt8]], to wire: inout [UInt8]) {
        wire.append(UInt8(ascii: "*"))
        appendLine(count: arguments.count, to: &wire)
        for argument in arguments {
            wire.append(UInt8(ascii: "$"))
            appendLine(count: argument.count, to: &wire)
            wire.append(contentsOf: argument)
            wire.append(0x0D)
            wire.append(0x0A)
        }
    }

    /// A count (never negative) in decimal ASCII, most significant digit first, and the line's CR LF.
    private static func appendLine(count: Int, to wire: inout [UInt8]) {
        let value = max(0, count)
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }  // the largest power of ten not above value: no overflow
        repeat {
            wire.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        } while divisor > 0
        wire.append(0x0D)
        wire.append(0x0A)
    }
}
